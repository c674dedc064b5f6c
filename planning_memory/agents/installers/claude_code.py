"""Claude Code's installer: hooks, the server in ``.mcp.json``, the CLAUDE.md import.

Claude Code: the hooks in ``.claude/settings.json`` and the server in ``.mcp.json`` (with
``--global``: ``~/.claude/settings.json`` and ``~/.claude.json``), and the managed block in the
repository's own ``CLAUDE.md``, which imports ``.planning/CLAUDE.md`` (``@path``). A block the
views render there (``render.targets.claudeMd``) already holds that memory: it is left to them.

A hook of ours is a command containing ``hook claude-code``; one already present stays where
it is and only its command changes. Each hook command is guarded (``command -v pmem ... ||
true``) so a teammate without pmem gets no error from a committed hook.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from planning_memory.agents.installers import edits, jsonedit
from planning_memory.agents.installers.agent import RULES, Agent
from planning_memory.agents.installers.parts import (
    Block,
    Edit,
    Hook,
    JsonServers,
    Part,
    Plan,
    Where,
    guarded,
    read,
    undo,
)
from planning_memory.errors import InputError

OUR_HOOK = "hook claude-code"
# event -> (matcher or None, timeout in seconds)
HOOK_EVENTS: dict[str, tuple[str | None, int]] = {
    "SessionStart": (None, 30),
    "UserPromptSubmit": (None, 15),
    "PostToolUse": ("Read|Edit|MultiEdit|Write|Bash", 15),
    "PostToolUseFailure": (None, 15),
    "Stop": (None, 30),
    "PreCompact": (None, 60),
    "SessionEnd": (None, 60),
}
# hooks whose answer Claude Code need not wait for: they only record (``"async": true``,
# https://code.claude.com/docs/en/hooks#run-hooks-in-the-background)
ASYNC_EVENTS = frozenset({"PostToolUse", "PostToolUseFailure", "Stop"})


def hook_command(words: tuple[str, ...], event: str) -> str:
    return guarded(words, "hook", "claude-code", event)


def is_ours(hook: Any) -> bool:
    return isinstance(hook, dict) and OUR_HOOK in str(hook.get("command", ""))


def _groups(hooks: dict[str, Any], event: str, path: Path) -> list[Any]:
    groups = hooks.setdefault(event, [])
    if not isinstance(groups, list):
        raise edits_error("must be an array of matcher groups", path, f"$.hooks.{event}")
    for n, group in enumerate(groups):
        inner = edits.obj(group, f"$.hooks.{event}[{n}]", path).get("hooks", [])
        if not isinstance(inner, list):
            raise edits_error("must be an array", path, f"$.hooks.{event}[{n}].hooks")
    return groups


def edits_error(message: str, path: Path, where: str) -> InputError:
    return InputError(
        message, path=str(path), json_path=where, hint="fix or move the file; nothing was written"
    )


def merge_settings(existing: Any, words: tuple[str, ...], path: Path) -> dict[str, Any]:
    """``existing`` settings with our hooks added (or their command updated)."""
    settings = copy.deepcopy(edits.obj(existing, "$", path))
    hooks = edits.obj(settings.setdefault("hooks", {}), "$.hooks", path)
    for event, (matcher, timeout) in HOOK_EVENTS.items():
        groups = _groups(hooks, event, path)
        ours = [h for g in groups for h in g.get("hooks", []) if is_ours(h)]
        for hook in ours:
            hook["command"] = hook_command(words, event)
            if event in ASYNC_EVENTS:
                hook["async"] = True
        if ours:
            continue
        entry = {"type": "command", "command": hook_command(words, event), "timeout": timeout}
        if event in ASYNC_EVENTS:
            entry["async"] = True
        group: dict[str, Any] = {"matcher": matcher} if matcher else {}
        groups.append({**group, "hooks": [entry]})
    return settings


def drop_hooks(
    existing: dict[str, Any], keep: Callable[[str], bool] = lambda key: False
) -> dict[str, Any]:
    """``existing`` without our hooks, and without the groups they leave empty and the events
    and ``hooks`` object left empty (unless ``keep("hooks.Stop")`` / ``keep("hooks")``)."""
    settings = copy.deepcopy(existing)
    hooks = settings.get("hooks")
    if not isinstance(hooks, dict):
        return settings
    for event in list(hooks):
        groups = hooks[event]
        if not isinstance(groups, list) or not any(map(_holds_ours, groups)):
            continue
        hooks[event] = [_without_ours(g) for g in groups if not _only_ours(g)]
        if not hooks[event] and not keep(f"hooks.{event}"):
            del hooks[event]
    if not hooks and not keep("hooks"):
        del settings["hooks"]
    return settings


def _inner(group: Any) -> list[Any]:
    inner = group.get("hooks") if isinstance(group, dict) else None
    return inner if isinstance(inner, list) else []


def _holds_ours(group: Any) -> bool:
    return any(map(is_ours, _inner(group)))


def _only_ours(group: Any) -> bool:
    return _holds_ours(group) and all(map(is_ours, _inner(group)))


def _without_ours(group: Any) -> Any:
    if not _holds_ours(group):
        return group
    return {**group, "hooks": [h for h in _inner(group) if not is_ours(h)]}


def hooks_in(settings: dict[str, Any]) -> list[tuple[str, str, int]]:
    """``(event, command, timeout)`` of each of our hooks in ``settings``."""
    found = []
    hooks = settings.get("hooks") if isinstance(settings.get("hooks"), dict) else {}
    for event, groups in (hooks or {}).items():
        for group in groups if isinstance(groups, list) else []:
            for hook in group.get("hooks", []) if isinstance(group, dict) else []:
                if is_ours(hook):
                    found.append((event, str(hook["command"]), int(hook.get("timeout", 60))))
    return found


@dataclass(frozen=True)
class Hooks(Part):
    """Our hooks in Claude Code's settings file."""

    kind = "hooks"

    def path(self, where: Where) -> Path | None:
        return where.home / ".claude" / "settings.json" if where.user else where.project(SETTINGS)

    def files(self, where: Where) -> list[Path]:
        found = [where.project(SETTINGS), where.home / ".claude" / "settings.json"]
        return [p for p in found if p is not None]

    def install(self, where: Where) -> Plan:
        path = self.path(where)
        if path is None:
            return Plan(notes=["not inside a repository: no project settings written"])
        text = read(path)
        settings = edits.parse_json(text, path)
        merged = merge_settings(settings, where.words, path)
        after = text if merged == settings and text is not None else jsonedit.patch(text, merged)
        return Plan([Edit(path, text, after, tuple(edits.added_keys(settings, merged)))])

    def uninstall(self, where: Where) -> Plan:
        path = self.path(where)
        text = read(path) if path is not None else None
        if path is None or text is None:
            return Plan()
        settings = edits.parse_json(text, path)
        dropped = drop_hooks(settings, where.kept(path))
        if dropped == settings:
            return Plan()
        return Plan([undo(where, path, jsonedit.patch(text, dropped), empty=not dropped)])

    def hooks(self, where: Where) -> list[Hook]:
        return [
            (path, *hook)
            for path in self.files(where)
            for hook in hooks_in(edits.parse_json(read(path), path))
        ]

    def missing_hooks(self, where: Where) -> list[tuple[Path, str]]:
        """Each event of ``HOOK_EVENTS`` without our hook in a settings file that holds
        some of ours; every event, in the project's file, when none holds any."""
        found: dict[Path, set[str]] = {}
        for path, event, _, _ in self.hooks(where):
            found.setdefault(path, set()).add(event)
        if not found:
            path = where.project(SETTINGS) or where.home / ".claude" / "settings.json"
            return [(path, event) for event in HOOK_EVENTS]
        return [(p, e) for p, events in found.items() for e in HOOK_EVENTS if e not in events]


# the header line of the block the views render into CLAUDE.md (render.targets.claudeMd)
RENDERED = "planning-memory view=CLAUDE.md"


@dataclass(frozen=True)
class RootImport(Block):
    """Our block in the repository's ``CLAUDE.md``, unless the views render theirs there."""

    def rendered(self, where: Where) -> bool:
        path = where.project(self.rel)
        block = edits.block_of(read(path), path) if path is not None else None
        return block is not None and RENDERED in block

    def install(self, where: Where) -> Plan:
        if self.rendered(where):
            return Plan(notes=[f"{self.rel}: its block is the rendered memory; left as it is"])
        return super().install(where)

    def uninstall(self, where: Where) -> Plan:
        return Plan() if self.rendered(where) else super().uninstall(where)

    def current(self, where: Where) -> bool | None:
        return True if self.rendered(where) else super().current(where)


SETTINGS = ".claude/settings.json"
SERVERS = JsonServers(
    ".mcp.json", lambda home: home / ".claude.json", extra={"type": "stdio", "env": {}}
)
AGENT = Agent(
    name="claude-code",
    title="Claude Code",
    parts=(Hooks(), SERVERS, RootImport("CLAUDE.md", RULES + "\n\n@.planning/CLAUDE.md")),
)
