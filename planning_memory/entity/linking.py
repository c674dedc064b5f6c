"""Call linking: which definitions in view one call's text reaches, by the shape of the call.

A call made in file X reaches only functions of the files X sees (``callgraph.Graph``); among
them:

- A bare call (``name()``) reaches the definition in scope in X: the innermost enclosing
  function that defines ``name``, else X's module level (Java: the methods of the enclosing
  classes). Only when X defines none does it reach a top-level function of a file X sees,
  or one nested in a top-level function the caller also calls (the React hook pattern
  ``const { login } = useAuth(); login()``); never in Python, whose extractor records an
  imported name by what it imports (``from m import f; f()`` is ``m.f``).
- ``self.name()``/``this.name()``/``cls.name()`` (one attribute deep) reaches the method
  ``name`` of the caller's own class only; ``self.a.name()`` reaches nothing.
- ``module.name()`` and ``module.Class.name()`` reach the definitions of a module X sees
  that ``module`` names (a Python module path or its tail, relative ones resolved; a JS/TS
  file's stem; a Go package folder; a Rust module), the module itself before the files it
  re-exports; ``Class.name()`` reaches ``Class.name`` in X, else in the files X sees.
- A call on any other value (``"s".join()``, ``items.pop()``, ``router.get()``) reaches
  nothing: without types we cannot tell which ``pop``. Go, Java and Rust, whose extractors
  record no receiver types, still guess: such a call reaches the definitions of ``name`` in
  view unless more than ``AMBIGUOUS`` match.
- ``new X`` calls and macros are not linked.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, NamedTuple

from planning_memory.entity import calltypes
from planning_memory.entity.calltypes import split_arguments
from planning_memory.entity.entities import qualified_of
from planning_memory.entity.languages.go import package_name

if TYPE_CHECKING:
    from planning_memory.entity.callgraph import Functions, Graph

AMBIGUOUS = 4  # a Java/Rust guess (``x.name()``) matching more definitions: not linked
Definition = tuple[str, str | None, str]  # key, kind, qualified name
_OWN = ("self.", "this.", "cls.", "Self.")
_METHODS = frozenset({"method", "constructor"})
_BARE_LOCAL = frozenset({"python", "java"})  # bare calls that reach their own file only
# languages whose calls on values of unknown type (``x.name()``) are guessed by name (Go links
# only calls it can place: own methods, package functions, types' functions)
_GUESSING = frozenset({"java", "rust"})
_TYPED = frozenset({"go", "java", "rust"})  # calls on a call's result read its declared type
_CHAIN_DEPTH = 4  # ``a().b().c().d()``: results read through at most this many calls
_NAME = re.compile(r"\.+|\.*[\w$]+(?:\.[\w$]+)*")  # a (relative) dotted name, not ``x()``
_HEAD = re.compile(r"[\w$]+")
_PY_TAILS = (".py", ".pyi", "/__init__.py", "/__init__.pyi")
_FOLDER_STEMS = {"js": ("index",), "rust": ("mod", "lib", "main")}


class _Call(NamedTuple):
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


def _read(call: str, family: str) -> _Call | None:
    """The shape of a call's text, or None for ``new X`` and a macro (``name!``)."""
    if call.startswith("new ") or call.endswith("!"):
        return None
    args = None
    if family == "java":
        call, args = split_arguments(call)
    text = call.replace("::", ".")
    if call.startswith("self::"):  # Rust: an item of this module
        text = text[5:]
    name = text.rsplit(".", 1)[-1]
    if text == name:
        return _Call(name, "bare", text, args=args)
    if text.startswith(_OWN):
        return _Call(name, "own" if text.count(".") == 1 else "opaque", text, args=args)
    static = family in _GUESSING and _is_static(call, family)
    if not _NAME.fullmatch(text):
        return _Call(name, "opaque", text, args=args, static=static)
    return _Call(name, "dotted", text, _splits(text), args, static)


