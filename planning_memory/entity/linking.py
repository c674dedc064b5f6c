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
- ``f().name()`` (Go, Java, Rust) reaches the methods ``name`` of the type ``f`` declares
  it returns (``results``); the extractors record a call on a name of known type as a call
  on the type (``Command.Name``, ``NewCommand().Name``).
- A Java call reaches only the overloads that can take its arguments (``calltypes``), and
  of those the exact ones when every argument's type is known; an argument made by a
  method of a class (``@Options.getOption``) has the result type its signature declares.
- A call on any other value (``"s".join()``, ``items.pop()``, ``router.get()``) reaches
  nothing: without types we cannot tell which ``pop``. Java and Rust still guess: such a
  call reaches the methods ``name`` in view unless more than ``AMBIGUOUS`` match, never the
  caller itself; a call on a type or a path (``String.valueOf``, ``Vec::new``) never
  guesses.
- A Python call of a class (``Class()``, ``mod.Class()``) that reaches no function of that
  name reaches the class's own ``__init__``.
- ``new X(...)`` (Java, JS/TS) reaches ``X``'s constructor (Java: the overloads that can
  take its arguments) as ``X.X()``/``X.constructor()`` would; macros are not linked.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from planning_memory.entity import results
from planning_memory.entity.callshape import GUESSING, HEAD, NAME, OWN, Call, read
from planning_memory.entity.entities import qualified_of

if TYPE_CHECKING:
    from planning_memory.entity.callgraph import Functions, Graph

AMBIGUOUS = 4  # a Java/Rust guess (``x.name()``) matching more definitions: not linked
Definition = tuple[str, str | None, str]  # key, kind, qualified name
_METHODS = frozenset({"method", "constructor"})
_ANY_KIND = frozenset({"method", "constructor", "function", None})
_BARE_LOCAL = frozenset({"python", "java"})  # bare calls that reach their own file only
_TYPED = frozenset({"go", "java", "rust"})  # calls on a call's result read its declared type
_CHAIN_DEPTH = 4  # ``a().b().c().d()``: results read through at most this many calls
_CLASS_FORMS = frozenset({"bare", "dotted"})  # Python: ``Class()``, ``mod.Class()``
_INIT = "__init__"
_PY_TAILS = (".py", ".pyi", "/__init__.py", "/__init__.pyi")
_FOLDER_STEMS = {"js": ("index",), "rust": ("mod", "lib", "main")}


