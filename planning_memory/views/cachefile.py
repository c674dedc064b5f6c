"""The render cache's files, each a base and a delta of the entries changed since it.

A run that changes a few entries rewrites a small delta, not the 10k of a large store.

``<name>`` (the base) holds every entry: a JSON line with its ``serial`` (the time it was
written and the writer's pid), then what the caller packs after it. ``<name>.delta`` is one
JSON object: the serial of the base it applies to, the entries set (a value) or dropped
(null) since that base, and the few small values (``head``) whole, which override the base's.
A delta for another base (a run stopped between writing a base and its delta) is ignored: that
base alone is current. Once a delta holds more than ``limit(entries)`` entries, the base is
written again whole and the delta emptied.

Both files carry the renderer's ``code_stamp`` (another renderer's are never used) and are
derived and gitignored, under ``memory/contextual/views/cache/``, written through the store
atomically but not fsynced: after a crash each is whole or absent, and every entry is checked
against the record files' stat before it is used.
The items of a view are packed as one JSON line (digests and sort keys) and the texts joined
by NUL characters (``pack_memo``).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from planning_memory.errors import PlanningMemoryError
from planning_memory.store import Store, writable

VERSION = 2
_MAX_BYTES = 1 << 30

_SEP = "\x00"

Packed = tuple[dict[str, Any], str]  # a base: its JSON line's values, then the rest


def limit(entries: int) -> int:
    """The most entries a delta holds before its base is written again: 64 + 1/64 of them
    (at 10k, a base rewrite every ~100 one-record saves)."""
    return 64 + entries // 64


class CacheFiles:
    """The cache files of one folder, and the serial and delta each was read with."""

    def __init__(self, folder: Path, store: Store, code: str) -> None:
        self.folder, self.store, self.code = folder, store, code
        self.serials: dict[str, str] = {}  # name -> its base's serial ("" when none was read)
        self.deltas: dict[str, dict[str, Any]] = {}  # name -> entries of its delta, as read
        self.seen: dict[str, tuple[int, int, int]] = {}  # file -> its stat as read or written

    def _load(self, name: str) -> bytes | None:
        self._saw(name)
        try:
            return self.store.read_bytes(self.folder / name, max_bytes=_MAX_BYTES)
        except PlanningMemoryError:
            return None

    def _saw(self, name: str) -> None:
        self.seen[name] = _stat(self.folder / name)

    def unchanged(self) -> bool:
        """True when no file read or written here was changed since by another run."""
        return all(_stat(self.folder / name) == stat for name, stat in self.seen.items())

    def read(self, name: str) -> tuple[Packed | None, dict[str, Any]]:
        """The base of ``name`` (None when it is missing, unreadable or from another
        renderer) and its delta: ``{"entries": {...}, "head": {...}}``, empty without one."""
        self.serials[name], self.deltas[name] = "", {}
        data = self._load(name)
        if data is None:
            return None, {}
        head, _, rest = data.partition(b"\n")
        try:
            value = json.loads(head)
        except ValueError:
            return None, {}
        if not isinstance(value, dict) or value.get("code") != self.code:
            return None, {}
        serial = value.get("serial")
        base = value, rest.decode("utf-8", "surrogatepass")
        if not isinstance(serial, str) or not serial:
            return base, {}
        self.serials[name] = serial
        delta = self._delta(name, serial)
        self.deltas[name] = dict(delta.get("entries", {}))
        return base, delta

    def _delta(self, name: str, serial: str) -> dict[str, Any]:
        data = self._load(name + ".delta")
        try:
            value = json.loads(data) if data is not None else None
        except ValueError:
            return {}
        if (
            not isinstance(value, dict)
            or value.get("code") != self.code
            or value.get("base") != serial
            or not isinstance(value.get("entries"), dict)
            or not isinstance(value.get("head"), dict)
        ):
            return {}
        return value

    def save(
        self,
        name: str,
        changes: dict[str, Any],
        head: dict[str, Any],
        whole: Callable[[], Packed | None],
        entries: int,
    ) -> None:
        """Keep ``changes`` (entries set or dropped since the last save) and ``head``: in the
        delta while it stays small and its base is the one read, else as a new base (packed
        by ``whole``) with an empty delta. Nothing in a tree this process may only read: the
        cache then lives in this process alone."""
        if not writable(self.folder):
            return
        delta = {**self.deltas.get(name, {}), **changes}
        serial = self.serials.get(name, "")
        if serial and len(delta) <= limit(entries):
            self._write_delta(name, serial, delta, head)
            return
        packed = whole()
        if packed is None:
            return
        value, rest = packed
        serial = f"{time.time_ns()}.{os.getpid()}"
        value = {"version": VERSION, "code": self.code, **value, **head, "serial": serial}
        line = json.dumps(value)
        self.store.write_bytes(
            self.folder / name,
            (line + "\n" + rest).encode("utf-8", "surrogatepass"),
            durable=False,  # derived: a cache file that is unreadable is rebuilt
        )
        self._saw(name)
        self.serials[name] = serial
        self._write_delta(name, serial, {}, head)

    def _write_delta(
        self, name: str, serial: str, entries: dict[str, Any], head: dict[str, Any]
    ) -> None:
        value = {"version": VERSION, "code": self.code, "base": serial}
        value |= {"entries": entries, "head": head}
        self.store.write_bytes(
            self.folder / (name + ".delta"), json.dumps(value).encode(), durable=False
        )
        self._saw(name + ".delta")
        self.deltas[name] = entries


def _stat(path: Path) -> tuple[int, int, int]:
    """What tells a file replaced or rewritten: inode, ctime and size (zeros when absent)."""
    try:
        st = os.lstat(path)
    except OSError:
        return 0, 0, 0
    return st.st_ino, st.st_ctime_ns, st.st_size


# -- the items of a view (``RenderCache._memo``) -----------------------------------------------
def pack_memo(memo: dict[str, list[Any]]) -> tuple[dict[str, Any], str] | None:
    """A memo as its JSON line (digests and keys) and its texts joined by NUL; None when a
    text holds a NUL (never: rendered texts hold none)."""
    texts = [got[-1] for got in memo.values()]
    if any(_SEP in text for text in texts):
        return None
    entries = [[digest, *got[:-1]] for digest, got in memo.items()]
    return {"entries": entries}, _SEP.join(texts)


def unpack_memo(
    base: tuple[dict[str, Any], str] | None, delta: dict[str, Any], width: int
) -> tuple[dict[str, list[Any]], set[str]] | None:
    """A memo and the digests of its unclean items from a base ``pack_memo`` wrote and its delta,
    entries of ``width`` values; None when that does not hold together."""
    if base is None:
        return None
    value, rest = base
    entries, texts = value.get("entries"), rest.split(_SEP) if rest else []
    if not isinstance(entries, list) or len(entries) != len(texts):
        return None
    if not all(isinstance(e, list) and len(e) == width and isinstance(e[0], str) for e in entries):
        return None
    memo = {e[0]: [*e[1:], t] for e, t in zip(entries, texts, strict=True)}
    for digest, got in delta.get("entries", {}).items():
        if got is None:
            memo.pop(digest, None)
        elif isinstance(got, list) and len(got) == width and isinstance(got[-1], str):
            memo[digest] = got
        else:
            return None
    unclean = delta.get("head", {}).get("unclean", value.get("unclean"))
    if not isinstance(unclean, list) or not all(isinstance(d, str) for d in unclean):
        return None
    return memo, set(unclean) & memo.keys()
