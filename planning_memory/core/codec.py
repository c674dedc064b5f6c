"""Canonical JSON: one byte form per value, and a strict, bounded reader.

Canonical text is UTF-8, keys sorted, 2-space indent, LF, a trailing newline, no NaN. The
reader refuses what an editor or a merge can leave behind (conflict markers, a BOM, duplicate
keys, NaN, runaway nesting) with an error that names the line and column. No file I/O here.

orjson writes the canonical bytes (the bytes of ``json.dumps(indent=2, sort_keys=True,
ensure_ascii=False)``, 10-30x faster than ``json``'s pure-Python indenting encoder) and reads
bytes that need no checks; ``json`` does what orjson refuses or would write otherwise.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

import orjson

from planning_memory.errors import DecodeError, LimitError

MAX_BYTES = 32 * 1024 * 1024
MAX_DEPTH = 64
MAX_DIGITS = 4300  # Python's own int() limit; a longer number is refused, not a crash
_CONFLICT_RE = re.compile(r"^(<{7}|={7}|>{7})( |$)", re.MULTILINE)
_SURROGATE_ESCAPE_RE = re.compile(r"\\u[dD][89a-fA-F]")


def dumps(value: Any) -> str:
    """The canonical text of ``value``."""
    return json.dumps(value, sort_keys=True, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def dump_bytes(value: Any) -> bytes:
    """The canonical UTF-8 bytes of ``value`` (``dumps``, encoded); a string that UTF-8 cannot
    hold is a ``DecodeError`` (``check_encodable``).

    orjson writes them: the same bytes as ``json`` for dicts, lists, strings, bools, None,
    ints up to 64 bits and floats, except that it prints a float under 1e-4 as ``0.00001`` or
    ``1e-7`` where ``repr`` gives ``1e-05`` / ``1e-07``; output holding either shape (in a
    number or in a string) goes through ``json``, as does what orjson refuses (a huge int, a
    key that is not a string, a lone surrogate, NaN)."""
    try:
        data = orjson.dumps(value, option=_ORJSON_OPTIONS)
    except (TypeError, orjson.JSONEncodeError):
        pass
    else:
        if b"0.0000" not in data and not _SHORT_EXPONENT.search(data):
            return data
    text = dumps(value)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        check_encodable(value)
        raise


_ORJSON_OPTIONS = orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS | orjson.OPT_APPEND_NEWLINE
_SHORT_EXPONENT = re.compile(rb"e-\d(?!\d)")


def loads_lenient(data: bytes | str) -> Any:
    """JSON bytes decoded without the reader's checks (derived files, bytes that passed them
    once): by orjson (1.5-2x ``json``), else by ``json`` (a NaN, a 70-bit int, a lone
    surrogate escape); ValueError when neither can read them."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        return json.loads(data)


def compact_bytes(value: Any) -> bytes:
    """``value`` as compact JSON (no indent, key order kept), for derived files and sizes; a
    string that is not UTF-8 or a huge int is written by ``json``, escaped to ASCII."""
    try:
        return orjson.dumps(value)
    except (orjson.JSONEncodeError, TypeError):
        return json.dumps(value).encode("ascii")


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)
    if len(result) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _DuplicateKey(key)
            seen.add(key)
    return result


class _DuplicateKey(Exception):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _no_constant(name: str) -> Any:
    raise _BadConstant(f"{name} is not valid JSON")


def _finite_float(text: str) -> float:
    value = float(text)
    if value in (math.inf, -math.inf):
        raise _BadConstant(f"number {_clip(text)} is out of range")
    return value


def _bounded_int(text: str) -> int:
    if len(text) > MAX_DIGITS:
        raise _BadConstant(f"integer with {len(text):,} digits is too large")
    return int(text)


