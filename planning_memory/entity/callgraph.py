"""``called_by``: which functions call a function, resolved across files by name.

A call ``x.y.name(...)`` or ``name(...)`` made in file X can reach a function called ``name``
defined in a file X *sees*: X itself, the files X imports (resolved to repository paths), the
files those re-export (``export ... from``, or any import of a barrel file: ``index.*``,
``__init__.py``, ``mod.rs``, ``lib.rs``), the files of an imported Go package or Java package
folder, and the other files of X's own Go/Java package.

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

Entries are the caller's entity key: ``<path>::<qualified name>``.

Incremental: only files whose calls or visible files changed (the *delta*: parsed, removed,
imports changed, plus importers of changed barrels and members of changed Go/Java packages)
contribute anew; every other caller's entries are kept. A function that did not exist before
gets its callers searched in all files that can see its file.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple, Protocol

from planning_memory.entity.entities import name_of, qualified_of
from planning_memory.entity.languages import FAMILY
from planning_memory.entity.shards import file_of

Entity = dict[str, Any]
BARRELS = frozenset(
    {
        "index.ts",
        "index.tsx",
        "index.js",
        "index.jsx",
        "index.mjs",
        "__init__.py",
        "mod.rs",
        "lib.rs",
    }
)
PACKAGE_FAMILIES = frozenset({"go", "java"})
_REEXPORT_DEPTH = 4
AMBIGUOUS = 4  # a Go/Java/Rust guess (``x.name()``) matching more definitions: not linked
Definition = tuple[str, str | None, str]  # key, kind, qualified name
_OWN = ("self.", "this.", "cls.", "Self.")
_METHODS = frozenset({"method", "constructor"})
_BARE_LOCAL = frozenset({"python", "java"})  # bare calls that reach their own file only
_GUESSING = frozenset({"go", "java", "rust"})
_NAME = re.compile(r"\.+|\.*[\w$]+(?:\.[\w$]+)*")  # a (relative) dotted name, not ``x()``
_PY_TAILS = (".py", ".pyi", "/__init__.py", "/__init__.pyi")
_FOLDER_STEMS = {"js": ("index",), "rust": ("mod", "lib", "main")}


class Functions(Protocol):
    def of(self, path: str) -> dict[str, Entity]: ...

    def touch(self, path: str) -> None: ...


class Graph:
    """Who sees whom, from the file entities' resolved imports."""

    def __init__(self, files: dict[str, Entity]) -> None:
        self.files = files
        self._package: dict[tuple[str, str], list[str]] | None = None
        self._visible: dict[str, frozenset[str]] = {}
        self._importers: dict[str, set[str]] | None = None
        self._reexporters: dict[str, set[str]] | None = None
        self._family: dict[str, str] = {}

    def family(self, path: str) -> str:
        known = self._family.get(path)
        if known is None:
            known = FAMILY.get(str(self.files.get(path, {}).get("language")), "")
            self._family[path] = known
        return known

    def package(self, folder: str, family: str) -> list[str]:
        if self._package is None:
            index: dict[tuple[str, str], list[str]] = {}
            for path in self.files:
                fam = self.family(path)
                if fam in PACKAGE_FAMILIES:
                    index.setdefault((posixpath.dirname(path), fam), []).append(path)
            self._package = index
        return self._package.get(("" if folder == "." else folder, family), [])

    def direct(self, path: str) -> list[str]:
        """Files ``path`` imports (a package folder stands for its files)."""
        entity = self.files.get(path)
        if not entity:
            return []
        targets: list[str] = []
        family = self.family(path)
        for target in entity.get("imports", {}).values():
            if not target:
                continue
            if target in self.files:
                targets.append(target)
            else:
                targets.extend(self.package(target, family))
        return targets

    def reexports(self, path: str) -> list[str]:
        entity = self.files.get(path)
        if not entity:
            return []
        if posixpath.basename(path) in BARRELS:
            return self.direct(path)
        imports = entity.get("imports", {})
        found = [imports.get(m) for m in entity.get("reexports", [])]
        return [p for p in found if p and p in self.files]

    def is_barrel(self, path: str) -> bool:
        entity = self.files.get(path)
        if entity is None:
            return False
        return path.rsplit("/", 1)[-1] in BARRELS or bool(entity.get("reexports"))

    def visible(self, path: str) -> frozenset[str]:
        known = self._visible.get(path)
        if known is not None:
            return known
        seen = {path} if path in self.files else set()
        family = self.family(path)
        if family in PACKAGE_FAMILIES:
            seen.update(self.package(posixpath.dirname(path), family))
        frontier = self.direct(path)
        for _depth in range(_REEXPORT_DEPTH + 1):
            fresh = [t for t in frontier if t not in seen]
            seen.update(fresh)
            frontier = [r for t in fresh for r in self.reexports(t)]
            if not frontier:
                break
        result = frozenset(seen)
        self._visible[path] = result
        return result

    def _reverse(self) -> tuple[dict[str, set[str]], dict[str, set[str]]]:
        """``(importers, re-exporters)`` of every file, built once."""
        if self._importers is None or self._reexporters is None:
            importers: dict[str, set[str]] = {}
            reexporters: dict[str, set[str]] = {}
            files = self.files
            for path, entity in files.items():
                imports = entity.get("imports")
                if not imports:  # imports nothing, re-exports nothing
                    continue
                targets = self.direct(path)
                for target in targets:
                    importers.setdefault(target, set()).add(path)
                if posixpath.basename(path) not in BARRELS:  # else: ``reexports`` is ``direct``
                    found = (imports.get(m) for m in entity.get("reexports", ()))
                    targets = [t for t in found if t and t in files]
                for target in targets:
                    reexporters.setdefault(target, set()).add(path)
            self._importers, self._reexporters = importers, reexporters
        return self._importers, self._reexporters

    def callers(self, target: str) -> set[str]:
        """Files that see ``target`` (the inverse of ``visible``)."""
        importers, reexporters = self._reverse()
        found = {target} if target in self.files else set()
        family = self.family(target)
        if family in PACKAGE_FAMILIES:
            found.update(self.package(posixpath.dirname(target), family))
        frontier = {target}
        for _depth in range(_REEXPORT_DEPTH + 1):
            for path in frontier:
                found.update(importers.get(path, ()))
            frontier = {b for path in frontier for b in reexporters.get(path, ())} - frontier
            if not frontier:
                break
        return found

    def importers(self, target: str) -> set[str]:
        """Files that import ``target`` (directly or through a package folder)."""
        return {c for c in self.callers(target) if c != target}


