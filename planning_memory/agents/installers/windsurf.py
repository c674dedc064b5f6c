"""Windsurf's installer: the user's ``mcp_config.json`` and an always-on workspace rule.

Windsurf (Cascade): the server in the user's ``~/.codeium/windsurf/mcp_config.json``
(Windsurf has no project MCP file: ``--global``) and an always-on workspace rule,
``.windsurf/rules/planning-memory.md``.
"""

from __future__ import annotations

from planning_memory.agents.installers.agent import RULES, Agent, with_markers
from planning_memory.agents.installers.parts import JsonServers, Owned

RULE = "---\ntrigger: always_on\n---\n\n" + with_markers(RULES)
AGENT = Agent(
    name="windsurf",
    title="Windsurf",
    parts=(
        JsonServers(None, lambda home: home / ".codeium" / "windsurf" / "mcp_config.json"),
        Owned(".windsurf/rules/planning-memory.md", RULE),
    ),
)
