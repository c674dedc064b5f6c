"""The one freshness rule: when a file or folder read before can be trusted unchanged.

A file is known by its ``(ctime_ns, size)``: the change time, which no tool can set back (an
mtime can be: ``touch -d``, ``git``, archive extractors), and the size. File systems stamp
times coarsely, so a stamp younger than ``RACY_NS`` is not trusted: it is kept as 0, which
equals no later stamp, and the file is read again at the next look (and its content compared).
A folder is known by its ``ctime_ns`` and inode: creating, removing or renaming a file in it
(every write of this package, git's and most editors') moves its ctime; a folder replaced
by another has another inode. A file rewritten in place leaves its folder's stamp as it was:
a full look stats every file.

Pure: callers pass the ``os.stat_result`` and the time.
"""

from __future__ import annotations

import os

RACY_NS = 100_000_000  # 0.1 s


def trusted(ns: int, now: int) -> int:
    """``ns``, or 0 when it is too recent to trust."""
    return ns if now - ns > RACY_NS else 0


def file_stamp(st: os.stat_result, now: int) -> tuple[int, int]:
    """``(ctime_ns, size)`` of a file; ctime 0 when too recent to trust."""
    return trusted(st.st_ctime_ns, now), st.st_size


def folder_stamp(st: os.stat_result) -> str:
    """A folder's stamp: its ctime and inode."""
    return f"{st.st_ctime_ns} {st.st_ino}"
