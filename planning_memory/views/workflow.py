"""Markdown views both ways: render the records, and import hand edits back into them.

JSON is rendered to patterns.md / mistakes.md / CLAUDE.md; hand edits of patterns.md /
mistakes.md flow back into the JSON.

Each rendered file records the hash of the JSON it came from and of its own body, so a run can
tell a stale render from a hand edit: JSON changed only -> render; Markdown changed only ->
import, then re-render; both -> a conflict that writes nothing unless ``prefer`` settles it.
Outside ``.planning/`` only the marked block of the repository's own CLAUDE.md / AGENTS.md is
touched, and only when the config asks for it.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from planning_memory.core import Layout, Record, timestamp
from planning_memory.errors import (
    ConflictError,
    InputError,
    LimitError,
    PlanningMemoryError,
    SchemaError,
    StorageError,
    UnsafePathError,
)
from planning_memory.longterm import check_record, new_record, save_record
from planning_memory.views.fileformat import conflict_marker_line, header_hashes
from planning_memory.views.state import NAMES, VIEWS, Views, ViewState
from planning_memory.views.templates import load_template

VIEW_MAX_BYTES = 1 << 20  # a bigger hand-edited view (and over twice its render) is not parsed
BLOCKS = "the managed block of the repository's CLAUDE.md / AGENTS.md"  # ``refresh``'s name

if TYPE_CHECKING:  # the import side (markdown-it) loads only when a view is parsed
    from planning_memory.views.diff import Changes
    from planning_memory.views.parse import ParsedView


@dataclass
class SyncReport:
    rendered: list[str] = field(default_factory=list)
    imported: dict[str, int] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    conflicts: list[ViewState] = field(default_factory=list)

    def as_dict(self, rel: Any = str) -> dict[str, Any]:
        return {
            "rendered": self.rendered,
            "imported": self.imported,
            "warnings": self.warnings,
            "conflicts": [rel(c.path) for c in self.conflicts],
        }

    def conflict_error(self, rel: Callable[[Path], str]) -> ConflictError:
        """The one-line error for this report's hand-edit conflicts (nothing was written)."""
        names = ", ".join(f"{rel(c.path)} ({c.state})" for c in self.conflicts)
        if any(conflict_marker_line(c.on_disk or "") for c in self.conflicts):
            return ConflictError(
                f"git conflict markers from a merge in: {names}; nothing was written",
                hint="`pmem sync --prefer json` renders the views again from the merged records "
                "(your copy is kept as .orig)",
            )
        return ConflictError(
            f"edited by hand: {names}; nothing was written",
            hint="`pmem sync --prefer md` imports your edits, `--prefer json` re-renders "
            "(your edited copy is kept as .orig)",
        )


def check(views: Views) -> list[ViewState]:
    """Every rendered file that is not current (for ``render --check``)."""
    found = [s for s in [*views.states(), *views.target_states()] if s.state != "current"]
    views.save_cache()
    return found


def _apply_changes(views: Views, kind: str, changes: Changes, now: datetime) -> dict[str, int]:
    """Validate every change first, then write them all."""
    lay, store = views.layout, views.store
    to_write: list[Record] = [u.after for u in changes.updates]
    to_write += [d.after for d in changes.deletions]
    for creation in changes.creations:
        fields = dict(creation.fields)
        record_type = fields.pop("type", VIEWS[kind])
        title = fields.pop("title", None) or fields.get("name") or fields.get("description", "")
        title = " ".join(str(title).split())[:200] or "Untitled"
        to_write.append(new_record(record_type, now, title=title, source="human", **fields))
    for record in to_write:
        try:
            check_record(record)
        except SchemaError as exc:
            raise SchemaError(
                exc.message,
                path=store.rel(views.path(f"{kind}.md")),
                json_path=f"{record.get('id', 'new item')} {exc.json_path}",
                hint="nothing was imported; fix the item and run `pmem sync`",
            ) from None
    with store.batch():  # one sync for them all: an edit may add thousands of items
        for record in to_write:
            save_record(lay, store, record)
    return {
        "updated": len(changes.updates),
        "created": len(changes.creations),
        "deleted": len(changes.deletions),
    }


def base_path(layout: Layout, name: str) -> Path:
    """Where a view's last render was once kept whole (derived, gitignored): read as the base
    of a three-way import when the render cache cannot rebuild it, removed when it is stale."""
    return layout.contextual / "views" / name


