"""The installers, one module per agent: what each writes where (docs/agents.md).

``AGENTS`` maps an agent's name to its module; each module's ``AGENT`` says which parts it
installs (``parts``): an MCP server entry, a rules file or block, hooks. Nothing is loaded
until an agent is asked for (``pmem hook`` lists the names only).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from planning_memory.agents.installers.agent import Agent

AGENTS = {
    "claude-code": "claude_code",
    "cursor": "cursor",
    "vscode": "vscode",
    "codex": "codex",
    "gemini": "gemini",
    "windsurf": "windsurf",
    "cline": "cline",
    "aider": "aider",
}


def installer(name: str) -> Agent:
    found: Agent = importlib.import_module(f"{__name__}.{AGENTS[name]}").AGENT
    return found
