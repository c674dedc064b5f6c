"""Cline's installer: the extension's MCP settings (user-level) and a ``.clinerules/`` rule.

Cline: the server in the VS Code extension's ``cline_mcp_settings.json`` (user-level only:
``--global``) and a workspace rule, ``.clinerules/planning-memory.md``.
"""

from __future__ import annotations

from pathlib import Path

from planning_memory.agents.installers.agent import RULES, Agent, with_markers
from planning_memory.agents.installers.parts import JsonServers, Owned, platform_config

EXTENSION = "saoudrizwan.claude-dev"


def settings(home: Path) -> Path:
    user = platform_config(home) / "Code" / "User"
    return user / "globalStorage" / EXTENSION / "settings" / "cline_mcp_settings.json"


AGENT = Agent(
    name="cline",
    title="Cline",
    parts=(
        JsonServers(None, settings, extra={"disabled": False}),
        Owned(".clinerules/planning-memory.md", with_markers(RULES)),
    ),
)