def _base(views: Views, state: ViewState) -> str | None:
    """The render ``state``'s file was last written with, when its header is the one on disk
    (``Views.base_text``, else a copy kept whole by an earlier version), else None."""
    recorded = header_hashes(state.on_disk or "")
    if recorded is None:
        return None
    found = views.base_text(state.name)
    if found is not None and header_hashes(found) == recorded:
        return found
    path = base_path(views.layout, state.name)
    if not path.is_file():
        return None
    try:
        found = views.store.read_bytes(path).decode("utf-8", "replace")
    except UnsafePathError:
        raise
    except PlanningMemoryError:  # a FIFO, too large...: derived, so as if there were none
        return None
    return found if header_hashes(found) == recorded else None


def _against_base(views: Views, state: ViewState, changes: Changes, edited: ParsedView) -> Changes:
    """Keep only what the person changed relative to the render they edited: an item missing
    from the edit but absent from that render too (a record added to JSON since) is not a
    deletion, and an item equal to its rendered form (its record changed in JSON since) is not
    an update. Without a matching base render, every difference counts."""
    base_text = _base(views, state)
    if base_text is None:
        return changes
    from planning_memory.views.parse import parse_view

    kind = state.name.removesuffix(".md")
    base = parse_view(base_text, kind, template=load_template(state.name))  # type: ignore[arg-type]
    base_items = {i.record_id: i.fields for i in base.items if i.record_id}
    edited_items = {i.record_id: i.fields for i in edited.items if i.record_id}
    return dataclasses.replace(
        changes,
        deletions=tuple(d for d in changes.deletions if d.record_id in base_items),
        updates=tuple(
            u
            for u in changes.updates
            if edited_items.get(u.record_id) != base_items.get(u.record_id)
        ),
    )


def _import(views: Views, state: ViewState, now: datetime, report: SyncReport) -> None:
    from planning_memory.views.diff import diff_view
    from planning_memory.views.parse import parse_view

    kind = state.name.removesuffix(".md")
    template = load_template(state.name)
    parsed = parse_view(_parseable(views, state), kind, template=template)  # type: ignore[arg-type]
    changes = diff_view(parsed, views.records(kind), timestamp(now))
    changes.raise_for_errors(path=views.store.rel(state.path))
    changes = _against_base(views, state, changes, parsed)
    report.warnings += [
        f"{views.store.rel(state.path)}:{w.line}: {w.message}" for w in changes.warnings
    ]
    counts = _apply_changes(views, kind, changes, now)
    views.forget_cache()
    report.imported[state.name] = sum(counts.values())


def _write(views: Views, state: ViewState, report: SyncReport) -> None:
    if state.state == "current":
        return
    if state.path.parent == views.layout.planning:
        text = views.redacted(state)
        data = views.encoded(state, text)
        changed = views.store.write_bytes(state.path, data)
        views.remember(state, data, same=text is state.fresh)  # its base from now on
        if changed and state.name != "CLAUDE.md":
            with contextlib.suppress(PlanningMemoryError):  # derived: stale once it changed
                views.store.delete(base_path(views.layout, state.name))
    else:
        changed = views.store.write_repo_file(state.path, state.fresh)
    if changed:
        report.rendered.append(views.store.rel(state.path))


def sync(views: Views, now: datetime, *, prefer: str | None = None) -> SyncReport:
    """Bring every view and its JSON together. Conflicts write nothing (unless ``prefer``)."""
    report = SyncReport()
    with views.store.lock():
        states = views.states(legacy=True)
        conflicts = [
            s
            for s in states
            if s.state == "conflict" or (s.name == "CLAUDE.md" and s.state == "edited")
        ]
        conflicts = [s for s in conflicts if not _noise_only(views, s, now)]
        marked = [s for s in states if s.state != "current" and _merge_leftover(s)]
        conflicts += [s for s in marked if s not in conflicts]
        if conflicts and prefer is None:
            report.conflicts = conflicts  # nothing written, the derived cache neither
            return report
        for state in states:
            if state.name in ("patterns.md", "mistakes.md") and (
                (state.state == "edited" and state not in marked)
                or (state in conflicts and prefer == "md")
            ):
                _import(views, state, now, report)  # refuses a view with conflict markers
        if prefer == "json":
            for state in conflicts:
                if state.on_disk is not None:
                    views.store.write_text(
                        state.path.with_name(state.name + ".orig"), state.on_disk
                    )
                    report.warnings.append(f"kept your edited copy as {state.name}.orig")
        for state in [*views.states(), *views.target_states()]:
            outside = state.path.parent != views.layout.planning
            if state.state == "edited" and outside and prefer != "json":
                report.conflicts.append(state)
                continue
            _write(views, state, report)
        views.save_cache()
    return report


