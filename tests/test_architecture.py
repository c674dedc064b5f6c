"""The package's shape, read from the source by folder, so moving a file cannot dodge a rule.

- Every module lives in a known part folder (or is one of the few top-level modules).
- ``core/`` imports nothing of the package outside ``core/`` and ``errors``.
- Only ``store`` writes under ``.planning/``; the few modules that write elsewhere say why.
- The entry points (``cli/``, ``agents/``, ``watch/``) reach the memory only through ``Memory``
  and the errors (plus each other's package API, and a part's types for annotations).
- A part reaches another part only through that part's ``__init__`` (its API), and never an
  entry point or the facade.
- Each part's ``__init__`` lists the same names for type checkers and at run time, and every
  name resolves.
"""

from __future__ import annotations

import ast
import importlib
import re
from functools import cache
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "planning_memory"
TOP_LEVEL = {"__init__", "__main__", "errors", "store", "memory", "manager", "validate"}
STORE_HELPERS = ("paths", "atomic", "lockfile")  # the store's own: path checks, replace, lock
TOP_LEVEL |= set(STORE_HELPERS)
TOP_LEVEL |= {"background"}  # detached work: the hook server, summaries, index builds
TOP_LEVEL |= {"readonly"}  # the derived databases of a tree that may only be read, in memory
PARTS = ("core", "longterm", "sessions", "entity", "search", "context", "views", "transfer")
PARTS += ("gitops",)
ENTRYPOINTS = ("cli", "agents", "watch", "viewer")
# modules that write files themselves, and why (everything else writes through Store)
WRITERS_OUTSIDE_STORE = {
    "planning_memory.store": "the writer",
    "planning_memory.atomic": "the store's atomic replace; an agent's config file outside any tree",
    "planning_memory.lockfile": "the memory's lock file, replaced when its holder died",
    "planning_memory.search.database": "the SQLite index file, its journal, its build lock",
    "planning_memory.readonly": "the SQLite catalog or index and its journals, when unusable",
    "planning_memory.watch.process": "the daemon's pid, log and status (never wait for the lock)",
    "planning_memory.gitops.integration": "git's own files: hooks, attributes, conflict fixes",
    "planning_memory.gitops.project": "the project's first commit, kept in git's own directory",
    "planning_memory.cli.core": "`pmem export -o FILE`: the file the user names",
    "planning_memory.agents.hook_server": "its socket, in the user's runtime folder",
    "planning_memory.agents.mcp_start": "its stored answers, in the package (`--write`)",
}
LAZY_API = "planning_memory.core.exports"  # how each part's ``__init__`` offers its API
WRITE_CALLS = {"os.replace", "os.rename", "os.unlink", "os.remove", "shutil.rmtree", "os.rmdir"}
WRITE_METHODS = {"write_text", "write_bytes", "mkdir", "unlink", "rmdir", "rename", "replace"}


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@cache
def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


@cache
def tree_of(name: str) -> ast.Module:
    path = modules()[name]
    return ast.parse(path.read_text("utf-8"), str(path))


def folder_of(name: str) -> str | None:
    """The part folder a module lives in (``planning_memory.search.ranking`` -> ``search``)."""
    bits = name.split(".")
    return bits[1] if len(bits) > 1 and (PACKAGE / bits[1]).is_dir() else None


def _typing_only(tree: ast.Module) -> set[ast.AST]:
    """The imports inside ``if TYPE_CHECKING:`` blocks (names for annotations only)."""
    return {
        inner
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"
        for inner in node.body
    }