def _is_static(call: str, family: str) -> bool:
    """Whether a Java or Rust call is made on a type or through a path rather than on a
    value: its first name is a type's (``String.valueOf``, ``Jsoup.parse().x``) or, in
    Rust, its receiver is a path (``Vec::new``, ``process::exit``)."""
    head = _HEAD.match(call)
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


class Linker:
    """Matches calls to definitions through an index of functions by name and file."""

    def __init__(self, graph: Graph, functions: Functions) -> None:
        self.graph = graph
        self.functions = functions
        self.result: dict[str, set[str]] = {}
        self._indexed: set[str] = set()
        self.by_name: dict[str, dict[str, list[Definition]]] = {}
        self._calls: dict[str, dict[str, _Call | None]] = {}  # family -> call text -> shape
        self._modules: dict[str, dict[str, list[str]]] = {}  # family -> module name -> files
        self._params: dict[str, calltypes.Params | None] = {}  # Java: key -> its parameters
        self._members: dict[tuple[str, str, str], list[tuple[str, str]]] = {}  # see members

    def _index(self, paths: set[str]) -> None:
        by_name = self.by_name
        for path in paths - self._indexed:
            self._indexed.add(path)
            for key, entity in self.functions.of(path).items():
                qualified = _qualified(key, path)
                name = entity.get("name")  # stored when the key cannot give it (``name_of``)
                if not isinstance(name, str):
                    name = qualified.rpartition(".")[2]
                by_file = by_name.setdefault(name, {})
                by_file.setdefault(path, []).append((key, entity.get("kind"), qualified))

    def contribute_all(self, callers: list[str], only: dict[str, set[str]] | None) -> None:
        """Add the calls of every file in ``callers`` (restricted to ``only``'s names)."""
        seen: set[str] = set()
        for caller in callers:
            seen |= self.graph.visible(caller)
        self._index(seen)
        for caller in callers:
            self._contribute(_Site(self, caller), only)

    def _contribute(self, site: _Site, only: dict[str, set[str]] | None) -> None:
        by_name, result, family = self.by_name, self.result, site.family
        shapes = self._calls.setdefault(family, {})
        # calls that link to nothing: Go, Java and Rust read a call's receiver's type
        opaque = "" if family in _TYPED else "opaque"
        for caller_key, entity in self.functions.of(site.path).items():
            calls = entity.get("calls")
            if not calls:
                continue
            qualified = _qualified(caller_key, site.path)
            for call in calls:
                shape = shapes.get(call)
                if shape is None:
                    if call in shapes:
                        continue
                    shape = shapes[call] = _read(call, family)
                    if shape is None:
                        continue
                name, form = shape[0], shape[1]
                if form == opaque:
                    continue
                candidates = by_name.get(name)
                if form == "dotted" and family == "js":
                    found = site.dotted(shape, candidates, qualified)[0] if candidates else []
                    if not found:
                        found, name = site.default_export(shape), "default"
                elif not candidates:
                    continue
                elif form == "own":
                    found = site.own(qualified, name)
                elif form == "bare":
                    found = site.bare(qualified, name, candidates, calls)
                else:
                    found, guessed = site.dotted(shape, candidates, qualified)
                    if guessed:  # a value of unknown type: not the caller itself
                        found = [f for f in found if f[1] != caller_key]
                if shape.args is not None and found:
                    found = [f for f in found if self.accepts(f, shape.args)]
                for target, key in found:
                    if only is None or name in only.get(target, ()):
                        callers = result.get(key)
                        if callers is None:
                            result[key] = {caller_key}
                        else:
                            callers.add(caller_key)

    def accepts(self, definition: tuple[str, str], args: tuple[str, ...]) -> bool:
        """Whether the Java method ``definition`` (file, key) can take ``args``."""
        target, key = definition
        if key in self._params:
            params = self._params[key]
        else:
            signature = self.functions.of(target).get(key, {}).get("signature", "")
            params = self._params[key] = calltypes.parameters(signature)
        return params is None or calltypes.accepts(params, args)

    def signature(self, definition: tuple[str, str]) -> str:
        target, key = definition
        value = self.functions.of(target).get(key, {}).get("signature", "")
        return value if isinstance(value, str) else ""

    def members(self, kind: str, home: str, name: str) -> list[tuple[str, str]]:
        """The methods ``name`` of the type ``kind`` as the file ``home`` names it (Go:
        ``T`` of home's package, ``pkg.T`` of a package home imports; Java and Rust: a type
        of the files home sees)."""
        memo = (kind, home, name)
        found = self._members.get(memo)
        if found is None:
            graph = self.graph
            family = graph.family(home)
            package, dot, type_name = kind.rpartition(".")
            if family == "go":
                if dot:
                    imports = graph.files.get(home, {}).get("imports", {})
                    folders = [t for m, t in imports.items() if t and package_name(m) == package]
                else:
                    folders = [posixpath.dirname(home) or "."]
                files = {p for folder in folders for p in graph.package(folder, "go")}
            else:
                files = set(graph.visible(home))
            self._index(files)
            wanted, nested = f"{type_name}.{name}", f".{type_name}.{name}"
            defs = self.by_name.get(name, {})
            found = self._members[memo] = [
                (target, key)
                for target in files & defs.keys()
                for key, _kind, q in defs[target]
                if q == wanted or (family == "java" and q.endswith(nested))
            ]
        return found

    def modules(self, family: str) -> dict[str, list[str]]:
        """The files of ``family`` by every name a qualified call can give their module: a
        Python module's dotted path and each of its tails (``src.pkg.mod``, ``pkg.mod``,
        ``mod``), a JS/TS file's stem (its folder's name for ``index.*``), a Go package's
        folder name, a Rust module's name."""
        index = self._modules.get(family)
        if index is None:
            index = {}
            for path in self.graph.files:
                if self.graph.family(path) == family:
                    for name in _module_names(path, family):
                        index.setdefault(name, []).append(path)
            self._modules[family] = index
        return index


