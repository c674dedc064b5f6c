"""Pure edits of agents' config files: JSON, TOML, managed Markdown blocks, YAML lists.

Pure edits of agents' config files: JSON server maps, TOML tables, managed Markdown blocks,
YAML ``read:`` lists. Each takes a file's text and returns the new text; nothing is written.

Every merge keeps everything else in the file (other keys and their order, other servers,
comments in TOML and YAML), never replaces an entry under our name that is not ours, and
gives back the same text when there is nothing to change. Each removal takes back exactly
what the merge added, dropping a container only when it is left empty.
"""

from __future__ import annotations

import copy
import json
import re
import tomllib
from pathlib import Path
from typing import Any

from planning_memory.errors import InputError

SERVER_NAME = "planning-memory"
START_MARKER = "<!-- planning-memory:start -->"
END_MARKER = "<!-- planning-memory:end -->"


# -- JSON ------------------------------------------------------------------------------------------
def parse_json(text: str | None, path: Path) -> dict[str, Any]:
    """The JSON object in ``text`` ({} for a missing or empty file), or one clear error."""
    if text is None or not text.strip():
        return {}
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(
            f"not valid JSON: {exc.msg}",
            path=str(path),
            line=exc.lineno,
            column=exc.colno,
            hint="fix or move the file; nothing was written",
        ) from None
    return obj(value, "$", path)


def obj(value: Any, where: str, path: Path) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise InputError(
            f"{where} must be a JSON object",
            path=str(path),
            json_path=where,
            hint="fix or move the file; nothing was written",
        )
    return value


def json_text(value: dict[str, Any], like: str | None = None) -> str:
    """``value`` as JSON laid out as the file ``like`` was (its indent, or one line; its final
    newline), so a merge and its removal give the same bytes back; 2 spaces for a new file."""
    if not like or not like.strip():
        return json.dumps(value, indent=2, ensure_ascii=False) + "\n"
    lines = like.strip().splitlines()
    indent: str | None = None
    if len(lines) > 1:
        second = lines[1]
        indent = second[: len(second) - len(second.lstrip())] or None
    text = json.dumps(value, indent=indent, ensure_ascii=False)
    return text + ("\n" if like.endswith("\n") else "")


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


def drop_server(config: dict[str, Any], key: str) -> dict[str, Any]:
    """``config`` without our server (and without ``key`` when that leaves it empty)."""
    config = copy.deepcopy(config)
    servers = config.get(key)
    if isinstance(servers, dict) and is_our_server(servers.get(SERVER_NAME)):
        del servers[SERVER_NAME]
        if not servers:
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


def toml_table(table: str, entry: dict[str, Any]) -> str:
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
    return "\n".join(lines) + "\n"


def _table_span(text: str, table: str) -> tuple[int, int] | None:
    """The character span of ``[table]`` up to the next table header (or the end)."""
    header = re.compile(rf"^\[{re.escape(table)}\][ \t]*(#.*)?$", re.MULTILINE)
    found = header.search(text)
    if found is None:
        return None
    after = re.compile(r"^[ \t]*\[", re.MULTILINE).search(text, found.end())
    return found.start(), after.start() if after else len(text)


def merge_toml(
    text: str | None, section: str, entry: dict[str, Any], path: Path
) -> tuple[str, list[str]]:
    """``text`` with ``[section.planning-memory]`` set to ``entry``; notes when left alone."""
    text = text or ""
    current = parse_toml(text, path).get(section, {}).get(SERVER_NAME)
    table = f"{section}.{SERVER_NAME}"
    if current is not None and not is_our_server(current):
        return text, [f"{path}: [{table}] is another command; left as it is"]
    if current is not None and {k: current.get(k) for k in entry} == entry:
        return text, []
    span = _table_span(text, table)
    if current is not None and span is None:
        return text, [f"{path}: {table} is not a [{table}] table; left as it is"]
    block = toml_table(table, entry)
    if span is not None:
        new = text[: span[0]] + block + _gap_after(text[span[1] :]) + text[span[1] :]
    else:
        new = text + ("\n" if text and not text.endswith("\n") else "")
        new += ("\n" if new.strip() else "") + block
    merged = parse_toml(new, path).get(section, {}).get(SERVER_NAME, {})
    if {k: merged.get(k) for k in entry} != entry:  # pragma: no cover - a guard, not a path
        raise InputError(f"could not merge [{table}]", path=str(path), hint="add it by hand")
    return new, []


def _gap_after(rest: str) -> str:
    return "\n" if rest.strip() else ""


