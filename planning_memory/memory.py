"""The facade: ``Memory(root)`` with the seed's MemoryManager operations.

Library first: the CLI, the MCP server and the hooks call these methods and format results.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from planning_memory.core.layout import PLANNING_DIR, Layout, project_root
from planning_memory.core.model import DEFAULT_CONFIG, Record, effective_config
from planning_memory.errors import (
    AlreadyInitializedError,
    ConfigError,
    NotFoundError,
    NotInitializedError,
    PlanningMemoryError,
)
from planning_memory.lazy import lazy
from planning_memory.store import Store

if TYPE_CHECKING:
    from planning_memory.context.packer import ContextPack
    from planning_memory.core import privacy, schema
    from planning_memory.longterm import lessons as teach
    from planning_memory.longterm import records
    from planning_memory.longterm import rules as learn
    from planning_memory.search.database import Index
    from planning_memory.search.ranking import Hit
    from planning_memory.sessions import conversation as session
    from planning_memory.sessions import summarize
    from planning_memory.transfer import shapes as transfer
    from planning_memory.views import sync
else:
    learn = lazy("planning_memory.longterm.rules")
    privacy = lazy("planning_memory.core.privacy")
    records = lazy("planning_memory.longterm.records")
    schema = lazy("planning_memory.core.schema")
    session = lazy("planning_memory.sessions.conversation")
    summarize = lazy("planning_memory.sessions.summarize")
    sync = lazy("planning_memory.views.sync")
    teach = lazy("planning_memory.longterm.lessons")
    transfer = lazy("planning_memory.transfer.shapes")

Clock = Callable[[], datetime]

GITIGNORE = """\
# planning-memory: derived and personal data stay out of git
/memory/contextual/
/memory/short-term/
/.lock
*.pm-tmp
*.orig
"""


def _utc_now() -> datetime:
    return datetime.now(UTC)


class Memory:
    """One memory tree: ``Memory(repo_root)`` or ``Memory.open()`` from the working directory."""

    def __init__(
        self,
        root: Path | str,
        *,
        personal: bool = False,
        clock: Clock | None = None,
        channel: str = "cli",
    ) -> None:
        root = Path(root)
        if personal:
            self.layout = Layout.personal()
        elif root.name == ".planning" or (root / "memory-config.json").is_file():
            self.layout = Layout(root)
        else:
            self.layout = Layout.for_repo(root)
        self.store = Store(self.layout, private=personal)
        self.clock: Clock = clock or _utc_now
        self.channel = channel
        self._config: dict[str, Any] | None = None

    # -- opening -----------------------------------------------------------------------------
    @classmethod
    def open(
        cls, start: Path | str | None = None, *, clock: Clock | None = None, **options: Any
    ) -> Memory:
        """The memory of the repository containing ``start`` (default: the working dir): the
        nearest folder with ``.planning/``, else the git work tree; a linked git worktree
        without its own ``.planning/`` shares its main worktree's. The one rule every entry
        point (CLI, hooks, MCP server, daemon) opens memory by."""
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
        """The project folder ``open`` would use for ``start`` (it may have no memory yet),
        or None outside any repository."""
        return project_root(Path(start) if start else None)

    @classmethod
    def init(cls, root: Path | str, *, clock: Clock | None = None) -> Memory:
        """Create an empty memory tree under ``root/.planning``; refuse to clobber one."""
        mem = cls(Path(root) / ".planning", clock=clock)
        lay = mem.layout
        if lay.config.exists() or lay.memory.exists():
            raise AlreadyInitializedError(
                "a memory tree already exists",
                path=mem.store.rel(lay.planning),
                hint="nothing was changed; `pmem show` tells what is in it",
            )
        with mem.store.lock():
            mem.store.write_json(lay.config, DEFAULT_CONFIG)
            for folder in (*lay.record_dirs(), lay.short_term, lay.entity, lay.contextual):
                folder.mkdir(parents=True, exist_ok=True)
            mem.store.write_text(lay.planning / ".gitignore", GITIGNORE)
            sync.render_all(mem.views())
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
            given: dict[str, Any] = {}
            if self.layout.config.is_file():
                try:
                    loaded = self._checked_config()
                except PlanningMemoryError as exc:
                    raise ConfigError(
                        exc.message,
                        path=exc.path,
                        json_path=exc.json_path,
                        line=exc.line,
                        column=exc.column,
                        hint=exc.hint,
                    ) from None
                given = loaded
            self._config = effective_config(given)
        return self._config

    def _checked_config(self) -> Any:
        """The config file's value, schema-checked once per distinct content: the digest of
        the last valid config is kept in the derived folder, so a short command (``pmem
        context``, a hook) does not pay for the schema machinery every time."""
        loaded = self.store.load(self.layout.config)
        stamp = self.layout.contextual / ".config-valid"
        try:
            if stamp.read_text("ascii") == loaded.digest:
                return loaded.value
        except OSError:
            pass
        schema.check("config", loaded.value, path=self.store.rel(self.layout.config))
        if self.layout.contextual.is_dir() and not self.store.private:
            with contextlib.suppress(PlanningMemoryError, OSError):
                self.store.write_text(stamp, loaded.digest)
        return loaded.value

    def settings(self, section: str) -> dict[str, Any]:
        result: dict[str, Any] = self.config["memory"][section]
        return result

    # -- long-term records -------------------------------------------------------------------
    def records(self, *types: str, deleted: bool = False) -> list[Record]:
        return records.load_all(self.layout, self.store, types or None, deleted=deleted)

    def get(self, record_id: str) -> Record:
        value: Record = records.locate(self.layout, self.store, record_id).value
        return value

    def preferences(self) -> dict[str, Any]:
        if not self.layout.preferences.is_file():
            return {}
        value: dict[str, Any] = self.store.read_json(self.layout.preferences)
        return value

    # -- learning (seed 000 / seed 003 rules) -------------------------------------------------
    def tree(self) -> learn.Tree:
        return learn.Tree(self.layout, self.store, self.config)

    def personal(self) -> Memory:
        """The personal scope's memory (``$XDG_STATE_HOME/planning-memory/personal``)."""
        return Memory(self.layout.planning, personal=True, clock=self.clock)

    def for_scope(self, scope: str) -> Memory:
        return self.personal() if scope == "personal" else self

    def learn_pattern(
        self, name: str, description: str = "", example: str = "", **fields: Any
    ) -> learn.Outcome:
        """Learn a pattern; a similar live one is reinforced instead of duplicated."""
        fields.setdefault("source", "api")
        scope = fields.get("scope", "project")
        if scope != "project" and not self.store.private:
            return self.for_scope(scope).learn_pattern(name, description, example, **fields)
        return learn.learn_pattern(
            self.tree(), self.now(), name=name, description=description, example=example, **fields
        )

    def learn_from_mistake(
        self, description: str, correction: str = "", severity: str = "medium", **fields: Any
    ) -> learn.Outcome:
        """Record a mistake; a similar live one counts one more occurrence instead."""
        fields.setdefault("source", "api")
        scope = fields.get("scope", "project")
        if scope != "project" and not self.store.private:
            return self.for_scope(scope).learn_from_mistake(
                description, correction, severity, **fields
            )
        return learn.learn_mistake(
            self.tree(),
            self.now(),
            description=description,
            correction=correction,
            severity=severity,
            **fields,
        )

    def save(self, title: str, record_type: str = "learning", **fields: Any) -> learn.Outcome:
        """Save an observation of any type (seed 003's ``memory_save``)."""
        fields.setdefault("source", "api")
        scope = fields.get("scope", "project")
        if scope != "project" and not self.store.private:
            return self.for_scope(scope).save(title, record_type, **fields)
        if record_type == "pattern":
            fields.setdefault("name", title)
        if fields.get("anchors"):
            fields["anchors"] = self.anchor(fields["anchors"])
        record = learn.new_record(record_type, self.now(), title=title, **fields)
        return learn.remember(self.tree(), record, self.now())

    def anchor(self, anchors: list[dict[str, Any]] | list[str]) -> list[dict[str, Any]]:
        """Complete code anchors (``path`` or ``path::symbol`` strings, or dicts) with the
        current content hash from the code map, so a later change marks the memory for
        review. An anchor the code map does not know keeps ``hash: null``."""
        from planning_memory import entity as scan

        done = []
        for given in anchors:
            if isinstance(given, str):
                text_path, _, text_symbol = given.partition("::")
                item: dict[str, Any] = {"path": text_path, "symbol": text_symbol or None}
            else:
                item = dict(given)
            path, symbol = str(item["path"]), item.get("symbol")
            digest = item.get("hash") or scan.current_anchor_hash(
                self.layout, self.store, path, symbol
            )
            done.append({"path": path, "symbol": symbol, "hash": digest})
        return done

    def learn_utterance(self, utterance: str, *, source: str = "cli") -> teach.Lesson:
        """Learn from an utterance's trigger phrase ("always use X", "nunca uses Y", ...)."""
        return teach.learn_utterance(self.tree(), self.now(), utterance, source=source)

    def review_queue(self) -> list[dict[str, Any]]:
        return teach.pending(self.tree())

    def review_accept(self, record_id: str) -> learn.Outcome:
        return teach.accept(self.tree(), self.now(), record_id)

    def review_reject(self, record_id: str) -> dict[str, Any]:
        return teach.reject(self.tree(), record_id)

    def save_observation(
        self,
        title: str,
        record_type: str = "learning",
        *,
        what: str = "",
        why: str = "",
        where: str = "",
        learned: str = "",
        tags: list[str] | tuple[str, ...] = (),
        topic_key: str | None = None,
        pinned: bool = False,
        scope: str = "project",
        source: str = "api",
        description: str = "",
        example: str = "",
        correction: str = "",
        severity: str = "medium",
        anchors: list[str] | tuple[str, ...] = (),
    ) -> learn.Outcome:
        """Seed 003's ``memory_save`` with What / Why / Where / Learned: the type-specific
        fields are filled from the body where not given (a pattern's description is its
        *what*, a mistake's correction its *learned*)."""
        fields: dict[str, Any] = {
            "body": {"what": what, "why": why, "where": where, "learned": learned},
            "tags": list(tags),
            "topic_key": topic_key,
            "pinned": pinned,
            "scope": scope,
            "source": source,
            "anchors": list(anchors),
        }
        if record_type == "pattern":
            fields |= {"description": description or what or title, "example": example}
        elif record_type == "mistake":
            fields |= {
                "description": description or what or title,
                "correction": correction or learned,
                "severity": severity,
            }
        elif learned:
            fields["learned"] = learned
        return self.save(title, record_type, **fields)

    def praise(self, record_id: str | None = None) -> learn.Outcome:
        return learn.praise(self.tree(), self.now(), record_id)

    def forget(self, record_id: str, *, hard: bool = False) -> learn.Outcome:
        return learn.forget(self.tree(), self.now(), record_id, hard=hard)

    def restore(self, record_id: str) -> learn.Outcome:
        return learn.restore(self.tree(), self.now(), record_id)

    def pin(self, record_id: str, pinned: bool = True) -> learn.Outcome:
        return learn.pin(self.tree(), self.now(), record_id, pinned=pinned)

    # -- short-term: sessions (seed 000 / 001 / 002 / 003) ----------------------------------
    def current_session(self, *, start: bool = True, goal: str | None = None) -> str:
        """The id of this channel's newest active session, started if there is none."""
        found = session.current(self.layout, self.store, self.channel)
        if found is not None:
            return str(found["id"])
        if not start:
            raise NotFoundError(
                f"no active session on channel {self.channel!r}",
                hint="`pmem session start` begins one",
            )
        return str(self.start_session(goal=goal)["id"])

    def start_session(self, goal: str | None = None, name: str | None = None) -> dict[str, Any]:
        return session.start(
            self.layout,
            self.store,
            self.config,
            now=self.now(),
            channel=self.channel,
            goal=goal,
            name=name,
        )

    def log(
        self,
        content: str,
        role: str = "user",
        session_id: str | None = None,
        tool_results: tuple[dict[str, Any], ...] = (),
    ) -> session.Appended:
        """Record a message; ``[MEMORIZE: ...]`` facts in agent output become learnings."""
        sid = session_id or self.current_session()
        appended = session.append_message(
            self.layout,
            self.store,
            self.config,
            sid,
            role,
            content,
            now=self.now(),
            tool_results=tool_results,
        )
        for fact in appended.memorize:
            self.save(
                fact[:200], "learning", learned=fact, trigger="[MEMORIZE]", source=f"session:{sid}"
            )
        return appended

    def record_decision(
        self,
        question: str,
        decision: str,
        reasoning: str = "",
        alternatives: tuple[str, ...] | list[str] = (),
        session_id: str | None = None,
    ) -> dict[str, Any]:
        """Seed 000's ``recordDecision`` in the current session."""
        sid = session_id or self.current_session()
        return session.record_decision(
            self.layout,
            self.store,
            self.config,
            sid,
            question,
            decision,
            now=self.now(),
            reasoning=reasoning,
            alternatives=tuple(alternatives),
        )

    def record_file_access(
        self, path: str, action: str = "read", session_id: str | None = None
    ) -> dict[str, Any]:
        """Seed 000's ``recordFileAccess``: read, created, modified or deleted."""
        sid = session_id or self.current_session()
        return session.record_file_access(
            self.layout, self.store, self.config, sid, path, action, now=self.now()
        )

    def add_step(
        self, action: str, result: str = "", session_id: str | None = None
    ) -> dict[str, Any]:
        sid = session_id or self.current_session()
        return session.add_step(
            self.layout, self.store, self.config, sid, action, result, now=self.now()
        )

    def set_session_context(
        self, session_id: str | None = None, **changes: str | None
    ) -> dict[str, Any]:
        sid = session_id or self.current_session()
        return session.set_context(
            self.layout, self.store, self.config, sid, changes, now=self.now()
        )

    def get_session_context(self, session_id: str | None = None) -> dict[str, Any]:
        """Seed 000's ``getSessionContext``: window, summary, decisions, files, time."""
        sid = session_id or self.current_session(start=False)
        return session.context(self.layout, self.store, self.config, sid, now=self.now())

    def summarizer(self) -> summarize.Summarizer:
        return summarize.from_config(self.config)

    def summarize_sessions(
        self, session_ids: list[str] | None = None
    ) -> list[session.SummaryOutcome]:
        return session.drain_summary_queue(
            self.layout,
            self.store,
            self.config,
            self.summarizer(),
            self.now(),
            session_ids=session_ids,
        )

    def end_session(self, session_id: str | None = None) -> dict[str, Any]:
        sid = session_id or self.current_session(start=False)
        return session.end(
            self.layout, self.store, self.config, sid, self.summarizer(), now=self.now()
        )

    def save_to_checkpoint(self, session_id: str | None = None) -> dict[str, Any]:
        """Seed 000's ``saveToCheckpoint``: the session plus long-term and entity summaries."""
        sid = session_id or self.current_session(start=False)
        counts = self.counts()
        snap = session.snapshot(session.get(self.layout, self.store, sid), self.now())
        return {
            "sessionId": sid,
            "shortTerm": snap,
            "longTermSummary": counts["long_term"],
            "entitySummary": counts["entity"],
        }

    def restore_from_checkpoint(self, data: dict[str, Any]) -> dict[str, Any]:
        """Seed 000's ``restoreFromCheckpoint``: only the session is restored; long-term and
        entity memory are read from their files."""
        sid = str(data.get("sessionId") or self.current_session(start=False))
        restored: dict[str, Any] = session.restore(
            self.layout, self.store, self.config, sid, data.get("shortTerm", data), now=self.now()
        )
        return restored

    def delete_session(self, session_id: str) -> session.Deleted:
        return session.delete(self.layout, self.store, session_id)

    # -- Markdown views --------------------------------------------------------------------
    def views(self) -> sync.Views:
        return sync.Views(self.layout, self.store, self.config)

    def render(self) -> sync.SyncReport:
        """Render patterns.md, mistakes.md, CLAUDE.md (and configured managed blocks) from
        JSON; refuses (reports conflicts) where a file was edited by hand."""
        self.require()
        return sync.render_all(self.views())

    def refresh_views(self) -> sync.SyncReport:
        """Re-render the views that are stale after a write; leave hand-edited ones alone
        (``pmem sync`` imports those). The daemon does this by itself when it runs."""
        return sync.refresh(self.views())

    def render_check(self) -> list[sync.ViewState]:
        """The rendered files that are stale or hand-edited (empty when all are current)."""
        self.require()
        return sync.check(self.views())

    def sync(self, prefer: str | None = None) -> sync.SyncReport:
        """JSON changed -> render; Markdown edited -> import then render; both -> conflict
        (nothing written) unless ``prefer`` is ``"json"`` or ``"md"``."""
        self.require()
        return sync.sync(self.views(), self.now(), prefer=prefer)

    # -- contextual: search, context, timeline (seed 000 / seed 003) --------------------------
    def index(self) -> Index:
        """The derived search index, synced with the files on disk (rebuilt if missing)."""
        from planning_memory.search import upkeep as indexer
        from planning_memory.search.database import Index

        self.require()
        index = Index.open(self.layout)
        indexer.ensure_ready(index, self.layout, self.store, self.config)
        return index

    def search(
        self,
        query: str,
        *,
        sources: tuple[str, ...] | list[str] = (),
        types: tuple[str, ...] | list[str] = (),
        scope: str | None = None,
        tags: tuple[str, ...] | list[str] = (),
        limit: int = 10,
        threshold: float = 0.0,
        match: str = "auto",
        semantic: bool | None = None,
        warnings: list[str] | None = None,
    ) -> list[Hit]:
        """Ranked hits (BM25 with bounded recency and access boosts; pinned first).

        ``semantic`` (default: the config's ``contextual.embeddingModel`` is set) re-ranks by
        local embeddings when the ``[semantic]`` extra is installed; otherwise a line saying so
        is appended to ``warnings`` and the BM25 order is kept."""
        from planning_memory.search import ranking as search
        from planning_memory.search import semantic as sem

        ranker = None
        if semantic or (semantic is None and sem.wanted(self.config)):
            ranker, problem = sem.load_ranker()
            if problem and warnings is not None:
                warnings.append(problem)
        index = self.index()
        try:
            return search.search(
                index,
                query,
                now=self.now(),
                sources=sources,
                types=types,
                scope=scope,
                tags=tags,
                limit=limit,
                threshold=threshold,
                match=match,
                ranker=ranker,
                decay=bool(self.settings("longTerm")["decayEnabled"]),
            )
        finally:
            index.close()

    def get_relevant_patterns(
        self, context: str | list[str] | None = None, limit: int = 10
    ) -> list[Record]:
        """Seed 000's ``getRelevantPatterns``: patterns for a task text (searched) or a list
        of tags (matched), pinned and established ones first."""
        return self._relevant("pattern", context, limit)

    def get_mistakes_to_avoid(
        self, context: str | list[str] | None = None, limit: int = 10
    ) -> list[Record]:
        """Seed 000's ``getMistakesToAvoid``: mistakes for a task text or tags, most severe
        first."""
        return self._relevant("mistake", context, limit)

    def _relevant(
        self, record_type: str, context: str | list[str] | None, limit: int
    ) -> list[Record]:
        severity = {"critical": 0, "high": 1, "medium": 2, "low": 3}

        def priority(r: Record) -> tuple[Any, ...]:
            return (
                not r.get("pinned"),
                not r.get("established", False),
                severity.get(r.get("severity", ""), 4),
                -r.get("usage_count", 0),
                -r.get("occurrences", 0),
                r["id"],
            )

        live = sorted(self.records(record_type), key=priority)
        if not context:
            return live[:limit]
        if isinstance(context, str):
            by_id = {r["id"]: r for r in live}
            hits = self.search(
                context, sources=["record"], types=[record_type], limit=limit, match="auto"
            )
            found = [by_id[h.ref_id] for h in hits if h.ref_id in by_id]
            return found[:limit]
        tags = set(context)
        return [r for r in live if tags & set(r.get("tags", []))][:limit]

    def search_context(self, query: str, limit: int = 5, threshold: float = 0.0) -> list[Hit]:
        """Seed 000's ``searchContext``."""
        return self.search(query, limit=limit, threshold=threshold)

    def context(
        self,
        task: str | dict[str, Any],
        *,
        budget: int | None = None,
        fmt: str = "md",
        session_id: str | None = None,
        agent: str | None = None,
    ) -> ContextPack:
        """The context block an agent needs before ``task``, within ``budget`` tokens."""
        from planning_memory.context import packer as context

        index = self.index()
        try:
            return context.build_context(
                self.layout,
                self.store,
                task,
                now=self.now(),
                budget=budget,
                fmt=fmt,
                session_id=session_id,
                agent=agent,
                config=self.config,
                index=index,
            )
        finally:
            index.close()

    def get_full_context(self, task: str | dict[str, Any]) -> dict[str, Any]:
        """Seed 000's ``getFullContext``: every section's items as plain data."""
        from planning_memory.context import packer as context

        index = self.index()
        try:
            return context.full_context(
                self.layout, self.store, task, now=self.now(), config=self.config, index=index
            )
        finally:
            index.close()

    def prepare_agent_context(
        self, agent: str, task: str | dict[str, Any], *, budget: int | None = None
    ) -> str:
        """Seed 000's ``prepareAgentContext``: the memory context, then the task."""
        from planning_memory.context import packer as context

        index = self.index()
        try:
            return context.prepare_agent_context(
                self.layout,
                self.store,
                agent,
                task,
                now=self.now(),
                budget=budget,
                config=self.config,
                index=index,
            )
        finally:
            index.close()

    def process_agent_result(self, agent: str, result: dict[str, Any]) -> dict[str, Any]:
        """Seed 000's ``processAgentResult``: files modified -> file access and entity
        annotations; decisions -> recorded (reusable ones learned as patterns); errors fixed
        -> mistakes."""
        done: dict[str, Any] = {"files": 0, "decisions": 0, "patterns": 0, "mistakes": 0}
        for item in result.get("filesModified", result.get("files_modified", [])):
            self.record_file_access(item["path"], "modified")
            self.update_file_entity(item["path"], modified_by=[agent], purpose=item.get("purpose"))
            done["files"] += 1
        for decision in result.get("decisions", []):
            self.record_decision(
                decision["question"],
                decision.get("answer", decision.get("decision", "")),
                decision.get("reasoning", ""),
                decision.get("alternatives", ()),
            )
            done["decisions"] += 1
            if decision.get("isPattern") or decision.get("is_pattern"):
                self.learn_pattern(
                    decision.get("patternName") or decision["question"],
                    decision.get("reasoning", ""),
                    decision.get("implementation", ""),
                    source=f"agent:{agent}",
                )
                done["patterns"] += 1
        for error in result.get("errorsFixed", result.get("errors_fixed", [])):
            self.learn_from_mistake(
                error["original"],
                error.get("fix", ""),
                error.get("severity") or "medium",
                source=f"agent:{agent}",
            )
            done["mistakes"] += 1
        return done

    def timeline(self, item_id: str, *, before: int = 5, after: int = 5) -> list[Any]:
        """The chronological neighbours of a memory, message or decision."""
        from planning_memory.search import timeline

        index = self.index()
        try:
            return timeline.timeline(
                self.layout, self.store, item_id, before=before, after=after, index=index
            )
        finally:
            index.close()

    def reindex(self, *, code: bool = True) -> Any:
        """Rebuild the search index from the files (safe at any time)."""
        from planning_memory.search import upkeep as indexer
        from planning_memory.search.database import Index

        self.require()
        index = Index.open(self.layout)
        try:
            return indexer.rebuild(index, self.layout, self.store, self.config, code=code)
        finally:
            index.close()

    def reindex_codebase(self) -> Any:
        """Seed 000's ``reindexCodebase``: index new and changed code and docs."""
        from planning_memory.search import upkeep as indexer

        index = self.index()
        try:
            return indexer.reindex_codebase(index, self.layout, self.config)
        finally:
            index.close()

    def index_content(self, content: str, metadata: dict[str, Any]) -> str:
        """Seed 000's ``indexContent``: keep a note (as a ``discovery`` learning, so it is a
        real, versioned memory) and index it."""
        title = str(metadata.get("title") or " ".join(content.split())[:80] or "Note")
        outcome = self.save(
            title,
            str(metadata.get("type", "discovery")),
            body={
                "what": content,
                "why": "",
                "where": str(metadata.get("path", "")),
                "learned": "",
            },
            tags=list(metadata.get("tags", [])),
            source="api",
        )
        return str(outcome.record["id"])

    def index_stats(self) -> dict[str, Any]:
        index = self.index()
        try:
            return index.stats()
        finally:
            index.close()

    # -- entity: the code map (seed 000) -----------------------------------------------------
    def scan(
        self, *, paths: list[str] | None = None, full: bool = False, progress: Any = None
    ) -> Any:
        """Bring the code map up to date (incremental by content hash)."""
        from planning_memory import entity as scan

        self.require()
        report = scan.scan(
            self.layout, self.store, self.config, paths=paths, full=full, progress=progress
        )
        scan.mark_stale_anchors(self.layout, self.store)
        return report

    def last_scan(self) -> str | None:
        """When the code map was last written (newest entity file), or None."""
        newest = 0.0
        for path in self.layout.entity.rglob("*.json") if self.layout.entity.is_dir() else []:
            newest = max(newest, path.stat().st_mtime)
        return (
            datetime.fromtimestamp(newest, UTC).strftime("%Y-%m-%dT%H:%M:%SZ") if (newest) else None
        )

    def map_codebase(self) -> Any:
        """Seed 000's ``mapCodebase``."""
        return self.scan()

    def get_file_info(self, path: str) -> dict[str, Any] | None:
        """Seed 000's ``getFileInfo``: a file's entity, or None."""
        from planning_memory import entity as scan

        return scan.get_file(self.layout, self.store, path)

    def get_function(self, name: str) -> list[dict[str, Any]]:
        """Functions or methods named ``name`` (or ``Class.method``)."""
        from planning_memory import entity as scan

        return scan.get_function(self.layout, self.store, name)

    def get_component(self, name: str) -> list[dict[str, Any]]:
        """UI components named ``name``: props, state, hooks, children."""
        from planning_memory import entity as scan

        return scan.get_component(self.layout, self.store, name)

    def get_area(self, name: str) -> dict[str, Any] | None:
        """A feature area of relationships.json, or None."""
        from planning_memory import entity as scan

        return scan.get_area(self.layout, self.store, name)

    def get_relationships(self, name: str) -> dict[str, Any]:
        """Seed 000's ``getRelationships``: how ``name`` relates to the rest."""
        from planning_memory import entity as scan

        return scan.get_relationships(self.layout, self.store, name)

    def update_file_entity(
        self,
        path: str,
        *,
        notes: list[str] | None = None,
        purpose: str | None = None,
        modified_by: list[str] | None = None,
    ) -> Any:
        """Seed 000's ``updateFileEntity``: annotations that survive rescans."""
        from planning_memory import entity as scan

        return scan.update_file_annotations(
            self.layout, self.store, path, notes=notes, purpose=purpose, modified_by=modified_by
        )

    # -- overview ----------------------------------------------------------------------------
    def counts(self) -> dict[str, Any]:
        """What is in memory, per level."""
        self.require()
        live = self.records()
        all_records = self.records(deleted=True)
        by_type: dict[str, int] = {}
        for rec in live:
            by_type[rec["type"]] = by_type.get(rec["type"], 0) + 1
        sessions = self.store.list_json(self.layout.short_term)
        entity_files = (
            sum(1 for p in self.layout.entity.rglob("*.json"))
            if (self.layout.entity.is_dir())
            else 0
        )
        return {
            "root": str(self.layout.planning),
            "short_term": {"sessions": len(sessions)},
            "long_term": {
                "records": len(live),
                "deleted": len(all_records) - len(live),
                "by_type": dict(sorted(by_type.items())),
                "preferences": len(self.preferences()),
                "pinned": sum(1 for r in live if r.get("pinned")),
                "established_patterns": sum(1 for r in live if r.get("established")),
            },
            "entity": {"files": entity_files},
            "contextual": {
                "index_present": (self.layout.contextual / "index.sqlite3").is_file(),
            },
        }

    # -- export / import ---------------------------------------------------------------------
    def sessions_raw(self) -> list[dict[str, Any]]:
        return [
            self.store.read_json(p)
            for p in self.store.list_json(self.layout.short_term)
            if p.name.startswith("session-")
        ]

    def entity_raw(self) -> dict[str, Any]:
        """The entity level in one value: ``{files, functions, components, relationships}``."""
        from planning_memory import entity as scan

        snapshot: dict[str, Any] = scan.entity_snapshot(self.layout, self.store)
        return snapshot

    def export(self, *, seed: bool = False, include_deleted: bool = False) -> dict[str, Any]:
        """Everything in memory as one document (the seed's combined shape)."""
        self.require()
        index = self.layout.contextual / "index.sqlite3"
        contextual = {
            "index": {
                "provider": "local",
                "path": self.store.rel(index),
                "present": index.is_file(),
            },
        }
        return transfer.export_document(
            self.records(deleted=include_deleted),
            self.preferences(),
            self.sessions_raw(),
            self.entity_raw(),
            contextual,
            self.now(),
            seed=seed,
        )

    def plan_import(self, data: Any, *, name_hint: str | None = None) -> ImportResult:
        """Convert and validate ``data``; report what applying it would change."""
        self.require()
        plan = transfer.plan_import(data, self.now(), name_hint=name_hint)
        plan.records = [privacy.redact_value(r) for r in plan.records]
        transfer.check_plan(plan, lambda r: records.check_record(r))
        existing = {r["id"]: r for r in self.records(deleted=True)}
        result = ImportResult(plan=plan)
        for record in plan.records:
            old = existing.get(record["id"])
            if old is None:
                result.created.append(record["id"])
            elif old != record:
                result.updated.append(record["id"])
            else:
                result.unchanged.append(record["id"])
        return result

    def apply_import(self, result: ImportResult) -> ImportResult:
        """Write a checked import plan (under one lock)."""
        plan = result.plan
        with self.store.lock():
            for record in plan.records:
                records.save(self.layout, self.store, record)
            if plan.preferences is not None:
                merged = {**self.preferences(), **plan.preferences}
                self.store.write_json(self.layout.preferences, merged)
            for session in plan.sessions:
                self.store.write_json(self.layout.session_path(session["id"]), session)
        result.applied = True
        return result


@dataclass
class ImportResult:
    plan: transfer.ImportPlan
    created: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    applied: bool = False

    def summary(self) -> dict[str, Any]:
        return {
            "created": len(self.created),
            "updated": len(self.updated),
            "unchanged": len(self.unchanged),
            "applied": self.applied,
            "preferences": self.plan.preferences is not None,
            "sessions": len(self.plan.sessions),
        }
