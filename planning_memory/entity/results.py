"""Calls on what a call returns, and the overloads a Java call can take. Pure.

``Types`` reads the linker's index of functions: each type's methods, each Java method's
parameters.

``f().name()`` (also ``Type.f().name()``, and what the extractors record for a name given a
call's result, ``c := NewCommand(); c.Name()``) reaches the methods ``name`` of the type the
functions ``f`` links to declare they return (``calltypes.result_type``): in Go, of the
package that names the type; in Java and Rust, of the files that see the function's file;
in Java, else of the class's bases, as its constructors' ``super(...)`` calls name them. A
type that is not the repository's has none.
"""

from __future__ import annotations

import posixpath
import re
from typing import TYPE_CHECKING

from planning_memory.entity import calltypes
from planning_memory.entity.callshape import OWN, Call, read
from planning_memory.entity.entities import qualified_of

if TYPE_CHECKING:
    from planning_memory.entity.linking import Linker, _Site

METHODS = frozenset({"method", "constructor"})
_CLASS = re.compile(r"[A-Z]\w*(?:\.[A-Z]\w*)*")
_BASE_DEPTH = 6  # Java: bases followed at most this far up


class Types:
    """What the linker knows of types: each type's methods as a file names the type, each
    Java method's parameters (memoised)."""

    def __init__(self, linker: Linker) -> None:
        self.linker = linker
        self._params: dict[str, calltypes.Params | None] = {}  # Java: key -> its parameters
        self._members: dict[tuple[str, str, str], list[tuple[str, str]]] = {}  # see members
        self._results: dict[tuple[str, str], str] = {}  # see arguments
        self._bases: dict[tuple[str, str], list[tuple[str, str]]] = {}  # see members
        self._file_sets: dict[tuple[str, str | None], set[str]] = {}  # see _files

    def accepts(self, definition: tuple[str, str], args: tuple[str, ...]) -> bool:
        """Whether the Java method ``definition`` (file, key) can take ``args``."""
        params = self._parameters(definition)
        return params is None or calltypes.accepts(params, args)

    def _parameters(self, definition: tuple[str, str]) -> calltypes.Params | None:
        key = definition[1]
        if key in self._params:
            return self._params[key]
        params = self._params[key] = calltypes.parameters(self.signature(definition))
        return params

    def most_specific(
        self, found: list[tuple[str, str]], args: tuple[str, ...]
    ) -> list[tuple[str, str]]:
        """Among the Java overloads ``found`` that can take ``args``, those whose parameters
        are the arguments' types exactly, when every argument's type is known (Java picks
        the most specific overload, and no other is more specific than an exact one)."""
        if len(found) < 2 or "_" in args:
            return found
        exact = [d for d in found if calltypes.exact(self._parameters(d), args)]
        return exact or found

    def arguments(self, home: str, args: tuple[str, ...]) -> tuple[str, ...]:
        """Java ``args`` as made in ``home``, an ``@Type.name`` (what a method of a class
        returns) read as the result type its methods of that name all declare, else ``_``."""
        if not any(a.startswith("@") for a in args):
            return args
        return tuple(self._result(home, a[1:]) if a.startswith("@") else a for a in args)

    def _result(self, home: str, method: str) -> str:
        memo = (home, method)
        found = self._results.get(memo)
        if found is None:
            kind, _, name = method.rpartition(".")
            kinds = {
                calltypes.result_type(self.signature(d), "java", value=True)
                for d in self.members(kind, home, name)
            }
            found = self._results[memo] = kinds.pop() or "_" if len(kinds) == 1 else "_"
        return found

    def _count(self, definition: tuple[str, str]) -> int | None:
        """A Java method's parameter count (None: not known): an override shadows the
        base's method of that count."""
        params = self._parameters(definition)
        return len(params.types) if params is not None else None

    def signature(self, definition: tuple[str, str]) -> str:
        target, key = definition
        value = self.linker.functions.of(target).get(key, {}).get("signature", "")
        return value if isinstance(value, str) else ""

    def members(
        self, kind: str, home: str, name: str, depth: int = _BASE_DEPTH
    ) -> list[tuple[str, str]]:
        """The methods ``name`` of the type ``kind`` as the file ``home`` names it (Go:
        ``T`` of home's package, ``pkg.T`` of a package home imports; Java and Rust: a type
        of the files home sees); in Java, else those its bases define (``bases``)."""
        memo = (kind, home, name)
        found = self._members.get(memo)
        if found is None:
            graph = self.linker.graph
            family = graph.family(home)
            package, dot, type_name = kind.rpartition(".")
            files = self._files(family, home, package if family == "go" and dot else None)
            # a Java type is its class's name with its outer classes' (``Connection.Response``);
            # a Rust type may sit in an inline module (``tests.TestTime``)
            kept = kind if family == "java" else type_name
            wanted, nested = f"{kept}.{name}", f".{kept}.{name}"
            defs = self.linker.by_name.get(name, {})
            found = [
                (target, key)
                for target in files & defs.keys()
                for key, _kind, q in defs[target]
                if q == wanted or (family != "go" and q.endswith(nested))
            ]
            if family == "java" and not dot and len(found) > 1:
                # a simple name is the class of that name nested where ``home`` names it
                # (``Builder`` in CommandLine.java is CommandLine.Builder) before another's
                local = [d for d in found if d[0] == home]
                found = local or found
            if family == "java" and depth > 0:  # and the overloads its bases add
                counts = {self._count(d) for d in found}
                bases = self._bases.get((kind, home))
                if bases is None:  # the same for every method name looked up on the type
                    bases = self._bases[kind, home] = self.bases(kind, files)
                for base, base_home in bases:
                    inherited = self.members(base, base_home, name, depth - 1)
                    found += [d for d in inherited if self._count(d) not in counts]
            self._members[memo] = found
        return found

    def _files(self, family: str, home: str, package: str | None) -> set[str]:
        """The files whose types ``home`` names: Go, those of its own package, or of the
        package it imports as ``package``; else the files ``home`` sees (indexed, memoised:
        a file names many types)."""
        memo = (home, package)
        files = self._file_sets.get(memo)
        if files is None:
            graph = self.linker.graph
            if family != "go":
                files = set(graph.visible(home))
            elif package is not None:
                imports = graph.files.get(home, {}).get("imports", {})
                folders = [t for m, t in imports.items() if t and graph.go_package(m, t) == package]
                files = {p for folder in folders for p in graph.package(folder, "go")}
            else:
                files = set(graph.package(posixpath.dirname(home) or ".", "go"))
            self.linker.index(files)
            self._file_sets[memo] = files
        return files

    def bases(self, type_name: str, files: set[str]) -> list[tuple[str, str]]:
        """The bases of the Java class ``type_name`` defined in ``files``, as the file of
        the class names them: what its constructors' ``super(...)`` calls (recorded as
        ``Base.Base(...)``) call. A class whose constructors call none has no base known."""
        linker = self.linker
        found = []
        own = type_name.rpartition(".")[2]  # a constructor is named after its class
        for target, defs in linker.by_name.get(own, {}).items():
            if target not in files:
                continue
            entities = linker.functions.of(target)
            for key, kind, q in defs:
                owner = q.rpartition(".")[0]
                if kind != "constructor" or not (
                    owner == type_name or owner.endswith("." + type_name)
                ):
                    continue
                for call in entities.get(key, {}).get("calls", ()):
                    base = base_of(calltypes.split_arguments(call)[0])
                    if base is not None and (base, target) not in found:
                        found.append((base, target))
        return found


