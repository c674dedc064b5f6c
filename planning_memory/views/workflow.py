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

import dataclasses
import difflib
import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from planning_memory.core import Layout, Record, timestamp
from planning_memory.errors import ConflictError, InputError, SchemaError
from planning_memory.longterm import check_record, load_all, new_record, save_record
from planning_memory.store import Store
from planning_memory.views import render
from planning_memory.views.diff import Changes, diff_view
from planning_memory.views.fileformat import body_hash, header_hashes
from planning_memory.views.inert import extract_managed_block, replace_managed_block
from planning_memory.views.parse import ParsedView, parse_view
from planning_memory.views.templates import load_template

VIEWS = {"patterns": "pattern", "mistakes": "mistake"}
TARGETS = {"claudeMd": "CLAUDE.md", "agentsMd": "AGENTS.md"}


@dataclass
class ViewState:
    """One rendered file: ``state`` is current, missing, stale (JSON changed), edited (the file
    changed by hand), or conflict (both)."""

    name: str
    path: Path
    state: str
    fresh: str
    on_disk: str | None

    def diff(self, rel: str) -> str:
        """Both sides: the render from JSON vs the file on disk, as a unified diff."""
        return "".join(
            difflib.unified_diff(
                self.fresh.splitlines(keepends=True),
                (self.on_disk or "").splitlines(keepends=True),
                fromfile=f"{rel} (from JSON)",
                tofile=f"{rel} (on disk)",
            )
        )


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
        return ConflictError(
            f"edited by hand: {names}; nothing was written",
            hint="`pmem sync --prefer md` imports your edits, `--prefer json` re-renders "
            "(your edited copy is kept as .orig)",
        )


@dataclass(frozen=True)
class Views:
    """Rendering inputs for one memory tree."""

    layout: Layout
    store: Store
    config: dict[str, Any]

    def _render_settings(self) -> dict[str, Any]:
        settings: dict[str, Any] = self.config["memory"]["render"]
        return settings

    @functools.cached_property
    def all_records(self) -> list[Record]:
        """Every long-term record, soft-deleted ones too (read once per Views)."""
        return load_all(self.layout, self.store, deleted=True)

    def records(self, kind: str) -> list[Record]:
        return [r for r in self.all_records if r["type"] == VIEWS[kind]]

    def forget_cache(self) -> None:
        """Drop what was read, after this run wrote records."""
        for name in ("all_records", "_claude_cache"):
            self.__dict__.pop(name, None)

    def view_text(self, kind: str) -> str:
        if kind not in self._claude_cache:
            self._claude_cache[kind] = self._view_text(kind)
        return self._claude_cache[kind]

    def _view_text(self, kind: str) -> str:
        template = load_template(f"{kind}.md")
        found = self.records(kind)
        src = render.source_hash(found, template)
        return render.render_view(found, kind, template, source_hash=src)  # type: ignore[arg-type]

    @functools.cached_property
    def _claude_cache(self) -> dict[bool | str, str]:
        return {}

    def claude_text(self, *, header: bool = True) -> str:
        if header not in self._claude_cache:
            self._claude_cache[header] = self._claude_text(header=header)
        return self._claude_cache[header]

    def _claude_text(self, *, header: bool) -> str:
        template = load_template("CLAUDE.md")
        found = [r for r in self.all_records if r.get("deleted_at") is None]
        prefs = (
            self.store.read_json(self.layout.preferences)
            if self.layout.preferences.is_file()
            else {}
        )
        src = render.source_hash([*found, prefs], template)
        return render.render_claude_md(
            found,
            prefs,
            template,
            max_chars=int(self._render_settings()["claudeMdMaxChars"]),
            source_hash=src,
            header=header,
        )

    def path(self, name: str) -> Path:
        return self.layout.planning / name

    def state(self, name: str, fresh: str, on_disk: str | None) -> ViewState:
        path = self.path(name)
        if on_disk is None:
            return ViewState(name, path, "missing", fresh, None)
        if on_disk == fresh:
            return ViewState(name, path, "current", fresh, on_disk)
        recorded, new = header_hashes(on_disk), header_hashes(fresh)
        if recorded is None or new is None:
            return ViewState(name, path, "conflict", fresh, on_disk)
        json_changed = recorded[0] != new[0]
        md_changed = recorded[1] != body_hash(on_disk)
        state = {
            (True, True): "conflict",
            (True, False): "stale",
            (False, True): "edited",
            (False, False): "stale",
        }[(json_changed, md_changed)]
        return ViewState(name, path, state, fresh, on_disk)

    def read(self, path: Path) -> str | None:
        if not path.is_file():
            return None
        if path.parent == self.layout.planning:
            data = self.store.read_bytes(path)
        else:
            data = self.store.read_repo_file(path)
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            raise InputError(
                "is not valid UTF-8", path=self.store.rel(path), hint="save it as UTF-8"
            ) from None

    def states(self) -> list[ViewState]:
        found = []
        for kind in VIEWS:
            name = f"{kind}.md"
            found.append(self.state(name, self.view_text(kind), self.read(self.path(name))))
        found.append(self.state("CLAUDE.md", self.claude_text(), self.read(self.path("CLAUDE.md"))))
        return found

    def target_states(self) -> list[ViewState]:
        """The managed blocks of the repository's own CLAUDE.md / AGENTS.md, when configured."""
        targets = self._render_settings().get("targets", {})
        found = []
        block = self.claude_text(header=True)
        for key, name in TARGETS.items():
            if not targets.get(key):
                continue
            path = self.layout.repo_root / name
            existing = self.read(path) or ""
            current = extract_managed_block(existing)
            fresh = replace_managed_block(existing, block)
            state = "current" if fresh == existing else "missing" if current is None else "stale"
            if current is not None and state == "stale":
                recorded = header_hashes(current)
                if recorded is None or recorded[1] != body_hash(current):
                    state = "edited"
            found.append(ViewState(name, path, state, fresh, existing if path.exists() else None))
        return found


