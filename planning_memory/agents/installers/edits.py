"""Pure edits of agents' config files: JSON server maps, TOML tables, managed Markdown blocks.

Each takes a file's text and returns the new text; nothing is written. JSON goes through
``jsonedit`` (edited in place), Aider's YAML ``read:`` list through ``reads``.

Every merge keeps everything else in the file (other keys and their order, other servers,
comments, the line endings), never replaces an entry under our name that is not ours, and
gives back the same text when there is nothing to change. Each removal takes back exactly
what the merge added: the text comes back byte for byte. A container (a JSON object or array)
left empty goes only when ``keep`` does not say the user had it.
"""

from __future__ import annotations

import copy
import json
import re
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from planning_memory.agents.installers import jsonedit
from planning_memory.errors import InputError

SERVER_NAME = "planning-memory"
START_MARKER = "<!-- planning-memory:start -->"
END_MARKER = "<!-- planning-memory:end -->"


# -- JSON ------------------------------------------------------------------------------------------
def parse_json(text: str | None, path: Path) -> dict[str, Any]:
    """The JSON object in ``text`` ({} for a missing or empty file; comments allowed), or one
    clear error."""
    return obj(jsonedit.parse(text, path), "$", path)


def obj(value: Any, where: str, path: Path) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise InputError(
            f"{where} must be a JSON object",
            path=str(path),
            json_path=where,
            hint="fix or move the file; nothing was written",
        )
    return value


def added_keys(before: Any, after: Any, prefix: str = "") -> list[str]:
    """The keys (``a.b``) of objects in ``after`` that ``before`` lacks; not those within."""
    if not isinstance(before, dict) or not isinstance(after, dict):
        return []
    found = []
    for key, value in after.items():
        name = f"{prefix}{key}"
        if key not in before:
            found.append(name)
        else:
            found += added_keys(before[key], value, name + ".")
    return found


def is_our_server(entry: Any) -> bool:
    """A server entry that runs ``pmem mcp`` (or ``planning-memory mcp``), however invoked."""
    if not isinstance(entry, dict):
        return False
    words = [str(entry.get("command", "")), *map(str, entry.get("args") or [])]
    return len(words) >= 2 and words[-1] == "mcp" and Path(words[-2]).name in NAMES


NAMES = ("pmem", "planning-memory")


def merge_server(
    config: dict[str, Any], key: str, entry: dict[str, Any], path: Path
) -> tuple[dict[str, Any], list[str]]:
    """``config`` with ``entry`` as ``config[key]["planning-memory"]`` (its command and args
    updated when one of ours is there); notes for what was left alone."""
    config = copy.deepcopy(config)
    servers = obj(config.setdefault(key, {}), f"$.{key}", path)
    current = servers.get(SERVER_NAME)
    if current is None:
        if any(is_our_server(s) for s in servers.values()):
            return config, [f"{path}: pmem is already a server under another name; left as it is"]
        servers[SERVER_NAME] = entry
    elif is_our_server(current):
        current.update({k: v for k, v in entry.items() if k in ("command", "args")})
        for name, value in entry.items():
            current.setdefault(name, value)
    else:
        return config, [f"{path}: {key}.{SERVER_NAME} is another command; left as it is"]
    return config, []


def drop_server(
    config: dict[str, Any], key: str, keep: Callable[[str], bool] = lambda key: False
) -> dict[str, Any]:
    """``config`` without our server (and without ``key`` when that leaves it empty, unless
    ``keep(key)``)."""
    config = copy.deepcopy(config)
    servers = config.get(key)
    if isinstance(servers, dict) and is_our_server(servers.get(SERVER_NAME)):
        del servers[SERVER_NAME]
        if not servers and not keep(key):
            del config[key]
    return config


def server_of(config: dict[str, Any], key: str) -> dict[str, Any] | None:
    servers = config.get(key)
    entry = servers.get(SERVER_NAME) if isinstance(servers, dict) else None
    return entry if isinstance(entry, dict) else None