class _Site:
    """The file whose calls are being linked: which definitions each call can reach."""

    def __init__(self, linker: Linker, path: str) -> None:
        self.linker = linker
        self.path = path
        self.family = linker.graph.family(path)
        self.visible = linker.graph.visible(path)
        self._local: dict[str, list[tuple[str, str | None]]] | None = None  # see ``local``
        self._methods: dict[str, tuple[list[tuple[str, str]], bool]] = {}  # see ``dotted``
        self._owners: dict[str, str] = {}  # a function's qualified name -> ``Class.`` or ""
        self._named: dict[str, dict[str, int]] = {}  # receiver -> module files it names

    def own(self, qualified: str, name: str) -> list[tuple[str, str]]:
        """``self.name()`` in ``qualified``: the method of the caller's own class (in Go,
        defined in any file of the package)."""
        owner = self._owner_of(qualified)
        if owner and self.family == "go":
            return self.linker.members(owner[:-1], self.path, name)
        defs = self.local().get(owner + name, ()) if owner else ()
        return [(self.path, key) for key, kind in defs if kind in _METHODS]

    def bare(
        self,
        qualified: str,
        name: str,
        candidates: dict[str, list[Definition]],
        calls: Sequence[str],
    ) -> list[tuple[str, str]]:
        """``name()`` in ``qualified`` (which makes ``calls``): the definition in scope in
        this file; else, outside Python and Java, a top-level function of that name in a
        file this one sees (in Go, of its own package)."""
        local = _in_scope(qualified, candidates.get(self.path, ()), self.family == "java")
        if local or self.family in _BARE_LOCAL:
            return [(self.path, key) for key in local]
        folder = posixpath.dirname(self.path)
        return [
            (target, key)
            for target in self._seen(candidates)
            if target != self.path
            # a Go name without a package is its own package's (the file's folder)
            and (self.family != "go" or posixpath.dirname(target) == folder)
            for key, kind, q in candidates[target]
            if kind == "function" and (q == name or self._returned(q, calls, target))
        ]

    def _returned(self, qualified: str, calls: Sequence[str], target: str) -> bool:
        """Whether ``qualified`` (``useAuth.login``) is a function nested in a top-level one
        the caller also calls: the hook pattern ``const { login } = useAuth(); login()``
        (in JS/TS the call may name the hook's module: ``useAuth.useAuth``, a default
        import)."""
        parent = qualified.rpartition(".")[0]
        if "." in parent:
            return False
        if parent in calls:
            return True
        if self.family != "js":
            return False
        tail = "." + parent
        receivers = [c[: -len(tail)] for c in calls if c.endswith(tail)]
        return any(r and self.named(r).get(target) == 0 for r in receivers)

    def default_export(self, call: _Call) -> list[tuple[str, str]]:
        """``module.name()`` where the module defines no ``name`` (JS/TS: a default import
        is recorded as ``module.name``): the module's anonymous default export."""
        defaults = self.linker.by_name.get("default")
        if not defaults or len(call.splits) != 1:
            return []
        return [
            (target, key)
            for target, depth in self.named(call.splits[0][0]).items()
            if depth == 0
            for key, _kind, q in defaults.get(target, ())
            if q == "default"
        ]

    def dotted(
        self, call: _Call, candidates: dict[str, list[Definition]] | None, qualified: str
    ) -> tuple[list[tuple[str, str]], bool]:
        """``a.b.name()`` made in ``qualified``: the definitions it reaches, and whether
        they are a guess; the same in every function of the file (of the class, for a
        chain on ``self``), so memoised."""
        memo = call.text
        if call.form == "opaque" and memo.startswith(_OWN):
            memo = self._owner_of(qualified) + memo
        found = self._methods.get(memo)
        if found is None:
            found = self._methods[memo] = self._dotted(call, candidates or {}, qualified)
        return found

    def _dotted(
        self, call: _Call, candidates: dict[str, list[Definition]], qualified: str
    ) -> tuple[list[tuple[str, str]], bool]:
        """``Class.name()`` (the class in this file, or seen), ``module.name()`` and
        ``module.Class.name()`` (a module this file sees: a definition in the module itself
        wins over those in files it re-exports); ``f().name()`` (the methods of the type
        ``f`` declares it returns, in Go, Java and Rust). In Java and Rust a call on a value
        of unknown type still links to the definitions of that name in view, up to
        ``AMBIGUOUS`` (a guess); one on a type or a path never does (``String.valueOf``,
        ``Vec::new``, a method a class inherits: we do not know its bases)."""
        text = call.text
        found: list[tuple[int, str, str]] = []  # (re-export depth, file, key)
        for receiver, qualified_name in call.splits:
            for target, depth in self.named(receiver).items():
                for key, _kind, q in candidates.get(target, ()):
                    if q == qualified_name:
                        found.append((depth, target, key))
        if call.form == "dotted" and not found:  # ``Class.name()``: this file's class first
            found = [
                (0, self.path, k) for k, _kind, q in candidates.get(self.path, ()) if q == text
            ]
            if not found:
                found = [
                    (0, target, key)
                    for target in self._seen(candidates)
                    for key, _kind, q in candidates[target]
                    if q == text
                ]
        if found:
            nearest = min(depth for depth, _t, _k in found)
            return [(target, key) for depth, target, key in found if depth == nearest], False
        if self.family in _TYPED and call.form == "opaque":
            chained = self.chained(call, qualified, _CHAIN_DEPTH)
            if chained is not None:
                return chained, False
        if self.family not in _GUESSING or text.startswith(_OWN):
            return [], False  # a field of ``self`` has a type we cannot tell
        receiver = text[: -len(call.name) - 1]
        if call.static:  # on a type (maybe inherited: we do not know the class's bases)
            return [], False
        if _NAME.fullmatch(receiver) and self.named(receiver):
            return [], False  # a module or package that defines no such function
        guess = [(t, key) for t in self._seen(candidates) for key, _kind, _q in candidates[t]]
        return (guess, True) if len(guess) <= AMBIGUOUS else ([], False)

    def chained(self, call: _Call, qualified: str, depth: int) -> list[tuple[str, str]] | None:
        """``f().name()``: the methods ``name`` of the types the functions ``f`` links to
        declare they return; None when ``f``'s result type is not known."""
        receiver = call.text[: -len(call.name) - 1]
        element = self.family == "go" and receiver.endswith("()[]")  # Go: ``range F()``
        receiver = receiver.removesuffix("[]") if element else receiver
        if not receiver.endswith("()") or depth <= 0:
            return None
        kinds = self.returns(receiver[:-2], qualified, depth - 1, element)
        if not kinds:
            return None
        members = self.linker.members
        return [d for kind, home in kinds for d in members(kind, home, call.name)]

    def returns(
        self, expr: str, qualified: str, depth: int, element: bool = False
    ) -> list[tuple[str, str]] | None:
        """The types (name, file that names it) the functions a call ``expr()`` reaches
        declare they return (``element``: the type of the elements of the slice they
        return); None when one of them declares none we can read."""
        shape = _read(expr, self.family)
        if shape is None:
            return None
        linker = self.linker
        candidates = linker.by_name.get(shape.name) or {}
        if shape.form == "own":
            defs = self.own(qualified, shape.name)
        elif shape.form == "bare":
            folder = posixpath.dirname(self.path)
            defs = [
                (target, key)
                for target in (self._seen(candidates) if self.family != "java" else [self.path])
                if self.family != "go" or posixpath.dirname(target) == folder
                for key, kind, q in candidates.get(target, ())
                if q == shape.name or (self.family == "java" and kind in _METHODS)
            ]
        elif shape.form == "opaque" and not shape.text.startswith(_OWN):
            defs = self.chained(shape, qualified, depth) or []
        else:
            defs, guessed = self.dotted(shape, candidates, qualified)
            if guessed:
                return None
        kinds = []
        for target, key in defs:
            kind = calltypes.result_type(linker.signature((target, key)), self.family, element)
            if kind is None:
                return None
            if kind == "Self":  # Rust: the type of the ``impl``
                kind = _qualified(key, target).rpartition(".")[0]
            kinds.append((kind, target))
        return kinds or None

    def _owner_of(self, qualified: str) -> str:
        owner = self._owners.get(qualified)
        if owner is None:
            owner = self._owners[qualified] = self._owner(qualified)
        return owner

    def _seen(self, candidates: dict[str, list[Definition]]) -> list[str]:
        visible = self.visible
        if len(candidates) <= len(visible):
            return [t for t in candidates if t in visible]
        return [t for t in visible if t in candidates]

    def local(self) -> dict[str, list[tuple[str, str | None]]]:
        """The file's functions by qualified name: ``[(key, kind)]`` (built when asked)."""
        if self._local is None:
            self._local = {}
            for key, entity in self.linker.functions.of(self.path).items():
                qualified = _qualified(key, self.path)
                self._local.setdefault(qualified, []).append((key, entity.get("kind")))
        return self._local

    def _owner(self, qualified: str) -> str:
        """``Class.`` for a method ``qualified`` is (or is nested in), else ``""``."""
        local = self.local()
        while qualified:
            parent = qualified.rpartition(".")[0]
            if any(kind in _METHODS for _key, kind in local.get(qualified, ())):
                return parent + "." if parent else ""
            qualified = parent
        return ""

    def named(self, receiver: str) -> dict[str, int]:
        """The files this file sees that ``receiver`` names as a module (depth 0), and the
        files those re-export (depth 1, 2...); memoised per receiver."""
        found = self._named.get(receiver)
        if found is None:
            found = self._named[receiver] = self._module_files(receiver)
        return found

    def _go_imported(self, receiver: str) -> list[str]:
        """The files of the package this Go file imports under the name ``receiver``."""
        graph = self.linker.graph
        imports = graph.files.get(self.path, {}).get("imports", {})
        return [
            p
            for module, target in imports.items()
            if target and package_name(module) == receiver
            for p in graph.package(target, "go")
        ]

    def _module_files(self, receiver: str) -> dict[str, int]:
        if receiver.startswith(_OWN):
            return {}
        graph, family = self.linker.graph, self.family
        if family == "python" and receiver.startswith("."):
            direct = [p for p in _relative(self.path, receiver) if p in graph.files]
        else:
            key = receiver if family == "python" else _module_key(receiver.rsplit(".", 1)[-1])
            direct = self.linker.modules(family).get(key, [])
        if family == "go":  # a package never names itself; an import names its package
            folder = posixpath.dirname(self.path)
            direct = [p for p in direct if posixpath.dirname(p) != folder]
            direct += self._go_imported(receiver)
        # nor does a module (``progress.wrap_file()`` in progress.py is on a local value)
        seen = [p for p in direct if p in self.visible and p != self.path]
        return self.linker.graph.reexported(*seen)


