"""Collision-free, time-sortable ids: ``<prefix>_<ULID>``."""

from __future__ import annotations

import os
import re
import time

from planning_memory.errors import UnsafePathError

_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
PREFIXES = frozenset({"pat", "mis", "lrn", "ses", "msg", "dec", "err"})
ID_RE = re.compile(r"^[a-z]{2,8}_[0-9A-Za-z]{1,64}\Z")  # \Z: "$" would allow a final "\n"
ULID_RE = re.compile(r"^[0-9A-HJKMNP-TV-Z]{26}\Z")

_last = (0, 0)  # (millis, random) of the previous ULID in this process, for monotonicity


def _encode(value: int, length: int) -> str:
    chars = []
    for _ in range(length):
        value, rem = divmod(value, 32)
        chars.append(_CROCKFORD[rem])
    return "".join(reversed(chars))


def ulid(now_ms: int | None = None) -> str:
    """A 26-character ULID; monotonic within one process and millisecond."""
    global _last
    millis = int(time.time() * 1000) if now_ms is None else now_ms
    rand = int.from_bytes(os.urandom(10), "big")
    if millis == _last[0] and rand <= _last[1]:
        rand = (_last[1] + 1) % (1 << 80)
    _last = (millis, rand)
    return _encode(millis, 10) + _encode(rand, 16)


def new_id(prefix: str, now_ms: int | None = None) -> str:
    """A new id such as ``pat_01HV...``."""
    if prefix not in PREFIXES:
        raise ValueError(f"unknown id prefix {prefix!r}")
    return f"{prefix}_{ulid(now_ms)}"


def check_id(value: str) -> str:
    """Return ``value`` if it is a well-formed id (and so a safe file name), else raise."""
    if not isinstance(value, str) or not ID_RE.match(value):
        raise UnsafePathError(
            f"invalid id {value!r}: expected <prefix>_<letters and digits>, e.g. pat_01HV...",
            record_id=str(value),
        )
    return value
