"""The facade: ``Memory(root)`` with the seed's MemoryManager operations.

Library first: the CLI, the MCP server and the hooks call these methods and format results.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, Unpack

from planning_memory import background as _background
from planning_memory import context as _context
from planning_memory import core as _core
from planning_memory import entity as _entity
from planning_memory import gitops as _gitops
from planning_memory import longterm as _longterm
from planning_memory import sessions as _sessions
from planning_memory import transfer as _transfer
from planning_memory import validate as _validate
from planning_memory import views as _views
from planning_memory.core import DEFAULT_CONFIG, PLANNING_DIR, Layout, effective_config
from planning_memory.errors import NotFoundError, NotInitializedError
from planning_memory.manager import MemoryManagerNames, Observed, observation
from planning_memory.store import Store, remove_outside, write_outside

# what the entry points use besides ``Memory``: text they take from or give to an agent, files
# outside the tree, work in the background
__all__ = ["Memory", "clip", "in_background", "inline", "next_request", "remove_outside"]
__all__ += ["write_outside"]
in_background, next_request = _background.detach, _background.next_request


if TYPE_CHECKING:
    from planning_memory.context import ContextPack
    from planning_memory.core import Record
    from planning_memory.entity import CodeMap, ScanReport
    from planning_memory.longterm import Lesson, Outcome
    from planning_memory.search import Hit, Index, IndexReport, TimelineEntry
    from planning_memory.sessions import Appended, Sessions
    from planning_memory.views import SyncReport, Views, ViewState

Clock = Callable[[], datetime]
_T = TypeVar("_T")


class Memory(MemoryManagerNames):
    """One memory tree: ``Memory(repo_root)`` or ``Memory.open()`` from the working directory."""

    def __init__(
        self,
        root: Path | str,
        *,
        personal: bool = False,
        clock: Clock | None = None,
        channel: str = "cli",
        on_write: Callable[[Path], None] | None = None,
    ) -> None:
        """``on_write`` is told of every file this memory changes (the watch daemon's way
        to tell its own writes from everyone else's)."""
        self.layout = Layout.personal() if personal else Layout.of(root)
        self._opened_from = Path(root)  # the personal store's project: where it was opened
        self.store = Store(self.layout, private=personal, on_write=on_write)
        self.clock: Clock = clock or functools.partial(datetime.now, UTC)
        self.channel = channel
        self._config: dict[str, Any] | None = None
        self.view_conflicts: list[Path] = []  # hand-edited views the last write left alone
        # what the last write saved but could not finish (a view not refreshed, a setting not
        # written), one line each: the write stands, the caller shows these as warnings
        self.warnings: list[str] = []
        self._bulk = 0  # depth of ``bulk()``: views re-rendered once at its end

    # -- opening -----------------------------------------------------------------------------
    @classmethod
    def open(
        cls, start: Path | str | None = None, *, clock: Clock | None = None, **options: Any
    ) -> Memory:
        """The memory of the repository containing ``start`` (default: the working dir), found
        by ``locate``: the one rule every entry point opens memory by."""
        here = Path(start) if start else None
        root = cls.locate(here)
        if root is None or not (root / PLANNING_DIR).is_dir():
            raise NotInitializedError(
                f"no {PLANNING_DIR}/ memory tree here or in any parent folder",
                path=str(root or (here or Path.cwd()).resolve()),
                hint="run `pmem init` in the repository root",
            )
        return cls(root, clock=clock, **options)

    @staticmethod
    def locate(start: Path | str | None = None) -> Path | None:
        """The project folder ``open`` would use for ``start`` (it may have no memory yet):
        the nearest folder with ``.planning/``, else the git work tree (a linked worktree
        without its own shares its main one's); None outside any repository."""
        return _core.project_root(Path(start) if start else None)

    @classmethod
    def init(cls, root: Path | str, *, clock: Clock | None = None) -> Memory:
        """Create an empty memory tree under ``root/.planning``; refuse to clobber one."""
        mem = cls(Path(root) / ".planning", clock=clock)
        mem.store.create_tree(DEFAULT_CONFIG)
        with mem.store.lock():
            _views.render_all(mem.views())
        return mem

    def now(self) -> datetime:
        return self.clock()

    def require(self) -> None:
        if not self.layout.planning.is_dir():
            raise NotInitializedError(
                "no memory tree", path=str(self.layout.planning), hint="run `pmem init`"
            )

    # -- config ------------------------------------------------------------------------------
    @property
    def config(self) -> dict[str, Any]:
        """The effective settings: ``memory-config.json`` over the defaults."""
        if self._config is None:
            self._config = effective_config(_validate.load_config(self.layout, self.store))
        return self._config

    def settings(self, section: str) -> dict[str, Any]:
        result: dict[str, Any] = self.config["memory"][section]
        return result

    # -- long-term: patterns, mistakes, learnings, preferences (seed 000 / seed 003) -----------
    @cached_property
    def longterm(self) -> _longterm.LongTerm:
        return _longterm.LongTerm(self.layout, self.store, self.config, self.now)

    def records(self, *types: str, deleted: bool = False) -> list[Record]:
        return self.longterm.records(types, deleted=deleted)

    def get(self, record_id: str) -> Record:
        return self.longterm.get(record_id)

    def preferences(self) -> dict[str, Any]:
        return self.longterm.preferences()

    def set_preferences(self, changes: dict[str, Any]) -> dict[str, Any]:
        """Set ``section.key`` preferences (``None`` removes one; a list adds to a list);
        returns the new ``preferences.json``."""
        self.require()
        return self.longterm.set_preferences(changes)

    def find(self, item_id: str) -> dict[str, Any]:
        """Any memory by id: a record (``pat_``, ``mis_``, ``lrn_``; the project's, else the
        personal scope's), a session message (``msg_``) or decision (``dec_``) with its
        session, or a session in brief (``ses_``). ``NotFoundError`` if there is none."""
        if item_id.startswith(("msg_", "dec_")):
            return self.sessions.find_entry(item_id, first=self.contextual.session_of(item_id))
        if item_id.startswith("ses_"):
            return self.sessions.overview(item_id)
        try:
            return self.get(item_id)
        except NotFoundError:
            personal = self.personal()
            if self.store.private or not personal.layout.memory.is_dir():
                raise
            return personal.get(item_id)

    def personal(self) -> Memory:
        """The personal scope's memory (``$XDG_STATE_HOME/planning-memory/personal``)."""
        return Memory(self.layout.planning, personal=True, clock=self.clock)

    def for_scope(self, scope: str) -> Memory:
        return self.personal() if scope == "personal" else self

    @cached_property
    def project_id(self) -> str:
        """Seed 003's project id, ``<name>-<hash8>`` (``gitops.project``): this repository's; for
        the personal store, the project it was opened from (its saves carry it)."""
        if self.store.private:
            return _gitops.project_id(_core.project_folder(self._opened_from))
        return _gitops.project_id(self.layout.repo_root)

    def save(self, title: str | Observed, record_type: str = "learning", **fields: Any) -> Outcome:
        """Save a memory of any type (seed 003's ``memory_save``, its object too) by the learning
        rules: a similar pattern is reinforced, a repeated mistake escalates, a topic upserts.
        ``scope="personal"`` (or ``agents.defaultScope`` so) saves to the personal store."""
        if not (isinstance(title, str) and isinstance(record_type, str)):
            return self.save_observation(**observation(title, record_type, fields))
        fields.setdefault("source", "api")
        scope = fields["scope"] = fields.get("scope") or self.settings("agents")["defaultScope"]
        if scope != "project" and not self.store.private:
            return self.for_scope(scope).save(title, record_type, **{**fields, "scope": scope})
        if self.store.private:  # the personal store holds personal records of a project
            fields.update(scope="personal", project=fields.get("project") or self.project_id)
        if fields.get("anchors"):  # completed with the code's hash: a change marks it for review
            fields["anchors"] = self.code.complete_anchors(fields["anchors"])
        return self._wrote(self.longterm.save(record_type, title, **fields))

    def learn_utterance(self, utterance: str, *, source: str = "cli") -> Lesson:
        """Learn every rule an utterance states by its trigger phrases ("always use X",
        "nunca uses Y", ...; ``Lesson.each``), in the config's ``agents.defaultScope``."""
        if self.settings("agents")["defaultScope"] == "personal" and not self.store.private:
            return self.personal().learn_utterance(utterance, source=source)
        mine = {"scope": "personal", "project": self.project_id} if self.store.private else {}
        lesson = self.longterm.learn_utterance(utterance, source=source, **mine)
        for each in lesson.each():
            if each.outcome is not None:
                self._wrote(each.outcome)
        return lesson

    def review_accept(self, record_id: str) -> Outcome:
        return self._wrote(self.longterm.accept(record_id))

    def praise(self, record_id: str | None = None) -> Outcome:
        return self._wrote(self.longterm.praise(record_id))

    def forget(self, record_id: str, *, hard: bool = False) -> Outcome:
        return self._wrote(self.longterm.forget(record_id, hard=hard))

    def restore(self, record_id: str) -> Outcome:
        return self._wrote(self.longterm.restore(record_id))

    def pin(self, record_id: str, pinned: bool = True) -> Outcome:
        return self._wrote(self.longterm.pin(record_id, pinned))

    def applied(self, record_id: str) -> Outcome:
        """One more application of the learning ``record_id`` (its ``applications``)."""
        return self._wrote(self.longterm.applied(record_id))

    def count_applied(self, session_id: str, ids: Sequence[str]) -> list[str]:
        """Count one application of each learning of ``ids`` (delivered into the agent's
        context in ``session_id``) the first time that session delivers it, in the project
        or the personal store; returns the ids counted (docs/learning.md)."""
        learnings = [i for i in ids if i.startswith("lrn_")]
        first = self.sessions.first_applications(session_id, learnings) if learnings else []
        personal = [] if self.store.private or not first else [self.personal().longterm]
        counted = self.longterm.applied_once(first, *personal)
        return self._wrote(counted) if counted else counted

    @contextlib.contextmanager
    def bulk(self) -> Iterator[Memory]:
        """Many saves as one (an import, an agent's backlog: ``with mem.bulk(): ...``): under
        one lock, record files made durable together at the end (``Store.batch``), the views
        re-rendered once at the end. Every save still goes through the learning rules."""
        self._bulk += 1
        try:
            with self.store.batch():
                yield self
        finally:
            self._bulk -= 1
        if not self._bulk:
            self._wrote(None)

    def _wrote(self, outcome: _T) -> _T:
        """After a long-term write: re-render the stale views (never a hand-edited one: its
        path lands in ``view_conflicts`` for the caller to mention; one that cannot be
        refreshed, in ``warnings``); inside ``bulk()``, once at its end."""
        if self._bulk:
            return outcome
        self.warnings = list(getattr(outcome, "warnings", []))
        if not self.store.private and self.layout.planning.is_dir():
            self._refreshed(self.refresh_views(_longterm.written_ids(outcome)))
        return outcome

    def _refreshed(self, report: SyncReport) -> None:
        self.view_conflicts = [state.path for state in report.conflicts]
        self.warnings += report.warnings

    # -- short-term: sessions (seed 000 / 001 / 002 / 003) ----------------------------------
    @property
    def sessions(self) -> Sessions:
        """Short-term memory on ``self.channel`` (``session_id=None`` in its calls means the
        channel's current session). Built on first use; it reads the config only if needed."""
        built: Sessions | None = self.__dict__.get("_sessions")
        if built is None or built.channel != self.channel:
            built = _sessions.Sessions(
                self.layout, self.store, lambda: self.config, clock=self.now, channel=self.channel
            )
            self.__dict__["_sessions"] = built
        return built

    def log(
        self,
        content: str,
        role: str = "user",
        session_id: str | None = None,
        tool_results: tuple[dict[str, Any], ...] = (),
    ) -> Appended:
        """Record a message; ``[MEMORIZE: ...]`` facts in agent output become learnings."""
        appended = self.sessions.append(session_id, role, content, tool_results=tool_results)
        for fact in appended.memorize:
            source = f"session:{appended.session_id}"
            self.save(fact[:200], "learning", learned=fact, trigger="[MEMORIZE]", source=source)
        if appended.newly_queued:  # summarised where the messages arrive, never blocking
            root = str(self.layout.repo_root)
            args = ("-C", root, "session", "summarize", appended.session_id)
            _background.detach("planning_memory", *args, cwd=root)
        return appended

    # -- Markdown views: patterns.md, mistakes.md, CLAUDE.md ---------------------------------
    def views(self) -> Views:
        return _views.Views(self.layout, self.store, self.config)

    def render(self) -> SyncReport:
        """Render the views from JSON; refuses (reports conflicts) where one was hand-edited."""
        self.require()
        return _views.render_all(self.views())

    def refresh_views(self, written: Sequence[str] | None = None) -> SyncReport:
        """Re-render the views that are stale after a write; leave hand-edited ones alone
        (``sync`` imports those). Every long-term write through ``Memory`` calls it, with the
        ``written`` record ids: a quick look at the record files (``views.refresh``)."""
        return _views.refresh(self.views(), written)

    def render_check(self) -> list[ViewState]:
        """The rendered files that are stale or hand-edited (empty when all are current)."""
        self.require()
        return _views.check(self.views())

    def sync(self, prefer: str | None = None) -> SyncReport:
        """JSON changed -> render; Markdown edited -> import then render; both -> conflict
        (nothing written) unless ``prefer`` is ``"json"`` or ``"md"``."""
        self.require()
        return _views.sync(self.views(), self.now(), prefer=prefer)

    # -- contextual: the search index, search, context, timeline -----------------------------
    @cached_property
    def contextual(self) -> _context.Contextual:
        """The search index and what reads it (``Contextual``; docs/search.md)."""
        return _context.Contextual(
            self.layout,
            self.store,
            lambda: self.config,
            self.now,
            project=lambda: self.project_id,
            personal=lambda: None if self.store.private else self.personal().contextual,
            records=self.records,
            require=self.require,
        )

    def index(self, *, quick: bool = False) -> Index:
        """The derived search index, synced with the files (``Contextual.index``); use it in
        a ``with`` block."""
        return self.contextual.index(quick=quick)

    def search(self, query: str, **options: Unpack[_context.SearchOptions]) -> list[Hit]:
        """Ranked hits for ``query`` from the project's index and the personal store's
        (``Contextual.search`` tells the options)."""
        return self.contextual.search(query, **options)

    def context(
        self,
        task: str | dict[str, Any],
        *,
        session_id: str | None = None,
        **options: Unpack[_context.ContextOptions],
    ) -> ContextPack:
        """The context block an agent needs before ``task`` (``Contextual.context`` tells the
        options). With ``session_id``, the learnings delivered count as applied (once per
        session)."""
        pack = self.contextual.context(task, session_id=session_id, **options)
        if session_id is not None:  # delivered to a session: its learnings count as applied
            self.count_applied(session_id, [item.id for item in pack.items])
        return pack

    def recall(self, prompt: str, *, exclude: Sequence[str] = ()) -> ContextPack:
        """The few memories relevant to one prompt (the UserPromptSubmit hook), never
        building an index (``Contextual.recall``)."""
        return self.contextual.recall(prompt, exclude=exclude)

    def timeline(self, item_id: str, *, before: int = 5, after: int = 5) -> list[TimelineEntry]:
        """The chronological neighbours of a memory, message or decision."""
        return self.contextual.timeline(item_id, before=before, after=after)

    def reindex(self, *, code: bool = True) -> IndexReport:
        """Rebuild the search index from the files (safe at any time)."""
        return self.contextual.reindex(code=code)

    # -- entity: the code map ----------------------------------------------------------------
    @cached_property
    def code(self) -> CodeMap:
        """The code map: ``scan``, ``file``, ``functions``, ``components``, ``area``,
        ``relationships``, ``annotate``, ``snapshot`` (see docs/entity.md)."""
        return _entity.CodeMap(self.layout, self.store, lambda: self.config)

    def scan(
        self, *, paths: list[str] | None = None, full: bool = False, progress: Any = None
    ) -> ScanReport:
        """Bring the code map up to date; memories anchored to changed code need review."""
        self.require()
        return self.code.scan(paths=paths, full=full, progress=progress)

    # -- overview, export and import --------------------------------------------------------
    def counts(self) -> dict[str, Any]:
        """What is in memory, per level."""
        self.require()
        return {
            "root": str(self.layout.planning),
            "project": self.project_id,
            "short_term": {"sessions": len(self.store.list_json(self.layout.short_term))},
            "long_term": self.longterm.counts(),
            "entity": {"files": _entity.count_files(self.layout)},
            "contextual": self.contextual.counts(),
        }

    @cached_property
    def transfer(self) -> _transfer.Transfer:
        """Export and import (``pmem export``, ``pmem import``): ``export``, ``plan``,
        ``apply``, ``import_memoria``, ``export_memoria``."""
        self.require()
        return _transfer.Transfer(
            self.layout,
            self.store,
            self.longterm,
            self.now,
            config=lambda: self.config,
            sessions=lambda: self.sessions,
            entity=lambda: self.code.snapshot(),
            recent=lambda: self.contextual.recent_queries(),
            applied=self._rerender,
        )

    def _rerender(self) -> None:
        """After an import or a change of the config: read the config again, render."""
        self._config, self.warnings = None, []
        self._refreshed(self.refresh_views())

    # -- repository tools: they need no memory tree open ------------------------------------
    git = _gitops  # install, merge_driver, resolve, scan_secrets (docs/git.md)

    validate = staticmethod(_validate.validate_path)  # one file, or every file of a tree

    def set_render_target(self, name: str, on: bool) -> bool:
        """Turn the managed block of the repository's own ``CLAUDE.md`` or ``AGENTS.md`` on
        or off (``views.turn_target``); False when the config already said so."""
        self.require()
        changed = _views.turn_target(self.layout, self.store, name, on, self._rerender)
        self._config = None
        return changed


def clip(text: str) -> str:
    """``text`` cut to the longest a stored field may be, with a marker saying so (for
    input that should be kept, not refused, when it is too long: an agent's prompt)."""
    return _core.privacy.truncate_field(text)


def inline(text: str, limit: int) -> str:
    """``text`` made inert as in CLAUDE.md, on one line of at most ``limit`` characters
    (memory text an entry point shows to an agent)."""
    return _views.inline(text, limit)
