"""The resolution context the per-language resolvers share, built once per scan.

The repository's source files, a reader of its small config files, and the indexes and memos
built on first use.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from planning_memory.entity.resolve.javascript import TsConfig
    from planning_memory.entity.resolve.rust import Cargo, Crate

Reader = Callable[[str], bytes | None]
Resolved = tuple[str | None, str | None]  # (repository path, package name)


@dataclass
class Context:
    """What resolution needs to know about the repository, built once per scan. The
    per-language indexes are built on first use: a scan of one TypeScript file in a large
    repository needs none of them."""

    files: frozenset[str]
    read: Reader
    java_dirs: dict[str, str | None] = field(default_factory=dict)
    memo: dict[tuple[str, str, str], Resolved] = field(default_factory=dict)
    tsconfigs: dict[str, TsConfig | None] = field(default_factory=dict)
    gomods: dict[str, tuple[str, str] | None] = field(default_factory=dict)
    crates: dict[str, Crate] = field(default_factory=dict)
    cargos: dict[str, Cargo | None] = field(default_factory=dict)
    manifests: dict[str, dict[str, Any] | None] = field(default_factory=dict)

    @cached_property
    def dirs(self) -> frozenset[str]:
        """Every folder holding a source file, and their parents."""
        dirs = {""}
        for path in self.files:
            parent = posixpath.dirname(path)
            while parent not in dirs:
                dirs.add(parent)
                parent = posixpath.dirname(parent)
        return frozenset(dirs)

    @cached_property
    def python_roots(self) -> tuple[str, ...]:
        return _python_roots(self.files)

    @cached_property
    def java_by_name(self) -> dict[str, list[str]]:
        java: dict[str, list[str]] = {}
        for path in self.files:
            if path.endswith(".java"):
                java.setdefault(posixpath.basename(path), []).append(path)
        return java


def build_context(files: Iterable[str], read: Reader) -> Context:
    return Context(frozenset(files), read)


def _python_roots(paths: frozenset[str]) -> tuple[str, ...]:
    roots = {"", "src"}
    for path in paths:
        if path.endswith("__init__.py"):
            package = posixpath.dirname(path)
            parent = posixpath.dirname(package)
            if f"{parent}/__init__.py".lstrip("/") not in paths:
                roots.add(parent)
    return tuple(sorted(roots, key=lambda r: (r.count("/"), r)))


def as_table(value: object) -> dict[str, Any]:
    """``value`` if it is a TOML/JSON table, else an empty one."""
    return value if isinstance(value, dict) else {}


def as_list(value: object) -> list[Any]:
    """``value`` if it is a list, else an empty one."""
    return value if isinstance(value, list) else []
