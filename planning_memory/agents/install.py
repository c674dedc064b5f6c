"""Claude Code's installer: its hooks and MCP server, merged into its config files.

The hooks go in ``.claude/settings.json`` and the MCP server in ``.mcp.json``, merged into
what is there.

Merging keeps everything else in both files (other hooks, other servers, other settings, key
order). A hook of ours (a command containing ``hook claude-code``) that is already present is
left where it is; only its command changes when ``--command`` differs. An ``mcpServers``
entry named ``planning-memory`` that is not ours is never replaced. Both files are read and
checked before either is written, so a malformed file gives one clear error and nothing is
written. Running it twice changes nothing the second time.

These two files are the only ones written outside ``.planning/`` by this module (atomically:
a temporary file in the same folder, then a rename).
"""

from __future__ import annotations

import copy
import json
import shlex
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from planning_memory.errors import InputError, PlanningMemoryError
from planning_memory.memory import Memory

SERVER_NAME = "planning-memory"
OUR_HOOK = "hook claude-code"
# event -> (matcher or None, timeout in seconds)
HOOK_EVENTS: dict[str, tuple[str | None, int]] = {
    "SessionStart": (None, 30),
    "UserPromptSubmit": (None, 15),
    "PostToolUse": ("Read|Edit|MultiEdit|Write", 15),
    "Stop": (None, 30),
    "PreCompact": (None, 60),
    "SessionEnd": (None, 60),
}


@dataclass
class InstallReport:
    """What ``install_claude_code`` did: the files and whether each changed."""

    settings: str
    mcp: str
    settings_changed: bool
    mcp_changed: bool
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "settings": self.settings,
            "mcp": self.mcp,
            "settings_changed": self.settings_changed,
            "mcp_changed": self.mcp_changed,
            "notes": self.notes,
        }


# -- pure merging ----------------------------------------------------------------------------------
def hook_command(command: str, event: str) -> str:
    return f"{command} {OUR_HOOK} {event}"


def _is_ours(hook: Any) -> bool:
    return isinstance(hook, dict) and OUR_HOOK in str(hook.get("command", ""))


def _object(value: Any, where: str, path: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise InputError(f"{where} must be a JSON object", path=path, json_path=where)
    return value


def _groups(hooks: dict[str, Any], event: str, path: str) -> list[Any]:
    groups = hooks.setdefault(event, [])
    if not isinstance(groups, list):
        raise InputError(
            "must be an array of matcher groups", path=path, json_path=f"$.hooks.{event}"
        )
    for n, group in enumerate(groups):
        inner = _object(group, f"$.hooks.{event}[{n}]", path).get("hooks", [])
        if not isinstance(inner, list):
            raise InputError("must be an array", path=path, json_path=f"$.hooks.{event}[{n}].hooks")
    return groups


def merge_settings(existing: Any, command: str, path: str = "settings.json") -> dict[str, Any]:
    """``existing`` settings with our hooks added (or their command updated)."""
    settings = copy.deepcopy(_object(existing, "$", path))
    hooks = _object(settings.setdefault("hooks", {}), "$.hooks", path)
    for event, (matcher, timeout) in HOOK_EVENTS.items():
        groups = _groups(hooks, event, path)
        ours = [h for g in groups for h in g.get("hooks", []) if _is_ours(h)]
        for hook in ours:
            hook["command"] = hook_command(command, event)
        if ours:
            continue
        entry = {"type": "command", "command": hook_command(command, event), "timeout": timeout}
        group: dict[str, Any] = {"matcher": matcher} if matcher else {}
        groups.append({**group, "hooks": [entry]})
    return settings


def server_entry(command: str) -> dict[str, Any]:
    words = shlex.split(command)
    return {"type": "stdio", "command": words[0], "args": [*words[1:], "mcp"], "env": {}}


def _is_our_server(entry: Any) -> bool:
    if not isinstance(entry, dict):
        return False
    words = [str(entry.get("command", "")), *map(str, entry.get("args") or [])]
    return (
        len(words) >= 2
        and words[-1] == "mcp"
        and Path(words[-2]).name in ("pmem", "planning-memory")
    )


def merge_mcp(
    existing: Any, command: str, path: str = ".mcp.json"
) -> tuple[dict[str, Any], list[str]]:
    """``existing`` ``.mcp.json`` with our server added; notes for what was left alone."""
    config = copy.deepcopy(_object(existing, "$", path))
    servers = _object(config.setdefault("mcpServers", {}), "$.mcpServers", path)
    notes: list[str] = []
    current = servers.get(SERVER_NAME)
    if current is None:
        if not any(_is_our_server(s) for s in servers.values()):
            servers[SERVER_NAME] = server_entry(command)
    elif _is_our_server(current):
        current.update({k: v for k, v in server_entry(command).items() if k in ("command", "args")})
    else:
        notes.append(f"{path}: mcpServers.{SERVER_NAME} is another command; left as it is")
    return config, notes


# -- files -----------------------------------------------------------------------------------------
def _read(path: Path) -> Any:
    """The JSON object in ``path`` ({} when absent), or one clear error."""
    if not path.exists():
        return {}
    try:
        return Memory.read_json_file(path)
    except PlanningMemoryError as exc:
        exc.hint = exc.hint or "fix or move the file; nothing was written"
        raise


def _text(value: dict[str, Any]) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False) + "\n"


def install_claude_code(repo_root: Path | str, *, command: str = "pmem") -> InstallReport:
    """Write (merge) ``.claude/settings.json`` hooks and ``.mcp.json`` in ``repo_root``."""
    root = Path(repo_root)
    if not command.strip():
        raise InputError("the command may not be empty", hint="e.g. --command pmem")
    settings_path = root / ".claude" / "settings.json"
    mcp_path = root / ".mcp.json"
    settings = merge_settings(_read(settings_path), command, str(settings_path))
    servers, notes = merge_mcp(_read(mcp_path), command, str(mcp_path))
    report = InstallReport(
        settings=str(settings_path),
        mcp=str(mcp_path),
        settings_changed=Memory.write_file(settings_path, _text(settings)),
        mcp_changed=Memory.write_file(mcp_path, _text(servers)),
        notes=notes,
    )
    if not Memory(root).layout.planning.is_dir():
        report.notes.append("no .planning/ memory tree yet: run `pmem init` before using them")
    program = shlex.split(command)[0]
    if shutil.which(program) is None:
        report.notes.append(
            f"`{program}` is not on PATH: Claude Code will not find it (use --command)"
        )
    return report
