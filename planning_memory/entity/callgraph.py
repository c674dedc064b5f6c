"""``called_by``: which functions call a function, resolved across files by name.

A call ``x.y.name(...)`` or ``name(...)`` made in file X can reach a function called ``name``
defined in a file X *sees*: X itself, the files X imports (resolved to repository paths), the
files those re-export (``export ... from``, or any import of a barrel file: ``index.*``,
``__init__.py``, ``mod.rs``, ``lib.rs``), the files of an imported Go package or Java package
folder, and the other files of X's own Go/Java package. Which of those definitions a call
reaches is ``linking``'s to decide.

Entries are the caller's entity key: ``<path>::<qualified name>``.

Incremental: only files whose calls or visible files changed (the *delta*: parsed, removed,
imports changed, plus importers of changed barrels and members of changed Go/Java packages)
contribute anew; every other caller's entries are kept. A function that did not exist before
gets its callers searched in all files that can see its file.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Iterable, Set
from typing import Any, Protocol

from planning_memory.entity.calltypes import split_arguments
from planning_memory.entity.entities import name_of, qualified_of
from planning_memory.entity.languages import FAMILY
from planning_memory.entity.languages.go import package_name
from planning_memory.entity.linking import Linker
from planning_memory.entity.results import base_of
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
_JAVA_ROOT = re.compile(r"((?:.*/)?)src/[^/]+/java/(.*)")  # (module, package path)
TYPED_FAMILIES = frozenset({"go", "java", "rust"})  # calls on a result read its declared type
SUBCLASS_DEPTH = 6  # Java: subclasses followed at most this far down
_SEGMENT = re.compile(r"[.:(),\[\]?@]+")  # what separates the names in a call's text
_REEXPORT_DEPTH = 4


class Functions(Protocol):
    def of(self, path: str) -> dict[str, Entity]: ...

    def touch(self, path: str) -> None: ...


class Graph:
    """Who sees whom, from the file entities' resolved imports."""

    def __init__(
        self, files: dict[str, Entity], import_path: Callable[[str], str | None] | None = None
    ) -> None:
        self.files = files
        self.import_path = import_path  # a Go package folder -> its import path (go.mod)
        self._package: dict[tuple[str, str], list[str]] | None = None
        self._visible: dict[str, frozenset[str]] = {}
        self._importers: dict[str, set[str]] | None = None
        self._reexporters: dict[str, set[str]] | None = None
        self._family: dict[str, str] = {}
        self._reexported: dict[tuple[str, ...], dict[str, int]] = {}  # see ``reexported``

    def family(self, path: str) -> str:
        known = self._family.get(path)
        if known is None:
            known = FAMILY.get(str(self.files.get(path, {}).get("language")), "")
            self._family[path] = known
        return known

    def go_package(self, module: str, target: str) -> str:
        """The name a Go import of ``module`` (resolved to the folder ``target``) gives its
        package. An entry reduced to its links (``{target: target}``) has lost the import
        as written: its import path then comes from the nearest ``go.mod``."""
        if module == target and self.import_path is not None:
            module = self.import_path(target) or module
        return package_name(module)

    def package(self, folder: str, family: str) -> list[str]:
        """The files of the Go or Java package in ``folder``: a Go package is a folder; a
        Java package is a folder below a source root, so ``src/main/java/org/x`` and
        ``src/test/java/org/x`` are one package (``org/x``)."""
        if self._package is None:
            index: dict[tuple[str, str], list[str]] = {}
            for path in self.files:
                fam = self.family(path)
                if fam in PACKAGE_FAMILIES:
                    key = _package_key(posixpath.dirname(path), fam)
                    index.setdefault((key, fam), []).append(path)
            self._package = index
        key = _package_key("" if folder == "." else folder, family)
        return self._package.get((key, family), [])

    def direct(self, path: str) -> list[str]:
        """Files ``path`` imports (a package folder stands for its files)."""
        entity = self.files.get(path)
        if not entity:
            return []
        targets: list[str] = []
        family = self.family(path)
        for module, target in entity.get("imports", {}).items():
            if not target:
                continue
            if target in self.files:
                targets.append(target)
                if family == "python" and "." in module.lstrip("."):
                    targets += self._parent_packages(module, target)
            else:
                targets.extend(self.package(target, family))
        return targets

    def _parent_packages(self, module: str, target: str) -> list[str]:
        """Python: ``import a.b.c`` binds ``a``, so the ``__init__.py`` of ``a`` (and of
        ``a.b``) is in view of the importer too."""
        folder = posixpath.dirname(target)
        if posixpath.basename(target).startswith("__init__."):
            folder = posixpath.dirname(folder)
        found = []
        for _ in range(module.count(".") if not module.startswith(".") else 0):
            init = posixpath.join(folder, "__init__.py")
            if init in self.files:
                found.append(init)
            folder = posixpath.dirname(folder)
        return found

    def reexports(self, path: str) -> list[str]:
        entity = self.files.get(path)
        if not entity:
            return []
        if posixpath.basename(path) in BARRELS:
            return self.direct(path)
        imports = entity.get("imports", {})
        found = [imports.get(m) for m in entity.get("reexports", [])]
        return [p for p in found if p and p in self.files]

    def reexported(self, *paths: str) -> dict[str, int]:
        """``paths`` (depth 0) and the files they re-export, at the depth they are reached
        (memoised: most files see a module through the same file)."""
        found = self._reexported.get(paths)
        if found is None:
            found = dict.fromkeys(paths, 0)
            frontier = list(paths)
            for depth in range(1, _REEXPORT_DEPTH + 1):
                frontier = [r for p in frontier for r in self.reexports(p) if r not in found]
                found.update((r, depth) for r in frontier)
                if not frontier:
                    break
            self._reexported[paths] = found
        return found

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


