"""``pmem learning applied``: the old name of ``pmem memory applied``, hidden, kept for scripts.

``pmem learn`` teaches a rule; counting a learning's ``applications`` by hand lives with the
other commands that take a memory's id (``pmem memory``), so the two names no longer sit side
by side in ``pmem --help``.
"""

from __future__ import annotations

from planning_memory.cli.base import cli
from planning_memory.cli.memories import applied


@cli.group(hidden=True)
def learning() -> None:
    """The old name of `pmem memory applied` (hidden; kept for scripts)."""


learning.add_command(applied)
