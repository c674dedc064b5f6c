"""Codex CLI's installer: a ``config.toml`` server table and the AGENTS.md block.

Codex CLI: the ``[mcp_servers.planning-memory]`` table in ``.codex/config.toml`` (read in
trusted projects; ``$CODEX_HOME/config.toml``, default ``~/.codex/config.toml``, with
``--global``) and the AGENTS.md block the views render from the memory (``render.targets.
agentsMd`` turned on), so what a person taught is in it from the first time.
"""

from __future__ import annotations

import os
from pathlib import Path

from planning_memory.agents.installers.agent import Agent
from planning_memory.agents.installers.parts import Target, TomlServers


def codex_home(home: Path) -> Path:
    return Path(os.environ.get("CODEX_HOME") or home / ".codex") / "config.toml"


AGENT = Agent(
    name="codex",
    title="Codex CLI",
    parts=(TomlServers(".codex/config.toml", codex_home), Target("AGENTS.md")),
    notes=("Codex reads .codex/config.toml only in a trusted project (or use --global)",),
)
