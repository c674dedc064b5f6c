"""What each rendered file is: current, missing, stale (JSON changed), edited by hand, or both.

``Views`` holds one tree's rendering inputs. The texts come from the render cache (``cache``):
the items of unchanged records are kept, so only the records that changed are rendered, and a
file whose stat says it is still the render from the same inputs (the records' digests, the
template, the settings) is current without rendering or reading it. The result is the same as
a full render, to the byte.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from planning_memory.core import Layout, Record, privacy
from planning_memory.errors import InputError, StorageError
from planning_memory.longterm import load_all
from planning_memory.store import Store
from planning_memory.views import claude, render
from planning_memory.views.cache import RenderCache
from planning_memory.views.fileformat import (
    HEADER_RE,
    VIEW_FILES,
    Kind,
    body_hash,
    header_hashes,
    legacy_source_hash,
    previous_source_hash,
)
from planning_memory.views.inert import extract_managed_block, replace_managed_block
from planning_memory.views.templates import load_template

VIEWS = {"patterns": "pattern", "mistakes": "mistake"}
NAMES = ("patterns.md", "mistakes.md", "CLAUDE.md")
KINDS: dict[str, Kind] = {name: kind for kind, name in VIEW_FILES.items()}
MEMOS = {**KINDS, "CLAUDE.md": "claude"}  # rendered file -> its part of the render cache
TARGETS = {"claudeMd": "CLAUDE.md", "agentsMd": "AGENTS.md"}


@functools.cache
def _makers() -> dict[str, Callable[[Record], Any]]:
    """What a record gives each part of the render cache (one object: ``RenderCache.of``)."""
    makers: dict[str, Callable[[Record], Any]] = {"claude": claude.claude_entry}
    for kind in VIEW_FILES:
        makers[kind] = functools.partial(render.view_item, kind=kind)
    return makers


@functools.cache
def _clean_head(template: str) -> bool:
    head = render.view_head(template)
    return privacy.redact(head) == head


@dataclass(eq=False)
class ViewState:
    """One rendered file: ``state`` is current, missing, stale (JSON changed), edited (the file
    changed by hand), or conflict (both). ``fresh`` (the render from JSON) and ``on_disk`` are
    produced on first use."""

    name: str
    path: Path
    state: str
    fresh_of: Callable[[], str] = field(repr=False)
    on_disk_of: Callable[[], str | None] = field(repr=False)

    @classmethod
    def of(cls, name: str, path: Path, state: str, fresh: str, on_disk: str | None) -> ViewState:
        return cls(name, path, state, lambda: fresh, lambda: on_disk)

    @functools.cached_property
    def fresh(self) -> str:
        return self.fresh_of()

    @functools.cached_property
    def on_disk(self) -> str | None:  # read only when asked: a view may be megabytes
        return self.on_disk_of()

    def diff(self, rel: str) -> str:
        """Both sides: the render from JSON vs the file on disk, as a unified diff."""
        import difflib

        return "".join(
            difflib.unified_diff(
                self.fresh.splitlines(keepends=True),
                (self.on_disk or "").splitlines(keepends=True),
                fromfile=f"{rel} (from JSON)",
                tofile=f"{rel} (on disk)",
            )
        )


@dataclass(frozen=True)
class Views:
    """Rendering inputs for one memory tree. ``written``: the ids of the records this run
    just wrote, when it knows them; the render cache then stats only the record folders whose
    stamp moved and those records, not every record file (``RenderCache.rescan``)."""

    layout: Layout
    store: Store
    config: dict[str, Any]
    written: frozenset[str] | None = None

    def _render_settings(self) -> dict[str, Any]:
        settings: dict[str, Any] = self.config["memory"]["render"]
        return settings

    @functools.cached_property
    def cache(self) -> RenderCache:
        """The render cache, scanned (read once per Views; ``forget_cache`` scans again)."""
        return RenderCache.of(self.layout, self.store, _makers(), self.written)

    @functools.cached_property
    def all_records(self) -> list[Record]:
        """Every long-term record, soft-deleted ones too (read once per Views)."""
        return load_all(self.layout, self.store, deleted=True)

    def records(self, kind: str) -> list[Record]:
        return [r for r in self.all_records if r["type"] == VIEWS[kind]]

    @functools.cached_property
    def _texts(self) -> dict[str, str]:
        return {}

    @functools.cached_property
    def _data(self) -> dict[str, bytes]:
        """The UTF-8 bytes of the texts in ``_texts`` that were encoded as they were rendered."""
        return {}

    def forget_cache(self) -> None:
        """Drop what was read, after this run wrote records."""
        for name in ("all_records", "_texts", "_data"):
            self.__dict__.pop(name, None)
        if "cache" in self.__dict__:
            self.cache.rescan()

    def save_cache(self) -> None:
        """Keep what this run learnt for the next one (the derived render cache; on a full
        disk it is not kept, and the next run works it out again)."""
        if "cache" in self.__dict__:
            with contextlib.suppress(StorageError):
                self.cache.save()

    # -- texts -------------------------------------------------------------------------------
    def source_hash(self, name: str) -> str:
        """The ``source-hash`` of rendered file ``name``, from the records' digests."""
        return self.cache.source_hash(MEMOS[name], load_template(name))

    def inputs(self, name: str) -> str:
        """What decides the text of rendered file ``name``: its source hash and settings."""
        if name == "CLAUDE.md":
            limit = int(self._render_settings()["claudeMdMaxChars"])
            return f"{self.source_hash(name)} max-chars={limit}"
        return self.source_hash(name)

    def text(self, name: str) -> str:
        """The render of ``name`` from JSON (patterns.md, mistakes.md or CLAUDE.md)."""
        if name not in self._texts:
            self._texts[name] = self._text(name)
        return self._texts[name]

    def _text(self, name: str) -> str:
        template = load_template(name)
        if name == "CLAUDE.md":
            entries = self.cache.items("claude")
            return claude.assemble_claude_md(
                entries,
                self.cache.preference_values(),
                template,
                max_chars=int(self._render_settings()["claudeMdMaxChars"]),
                source_hash=self.source_hash(name),
            )
        kind = KINDS[name]
        texts, sections = self.cache.in_order(kind)
        source = self.source_hash(name)
        rendered = render.assemble_texts(
            texts, kind, template, source_hash=source, sections=sections
        )
        self._data[name] = rendered.data
        return rendered.text

    # -- states ------------------------------------------------------------------------------
    def path(self, name: str) -> Path:
        return self.layout.planning / name

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

    def states(self, *, legacy: bool = False) -> list[ViewState]:
        """patterns.md, mistakes.md and CLAUDE.md. ``legacy``: tell a file edited by hand before
        the source hash changed its definition from a conflict (this reads every record)."""
        return [self._current_or_state(name, legacy) for name in NAMES]

    def state_of(self, name: str) -> ViewState:
        """One of ``states``: patterns.md, mistakes.md or CLAUDE.md."""
        return self._current_or_state(name, False)

    def _current_or_state(self, name: str, legacy: bool) -> ViewState:
        path = self.path(name)
        rendered_from = self.cache.untouched(name, path)  # a render nobody edited since
        if rendered_from == self.inputs(name):
            text = functools.cache(lambda: self.read(path) or "")
            return ViewState(name, path, "current", text, text)
        fresh = self.text(name)
        if rendered_from is not None:  # only its JSON moved on
            return ViewState(name, path, "stale", lambda: fresh, lambda: self.read(path))
        found = self.state(name, fresh, self.read(path), legacy=legacy)
        if found.state == "current":
            self.remember(found, fresh.encode("utf-8"), same=True)
        return found

    def base_text(self, name: str) -> str | None:
        """The render patterns.md or mistakes.md last got, as written (redacted): the base a
        hand edit of it is imported against. Rebuilt from the render cache's items and what
        changed since (``base.Since``); None when that is not known or does not give back the
        header line it was written with."""
        found = self.cache.base(MEMOS[name])
        recorded = HEADER_RE.match(found[0]) if found else None
        if found is None or recorded is None:
            return None
        texts = [item[-1] for item in found[1]]
        template = load_template(name)
        text = render.assemble_texts(texts, KINDS[name], template, source_hash=recorded["source"])
        if not text.text.startswith(found[0] + "\n"):
            return None
        return privacy.redact(text.text)

    def redacted(self, state: ViewState) -> str:
        """``state.fresh`` as ``Store.write_text`` writes it: redacted. Of patterns.md or
        mistakes.md rendered in this run from items the render cache found clean
        (``RenderCache.clean``), only the frame is scanned (the header line and the
        template's text), not the whole text (70 ms at 10k records)."""
        fresh, kind = state.fresh, KINDS.get(state.name)
        if kind is not None and fresh is self._texts.get(state.name) and self.cache.clean(kind):
            cut = fresh.find("\n")  # sliced: a partition would copy the megabytes after it
            header = fresh[:cut] if cut >= 0 else fresh
            if privacy.redact(header) == header and _clean_head(load_template(state.name)):
                return fresh
        return privacy.redact(fresh)

    def encoded(self, state: ViewState, text: str) -> bytes:
        """``text`` (``state.fresh`` or its redaction) in UTF-8, as ``Store.write_text`` writes
        it: the bytes kept from its render when it is the text rendered in this run."""
        data = self._data.get(state.name)
        if data is None or text is not self._texts.get(state.name):
            return text.encode("utf-8")
        return data

    def remember(self, state: ViewState, data: bytes, *, same: bool = False) -> None:
        """Rendered file ``state.name`` now holds ``data`` (``same``: ``state.fresh`` encoded)."""
        if state.name in NAMES and state.path == self.path(state.name):
            inputs = self.inputs(state.name)
            self.cache.remember(state.name, state.path, inputs, state.fresh, data, same=same)

    def state(
        self, name: str, fresh: str, on_disk: str | None, *, legacy: bool = False
    ) -> ViewState:
        path = self.path(name)
        if on_disk is None:
            return ViewState.of(name, path, "missing", fresh, None)
        if on_disk == fresh:
            return ViewState.of(name, path, "current", fresh, on_disk)
        recorded, new = header_hashes(on_disk), header_hashes(fresh)
        if recorded is None or new is None:
            return ViewState.of(name, path, "conflict", fresh, on_disk)
        json_changed = recorded[0] != new[0]
        md_changed = recorded[1] != body_hash(on_disk)
        if legacy and json_changed and md_changed and recorded[0] in self._legacy_hashes(name):
            json_changed = False  # edited before the source hash changed its definition
        state = {
            (True, True): "conflict",
            (True, False): "stale",
            (False, True): "edited",
            (False, False): "stale",
        }[(json_changed, md_changed)]
        return ViewState.of(name, path, state, fresh, on_disk)

    def _legacy_hashes(self, name: str) -> tuple[str, ...]:
        """The source hashes of ``name`` as earlier versions recorded them (versions 1, 2)."""
        kind = name.removesuffix(".md")
        if kind not in VIEWS:
            return ()
        records, template = self.records(kind), load_template(name)
        return legacy_source_hash(records, template), previous_source_hash(records, template)

    def target_states(self) -> list[ViewState]:
        """The managed blocks of the repository's own CLAUDE.md / AGENTS.md, when configured."""
        targets = self._render_settings().get("targets", {})
        found = []
        for key, name in TARGETS.items():
            if not targets.get(key):
                continue
            block = self.text("CLAUDE.md")
            path = self.layout.repo_root / name
            existing = self.read(path) or ""
            current = extract_managed_block(existing)
            fresh = replace_managed_block(existing, block)
            state = "current" if fresh == existing else "missing" if current is None else "stale"
            if current is not None and state == "stale":
                recorded = header_hashes(current)
                if recorded is None or recorded[1] != body_hash(current):
                    state = "edited"
            on_disk = existing if path.exists() else None
            found.append(ViewState.of(name, path, state, fresh, on_disk))
        return found
