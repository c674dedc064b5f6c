"""What a signature says to the call linker: parameter types, arity, the declared result. Pure.

Signatures are stored as written (``(String html, Parser parser) -> Document`` in Java and
Rust, ``(name string) (*Command, error)`` in Go), at most ``MAX_SIGNATURE`` characters; a
signature cut short says nothing. Java calls end in their argument list (``Jsoup.parse(
String,_)``): an argument's type where the source says it simply (a literal, ``new X()``, a
typed name), else ``_``. ``accepts`` tells whether a method can take such arguments: by
count (a ``T...`` parameter takes any number from there on), then by type where a wrong
type is certain (a ``String`` for a ``File``, a number for a ``String``, a lambda for a
``String``, a JDK ``File`` for a ``Path``); a class passed for another class may be a
subclass of it and is accepted.
``exact`` tells the overloads whose parameters are the arguments' types, which Java picks
over the others.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import NamedTuple

_ANNOTATION = re.compile(r"@[\w.]+(?:\s*\([^()]*\))?\s*")
_GENERICS = re.compile(r"<[^<>]*>")
_MODIFIERS = frozenset({"final", "mut", "ref", "const"})
_NUMBERS = frozenset(
    {"int", "long", "short", "byte", "char", "float", "double"}
    | {"Integer", "Long", "Short", "Byte", "Character", "Float", "Double", "Number"}
)
_PRIMITIVES = frozenset({"int", "long", "short", "byte", "char", "float", "double", "boolean"})
_CLOSED = _PRIMITIVES | _NUMBERS | {"Boolean", "String"}  # no class passes for these
_ANY = frozenset({"Object", "Serializable", "Comparable"})  # every literal passes for these
_OF = {"String": {"String", "CharSequence"}, "boolean": {"boolean", "Boolean"}}
LAMBDA = "->"  # a Java argument that is a lambda or a method reference
_CLOSEABLE = ("Closeable", "AutoCloseable")
_STREAM = ("InputStream", *_CLOSEABLE)
_READER = ("Reader", "Readable", *_CLOSEABLE)
# JDK classes and every type they may be passed for (no repository type is among them)
_JDK_SUPERTYPES = {
    "File": ("Serializable", "Comparable"),
    "Path": ("Comparable", "Iterable", "Watchable"),
    "URL": ("Serializable",),
    "URI": ("Serializable", "Comparable"),
    "InputStream": _CLOSEABLE,
    "ByteArrayInputStream": _STREAM,
    "FileInputStream": _STREAM,
    "BufferedInputStream": ("FilterInputStream", *_STREAM),
    "Reader": ("Readable", *_CLOSEABLE),
    "StringReader": _READER,
    "BufferedReader": _READER,
    "InputStreamReader": _READER,
    "StringBuilder": ("CharSequence", "Appendable", "Serializable", "Comparable"),
    "Charset": ("Comparable",),
    "GZIPInputStream": ("InflaterInputStream", "FilterInputStream", *_STREAM),
    "List": ("Collection", "Iterable", "SequencedCollection"),
    "Set": ("Collection", "Iterable"),
    "Collection": ("Iterable",),
    "Map": (),
    "Iterator": (),
}
_TYPE_VARIABLE = re.compile(r"[A-Z][A-Z0-9]?")
_ARGUMENT = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*(?:\[\])*")  # ``int``, ``String[]``
_GO_TYPE = re.compile(r"\*?([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)?)(?:\[.*\])?")
_RUST_TYPE = re.compile(r"(?:&(?:'\w+\s*)?(?:mut\s+)?)?([A-Z]\w*)")
_RUST_WRAPPED = re.compile(r"(?:[a-z_]\w*::)*(?:Result|Option)<(.*)>")


class Params(NamedTuple):
    """A method's parameter types (simple names, ``X[]`` for arrays) and whether the last
    is a ``T...``."""

    types: tuple[str, ...]
    varargs: bool


def split_arguments(call: str) -> tuple[str, tuple[str, ...] | None]:
    """``a.b(String,_)`` -> ``("a.b", ("String", "_"))``; a call without its argument list
    (or cut short) -> ``(call, None)``."""
    if not call.endswith(")"):
        return call, None
    opening = call.rfind("(")
    if opening >= 0 and call.find(")", opening + 1) == len(call) - 1:  # none inside (most)
        inner = call[opening + 1 : -1]
        return call[:opening], tuple(inner.split(",")) if inner else ()
    depth = 0
    for i in range(len(call) - 1, -1, -1):
        char = call[i]
        if char == ")":
            depth += 1
        elif char == "(":
            depth -= 1
            if depth == 0:
                inner = call[i + 1 : -1]
                return call[:i], tuple(inner.split(",")) if inner else ()
    return call, None


@lru_cache(maxsize=65536)
def parameters(signature: str) -> Params | None:
    """The parameters of a Java signature, or None when it is cut short or unreadable."""
    inner = _parenthesised(signature)
    if inner is None:
        return None
    inner = _ANNOTATION.sub("", inner).strip()
    if not inner:
        return Params((), False)
    types = []
    varargs = False
    for part in _top_level(inner):
        words = [w for w in part.replace("...", " ... ").split() if w not in _MODIFIERS]
        if len(words) < 2:
            return None
        varargs = "..." in words
        kind = "".join(w for w in words[:-1] if w != "...")
        if words[-1].endswith("[]"):  # ``String args[]``
            kind += "[]"
        types.append(simple(kind))
    return Params(tuple(types), varargs)


@lru_cache(maxsize=65536)
def simple(kind: str) -> str:
    """A type as compared: without type arguments and package (``java.util.List<X>`` ->
    ``List``), a nested class with its outer one (``Connection.Response``), arrays kept
    (``String[]``)."""
    previous = None
    while previous != kind:
        previous, kind = kind, _GENERICS.sub("", kind)
    array = kind.endswith("[]")
    parts = kind.replace("[]", "").replace(" ", "").split(".")
    while len(parts) > 1 and not parts[0][:1].isupper():
        parts.pop(0)
    kind = ".".join(parts)
    return kind + "[]" if array else kind


@lru_cache(maxsize=65536)
def accepts(params: Params, args: tuple[str, ...]) -> bool:
    """Whether a method with ``params`` can take ``args`` (see the module docstring)."""
    types, count = params.types, len(args)
    if params.varargs:
        if count < len(types) - 1:
            return False
    elif count != len(types):
        return False
    for i, arg in enumerate(args):
        if i < len(types) - 1 or not params.varargs:
            if not _passes(arg, types[i]):
                return False
        elif not (_passes(arg, types[-1]) or _passes(arg, types[-1] + "[]")):  # ``T...``
            return False
    return True


def exact(params: Params | None, args: tuple[str, ...]) -> bool:
    """Whether ``params`` are the types of ``args`` exactly (a lambda for any interface)."""
    if params is None or params.varargs or len(params.types) != len(args):
        return False
    return all(
        arg == LAMBDA or arg.rpartition(".")[2] == param.rpartition(".")[2]
        for arg, param in zip(args, params.types, strict=True)
    )


def _passes(arg: str, param: str) -> bool:
    """Whether a value of type ``arg`` (``_``: not known) may be passed for ``param``."""
    param = param.rpartition(".")[2]  # ``Map.Entry``: compared by its own name
    arg = arg.rpartition(".")[2]
    if arg == LAMBDA:  # only for a functional interface: a class or interface of its own
        return not (
            param in _CLOSED
            or param in _ANY
            or param.endswith("[]")
            or _TYPE_VARIABLE.fullmatch(param)
        )
    if arg == "_" or arg == param or param in _ANY or _TYPE_VARIABLE.fullmatch(param):
        return True
    if arg == "null":
        return param not in _PRIMITIVES
    if arg in _OF:
        return param in _OF[arg]
    if arg in _NUMBERS:
        return param in _NUMBERS
    if arg in _JDK_SUPERTYPES:  # ``File`` for ``Path``: unrelated
        return param in _JDK_SUPERTYPES[arg]
    if arg.endswith("[]") != param.endswith("[]") and not _TYPE_VARIABLE.fullmatch(arg):
        return False  # an array for a class, a class for an array
    return param not in _CLOSED


@lru_cache(maxsize=65536)  # the same signature is read for every call that reaches it
def result_type(
    signature: str, family: str, element: bool = False, value: bool = False
) -> str | None:
    """The type a function's signature declares it returns, as a name the linker can look
    up (Go ``*m.Command`` -> ``m.Command``, Java ``List<X>`` -> ``List``, Rust
    ``&mut Self`` -> ``Self``); None when it returns nothing, several things (the first of
    a Go result list counts), or a type that is not a plain name. ``element``: in Go, the
    type of the elements of the slice it returns (``[]*Command`` -> ``Command``); in Rust,
    of what ``?`` gives of the ``Result`` or ``Option`` it returns. ``value``: in Java, a
    primitive or an array as well (the type of an argument, not a receiver)."""
    inner = _parenthesised(signature)
    if inner is None:
        return None
    rest = signature[len(inner) + 2 :].strip()
    if family == "go":
        if rest.startswith("("):
            results = _parenthesised(rest)
            first = _top_level(results)[0].split() if results else []
            rest = first[-1] if first else ""
        if element != rest.startswith("[]"):
            return None
        match = _GO_TYPE.fullmatch(rest.removeprefix("[]"))
        return match.group(1) if match else None
    rest = rest.removeprefix("->").strip()
    if family == "java":
        kind = simple(rest)
        if value and kind != "void" and _ARGUMENT.fullmatch(kind):
            return kind
        return kind if kind.isidentifier() and kind not in _PRIMITIVES and not element else None
    if element:  # ``F()?``: the ``T`` of ``Result<T, E>``, ``io::Result<T>``, ``Option<T>``
        wrapped = _RUST_WRAPPED.fullmatch(rest)
        rest = _top_level(wrapped.group(1))[0] if wrapped else ""
    match = _RUST_TYPE.fullmatch(rest)
    return match.group(1) if match else None


def _parenthesised(text: str) -> str | None:
    """What the parentheses opening ``text`` hold, or None when they do not close."""
    if not text.startswith("("):
        return None
    depth = 0
    for i, char in enumerate(text):
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0:
                return text[1:i]
    return None


def _top_level(text: str) -> list[str]:
    """``text`` split at the commas outside brackets."""
    parts, depth, start = [], 0, 0
    for i, char in enumerate(text):
        if char in "<([{":
            depth += 1
        elif char in ">)]}":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    parts.append(text[start:].strip())
    return parts