@cache
def imports(name: str, *, typing: bool = True) -> tuple[tuple[str, tuple[str, ...], int], ...]:
    """``(module, names, line)`` for every import of the package in ``name``, absolute;
    without the ``TYPE_CHECKING`` ones when ``typing`` is false."""
    path = modules()[name]
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    skip = set() if typing else _typing_only(tree_of(name))
    found = []
    for node in ast.walk(tree_of(name)):
        if node in skip:
            continue
        if isinstance(node, ast.Import):
            found += [(a.name, (), node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            names = tuple(a.name for a in node.names)
            if base == "planning_memory" and set(names) & {*PARTS, *ENTRYPOINTS}:
                # ``from planning_memory import search``: the part's package, i.e. its API
                found += [(f"{base}.{n}", (), node.lineno) for n in names]
            else:
                found.append((base, names, node.lineno))
    return tuple(f for f in found if f[0].split(".")[0] == "planning_memory")


def api_of(part: str) -> set[str]:
    return set(importlib.import_module(f"planning_memory.{part}").__all__)


def test_the_rules_see_the_package() -> None:
    assert {folder_of(m) for m in modules()} >= {*PARTS, *ENTRYPOINTS}
    assert any(folder_of(m) == "core" for m, _, _ in imports("planning_memory.store"))
    assert _writes("planning_memory.store"), "the write check sees the store's writes"


def test_every_module_lives_in_a_known_part() -> None:
    strays = [
        m
        for m in modules()
        if folder_of(m) is None
        and m != "planning_memory"
        and m.removeprefix("planning_memory.") not in TOP_LEVEL
    ]
    assert strays == []
    unknown = {folder_of(m) for m in modules()} - {None, *PARTS, *ENTRYPOINTS}
    assert unknown == set(), "a new part folder: add it to the rules (and docs/design.md)"


@pytest.mark.parametrize("name", [m for m in modules() if folder_of(m) == "core"])
def test_core_imports_only_core_and_errors(name: str) -> None:
    bad = [
        (target, line)
        for target, _, line in imports(name)
        if folder_of(target) != "core" and target != "planning_memory.errors"
    ]
    assert bad == []


def test_the_store_builds_only_on_core() -> None:
    helpers = {f"planning_memory.{name}" for name in STORE_HELPERS}
    for name in ("planning_memory.store", *sorted(helpers)):
        targets = {t for t, _, _ in imports(name)}
        assert {folder_of(t) for t in targets} <= {"core", None}, name
        assert {t for t in targets if folder_of(t) is None} <= {"planning_memory.errors", *helpers}


def _writes(name: str) -> list[int]:
    lines = []
    for node in ast.walk(tree_of(name)):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if (
            isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Name)
            and f"{func.value.id}.{func.attr}" in WRITE_CALLS
        ):
            lines.append(node.lineno)
            continue
        if isinstance(func, ast.Attribute) and func.attr in WRITE_METHODS:
            receiver = ast.unparse(func.value)
            # the store, and the sessions API (whose ``rename`` names a session) write through it
            if (
                not re.search(r"\b(store|sessions)$|^super\(\)$", receiver)
                and func.attr != "replace"
            ):
                lines.append(node.lineno)
        if isinstance(func, ast.Name) and func.id == "open" and len(node.args) > 1:
            mode = node.args[1]
            if isinstance(mode, ast.Constant) and set(str(mode.value)) & set("wax+"):
                lines.append(node.lineno)
    return lines


@pytest.mark.parametrize("name", sorted(modules()))
def test_only_the_store_writes_files(name: str) -> None:
    if name in WRITERS_OUTSIDE_STORE:
        return
    assert _writes(name) == [], f"{name} writes a file itself: go through Store"


def test_the_writers_outside_the_store_still_write() -> None:
    """An allowance that is no longer used goes (so the list stays honest)."""
    assert [n for n in WRITERS_OUTSIDE_STORE if n in modules() and not _writes(n)] == []


@pytest.mark.parametrize("name", [m for m in modules() if folder_of(m) in ENTRYPOINTS])
def test_entry_points_reach_memory_only_through_the_facade(name: str) -> None:
    own = folder_of(name)
    bad = []
    annotations = set(imports(name)) - set(imports(name, typing=False))
    for target, names, line in imports(name):
        where = folder_of(target)
        if target in ("planning_memory.memory", "planning_memory.errors", LAZY_API):
            continue
        if where == own:
            continue
        if (target, names, line) in annotations and target == f"planning_memory.{where}":
            continue  # a part's type, for an annotation only
        if target == "planning_memory" and set(names) <= {"Memory", "__version__"}:
            continue
        if target.count(".") == 1 and where in ENTRYPOINTS:  # another entry point's API
            continue
        bad.append((target, names, line))
    assert bad == []


@pytest.mark.parametrize(
    "name",
    [m for m in modules() if folder_of(m) in PARTS or m.rpartition(".")[2] in TOP_LEVEL],
)
def test_parts_reach_each_other_through_their_api(name: str) -> None:
    own = folder_of(name)
    bad = []
    for target, names, line in imports(name):
        where = folder_of(target)
        if where in ENTRYPOINTS or target == "planning_memory.memory":
            if name != "planning_memory" and name != "planning_memory.__main__":
                bad.append((target, names, line, "an entry point or the facade"))
            continue
        if where is None or where == own or target == LAZY_API:
            continue
        if target != f"planning_memory.{where}":
            bad.append((target, names, line, "a part's module, not its API"))
        elif missing := set(names) - api_of(where):
            bad.append((target, tuple(sorted(missing)), line, "not in the part's API"))
    assert bad == []


def _checked_names(part: str) -> set[str]:
    """The names an ``__init__`` imports for type checkers (its ``TYPE_CHECKING`` block)."""
    found: set[str] = set()
    for node in ast.walk(tree_of(f"planning_memory.{part}")):
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            for inner in node.body:
                if isinstance(inner, ast.ImportFrom):
                    found |= {a.asname or a.name for a in inner.names}
    return found


@pytest.mark.parametrize("part", PARTS)
def test_each_part_api_is_the_same_for_type_checkers_and_at_run_time(part: str) -> None:
    package = importlib.import_module(f"planning_memory.{part}")
    assert _checked_names(part) == set(package.__all__)
    submodules = {p.stem for p in (PACKAGE / part).iterdir() if p.suffix == ".py" or p.is_dir()}
    for name in package.__all__:
        value = getattr(package, name)
        if name in submodules:  # a submodule offered as a namespace (``core.codec``)
            assert getattr(value, "__name__", "") == f"planning_memory.{part}.{name}"
        else:
            assert getattr(value, "__module__", None) != f"planning_memory.{part}.{name}"


def test_the_tests_mirror_the_package() -> None:
    """Each test folder is named after the package folder whose modules it tests."""
    tests = Path(__file__).resolve().parent
    folders = {
        p.relative_to(tests)
        for p in tests.rglob("*")
        if p.is_dir() and "fixtures" not in p.parts and "__pycache__" not in p.parts
    }
    assert folders, "the tests are laid out by part"
    assert {f for f in folders if not (PACKAGE / f).is_dir()} == set()