def base_of(call: str) -> str | None:
    """The class a ``super(...)`` call names, as recorded (``Base.Base``,
    ``Outer.Inner.Inner``), or None for any other call."""
    head, _, last = call.rpartition(".")
    if not head or head.rpartition(".")[2] != last or not _CLASS.fullmatch(head):
        return None
    return head


def chained(site: _Site, call: Call, qualified: str, depth: int) -> list[tuple[str, str]] | None:
    """``f().name()``: the methods ``name`` of the types the functions ``f`` links to
    declare they return; None when ``f``'s result type is not known."""
    receiver = call.text[: -len(call.name) - 1]
    # Go ``range F()``: the slice's elements; Rust ``F()?``: the Result's (Option's) value
    element = receiver.endswith(("()[]", "()?"))
    receiver = receiver.removesuffix("[]").removesuffix("?") if element else receiver
    if not receiver.endswith("()") or depth <= 0:
        return None
    kinds = returns(site, receiver[:-2], qualified, depth - 1, element)
    if not kinds:
        return None
    members = site.linker.types.members
    return [d for kind, home in kinds for d in members(kind, home, call.name)]


def returns(
    site: _Site, expr: str, qualified: str, depth: int, element: bool = False
) -> list[tuple[str, str]] | None:
    """The types (name, file that names it) the functions a call ``expr()`` reaches
    declare they return (``element``: the type of the elements of the slice they
    return); None when one of them declares none we can read."""
    shape = read(expr, site.family)
    if shape is None:
        return None
    linker = site.linker
    candidates = linker.by_name.get(shape.name) or {}
    if shape.form == "own":
        defs = site.own(qualified, shape.name)
    elif shape.form == "bare":
        folder = posixpath.dirname(site.path)
        defs = [
            (target, key)
            for target in (site.seen(candidates) if site.family != "java" else [site.path])
            if site.family != "go" or posixpath.dirname(target) == folder
            for key, kind, q in candidates.get(target, ())
            if q == shape.name or (site.family == "java" and kind in METHODS)
        ]
    elif shape.form == "opaque" and not shape.text.startswith(OWN):
        defs = chained(site, shape, qualified, depth) or []
    else:
        defs, guessed = site.dotted(shape, candidates, qualified)
        if guessed:
            return None
    kinds = []
    for target, key in defs:
        kind = calltypes.result_type(linker.types.signature((target, key)), site.family, element)
        if kind is None:
            return None
        if kind == "Self":  # Rust: the type of the ``impl``
            kind = _qualified(key, target).rpartition(".")[0]
        kinds.append((kind, target))
    return kinds or None


def _qualified(key: str, path: str) -> str:
    """``qualified_of(key)`` for a key of ``path``, without looking for the ``::``."""
    qualified = key[len(path) + 2 :]
    return qualified_of(key) if "#" in qualified else qualified
