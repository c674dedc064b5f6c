"""Whole-tree validation: every file under a memory tree against its schema and its place.

Reports every problem (``file: json-path: message``) instead of stopping at the first, for CI
and pre-commit; in a git work tree, also a memory file a merge left unfinished. Reads only;
writes nothing.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from planning_memory import core, gitops
from planning_memory.core import CONFIG_NAME, LONG_TERM_DIRS, SCHEMA_FOR_TYPE, Layout, codec
from planning_memory.errors import (
    ConfigError,
    NotFoundError,
    PlanningMemoryError,
    UnsafePathError,
    printable,
)
from planning_memory.store import Loaded, Store, digest, valid_name

CONFIG_MAX_BYTES = 1 << 20  # memory-config.json is edited by hand: a bigger one is refused unread

ENTITY_SCHEMAS = {
    "files": "entity-files",
    "functions": "entity-functions",
    "components": "entity-components",
}


@dataclass(frozen=True)
class Finding:
    """One problem in one file."""

    path: str
    json_path: str | None
    message: str

    def line(self) -> str:
        return ": ".join(p for p in (self.path, self.json_path, self.message) if p)


@dataclass(frozen=True)
class Report:
    files: int
    findings: tuple[Finding, ...]

    @property
    def ok(self) -> bool:
        return not self.findings


def _targets(layout: Layout, store: Store) -> Iterator[tuple[Path, str | None]]:
    """(file, schema name or None when the file has no place in the tree); no folder is
    listed through a symlink out of the tree (``Store.check_inside``)."""
    yield layout.config, "config"
    lt = layout.long_term
    if layout.preferences.exists():
        yield layout.preferences, "preferences"
    for folder in sorted(set(LONG_TERM_DIRS.values())):
        for path in _json_files(store, lt / folder, recursive=False):
            yield path, "long-term"
    for path in _json_files(store, layout.short_term, recursive=False):
        yield path, "session" if path.name.startswith("session-") else None
    if layout.entity.is_dir():
        rel_json = layout.entity / "relationships.json"
        if rel_json.exists():
            yield rel_json, "relationships"
        for sub, name in ENTITY_SCHEMAS.items():
            for path in _json_files(store, layout.entity / sub, recursive=True):
                yield path, name


def _json_files(store: Store, folder: Path, *, recursive: bool) -> list[Path]:
    if not store.check_inside(folder).is_dir():
        return []
    if recursive:
        return sorted(p for p in folder.rglob("*.json") if not p.name.startswith("."))
    names = sorted(n for n in os.listdir(folder) if n.endswith(".json") and n[0] != ".")
    return [folder / n for n in names]


def check_file(path: Path, kind: str | None, store: Store, rel: str | None = None) -> list[Finding]:
    rel = rel or store.rel(path)
    if not valid_name(rel):
        message = "file name is not valid UTF-8; no memory file has one (rename or remove it)"
        return [Finding(printable(rel), None, message)]
    if kind is None:
        return [Finding(rel, None, "unexpected file in the memory tree")]
    try:
        value = store.read_json(path)
    except PlanningMemoryError as exc:
        return [Finding(_where(exc, rel), None, exc.message)]
    if kind == "long-term":
        return _check_record(path, value, rel) + conflict_findings(value, rel)
    found = [Finding(rel, p.json_path, p.message) for p in core.schema.problems(kind, value)]
    found += conflict_findings(value, rel)
    if kind == "config" and not found:
        found = [Finding(rel, where, message) for where, message in config_problems(value)]
    if kind == "session" and isinstance(value, dict) and not _session_named(path, value):
        message = f"id {value.get('id')!r} does not match the file name"
        found.append(Finding(rel, "$.id", message))
    return found


_CONFLICT_LINE = re.compile(r"^(?:<{7}|>{7}|\|{7})(?: |$)", re.MULTILINE)


def conflict_findings(value: Any, rel: str, json_path: str = "$") -> list[Finding]:
    """A finding for every string holding a git conflict marker line (``<<<<<<<``,
    ``|||||||``, ``>>>>>>>``): a merge's leftovers imported as if they were memory."""
    if isinstance(value, str):
        if _CONFLICT_LINE.search(value):
            return [Finding(rel, json_path, "git conflict markers in a value; resolve them")]
        return []
    if isinstance(value, dict):
        return [f for k, v in value.items() for f in conflict_findings(v, rel, f"{json_path}.{k}")]
    if isinstance(value, list):
        return [
            f for i, v in enumerate(value) for f in conflict_findings(v, rel, f"{json_path}[{i}]")
        ]
    return []


