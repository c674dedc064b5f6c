"""Canonical JSON text in pure Python: what orjson refuses in the entity tree.

``encode`` gives the bytes of ``json.dumps(value, indent=2, sort_keys=True,
ensure_ascii=False)`` plus a newline, faster than ``json``'s indenting encoder, for the
values orjson will not take (an int past 64 bits); ``Unusual`` is raised for anything else
unusual (a non-string key, a NaN, a lone surrogate: text that is not UTF-8), which the caller
hands to ``codec`` (which refuses a lone surrogate with one error naming it).
"""

from __future__ import annotations

import math
from json.encoder import encode_basestring
from typing import Any


def encode(value: Any) -> bytes:
    out: list[str] = []
    _encode(value, "\n", out)
    out.append("\n")
    try:
        return "".join(out).encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: the scanner leaves such file names out
        raise Unusual from None


class Unusual(Exception):
    pass


def _encode(value: Any, newline: str, out: list[str]) -> None:
    kind = type(value)
    if kind is str:
        out.append(encode_basestring(value))
    elif kind is dict:
        _encode_dict(value, newline, out)
    elif kind is list:
        if not value:
            out.append("[]")
            return
        inner = newline + "  "
        sep = "[" + inner
        for item in value:
            out.append(sep)
            _encode(item, inner, out)
            sep = "," + inner
        out.append(newline + "]")
    elif value is True or value is False or value is None:
        out.append("true" if value is True else "false" if value is False else "null")
    elif kind is int:
        out.append(int.__repr__(value))
    elif kind is float and math.isfinite(value):
        out.append(float.__repr__(value))
    else:
        raise Unusual


def _encode_dict(value: dict[Any, Any], newline: str, out: list[str]) -> None:
    if not value:
        out.append("{}")
        return
    if not all(type(k) is str for k in value):
        raise Unusual
    inner = newline + "  "
    sep = "{" + inner
    for key in sorted(value):
        out.append(sep)
        out.append(encode_basestring(key))
        out.append(": ")
        _encode(value[key], inner, out)
        sep = "," + inner
    out.append(newline + "}")