def _package_key(folder: str, family: str) -> str:
    """A Java folder's package, as its path below a source root of the Maven and Gradle
    layouts (``src/main/java/``, ``src/test/java/``, any ``src/<set>/java/``, in the same
    module); any other folder is its own package."""
    if family != "java":
        return folder
    match = _JAVA_ROOT.match(folder + "/")
    return f"{match.group(1)}src/*/java/{match.group(2)}".rstrip("/") if match else folder


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


def through_results(
    old: Graph, new: Graph, functions: Functions, moved: set[str], reshaped: Set[str]
) -> set[str]:
    """The files that see a Go, Java or Rust file in ``moved`` and whose calls name a
    function or class in ``reshaped`` (new, gone, or with a new signature or, for a Java
    constructor, new calls): where they link can depend on it beyond the name (through
    what a function declares it returns: ``NewCommand().Name``, Go's ``Commands()[]``;
    through the methods and bases of a class: ``Document.attr()``), so they link anew."""
    if not reshaped or moved.issuperset(new.files):
        return set()
    typed = [p for p in moved if (new.family(p) or old.family(p)) in TYPED_FAMILIES]
    if not typed:
        return set()
    seers = _seers(old, new, typed)
    java = [p for p in typed if (new.family(p) or old.family(p)) == "java"]
    if java:  # a subclass's callers reach the class's methods through the subclass
        seers |= _subclass_seers(old, new, functions, java, seers)
    return {
        path
        for path in seers - moved
        if path in new.files
        and any(
            not reshaped.isdisjoint(_SEGMENT.split(call))
            for entity in functions.of(path).values()
            for call in entity.get("calls", ())
        )
    }


def _seers(old: Graph, new: Graph, paths: Iterable[str]) -> set[str]:
    """Files that see any of ``paths``, before or after."""
    found: set[str] = set()
    for path in paths:
        for graph in (old, new):
            if path in graph.files:
                found |= graph.callers(path)
    return found


def _subclass_seers(
    old: Graph, new: Graph, functions: Functions, changed: list[str], seers: set[str]
) -> set[str]:
    """The files that see a Java class deriving (through its constructors' ``super(...)``
    calls, as the linker reads bases) from a class of ``changed``, however deep."""
    classes = {c for path in changed for c in _classes_of(functions.of(path))}
    found: set[str] = set()
    visited, frontier = set(changed), seers
    for _depth in range(SUBCLASS_DEPTH):
        subclasses = {
            path
            for path in frontier - visited
            if new.family(path) == "java" and _derives(functions.of(path), classes)
        }
        if not subclasses:
            break
        visited |= subclasses
        classes |= {c for path in subclasses for c in _classes_of(functions.of(path))}
        frontier = _seers(old, new, subclasses)
        found |= frontier
    return found


def _classes_of(entities: dict[str, Entity]) -> set[str]:
    return {q.rpartition(".")[2] for key in entities if (q := qualified_of(key).rpartition(".")[0])}


def _derives(entities: dict[str, Entity], classes: set[str]) -> bool:
    """Whether a constructor of ``entities`` calls one of ``classes``' by ``super(...)``."""
    for entity in entities.values():
        if entity.get("kind") == "constructor":
            for call in entity.get("calls", ()):
                base = base_of(split_arguments(call)[0])
                if base is not None and base.rpartition(".")[2] in classes:
                    return True
    return False


def update(
    old: Graph,
    new: Graph,
    functions: Functions,
    changed_files: set[str],
    fresh: set[str],
    reshaped: Set[str] = frozenset(),
) -> None:
    """Recompute ``called_by`` where the files in ``changed_files`` can have changed it.

    ``fresh`` holds the keys of functions that did not exist before this scan, or whose
    signature changed; ``reshaped`` their names and those of the functions that went.
    """
    moved = delta(old, new, changed_files)
    moved |= through_results(old, new, functions, moved, reshaped)
    linker = Linker(new, functions)
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
