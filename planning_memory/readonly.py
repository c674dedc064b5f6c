"""Derived SQLite databases of a tree this process may only read: kept in memory, not on disk.

A checkout owned by another user, a read-only mount or a CI cache can be read but not written
(``paths.writable``), and a database another user left in a tree may be read but not written
(``wanted``). A reading command still needs the search index and the catalog of the record
files: each is then an in-memory database of this process, a copy of the file on disk when
one is there and readable (else empty), that its owner's freshness rules bring up to date
with the files, in memory. It is kept for the later handles of this process and thread on
the same file, and nothing is written under the tree.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
from collections import OrderedDict
from pathlib import Path
from urllib.parse import quote

from planning_memory.paths import writable

KEPT_MAX = 8  # in-memory databases kept per process (one per file and thread)
# read-only opens of the file to copy: with SQLite's locking (needs the WAL's shared-memory
# file, which a tree that was closed cleanly no longer has), else as a file nobody changes
_READ_ONLY = ("mode=ro", "immutable=1")

_KEPT: OrderedDict[tuple[str, int, int], sqlite3.Connection] = OrderedDict()


def _key(path: Path | str) -> tuple[str, int, int]:
    return os.fspath(path), os.getpid(), threading.get_ident()


def wanted(path: Path | str) -> bool:
    """True when this process cannot keep the derived database ``path`` on disk: its folder
    may not be written (``paths.writable``), or the file or one of its journals is there and
    may not be (left by another user, or by a command run with ``sudo``)."""
    text = os.fspath(path)
    if not writable(os.path.dirname(text)):
        return True
    files = [text + suffix for suffix in ("", "-wal", "-shm")]
    return any(os.path.lexists(f) and not os.access(f, os.W_OK) for f in files)


def connect(path: Path | str, *, in_memory: bool, timeout: float = 5.0) -> sqlite3.Connection:
    """A connection to the derived database ``path`` (checked by the caller:
    ``paths.check_database``): the file, or with ``in_memory`` this process's stand-in for it,
    made on first use from a copy of the file. The caller sets either up alike (pragmas,
    schema) and lets go of it with ``close``."""
    if not in_memory:
        return _connect(os.fspath(path), timeout=timeout)
    key = _key(path)
    conn = _KEPT.pop(key, None)
    if conn is None:
        conn = _copy_of(os.fspath(path))
    _KEPT[key] = conn
    while len(_KEPT) > KEPT_MAX:
        _KEPT.popitem(last=False)  # closed once its last handle lets go of it
    return conn


def close(conn: sqlite3.Connection) -> None:
    """Close ``conn``, unless it is an in-memory stand-in kept for later handles."""
    if not any(conn is kept for kept in _KEPT.values()):
        conn.close()


def discard(path: Path | str, *, in_memory: bool) -> None:
    """Throw the database ``path`` away (it is not a usable database): its file and journals,
    or the stand-in, which starts again empty."""
    if in_memory:
        _KEPT[_key(path)] = _connect(":memory:")
        return
    for suffix in ("", "-wal", "-shm"):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(f"{path}{suffix}")


def _copy_of(path: str) -> sqlite3.Connection:
    """A new in-memory database holding the file ``path``'s content; empty when there is no
    such file or it cannot be read as a database."""
    memory = _connect(":memory:")
    if not os.path.isfile(path):
        return memory
    for how in _READ_ONLY:
        try:
            with contextlib.closing(_connect(f"file:{quote(path)}?{how}", uri=True)) as disk:
                disk.backup(memory)
            return memory
        except sqlite3.Error:
            memory.close()
            memory = _connect(":memory:")
    return memory


def _connect(target: str, *, uri: bool = False, timeout: float = 5.0) -> sqlite3.Connection:
    return sqlite3.connect(
        target, timeout=timeout, uri=uri, isolation_level=None, check_same_thread=False
    )