class Linker:
    """Matches calls to definitions through an index of functions by name and file."""

    def __init__(self, graph: Graph, functions: Functions) -> None:
        self.graph = graph
        self.functions = functions
        self.result: dict[str, set[str]] = {}
        self._indexed: set[str] = set()
        self.by_name: dict[str, dict[str, list[Definition]]] = {}
        self._calls: dict[str, dict[str, Call | None]] = {}  # family -> call text -> shape
        self.owners: dict[str, set[str]] = {}  # a class's (type's) name -> files of its methods
        self._modules: dict[str, dict[str, list[str]]] = {}  # family -> module name -> files
        self.types = results.Types(self)

    def index(self, paths: set[str]) -> None:
        by_name, owners = self.by_name, self.owners
        for path in paths - self._indexed:
            self._indexed.add(path)
            for key, entity in self.functions.of(path).items():
                qualified = _qualified(key, path)
                name = entity.get("name")  # stored when the key cannot give it (``name_of``)
                if not isinstance(name, str):
                    name = qualified.rpartition(".")[2]
                by_file = by_name.setdefault(name, {})
                by_file.setdefault(path, []).append((key, entity.get("kind"), qualified))
                owner = qualified.rpartition(".")[0].rpartition(".")[2]
                if owner:
                    owners.setdefault(owner, set()).add(path)

    def contribute_all(self, callers: list[str], only: dict[str, set[str]] | None) -> None:
        """Add the calls of every file in ``callers`` (restricted to ``only``'s names)."""
        seen: set[str] = set()
        for caller in callers:
            seen |= self.graph.visible(caller)
        self.index(seen)
        for caller in callers:
            self._contribute(_Site(self, caller), only)

    def _contribute(self, site: _Site, only: dict[str, set[str]] | None) -> None:
        by_name, family = self.by_name, site.family
        shapes = self._calls.setdefault(family, {})
        # calls that link to nothing: Go, Java and Rust read a call's receiver's type
        opaque = "" if family in _TYPED else "opaque"
        # what a call reaches when that is the same from every function of the file
        reach: dict[str, tuple[str, list[tuple[str, str]]]] = {}
        for caller_key, entity in self.functions.of(site.path).items():
            calls = entity.get("calls")
            if not calls:
                continue
            qualified = _qualified(caller_key, site.path)
            for call in calls:
                known = reach.get(call)
                if known is not None:
                    name, found = known
                    self._add(found, name, caller_key, only)
                    continue
                shape = shapes.get(call)
                if shape is None:
                    if call in shapes:
                        continue
                    shape = shapes[call] = read(call, family)
                    if shape is None:
                        continue
                name, form = shape[0], shape[1]
                if form == opaque:
                    continue
                candidates = by_name.get(name)
                # the same from every function of the file: ``site.dotted`` is memoised by
                # the call's text alone (but on ``self``), and no index grows while Python
                # calls are linked (types are read in Go, Java and Rust only)
                fixed = False
                if form == "dotted" and family == "js":
                    found = site.dotted(shape, candidates, qualified)[0] if candidates else []
                    if not found and not call.startswith("new "):
                        found, name = site.default_export(shape), "default"
                    fixed = candidates is not None
                elif not candidates:
                    found, fixed = [], family == "python"
                elif form == "own":
                    found = site.own(qualified, name)
                elif form == "bare":
                    found = site.bare(qualified, name, candidates, calls)
                else:
                    found, guessed = site.dotted(shape, candidates, qualified)
                    if guessed:  # a value of unknown type: not the caller itself
                        found = [f for f in found if f[1] != caller_key]
                    fixed = not guessed and not shape.text.startswith(OWN)
                if not found and family == "python" and form in _CLASS_FORMS:
                    name, found = _INIT, self._constructed(site, call, qualified)
                found = self._overloads(site, shape, found)
                if fixed:
                    reach[call] = (name, found)
                self._add(found, name, caller_key, only)

    def _overloads(
        self, site: _Site, shape: Call, found: list[tuple[str, str]]
    ) -> list[tuple[str, str]]:
        """Of the definitions ``found``, the Java overloads that can take the call's
        arguments (the most specific ones when every argument's type is known)."""
        if shape.args is None or not found:
            return found
        args = self.types.arguments(site.path, shape.args)
        found = [f for f in found if self.types.accepts(f, args)]
        return self.types.most_specific(found, args)

    def _add(
        self,
        found: list[tuple[str, str]],
        name: str,
        caller_key: str,
        only: dict[str, set[str]] | None,
    ) -> None:
        """Record ``caller_key`` as a caller of each of ``found`` (of those whose file
        ``only`` names with ``name``, when given)."""
        result = self.result
        for target, key in found:
            if only is None or name in only.get(target, ()):
                callers = result.get(key)
                if callers is None:
                    result[key] = {caller_key}
                else:
                    callers.add(caller_key)

    def _constructed(self, site: _Site, call: str, qualified: str) -> list[tuple[str, str]]:
        """Python: ``Class()`` (``mod.Class()``) reaches the class's own ``__init__``."""
        if not call.rpartition(".")[2][:1].isupper() or not self.by_name.get(_INIT):
            return []
        shapes = self._calls["python"]
        text = call + "." + _INIT
        shape = shapes.get(text)
        if shape is None:
            if text in shapes:
                return []
            shape = shapes[text] = read(text, "python")
            if shape is None:
                return []
        return site.dotted(shape, self.by_name[_INIT], qualified)[0]

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
            return self.linker.types.members(owner[:-1], self.path, name)
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
            for target in self.seen(candidates)
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

    def default_export(self, call: Call) -> list[tuple[str, str]]:
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
        self, call: Call, candidates: dict[str, list[Definition]] | None, qualified: str
    ) -> tuple[list[tuple[str, str]], bool]:
        """``a.b.name()`` made in ``qualified``: the definitions it reaches, and whether
        they are a guess; the same in every function of the file (of the class, for a
        chain on ``self``), so memoised."""
        memo = call.text
        if call.form == "opaque" and memo.startswith(OWN):
            memo = self._owner_of(qualified) + memo
        found = self._methods.get(memo)
        if found is None:
            found = self._methods[memo] = self._dotted(call, candidates or {}, qualified)
        return found

    def _dotted(
        self, call: Call, candidates: dict[str, list[Definition]], qualified: str
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
            nested = "." + text  # or one nested in it (a Java class, a Rust inline module)
            found = [
                (0, self.path, k)
                for k, _kind, q in candidates.get(self.path, ())
                if q == text or (self.family in GUESSING and q.endswith(nested))
            ]
            if not found:
                found = [
                    (0, target, key)
                    for target in self.seen(candidates)
                    for key, _kind, q in candidates[target]
                    if q == text
                ]
        if self.family == "java" and call.static and call.form == "dotted":
            # ``Document.select()``: the class's methods, and the overloads its bases add
            inherited = self.linker.types.members(text[: -len(call.name) - 1], self.path, call.name)
            if inherited:
                return inherited, False
        if found:
            nearest = min(depth for depth, _t, _k in found)
            return [(target, key) for depth, target, key in found if depth == nearest], False
        if self.family in _TYPED and call.form == "opaque":
            chained = results.chained(self, call, qualified, _CHAIN_DEPTH)
            if chained is not None:
                return chained, False
        if self.family not in GUESSING or text.startswith(OWN):
            return [], False  # a field of ``self`` has a type we cannot tell
        receiver = text[: -len(call.name) - 1]
        if call.static and not self._made_by_ours(call, receiver):
            return [], False  # on a type or a path: its own function, or nothing
        if NAME.fullmatch(receiver) and self.named(receiver):
            return [], False  # a module or package that defines no such function
        methods = _METHODS if self.family == "rust" else _ANY_KIND  # ``x.f()``: no free ``f``
        guess = [
            (t, key)
            for t in self.seen(candidates)
            for key, kind, _q in candidates[t]
            if kind in methods
        ]
        return (guess, True) if len(guess) <= AMBIGUOUS else ([], False)

    def _made_by_ours(self, call: Call, receiver: str) -> bool:
        """Rust: whether ``call`` is on a value one of the repository's types made through
        a function the source does not show (``Opts::parse().run()``, ``parse`` derived by
        a macro): the type has methods in a file this one sees."""
        if self.family != "rust" or call.form != "opaque":
            return False
        head = HEAD.match(receiver)
        files = self.linker.owners.get(head.group(0), ()) if head else ()
        return any(p in self.visible for p in files)

    def _owner_of(self, qualified: str) -> str:
        owner = self._owners.get(qualified)
        if owner is None:
            owner = self._owners[qualified] = self._owner(qualified)
        return owner

    def seen(self, candidates: dict[str, list[Definition]]) -> list[str]:
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
            if target and graph.go_package(module, target) == receiver
            for p in graph.package(target, "go")
        ]

    def _module_files(self, receiver: str) -> dict[str, int]:
        if receiver.startswith(OWN):
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
