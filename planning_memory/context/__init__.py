"""The context packer: what an agent should know before a task, within a token budget.

``build_context`` gathers what a person taught, pinned memories, patterns, mistakes,
preferences, files, related content, the last and the current session and the time, each with
a reason, and renders them as Markdown, the seeds' XML-style tags or JSON; ``recall`` gives the
few memories relevant to one prompt.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from planning_memory.core.exports import exports

if TYPE_CHECKING:
    from planning_memory.context.agent_result import process_agent_result as process_agent_result
    from planning_memory.context.level import Contextual as Contextual
    from planning_memory.context.options import ContextOptions as ContextOptions
    from planning_memory.context.options import SearchOptions as SearchOptions
    from planning_memory.context.packer import ContextPack as ContextPack
    from planning_memory.context.packer import build_context as build_context
    from planning_memory.context.packer import full_context as full_context
    from planning_memory.context.packer import prepare_agent_context as prepare_agent_context
    from planning_memory.context.prompt import recall as recall

    __all__ = [
        "ContextOptions",
        "ContextPack",
        "Contextual",
        "SearchOptions",
        "build_context",
        "full_context",
        "prepare_agent_context",
        "process_agent_result",
        "recall",
    ]
else:
    __getattr__, __dir__, __all__ = exports(
        __name__,
        {
            "ContextOptions": "options",
            "ContextPack": "packer",
            "Contextual": "level",
            "SearchOptions": "options",
            "build_context": "packer",
            "full_context": "packer",
            "prepare_agent_context": "packer",
            "process_agent_result": "agent_result",
            "recall": "prompt",
        },
    )
