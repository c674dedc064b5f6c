"""An agent's installer: its parts (MCP server, rules, hooks), planned together.

``Agent.plan`` reads every file first and checks it, so a malformed file is one clear error
before anything is written; applying the plan is ``install.apply``'s job.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from planning_memory.agents.installers.edits import END_MARKER, START_MARKER
from planning_memory.agents.installers.parts import Hook, Part, Plan, Server, Where

# The managed block every rules file gets: where the memory is and how to use it.
RULES = """\
## Project memory (planning-memory)

This repository keeps its memory in `.planning/`, shared through git: the conventions to
follow, the mistakes to avoid, the decisions made and what a person taught.

- Before a task, call `memory_context` (MCP server `planning-memory`) with the task; look
  things up with `memory_search`, then `memory_get` for a whole record.
- Save what the next session should know with `memory_save`: decisions, bugfixes,
  discoveries, conventions (`pattern`), mistakes to avoid (`mistake`). Never save secrets.
- The rules in force are in `.planning/CLAUDE.md`; read it before changing code."""


def with_markers(text: str) -> str:
    return f"{START_MARKER}\n{text.rstrip()}\n{END_MARKER}\n"


@dataclass(frozen=True)
class Agent:
    name: str
    title: str
    parts: tuple[Part, ...]
    notes: tuple[str, ...] = ()  # said at every install (what the agent needs besides)

    def plan(self, where: Where, *, remove: bool = False) -> Plan:
        plan = Plan()
        for part in self.parts:
            plan.add(part.uninstall(where) if remove else part.install(where))
        if not remove:
            plan.notes += list(self.notes)
        plan.edits = [e for e in plan.edits if e.changed]
        return plan

    def files(self, where: Where) -> list[Path]:
        return [path for part in self.parts for path in part.files(where)]

    def servers(self, where: Where) -> list[Server]:
        return [server for part in self.parts for server in part.servers(where)]

    def hooks(self, where: Where) -> list[Hook]:
        return [hook for part in self.parts for hook in part.hooks(where)]

    def missing_hooks(self, where: Where) -> list[tuple[Path, str]]:
        return [found for part in self.parts for found in part.missing_hooks(where)]

    def rules(self, where: Where) -> list[tuple[Path, bool | None]]:
        """Each rules file with whether it is this version's (None: it is not there)."""
        return [
            (part.files(where)[0], part.current(where))
            for part in self.parts
            if part.kind == "rules" and part.files(where)
        ]

    @property
    def serves(self) -> bool:
        """Whether it has an MCP server entry (Aider has none)."""
        return any(part.kind == "server" for part in self.parts)

    def installed(self, where: Where) -> bool:
        """Whether any of its parts is in place (in the project's or the user's files)."""
        rules = any(current is not None for _, current in self.rules(where))
        return bool(rules or self.servers(where) or self.hooks(where))

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "title": self.title}
