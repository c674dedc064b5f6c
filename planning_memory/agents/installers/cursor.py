"""Cursor's installer: ``.cursor/mcp.json`` and an always-applied ``.cursor/rules/`` rule.

Cursor: the server in ``.cursor/mcp.json`` (``~/.cursor/mcp.json`` with ``--global``) and
an always-applied project rule, ``.cursor/rules/planning-memory.mdc``, that also attaches
``.planning/CLAUDE.md`` (``@file``).
"""

from __future__ import annotations

from planning_memory.agents.installers.agent import RULES, Agent, with_markers
from planning_memory.agents.installers.parts import JsonServers, Owned

RULE = (
    "---\n"
    "description: Project memory in .planning/ (planning-memory), to use before every task\n"
    "alwaysApply: true\n"
    "---\n\n" + with_markers(RULES + "\n\n@.planning/CLAUDE.md")
)
AGENT = Agent(
    name="cursor",
    title="Cursor",
    parts=(
        JsonServers(".cursor/mcp.json", lambda home: home / ".cursor" / "mcp.json"),
        Owned(".cursor/rules/planning-memory.mdc", RULE),
    ),
)
