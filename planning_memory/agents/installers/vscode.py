"""VS Code's installer (Copilot agent mode): ``.vscode/mcp.json`` and Copilot's instructions.

VS Code (GitHub Copilot agent mode): the server in ``.vscode/mcp.json`` under ``servers``
(the user profile's ``mcp.json`` with ``--global``) and the managed block in
``.github/copilot-instructions.md``.
"""

from __future__ import annotations

from pathlib import Path

from planning_memory.agents.installers.agent import RULES, Agent
from planning_memory.agents.installers.parts import Block, JsonServers, platform_config


def user_mcp(home: Path) -> Path:
    return platform_config(home) / "Code" / "User" / "mcp.json"


AGENT = Agent(
    name="vscode",
    title="VS Code (Copilot agent mode)",
    parts=(
        JsonServers(".vscode/mcp.json", user_mcp, key="servers", extra={"type": "stdio"}),
        Block(".github/copilot-instructions.md", RULES),
    ),
)