def delta(old: Graph, new: Graph, changed: set[str]) -> set[str]:
    """Files whose own calls or visible set may have changed."""
    result = set(changed)
    if result.issuperset(new.files):
        return result
    for path, entity in new.files.items():
        before = old.files.get(path)
        if before is not None and before.get("imports") != entity.get("imports"):
            result.add(path)
    for path in [p for p in changed if (p in old.files) != (p in new.files)]:
        for graph in (old, new):
            family = graph.family(path)
            if family in PACKAGE_FAMILIES:
                result.update(graph.package(posixpath.dirname(path), family))
                result.update(graph.importers(path))
    queue = list(result)
    while queue:
        path = queue.pop()
        if not (old.is_barrel(path) or new.is_barrel(path)):
            continue
        for graph in (old, new):
            for importer in graph.importers(path):
                if importer not in result:
                    result.add(importer)
                    queue.append(importer)
    return result


def update(
    old: Graph, new: Graph, functions: Functions, changed_files: set[str], fresh: set[str]
) -> None:
    """Recompute ``called_by`` where the files in ``changed_files`` can have changed it.

    ``fresh`` holds the keys of functions that did not exist before this scan.
    """
    moved = delta(old, new, changed_files)
    linker = _Linker(new, functions)
    everything = moved.issuperset(new.files)
    if everything:
        affected = set(new.files)  # every caller contributes anew: nothing to keep
    else:
        affected = set()
        for path in moved:
            affected |= old.visible(path) if path in old.files else frozenset()
            affected |= new.visible(path) if path in new.files else frozenset()
        affected = {p for p in affected if p in new.files}
        for target in sorted(affected):
            for key, entity in functions.of(target).items():
                keep = () if key in fresh else entity.get("called_by", ())
                kept = {e for e in keep if file_of(e) not in moved}
                if kept:
                    linker.result[key] = kept
    linker.contribute_all(sorted(p for p in moved if p in new.files), None)
    wanted: dict[str, set[str]] = {}
    for target in () if everything else affected:
        names = {name_of(k, e) for k, e in functions.of(target).items() if k in fresh}
        if names:
            wanted[target] = names
    if wanted:
        callers: set[str] = set()
        for target in wanted:
            callers |= new.callers(target) - moved
        linker.contribute_all(sorted(callers), wanted)
    result = linker.result
    for target in affected:
        for key, entity in functions.of(target).items():
            found = result.get(key)
            if found:
                value = sorted(found)
                if entity.get("called_by") != value:
                    entity["called_by"] = value
                    functions.touch(target)
            elif entity.get("called_by", []) != []:
                entity.pop("called_by", None)
                functions.touch(target)


