"""The Markdown views: patterns.md, mistakes.md, CLAUDE.md and managed blocks.

``Views`` knows each rendered file's state; ``render_all``, ``refresh``, ``check`` and ``sync``
render JSON to Markdown and import hand edits back, stopping at a real conflict. Rendered text
is inert (``make_inert``; the context formats use it too). See docs/markdown.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from planning_memory.core.exports import exports

if TYPE_CHECKING:
    from planning_memory.views.fileformat import body_hash as body_hash
    from planning_memory.views.fileformat import header_hashes as header_hashes
    from planning_memory.views.inert import active_injections as active_injections
    from planning_memory.views.inert import at_as_written as at_as_written
    from planning_memory.views.inert import inline as inline
    from planning_memory.views.inert import make_inert as make_inert
    from planning_memory.views.state import Views as Views
    from planning_memory.views.state import ViewState as ViewState
    from planning_memory.views.targets import set_target as set_target
    from planning_memory.views.targets import turn_target as turn_target
    from planning_memory.views.workflow import SyncReport as SyncReport
    from planning_memory.views.workflow import check as check
    from planning_memory.views.workflow import refresh as refresh
    from planning_memory.views.workflow import render_all as render_all
    from planning_memory.views.workflow import sync as sync

    __all__ = [
        "SyncReport",
        "ViewState",
        "Views",
        "active_injections",
        "at_as_written",
        "body_hash",
        "check",
        "header_hashes",
        "inline",
        "make_inert",
        "refresh",
        "render_all",
        "set_target",
        "sync",
        "turn_target",
    ]
else:
    __getattr__, __dir__, __all__ = exports(
        __name__,
        {
            "SyncReport": "workflow",
            "ViewState": "state",
            "Views": "state",
            "active_injections": "inert",
            "at_as_written": "inert",
            "body_hash": "fileformat",
            "check": "workflow",
            "header_hashes": "fileformat",
            "inline": "inert",
            "make_inert": "inert",
            "refresh": "workflow",
            "render_all": "workflow",
            "set_target": "targets",
            "turn_target": "targets",
            "sync": "workflow",
        },
    )
