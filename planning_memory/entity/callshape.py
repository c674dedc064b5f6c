"""The shape of a call's text, as the call linker reads it. Pure.

``read`` tells a bare call (``name()``) from one on the caller's own object (``self.name()``),
a dotted one (``a.b.name()``: a module, a class, or a value) and an opaque one (``f().name()``,
``"s".name()``, ``self.a.name()``); it takes a Java call's argument list off (``Jsoup.parse(
String)``), and marks a Java or Rust call made on a type or through a path (``String.valueOf``,
``Vec::new``), which the linker never guesses.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import NamedTuple

from planning_memory.entity.calltypes import split_arguments

OWN = ("self.", "this.", "cls.", "Self.")
# languages whose calls on values of unknown type (``x.name()``) are guessed by name (Go links
# only calls it can place: own methods, package functions, types' functions)
GUESSING = frozenset({"java", "rust"})
NAME = re.compile(r"\.+|\.*#?[\w$]+(?:\.#?[\w$]+)*")  # a dotted name, ``#private`` too
HEAD = re.compile(r"[\w$]+")


class Call(NamedTuple):
    """A call's text as the linker reads it: ``name`` is its last segment, ``form`` one of
    ``bare`` (``name()``), ``own`` (``self.name()``), ``dotted`` (``a.b.name()``) or
    ``opaque`` (``self.a.name()``, ``f().name()``, ``"s".name()``: no class or module
    named); ``text`` has ``::`` as ``.``, and no argument list."""

    name: str
    form: str
    text: str
    splits: tuple[tuple[str, str], ...] = ()  # dotted: (receiver, qualified name) pairs
    args: tuple[str, ...] | None = None  # Java: the argument types (``_``: not known)
    static: bool = False  # on a type or a path (``Vec::new``, ``String.valueOf``): no guess


@lru_cache(maxsize=1 << 16)  # the same call texts come back in file after file
def read(call: str, family: str) -> Call | None:
    """The shape of a call's text, or None for a macro (``name!``) and a ``new X`` outside
    Java and JS/TS (there a call of ``X``'s constructor: ``X.X``, ``X.constructor``)."""
    if call.startswith("new "):
        return _construction(call[4:], family)
    if call.endswith("!"):
        return None
    args = None
    if family == "java":
        call, args = split_arguments(call)
    text = call.replace("::", ".")
    if call.startswith("self::"):  # Rust: an item of this module
        text = text[5:]
    name = text.rsplit(".", 1)[-1]
    if text == name:
        return Call(name, "bare", text, args=args)
    if text.startswith(OWN):
        return Call(name, "own" if text.count(".") == 1 else "opaque", text, args=args)
    static = family in GUESSING and _is_static(call, family)
    if not NAME.fullmatch(text):
        return Call(name, "opaque", text, args=args, static=static)
    return Call(name, "dotted", text, _splits(text), args, static)


def _construction(call: str, family: str) -> Call | None:
    """``new X(...)``: a call on the type ``X`` of its constructor (Java's is named after
    the class, with the call's argument types; JS/TS's is ``constructor``)."""
    args = None
    if family == "java":
        call, args = split_arguments(call)
    elif family != "js":
        return None
    if not NAME.fullmatch(call) or call.startswith("."):
        return None
    text = f"{call}.{call.rpartition('.')[2] if family == 'java' else 'constructor'}"
    return Call(text.rpartition(".")[2], "dotted", text, _splits(text), args, True)


def _is_static(call: str, family: str) -> bool:
    """Whether a Java or Rust call is made on a type or through a path rather than on a
    value: its first name is a type's (``String.valueOf``, ``Jsoup.parse().x``) or, in
    Rust, its receiver is a path (``Vec::new``, ``process::exit``)."""
    head = HEAD.match(call)
    first = head.group(0) if head else ""
    if first[:1].isupper() and not first.isupper():  # ``Jsoup``, not ``LOG`` nor ``URL``
        return True
    if family == "rust":
        return "::" in call[: call.find("(")] if "(" in call else "::" in call
    return first == "super"


def _splits(text: str) -> tuple[tuple[str, str], ...]:
    """Each way to read ``text`` as a receiver and a qualified name, longest receiver first:
    ``a.B.m`` is ``(a.B, m)`` or ``(a, B.m)``; ``.m`` is ``(., m)``."""
    rest = text.lstrip(".")
    lead, parts = text[: len(text) - len(rest)], rest.split(".")
    found = [
        (lead + ".".join(parts[:i]), ".".join(parts[i:])) for i in range(len(parts) - 1, 0, -1)
    ]
    if lead:
        found.append((lead, rest))
    return tuple(found)