def _session_named(path: Path, value: dict[str, object]) -> bool:
    return not path.name.startswith("session-") or path.name == f"session-{value.get('id')}.json"


def _where(exc: PlanningMemoryError, rel: str) -> str:
    if exc.line is None:
        return rel
    return f"{rel}:{exc.line}" + (f":{exc.column}" if exc.column is not None else "")


def _check_record(path: Path, value: object, rel: str) -> list[Finding]:
    if not isinstance(value, dict):
        return [Finding(rel, "$", "a record must be a JSON object")]
    name = SCHEMA_FOR_TYPE.get(str(value.get("type")))
    if name is None:
        return [Finding(rel, "$.type", f"unknown record type {value.get('type')!r}")]
    found = [Finding(rel, p.json_path, p.message) for p in core.schema.problems(name, value)]
    if value.get("id") != path.stem:
        found.append(Finding(rel, "$.id", f"id {value.get('id')!r} does not match the file name"))
    folder = LONG_TERM_DIRS.get(str(value.get("type")))
    if folder is not None and path.parent.name != folder:
        found.append(Finding(rel, "$.type", f"a {value['type']} record belongs in {folder}/"))
    if value.get("scope") == "personal" and not _personal(path):
        message = (
            "a personal record in a project's memory (which is committed): personal records "
            "live only in the personal store; set scope to project, or save it again with "
            "--scope personal and delete this file"
        )
        found.append(Finding(rel, "$.scope", message))
    return found


def _personal(path: Path) -> bool:
    """True when the record file ``path`` is in the personal store (``Layout.personal``)."""
    store = os.path.realpath(Layout.personal().planning) + os.sep
    return os.path.realpath(path).startswith(store)


def validate_tree(layout: Layout) -> Report:
    """Check every file of the tree at ``layout``."""
    store = Store(layout)
    findings: list[Finding] = []
    count = 0
    if not layout.config.exists():
        findings.append(Finding(store.rel(layout.config), None, f"missing {CONFIG_NAME}"))
    prefix = str(layout.repo_root) + os.sep  # str slicing: Path.relative_to costs 30 us
    config = layout.config
    for path, kind in _targets(layout, store):
        if path == config and not path.exists():
            continue
        count += 1
        text = str(path)
        rel = text[len(prefix) :] if text.startswith(prefix) else None
        findings.extend(check_file(path, kind, store, rel))
    return Report(count, tuple(findings))


def layout_for(path: Path) -> Layout:
    """The memory tree named by ``path``: a repository root or a ``.planning``-like folder."""
    if (path / CONFIG_NAME).exists() or (path / "memory").is_dir():
        return Layout(path)
    return Layout.for_repo(path)


def kind_of(path: Path) -> str | None:
    """The schema a single file should meet, from where it sits."""
    parts = path.parts
    if path.name == CONFIG_NAME:
        return "config"
    if path.name == "preferences.json":
        return "preferences"
    if path.name == "relationships.json":
        return "relationships"
    if path.name.startswith("session-"):
        return "session"
    for sub, name in ENTITY_SCHEMAS.items():
        if "entity" in parts and sub in parts:
            return name
    if path.parent.name in set(LONG_TERM_DIRS.values()):
        return "long-term"
    return None


def validate_file(path: Path) -> list[Finding]:
    path = Path(os.path.abspath(path))  # its folder names tell its kind, even for "x.json"
    store = Store(Layout(path.parent))
    kind = kind_of(path)
    if kind is None:
        kind = "long-term"
        try:
            value = codec.loads(store.read_bytes(path), path=str(path))
        except PlanningMemoryError as exc:
            return [Finding(_where(exc, str(path)), None, exc.message)]
        if isinstance(value, dict) and "memory" in value:
            kind = "config"
    return check_file(path, kind, store)


