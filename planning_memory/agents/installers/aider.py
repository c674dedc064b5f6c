"""Aider's installer: ``CONVENTIONS.md`` and the ``read:`` list of ``.aider.conf.yml``.

Aider (no MCP): the managed block in ``CONVENTIONS.md`` and, in ``.aider.conf.yml``'s
``read:`` list, that file and ``.planning/CLAUDE.md``, which Aider loads read-only into every
chat.
"""

from __future__ import annotations

from planning_memory.agents.installers.agent import Agent
from planning_memory.agents.installers.parts import Block, Reads

CONVENTIONS = """\
## Project memory (planning-memory)

This repository keeps its memory in `.planning/`, shared through git. `.planning/CLAUDE.md`
(loaded read-only) holds the rules in force: the conventions to follow, the mistakes to avoid,
the decisions made and what a person taught. Follow it. To look something up, the user can
run `pmem search "..."`; to keep a lesson, `pmem learn "always ..."`."""

AGENT = Agent(
    name="aider",
    title="Aider",
    parts=(
        Block("CONVENTIONS.md", CONVENTIONS),
        Reads(".aider.conf.yml", ("CONVENTIONS.md", ".planning/CLAUDE.md")),
    ),
    notes=("Aider has no MCP: it reads the memory from .planning/CLAUDE.md",),
)