def check(views: Views) -> list[ViewState]:
    """Every rendered file that is not current (for ``render --check``)."""
    return [s for s in [*views.states(), *views.target_states()] if s.state != "current"]


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
    for record in to_write:
        save_record(lay, store, record)
    return {
        "updated": len(changes.updates),
        "created": len(changes.creations),
        "deleted": len(changes.deletions),
    }


def base_path(layout: Layout, name: str) -> Path:
    """The last render of a view (derived, gitignored): the base of a three-way import."""
    return layout.contextual / "views" / name


def _against_base(views: Views, state: ViewState, changes: Changes, edited: ParsedView) -> Changes:
    """Keep only what the person changed relative to the render they edited: an item missing
    from the edit but absent from that render too (a record added to JSON since) is not a
    deletion, and an item equal to its rendered form (its record changed in JSON since) is not
    an update. Without a matching base render, every difference counts."""
    path = base_path(views.layout, state.name)
    on_disk = state.on_disk or ""
    if not path.is_file() or header_hashes(on_disk) is None:
        return changes
    base_text = path.read_bytes().decode("utf-8", "replace")
    if header_hashes(base_text) != header_hashes(on_disk):
        return changes
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
    kind = state.name.removesuffix(".md")
    template = load_template(state.name)
    parsed = parse_view(state.on_disk or "", kind, template=template)  # type: ignore[arg-type]
    changes = diff_view(parsed, views.records(kind), timestamp(now))
    changes.raise_for_errors(path=views.store.rel(state.path))
    changes = _against_base(views, state, changes, parsed)
    report.warnings += [
        f"{views.store.rel(state.path)}:{w.line}: {w.message}" for w in changes.warnings
    ]
    counts = _apply_changes(views, kind, changes, now)
    views.forget_cache()
    report.imported[state.name] = sum(counts.values())


def _keep_base(views: Views, state: ViewState) -> None:
    """Remember a current view as the base of later three-way imports."""
    if state.path.parent == views.layout.planning and state.name != "CLAUDE.md":
        path = base_path(views.layout, state.name)
        if not path.is_file():
            views.store.write_text(path, state.fresh)


def _write(views: Views, state: ViewState, report: SyncReport) -> None:
    if state.state == "current":
        _keep_base(views, state)
        return
    text = state.fresh
    if state.path.parent == views.layout.planning:
        changed = views.store.write_text(state.path, text)
    else:
        changed = views.store.write_repo_file(state.path, text)
    if state.path.parent == views.layout.planning and state.name != "CLAUDE.md":
        views.store.write_text(base_path(views.layout, state.name), text)
    if changed:
        report.rendered.append(views.store.rel(state.path))


def sync(views: Views, now: datetime, *, prefer: str | None = None) -> SyncReport:
    """Bring every view and its JSON together. Conflicts write nothing (unless ``prefer``)."""
    report = SyncReport()
    with views.store.lock():
        states = views.states()
        conflicts = [
            s
            for s in states
            if s.state == "conflict" or (s.name == "CLAUDE.md" and s.state == "edited")
        ]
        conflicts = [s for s in conflicts if not _noise_only(views, s, now)]
        if conflicts and prefer is None:
            report.conflicts = conflicts
            return report
        for state in states:
            if state.name in ("patterns.md", "mistakes.md") and (
                state.state == "edited" or (state.state == "conflict" and prefer == "md")
            ):
                _import(views, state, now, report)
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
    return report


def _noise_only(views: Views, state: ViewState, now: datetime) -> bool:
    """A conflict whose Markdown side parses to no change at all is not a real conflict."""
    if state.name not in ("patterns.md", "mistakes.md") or state.on_disk is None:
        return False
    kind = state.name.removesuffix(".md")
    parsed = parse_view(state.on_disk, kind, template=load_template(state.name))  # type: ignore[arg-type]
    changes = diff_view(parsed, views.records(kind), timestamp(now))
    return changes.ok and changes.empty and not changes.warnings


def render_all(views: Views) -> SyncReport:
    """Render every view from JSON, refusing to overwrite hand edits (use sync for those)."""
    report = SyncReport()
    with views.store.lock():
        for state in [*views.states(), *views.target_states()]:
            if state.state in ("edited", "conflict"):
                report.conflicts.append(state)
        if report.conflicts:
            return report
        for state in [*views.states(), *views.target_states()]:
            _write(views, state, report)
    return report


def conflict_error(report: SyncReport, store: Store) -> ConflictError:
    return report.conflict_error(store.rel)


def refresh(views: Views) -> SyncReport:
    """Render only the views that are missing or stale; never touch a hand-edited one."""
    report = SyncReport()
    with views.store.lock():
        for state in [*views.states(), *views.target_states()]:
            if state.state in ("missing", "stale", "current"):
                _write(views, state, report)
            elif state.state != "current":
                report.conflicts.append(state)
    return report