def _qualified(key: str, path: str) -> str:
    """``qualified_of(key)`` for a key of ``path``, without looking for the ``::``."""
    qualified = key[len(path) + 2 :]
    return qualified_of(key) if "#" in qualified else qualified


def _in_scope(qualified: str, defs: Iterable[Definition], java: bool) -> list[str]:
    """Keys of the definitions a bare call made in ``qualified`` reaches in its own file:
    the innermost enclosing scope that defines the name (module level last). Functions
    only (a Python method is not in scope in its class's other methods); in Java, the
    methods of the enclosing classes."""
    best: list[str] = []
    depth = -1
    for key, kind, q in defs:
        if not (kind == "function" or (java and kind in _METHODS)):
            continue
        parent = q.rpartition(".")[0]
        if parent and qualified != parent and not qualified.startswith(parent + "."):
            continue
        if len(parent) > depth:
            best, depth = [key], len(parent)
        elif len(parent) == depth:
            best.append(key)
    return best


def _relative(importer: str, module: str) -> list[str]:
    """The files a Python relative module (``.``, ``..pkg.mod``) of ``importer`` can be."""
    dots = len(module) - len(module.lstrip("."))
    base = posixpath.dirname(importer)
    for _ in range(dots - 1):
        base = posixpath.dirname(base)
    rest = module[dots:]
    stem = posixpath.join(base, *rest.split(".")) if rest else base
    return [f"{stem}{tail}".lstrip("/") for tail in _PY_TAILS]


def _module_names(path: str, family: str) -> list[str]:
    folder, name = posixpath.split(path)
    stem = name.split(".", 1)[0]
    if family == "python":
        dotted = path.rsplit(".", 1)[0].removesuffix("__init__").rstrip("/").split("/")
        return [".".join(dotted[i:]) for i in range(len(dotted)) if dotted[i:] != [""]]
    if family == "go":
        return [posixpath.basename(folder)]
    if family == "rust" and stem in ("lib", "main") and folder in ("", "src"):
        return ["crate"]
    if stem in _FOLDER_STEMS.get(family, ()):  # the folder names the module
        stem = posixpath.basename(folder)
    return [_module_key(stem)] if family in _FOLDER_STEMS else []


def _module_key(name: str) -> str:
    """A module name compared loosely: ``user-repository`` is ``userRepository``."""
    return name.replace("-", "").replace("_", "").lower()