def drop_toml(text: str | None, section: str, path: Path) -> str:
    """``text`` without our ``[section.planning-memory]`` table."""
    text = text or ""
    current = parse_toml(text, path).get(section, {}).get(SERVER_NAME)
    span = _table_span(text, f"{section}.{SERVER_NAME}")
    if not is_our_server(current) or span is None:
        return text
    head, tail = text[: span[0]].rstrip("\n"), text[span[1] :].lstrip("\n")
    if head and tail:
        return head + "\n\n" + tail
    return head + "\n" if head else tail


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
    """The inside of the managed block, or None when the file has none."""
    lines = _lines(text)
    span = _span(lines, path)
    return None if span is None else "".join(lines[span[0] + 1 : span[1]])


def set_block(text: str | None, inner: str, path: Path) -> str:
    """``text`` with its managed block holding ``inner`` (added at the end when absent)."""
    text = text or ""
    lines = _lines(text)
    block = f"{START_MARKER}\n{inner.rstrip()}\n{END_MARKER}\n"
    span = _span(lines, path)
    if span is None:
        if not text:
            return block
        return text + ("\n" if text.endswith("\n") else "\n\n") + block
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
    return head[:-1] if head.endswith("\n\n") else head


# -- YAML read: lists (Aider) ----------------------------------------------------------------------
_READ = re.compile(r"^read:[ \t]*(?P<value>[^#]*?)[ \t]*(#.*)?$")
_ITEM = re.compile(r"^(?P<pad>[ \t]+)-[ \t]*(?P<item>[^#]*?)[ \t]*(#.*)?$")


def _unquote(value: str) -> str:
    return value.strip().strip("'\"")


def _reads(lines: list[str], path: Path) -> tuple[int, int, list[str], bool] | None:
    """The top-level ``read:`` key: its first line, the line after it, its items and whether
    they are a block list (``- item`` lines); None when there is no such key."""
    for number, line in enumerate(lines):
        found = _READ.match(line.rstrip("\n"))
        if found is None:
            continue
        value = found.group("value")
        if value.startswith("[") and value.endswith("]"):
            return (
                number,
                number + 1,
                [_unquote(v) for v in value[1:-1].split(",") if v.strip()],
                False,
            )
        if value:
            return number, number + 1, [_unquote(value)], False
        stop, items = number + 1, []
        while stop < len(lines) and (item := _ITEM.match(lines[stop].rstrip("\n"))):
            items.append(_unquote(item.group("item")))
            stop += 1
        return number, stop, items, True
    return None


def set_reads(text: str | None, files: list[str], path: Path) -> str:
    """``text`` whose top-level ``read:`` lists ``files`` too (the key added when absent); a
    block list gets lines after its last item, its other lines and comments untouched."""
    lines = _lines(text)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    found = _reads(lines, path)
    items = found[2] if found else []
    missing = [f for f in files if f not in items]
    if not missing:
        return text or ""
    if found is None:
        return "".join(lines) + "read:\n" + "".join(f"  - {f}\n" for f in missing)
    first, stop, items, block = found
    if block and stop > first + 1:
        pad = _ITEM.match(lines[stop - 1].rstrip("\n"))
        indent = pad.group("pad") if pad else "  "
        new = "".join(f"{indent}- {f}\n" for f in missing)
        return "".join(lines[:stop]) + new + "".join(lines[stop:])
    return "".join(lines[:first]) + _read_lines([*items, *missing], block) + "".join(lines[stop:])


def _read_lines(items: list[str], block: bool) -> str:
    if block:
        return "read:\n" + "".join(f"  - {i}\n" for i in items)
    return "read: [" + ", ".join(items) + "]\n"


def drop_reads(text: str | None, files: list[str], path: Path) -> str:
    """``text`` whose ``read:`` no longer lists ``files`` (the key goes when left empty)."""
    lines = _lines(text)
    found = _reads(lines, path)
    if found is None or not set(files) & set(found[2]):
        return text or ""
    first, stop, items, block = found
    kept = [i for i in items if i not in files]
    if not kept:
        return "".join(lines[:first] + lines[stop:])
    if block:
        own = [n for n in range(first + 1, stop) if _item(lines[n]) in files]
        return "".join(line for n, line in enumerate(lines) if n not in own)
    return "".join(lines[:first]) + _read_lines(kept, block) + "".join(lines[stop:])


def _item(line: str) -> str | None:
    found = _ITEM.match(line.rstrip("\n"))
    return _unquote(found.group("item")) if found else None


def reads_of(text: str | None, path: Path) -> list[str]:
    found = _reads(_lines(text), path)
    return found[2] if found else []