def _merge_leftover(state: ViewState) -> bool:
    """The view holds git conflict markers: never imported, settled only by a choice."""
    return state.on_disk is not None and conflict_marker_line(state.on_disk) is not None


def _noise_only(views: Views, state: ViewState, now: datetime) -> bool:
    """A conflict whose Markdown side parses to no change at all is not a real conflict."""
    if state.name not in ("patterns.md", "mistakes.md") or state.on_disk is None:
        return False
    from planning_memory.views.diff import diff_view
    from planning_memory.views.parse import parse_view

    kind = state.name.removesuffix(".md")
    text = _parseable(views, state)
    parsed = parse_view(text, kind, template=load_template(state.name))  # type: ignore[arg-type]
    changes = diff_view(parsed, views.records(kind), timestamp(now))
    return changes.ok and changes.empty and not changes.warnings


def _parseable(views: Views, state: ViewState) -> str:
    """The hand-edited text of ``state``, if it is small enough to parse: at most
    ``VIEW_MAX_BYTES``, or twice its render from the records when that is more (a paste of
    megabytes would take minutes and gigabytes to parse and import). ``LimitError``
    otherwise, before any parsing."""
    text = state.on_disk or ""
    limit = max(VIEW_MAX_BYTES, 2 * len(state.fresh.encode("utf-8")))
    size = len(text.encode("utf-8"))
    if size > limit:
        raise LimitError(
            f"is {size:,} bytes; a hand-edited view is imported up to {limit:,} bytes "
            "(twice its render from the records, at least 1 MiB); nothing was imported",
            path=views.store.rel(state.path),
            hint="move the long text out of the view, or save it with `pmem save`",
        )
    return text


def render_all(views: Views) -> SyncReport:
    """Render every view from JSON, refusing to overwrite hand edits (use sync for those)."""
    report = SyncReport()
    with views.store.lock():
        states = [*views.states(), *views.target_states()]
        report.conflicts = [s for s in states if s.state in ("edited", "conflict")]
        if not report.conflicts:
            for state in states:
                _write(views, state, report)
        views.save_cache()
    return report


def refresh(views: Views, written: Collection[str] | None = None) -> SyncReport:
    """Render only the views that are missing or stale; never touch a hand-edited one. Only
    the records that changed since the last run are read and rendered (``state``).

    ``written``: the ids of the records the caller just wrote. Then not every record file is
    stat-ed: only the folders whose stamp moved (a file in them was created, removed, or
    replaced by a rename, as this package, git and most editors write) and those records.
    A record rewritten in place in another folder since the last full look is seen by the
    next ``render``, ``render --check`` or ``sync``, which stat every file.

    A view that cannot be refreshed is left as it is, and ``warnings`` says why and how to
    fix it (``_not_refreshed``): a FIFO, a folder or a link loop in its place, a file that
    is not UTF-8, a broken ``preferences.json`` (CLAUDE.md), a full disk. The write that asked
    for the refresh stands: the records are the source of truth, the views are rendered from
    them, and ``pmem render`` brings a view back once its file is repaired."""
    if written is not None:
        views = dataclasses.replace(views, written=frozenset(written))
    report = SyncReport()
    problems: dict[str, tuple[PlanningMemoryError, list[str]]] = {}
    with views.store.lock():
        for name in (*NAMES, None):
            try:
                for state in [views.state_of(name)] if name else views.target_states():
                    if state.state in ("missing", "stale", "current"):
                        _write(views, state, report)
                    else:
                        report.conflicts.append(state)
            except (InputError, StorageError) as exc:
                problems.setdefault(exc.one_line(), (exc, []))[1].append(name or BLOCKS)
        views.save_cache()
    report.warnings += [_not_refreshed(exc, names) for exc, names in problems.values()]
    return report


def _not_refreshed(exc: PlanningMemoryError, names: list[str]) -> str:
    """The warning line for the views ``names`` that ``exc`` kept from being refreshed."""
    full = isinstance(exc, StorageError)
    problem = f"{exc.path}: {exc.message}" if full else exc.one_line()
    own = exc.path is not None and exc.path.endswith("/" + names[0])
    what = "the view was" if own else f"{', '.join(names)} {'was' if len(names) == 1 else 'were'}"
    fix = "free some disk space" if full else "repair or remove that file"
    return (
        f"{problem}; {what} not refreshed, the change itself was saved "
        f"({fix}, then run `pmem render`)"
    )