def validate_path(path: Path) -> Report:
    """Check ``path``: one file, or the whole memory tree of a repository or ``.planning``
    folder (a copy such as ``.planning.example/`` too); in a git work tree, also that no
    merge left one of its files unfinished (``merge_findings``)."""
    if Path(path).is_file():
        report = Report(1, tuple(validate_file(path)))
        return Report(1, report.findings + merge_findings(Path(path), None))
    layout = layout_for(Path(path))
    report = validate_tree(layout)
    return Report(report.files, report.findings + merge_findings(layout.planning, layout))


def merge_findings(path: Path, layout: Layout | None) -> tuple[Finding, ...]:
    """A finding for each memory file under ``path`` that a merge left unfinished: unmerged,
    or staged as one side of a merge in progress (git merged it without the driver, keeping
    one side's counters); each tells what to run (``gitops.leftovers``)."""
    found = gitops.leftovers(path)
    if layout is None:
        return tuple(Finding(str(path), None, item.message) for item in found)
    root = layout.repo_root
    return tuple(Finding(os.path.relpath(item.path, root), None, item.message) for item in found)


def config_problems(config: Any) -> list[tuple[str, str]]:
    """(json path, message) for what a schema cannot say of a schema-valid config: the chunk
    overlap must be smaller than the chunk, the time zone a real IANA zone."""
    memory = config.get("memory") if isinstance(config, dict) else None
    if not isinstance(memory, dict):
        return []
    found = []
    contextual = memory.get("contextual") or {}
    defaults = core.DEFAULT_CONFIG["memory"]["contextual"]
    size = contextual.get("chunkSize", defaults["chunkSize"])
    overlap = contextual.get("chunkOverlap", defaults["chunkOverlap"])
    if overlap >= size:
        found.append(
            (
                "$.memory.contextual.chunkOverlap",
                f"chunkOverlap {overlap} must be smaller than chunkSize {size}",
            )
        )
    zone = (memory.get("shortTerm") or {}).get("timezone")
    if zone is not None:
        try:
            core.temporal.zone(zone)
        except ConfigError as exc:
            found.append(("$.memory.shortTerm.timezone", f"{exc.message}; {exc.hint}"))
    return found


def load_config(layout: Layout, store: Store) -> dict[str, Any]:
    """The tree's ``memory-config.json`` ({} when it has none), or one ``ConfigError``.

    Schema-checked once per distinct content: the digest of the last valid config is kept in
    the derived folder, so a short command (``pmem context``, a hook) does not pay for the
    schema machinery every time. Anything but a regular file in its place (a FIFO, a folder)
    or a file over ``CONFIG_MAX_BYTES`` is an error too, never the defaults."""
    if not os.path.lexists(layout.config):
        return {}
    try:
        data = store.read_bytes(layout.config, max_bytes=CONFIG_MAX_BYTES)
        value = codec.loads(data, path=store.rel(layout.config))
        loaded = Loaded(layout.config, value, digest(data))
        stamp = layout.contextual / ".config-valid"
        with contextlib.suppress(NotFoundError, ValueError):  # unreadable: checked again
            if store.read_bytes(stamp, max_bytes=100).decode("ascii") == loaded.digest:
                return dict(loaded.value)
        core.schema.check("config", loaded.value, path=store.rel(layout.config))
        for where, message in config_problems(loaded.value)[:1]:
            raise ConfigError(message, path=store.rel(layout.config), json_path=where)
    except UnsafePathError:
        raise  # a symlink out of the tree is refused as such, config or not
    except PlanningMemoryError as exc:
        raise ConfigError(
            exc.message,
            path=exc.path,
            json_path=exc.json_path,
            line=exc.line,
            column=exc.column,
            hint=exc.hint,
        ) from None
    if layout.contextual.is_dir() and not store.private:
        with contextlib.suppress(PlanningMemoryError, OSError):
            store.write_text(stamp, loaded.digest)
    return dict(loaded.value)