# -- TOML (Codex) ----------------------------------------------------------------------------------
def parse_toml(text: str | None, path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(text or "")
    except tomllib.TOMLDecodeError as exc:
        raise InputError(
            f"not valid TOML: {exc}",
            path=str(path),
            hint="fix or move the file; nothing was written",
        ) from None


def _toml_string(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)  # a JSON string is a TOML basic string


def toml_table(table: str, entry: dict[str, Any], eol: str = "\n") -> str:
    """``[table]`` with ``entry``'s strings, lists of strings and string maps, in order."""
    lines = [f"[{table}]"]
    for key, value in entry.items():
        if isinstance(value, str):
            lines.append(f"{key} = {_toml_string(value)}")
        elif isinstance(value, list):
            lines.append(f"{key} = [{', '.join(_toml_string(v) for v in value)}]")
        elif isinstance(value, dict):
            pairs = ", ".join(f"{_toml_string(k)} = {_toml_string(v)}" for k, v in value.items())
            lines.append(f"{key} = {{{pairs}}}" if pairs else f"{key} = {{}}")
    return eol.join(lines) + eol


def _table_span(text: str, table: str) -> tuple[int, int] | None:
    """The character span of ``[table]`` up to the next table header (or the end)."""
    header = re.compile(rf"^\[{re.escape(table)}\][ \t]*(#.*)?\r?$", re.MULTILINE)
    found = header.search(text)
    if found is None:
        return None
    after = re.compile(r"^[ \t]*\[", re.MULTILINE).search(text, found.end())
    return found.start(), after.start() if after else len(text)


def eol_of(text: str | None) -> str:
    """The line ending a file uses: ``\r\n`` when it has one, else ``\n``."""
    return "\r\n" if text and "\r\n" in text else "\n"


def merge_toml(
    text: str | None, section: str, entry: dict[str, Any], path: Path
) -> tuple[str, list[str]]:
    """``text`` with ``[section.planning-memory]`` set to ``entry``, after a blank line at
    the end when it is new; notes when left alone."""
    text, eol = text or "", eol_of(text)
    current = parse_toml(text, path).get(section, {}).get(SERVER_NAME)
    table = f"{section}.{SERVER_NAME}"
    if current is not None and not is_our_server(current):
        return text, [f"{path}: [{table}] is another command; left as it is"]
    if current is not None and {k: current.get(k) for k in entry} == entry:
        return text, []
    span = _table_span(text, table)
    if current is not None and span is None:
        return text, [f"{path}: {table} is not a [{table}] table; left as it is"]
    block = toml_table(table, entry, eol)
    if span is not None:
        new = text[: span[0]] + block + _gap_after(text[span[1] :], eol) + text[span[1] :]
    else:
        new = text + (eol if text and not text.endswith("\n") else "")
        new += (eol if new.strip() else "") + block
    merged = parse_toml(new, path).get(section, {}).get(SERVER_NAME, {})
    if {k: merged.get(k) for k in entry} != entry:  # pragma: no cover - a guard, not a path
        raise InputError(f"could not merge [{table}]", path=str(path), hint="add it by hand")
    return new, []


def _gap_after(rest: str, eol: str) -> str:
    return eol if rest.strip() else ""


def drop_toml(text: str | None, section: str, path: Path) -> str:
    """``text`` without our ``[section.planning-memory]`` table (and, when it ends the file,
    the blank line ``merge_toml`` put before it)."""
    text, eol = text or "", eol_of(text)
    current = parse_toml(text, path).get(section, {}).get(SERVER_NAME)
    span = _table_span(text, f"{section}.{SERVER_NAME}")
    if not is_our_server(current) or span is None:
        return text
    head, tail = text[: span[0]], text[span[1] :]
    return head + tail if tail.strip() else _without_gap(head, eol)


def _without_gap(head: str, eol: str) -> str:
    """``head`` without the blank line an addition at the end of the file put after it."""
    return head[: -len(eol)] if head.endswith(eol) and head[: -len(eol)].endswith("\n") else head


def toml_server(text: str | None, section: str, path: Path) -> dict[str, Any] | None:
    entry = parse_toml(text, path).get(section, {}).get(SERVER_NAME)
    return entry if isinstance(entry, dict) else None


# -- Markdown managed blocks -----------------------------------------------------------------------
def _lines(text: str | None) -> list[str]:
    """``text``'s lines with their ``\\n`` (only ``\\n`` ends a line, as in git)."""
    parts = (text or "").split("\n")
    return [line + "\n" for line in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def _span(lines: list[str], path: Path) -> tuple[int, int] | None:
    starts = [i for i, line in enumerate(lines) if line.strip() == START_MARKER]
    ends = [i for i, line in enumerate(lines) if line.strip() == END_MARKER]
    if not starts and not ends:
        return None
    if len(starts) != 1 or len(ends) != 1 or ends[0] < starts[0]:
        raise InputError(
            "the planning-memory block's markers are broken",
            path=str(path),
            hint=f"keep one {START_MARKER} line and one {END_MARKER} line after it",
        )
    return starts[0], ends[0]


def block_of(text: str | None, path: Path) -> str | None:
    """The inside of the managed block (``\n`` line ends), or None when the file has none."""
    lines = _lines(text)
    span = _span(lines, path)
    return None if span is None else "".join(lines[span[0] + 1 : span[1]]).replace("\r\n", "\n")


def set_block(text: str | None, inner: str, path: Path) -> str:
    """``text`` with its managed block holding ``inner`` (added at the end, after a blank
    line, when absent), in the file's line endings."""
    text, eol = text or "", eol_of(text)
    lines = _lines(text)
    body = eol.join(inner.rstrip().split("\n"))
    block = f"{START_MARKER}{eol}{body}{eol}{END_MARKER}{eol}"
    span = _span(lines, path)
    if span is None:
        if not text:
            return block
        return text + (eol if text.endswith("\n") else eol + eol) + block
    return "".join(lines[: span[0]]) + block + "".join(lines[span[1] + 1 :])


def drop_block(text: str | None, path: Path) -> str:
    """``text`` without its managed block and the blank line ``set_block`` put before it."""
    text = text or ""
    lines = _lines(text)
    span = _span(lines, path)
    if span is None:
        return text
    head, tail = "".join(lines[: span[0]]), "".join(lines[span[1] + 1 :])
    if tail:
        return head + tail
    return _without_gap(head, eol_of(text))
