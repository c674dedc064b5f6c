"""Gemini CLI's installer: ``.gemini/settings.json`` and the ``GEMINI.md`` block.

Gemini CLI: the server in ``.gemini/settings.json`` (``~/.gemini/settings.json`` with
``--global``) and the managed block in ``GEMINI.md``, which imports ``.planning/CLAUDE.md``
(``@file``).
"""

from __future__ import annotations

from planning_memory.agents.installers.agent import RULES, Agent
from planning_memory.agents.installers.parts import Block, JsonServers

AGENT = Agent(
    name="gemini",
    title="Gemini CLI",
    parts=(
        JsonServers(".gemini/settings.json", lambda home: home / ".gemini" / "settings.json"),
        Block("GEMINI.md", RULES + "\n\n@./.planning/CLAUDE.md"),
    ),
)