def _clip(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[:limit] + "..."


class _BadConstant(Exception):
    pass


def _line_col(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    col = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return line, col


def decode_text(data: bytes, *, path: str | None = None, max_bytes: int = MAX_BYTES) -> str:
    """UTF-8 text of ``data`` or a DecodeError naming the byte position."""
    if len(data) > max_bytes:
        raise LimitError(
            f"file is {len(data):,} bytes, over the {max_bytes:,}-byte limit", path=path
        )
    if data.startswith(b"\xef\xbb\xbf"):
        raise DecodeError(
            "starts with a UTF-8 byte order mark",
            path=path,
            line=1,
            column=1,
            hint="save the file as UTF-8 without BOM",
        )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line, col = _line_col(data[: exc.start].decode("utf-8", "replace"), exc.start)
        raise DecodeError(
            f"invalid UTF-8 byte 0x{data[exc.start]:02x}",
            path=path,
            line=line,
            column=col,
            hint="save the file as UTF-8",
        ) from None


def loads(
    data: bytes | str,
    *,
    path: str | None = None,
    max_bytes: int = MAX_BYTES,
    max_depth: int = MAX_DEPTH,
) -> Any:
    """Parse strict JSON; every failure is a DecodeError/LimitError with a position."""
    text = decode_text(data, path=path, max_bytes=max_bytes) if isinstance(data, bytes) else data
    if isinstance(data, str) and len(data) > max_bytes:
        raise LimitError(f"text is over the {max_bytes:,}-byte limit", path=path)
    if "\x00" in text:
        line, col = _line_col(text, text.index("\x00"))
        raise DecodeError("contains a NUL byte", path=path, line=line, column=col)
    marker = _has_marker_run(text) and _CONFLICT_RE.search(text)
    if marker:
        line, _ = _line_col(text, marker.start())
        raise DecodeError(
            "contains git conflict markers",
            path=path,
            line=line,
            column=1,
            hint="run `pmem resolve` or fix the merge by hand",
        )
    try:
        value = json.loads(
            text,
            object_pairs_hook=_no_duplicates,
            parse_constant=_no_constant,
            parse_float=_finite_float,
            parse_int=_bounded_int,
        )
    except json.JSONDecodeError as exc:
        raise DecodeError(
            f"invalid JSON: {exc.msg}", path=path, line=exc.lineno, column=exc.colno
        ) from None
    except _DuplicateKey as exc:
        raise DecodeError(f"duplicate key {_clip(repr(exc.key))}", path=path) from None
    except _BadConstant as exc:
        raise DecodeError(str(exc.args[0]), path=path) from None
    except RecursionError:
        raise LimitError(f"nesting deeper than {max_depth} levels", path=path) from None
    # a cheap bound first: fewer brackets than the limit cannot nest deeper than it
    if text.count("{") + text.count("[") > max_depth and depth(value, max_depth + 1) > max_depth:
        raise LimitError(f"nesting deeper than {max_depth} levels", path=path)
    if _SURROGATE_ESCAPE_RE.search(text):
        check_encodable(value, path)
    return value


# The digests of the bytes ``loads`` took, in this process (oldest first): read again, the
# same bytes give the same value, and ``json.loads`` alone decodes them 2-3x faster.
_PASSED: dict[str, None] = {}
_PASSED_MAX = 8192


def loads_known(data: bytes, key: str) -> Any:
    """``loads(data)`` for bytes whose digest is ``key`` (the caller's, e.g. the store's
    sha256): bytes that passed every check once are decoded without the checks (a session
    file or the config, read several times in a command and again in each hook a resident
    process answers)."""
    if key in _PASSED:
        return loads_lenient(data)
    value = loads(data)
    if len(_PASSED) >= _PASSED_MAX:
        _PASSED.clear()
    _PASSED[key] = None
    return value


def _has_marker_run(text: str) -> bool:
    return "<<<<<<<" in text or "=======" in text or ">>>>>>>" in text


def check_encodable(value: Any, path: str | None = None) -> None:
    """Refuse a string that could never be written as UTF-8: an unpaired surrogate, from a
    ``"\\ud800"`` escape (valid to Python's JSON reader) or from a command-line argument
    that was not valid UTF-8 (Python decodes such bytes to surrogates). The error names the
    value's JSON path."""
    stack: list[tuple[Any, str]] = [(value, "$")]
    while stack:
        item, where = stack.pop()
        if isinstance(item, dict):
            stack.extend((key, f"{where} (a key)") for key in item)
            stack.extend((v, f"{where}.{k}") for k, v in item.items())
        elif isinstance(item, list):
            stack.extend((v, f"{where}[{i}]") for i, v in enumerate(item))
        elif isinstance(item, str) and not item.isascii():
            try:
                item.encode("utf-8")
            except UnicodeEncodeError as exc:
                code = ord(item[exc.start])
                raise DecodeError(
                    f"unpaired surrogate \\u{code:04x} in a string: not valid UTF-8 text",
                    path=path,
                    json_path=where,
                    hint=None if path else "text given to pmem must be UTF-8: check the locale",
                ) from None


def depth(value: Any, stop: int = 1 << 30) -> int:
    """Nesting depth of containers in ``value`` (a scalar is 0); stops counting at ``stop``.
    Level by level, looking only at the containers (a scalar is never queued)."""
    level = 0
    layer = [value] if isinstance(value, (dict, list)) else []
    while layer:
        level += 1
        if level >= stop:
            return level
        below = []
        for item in layer:
            for child in item.values() if isinstance(item, dict) else item:
                if isinstance(child, (dict, list)):
                    below.append(child)
        layer = below
    return level