class _Call(NamedTuple):
    """A call's text as the linker reads it: ``name`` is its last segment, ``form`` one of
    ``bare`` (``name()``), ``own`` (``self.name()``), ``dotted`` (``a.b.name()``) or
    ``opaque`` (``self.a.name()``, ``f().name()``, ``"s".name()``: no class or module
    named); ``text`` has ``::`` as ``.``."""

    name: str
    form: str
    text: str
    splits: tuple[tuple[str, str], ...] = ()  # dotted: (receiver, qualified name) pairs


def _read(call: str) -> _Call | None:
    """The shape of a call's text, or None for ``new X`` and a macro (``name!``)."""
    if call.startswith("new ") or call.endswith("!"):
        return None
    text = call.replace("::", ".")
    if call.startswith("self::"):  # Rust: an item of this module
        text = text[5:]
    name = text.rsplit(".", 1)[-1]
    if text == name:
        return _Call(name, "bare", text)
    if text.startswith(_OWN):
        return _Call(name, "own" if text.count(".") == 1 else "opaque", text)
    if not _NAME.fullmatch(text):
        return _Call(name, "opaque", text)
    return _Call(name, "dotted", text, _splits(text))


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


class _Linker:
    """Matches calls to definitions through an index of functions by name and file."""

    def __init__(self, graph: Graph, functions: Functions) -> None:
        self.graph = graph
        self.functions = functions
        self.result: dict[str, set[str]] = {}
        self._indexed: set[str] = set()
        self._reexported: dict[tuple[str, ...], dict[str, int]] = {}  # see ``reexported``
        self._by_name: dict[str, dict[str, list[Definition]]] = {}
        self._calls: dict[str, _Call | None] = {}  # call text -> its shape
        self._modules: dict[str, dict[str, list[str]]] = {}  # family -> module name -> files

    def _index(self, paths: set[str]) -> None:
        by_name = self._by_name
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
        by_name, shapes, result = self._by_name, self._calls, self.result
        opaque = "" if site.family in _GUESSING else "opaque"  # calls that link to nothing
        for caller_key, entity in self.functions.of(site.path).items():
            calls = entity.get("calls")
            if not calls:
                continue
            qualified = _qualified(caller_key, site.path)
            for call in calls:
                shape = shapes[call] if call in shapes else shapes.setdefault(call, _read(call))
                if shape is None or shape[1] == opaque:
                    continue
                name, form = shape[0], shape[1]
                candidates = by_name.get(name)
                if not candidates:
                    continue
                if form == "own":
                    found = site.own(qualified, name)
                elif form == "bare":
                    found = site.bare(qualified, name, candidates, calls)
                else:
                    found = site.dotted(shape, candidates)
                for target, key in found:
                    if only is None or name in only.get(target, ()):
                        callers = result.get(key)
                        if callers is None:
                            result[key] = {caller_key}
                        else:
                            callers.add(caller_key)

    def reexported(self, *paths: str) -> dict[str, int]:
        """``paths`` (depth 0) and the files they re-export, at the depth they are reached
        (memoised: most files see a module through the same file)."""
        found = self._reexported.get(paths)
        if found is None:
            found = dict.fromkeys(paths, 0)
            frontier = list(paths)
            for depth in range(1, _REEXPORT_DEPTH + 1):
                frontier = [r for p in frontier for r in self.graph.reexports(p) if r not in found]
                found.update((r, depth) for r in frontier)
                if not frontier:
                    break
            self._reexported[paths] = found
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

    def __init__(self, linker: _Linker, path: str) -> None:
        self.linker = linker
        self.path = path
        self.family = linker.graph.family(path)
        self.visible = linker.graph.visible(path)
        self._local: dict[str, list[tuple[str, str | None]]] | None = None  # see ``local``
        self._methods: dict[str, list[tuple[str, str]]] = {}  # dotted call -> targets
        self._owners: dict[str, str] = {}  # a function's qualified name -> ``Class.`` or ""
        self._named: dict[str, dict[str, int]] = {}  # receiver -> module files it names

    def own(self, qualified: str, name: str) -> list[tuple[str, str]]:
        """``self.name()`` in ``qualified``: the method of the caller's own class."""
        owner = self._owners.get(qualified)
        if owner is None:
            owner = self._owners[qualified] = self._owner(qualified)
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
        file this one sees."""
        local = _in_scope(qualified, candidates.get(self.path, ()), self.family == "java")
        if local or self.family in _BARE_LOCAL:
            return [(self.path, key) for key in local]
        return [
            (target, key)
            for target in self._seen(candidates)
            if target != self.path
            for key, kind, q in candidates[target]
            if kind == "function" and (q == name or _returned(q, calls))
        ]

    def dotted(self, call: _Call, candidates: dict[str, list[Definition]]) -> list[tuple[str, str]]:
        """``a.b.name()``: the same in every function of the file, so memoised."""
        found = self._methods.get(call.text)
        if found is None:
            found = self._methods[call.text] = self._dotted(call, candidates)
        return found

    def _dotted(
        self, call: _Call, candidates: dict[str, list[Definition]]
    ) -> list[tuple[str, str]]:
        """``Class.name()`` (the class in this file, or seen), ``module.name()`` and
        ``module.Class.name()`` (a module this file sees: a definition in the module itself
        wins over those in files it re-exports); in Go, Java and Rust a call on any other
        value still links to the definitions of that name in view, up to ``AMBIGUOUS``."""
        text = call.text
        found: list[tuple[int, str, str]] = []  # (re-export depth, file, key)
        for receiver, qualified in call.splits:
            for target, depth in self.named(receiver).items():
                for key, _kind, q in candidates.get(target, ()):
                    if q == qualified:
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
            return [(target, key) for depth, target, key in found if depth == nearest]
        if self.family not in _GUESSING or text.startswith(_OWN):
            return []  # a field of ``self`` has a type we cannot tell
        receiver = text[: -len(call.name) - 1]
        if _NAME.fullmatch(receiver) and self.named(receiver):
            return []  # a module or package that defines no such function
        guess = [(t, key) for t in self._seen(candidates) for key, _kind, _q in candidates[t]]
        return guess if len(guess) <= AMBIGUOUS else []

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

    def _module_files(self, receiver: str) -> dict[str, int]:
        if receiver.startswith(_OWN):
            return {}
        graph, family = self.linker.graph, self.family
        if family == "python" and receiver.startswith("."):
            direct = [p for p in _relative(self.path, receiver) if p in graph.files]
        else:
            key = receiver if family == "python" else _module_key(receiver.rsplit(".", 1)[-1])
            direct = self.linker.modules(family).get(key, [])
        if family == "go":  # a package never names itself
            folder = posixpath.dirname(self.path)
            direct = [p for p in direct if posixpath.dirname(p) != folder]
        # nor does a module (``progress.wrap_file()`` in progress.py is on a local value)
        seen = [p for p in direct if p in self.visible and p != self.path]
        return self.linker.reexported(*seen)


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


def _returned(qualified: str, calls: Sequence[str]) -> bool:
    """Whether ``qualified`` (``useAuth.login``) is a function nested in a top-level one
    the caller also calls: the hook pattern ``const { login } = useAuth(); login()``."""
    parent, _, _name = qualified.rpartition(".")
    return "." not in parent and parent in calls


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
