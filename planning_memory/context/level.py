"""``Contextual``: the contextual level of one memory tree (the search index, search, context).

It opens the derived index (and the personal store's), ranks searches, builds the context
block for a task and the few memories for a prompt, and keeps the index in step with the
files. ``Memory.contextual`` is one; the facade adds what other levels do after (a context
block delivered to a session counts its learnings as applied).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from planning_memory import readonly, search
from planning_memory.core import legacy_id
from planning_memory.errors import StorageError

if TYPE_CHECKING:
    from planning_memory.context.items import ContextPack
    from planning_memory.core import Layout, Record
    from planning_memory.search import Hit, Index, IndexReport, TimelineEntry
    from planning_memory.store import Store


class Contextual:
    """The index of one tree: ``personal`` gives the personal store's level (None when this
    is the personal store), ``records`` the tree's live records, ``project`` its project id;
    ``require`` raises when the tree is not there."""

    def __init__(
        self,
        layout: Layout,
        store: Store,
        config: Callable[[], dict[str, Any]],
        now: Callable[[], datetime],
        *,
        project: Callable[[], str],
        personal: Callable[[], Contextual | None],
        records: Callable[[], list[Record]],
        require: Callable[[], None],
    ) -> None:
        self.layout, self.store, self._require = layout, store, require
        self._config, self.now = config, now
        self._project, self._personal, self._records = project, personal, records
        self.pending = False  # a quick index build left the code for ``finish_index``

    def _settings(self, section: str) -> dict[str, Any]:
        found: dict[str, Any] = self._config()["memory"][section]
        return found

    # -- the index ---------------------------------------------------------------------------
    def index(self, *, quick: bool = False) -> Index:
        """The derived search index, synced with the files on disk (rebuilt if missing).
        Use it in a ``with`` block, which closes it.

        ``quick`` (what a hook can afford): a missing index gets the memories only, and the
        code map and the code wait (``pending`` says so) for ``finish_index``."""
        self._require()
        index = search.Index.open(self.layout)
        if quick:
            pending = search.ensure_memories(index, self.layout, self.store, self._config())
            self.pending = pending and not index.in_memory  # in memory: no one else finishes it
        else:
            search.ensure_ready(index, self.layout, self.store, self._config())
            self.pending = False
        return index

    def finish_index(self) -> bool:
        """Index what a quick build left pending (the code map and the code): resumable, a
        batch of files at a time. False when another process is already at it; refused in a
        tree this process may only read."""
        self._require()
        self._check_writable()
        with search.Index.open(self.layout) as index, index.build_guard() as mine:
            if mine:
                search.ensure_ready(index, self.layout, self.store, self._config())
            return mine

    def built_index(self) -> Index | None:
        """The search index synced with the files, if one was built; None (and nothing
        built) otherwise."""
        if not search.index_path(self.layout).is_file():
            return None
        index = search.Index.open(self.layout)
        if not index.built:
            index.close()
            return None
        search.sync_from_files(index, self.layout, self.store)
        return index

    def _personal_index(self, *, all_projects: bool = False) -> Index | None:
        """The personal store's own search index (under the personal store; synced, built on
        first use), or None when the personal store holds no records (or this is it). It holds
        the personal records of every project: those saved from this project and those of no
        project rank first (``Index.home``), or with ``all_projects`` none does."""
        personal = self._personal()
        if personal is None or not personal.layout.long_term.is_dir():
            return None
        index = search.Index.open(personal.layout)
        search.ensure_ready(index, personal.layout, personal.store, self._config())
        index.home = None if all_projects else self._home()
        return index

    @contextlib.contextmanager
    def indexes(
        self, scope: str | None = None, *, quick: bool = False, all_projects: bool = False
    ) -> Iterator[list[Index]]:
        """The indexes a search or context block reads: the project's, then the personal
        store's (when it has records and ``scope`` is not ``"project"``); closed after."""
        with self.index(quick=quick) as index:
            personal = (
                None if scope == "project" else self._personal_index(all_projects=all_projects)
            )
            try:
                yield [index] if personal is None else [index, personal]
            finally:
                if personal is not None:
                    personal.close()

    def _check_writable(self) -> None:
        """Refuse to build an index this process could keep only in memory (a tree it may
        only read, an index file another user left: ``readonly.wanted``), before any work."""
        path = search.index_path(self.layout)
        if readonly.wanted(path):
            raise StorageError.read_only(self.store.rel(path))

    def reindex(self, *, code: bool = True) -> IndexReport:
        """Rebuild the search index from the files (safe at any time); refused in a tree
        this process may only read (``_check_writable``)."""
        self._require()
        self._check_writable()
        with search.Index.open(self.layout) as index:
            return search.rebuild(index, self.layout, self.store, self._config(), code=code)

    def reindex_codebase(self) -> IndexReport:
        """Index new and changed code and docs."""
        with self.index() as index:
            return search.reindex_codebase(index, self.layout, self._config())

    def sync(self, paths: list[str] | None) -> IndexReport | None:
        """Bring a search index that exists up to date after files changed, without building
        one: the repository files ``paths`` (``[]``: none, ``None``: all), then the records,
        sessions and entity shards changed on disk. None while there is no index (the watch
        daemon's reaction)."""
        if not search.index_path(self.layout).is_file():
            return None
        with search.Index.open(self.layout) as index:
            if not index.built:
                return None
            config = self._config()
            if paths is None:
                report = search.reindex_codebase(index, self.layout, config)
            else:
                report = search.index_files(index, self.layout.repo_root, paths, config)
            return report + search.sync_from_files(index, self.layout, self.store)

    def stats(self) -> dict[str, Any]:
        with self.index() as index:
            return index.stats()

    def embeddings(self) -> str | None:
        """Why search is BM25 alone (no model on this platform, or turned off), or None."""
        return search.embedding_notice(self._config())

    def counts(self) -> dict[str, Any]:
        """Whether an index exists, and the latest searches (``pmem show``)."""
        present = search.index_path(self.layout).is_file()
        return {"index_present": present, "recent_queries": self.recent_queries()}

    def session_of(self, item_id: str) -> str | None:
        """The session a message or decision id belongs to, as an index row names it; None
        without an index (never built here) or row."""
        index = self.built_index()
        if index is None:
            return None
        with index:
            row = index.by_ref(item_id)
        return row.doc.session_id if row is not None else None

    # -- reading -----------------------------------------------------------------------------
    def search(
        self,
        query: str,
        *,
        sources: Sequence[str] = (),
        types: Sequence[str] = (),
        scope: str | None = None,
        tags: Sequence[str] = (),
        limit: int = 10,
        threshold: float = 0.0,
        match: str = "auto",
        semantic: bool | None = None,
        warnings: list[str] | None = None,
        all_projects: bool = False,
        remember: bool = True,
    ) -> list[Hit]:
        """Ranked hits (BM25 with bounded recency and access boosts; pinned first). The
        query and its hits join ``recent_queries`` unless ``remember`` is False.

        Personal records (the personal store) are every project's: those saved from this
        project and those of no project rank first, or with ``all_projects`` none does
        (``projects_named`` says whose each hit is).

        ``semantic``: None (the default) fuses BM25 with the vectors' nearest documents when
        the index holds vectors (docs/search.md); True asks for the model (a line in
        ``warnings`` when it is not installed); False is BM25 alone."""
        search.check_sources(sources)  # a bad source changes nothing, not even the index
        by_config = semantic is None and search.semantic_wanted(self._config())
        embedder, problem = search.chosen_embedder(True if by_config else semantic)
        decay = bool(self._settings("longTerm")["decayEnabled"])
        with self.indexes(scope, all_projects=all_projects) as indexes:
            if problem and warnings is not None:
                if not by_config:
                    warnings.append(problem)
                elif indexes[0].get_meta("said:semantic") != problem:  # the config's: once
                    model = self._settings("contextual")["embeddingModel"]
                    warnings.append(f"contextual.embeddingModel is {model!r}: {problem}")
                    indexes[0].set_meta("said:semantic", problem)
            hits = search.search(
                indexes,
                query,
                now=self.now(),
                sources=sources,
                types=types,
                scope=scope,
                tags=tags,
                limit=limit,
                threshold=threshold,
                match=match,
                embedder=embedder,
                decay=decay,
            )
        if remember:
            names = (h.ref_id or h.path or h.key for h in hits)
            search.remember_query(
                self.layout, self.store, query, names, self.now(), self._recent_keep()
            )
        return hits

    def recent_queries(self) -> list[dict[str, Any]]:
        """Seed 000's ``recentQueries``: the latest searches, newest first, as
        ``{query, results, at}`` (the query redacted; ``contextual.recentQueries`` of them,
        none when that is 0). Kept in a derived, gitignored log."""
        return search.recent_queries(self.layout, self.store, self._recent_keep())

    def _recent_keep(self) -> int:
        return int(self._settings("contextual").get("recentQueries", 0))

    def _home(self) -> tuple[str, ...]:
        """The projects whose personal records rank first here: this one, by its id and by
        the id its path gave (``core.legacy_id``), and none ("")."""
        return (self._project(), legacy_id(self.layout.repo_root), "")

    def projects_named(self, hits: Sequence[Hit], *, every: bool = False) -> dict[str, str]:
        """The project each record hit names, by hit key (``""``: a personal record of no
        project): with ``every`` (an ``all_projects`` search) all of them, else only those
        that are not this repository's."""
        mine = self._home()
        found = {
            h.key: str(h.meta.get("project") or "") if h.scope == "personal" else mine[0]
            for h in hits
            if h.source == "record"
        }
        return {k: p for k, p in found.items() if every or p not in mine[:2]}

    def context(
        self,
        task: str | dict[str, Any],
        *,
        budget: int | None = None,
        fmt: str = "md",
        session_id: str | None = None,
        agent: str | None = None,
        quick: bool = False,
        touch: bool = True,
    ) -> ContextPack:
        """The context block an agent needs before ``task``, within ``budget`` tokens: what a
        person taught, pinned memories, preferences, the last session, then what the task
        matches (project and personal records). ``quick``: see ``index``. ``touch=False`` (a
        person previewing it) counts none of its items as used, so looking changes no later
        ranking."""
        from planning_memory.context.items import Task
        from planning_memory.context.packer import build_context  # here: a search needs none

        if isinstance(task, str | Mapping):  # a resident server's model embeds it meanwhile
            search.embed_soon(Task.of(task).query)
        with self.indexes(quick=quick) as indexes:
            return build_context(
                self.layout,
                self.store,
                task,
                now=self.now(),
                budget=budget,
                fmt=fmt,
                session_id=session_id,
                agent=agent,
                config=self._config(),
                index=indexes[0],
                personal=indexes[1] if len(indexes) > 1 else None,
                touch=touch,
            )

    def recall(self, prompt: str, *, exclude: Sequence[str] = ()) -> ContextPack:
        """The few memories relevant to one prompt (the UserPromptSubmit hook), in a handful
        of lines: taught rules it touches and its best matching records, ``exclude``'s ids
        left out. Never builds an index: a store without one answers from its taught rules
        (read from its records)."""
        from planning_memory.context.prompt import recall  # here: a search needs none

        self._require()
        search.embed_soon(prompt)  # a resident server's model embeds while the index syncs
        personal = self._personal()
        levels = [self]
        if personal is not None and personal.layout.long_term.is_dir():
            levels.append(personal)
        with contextlib.ExitStack() as stack:
            indexes, records = [], []
            home = self._home()
            for level in levels:
                index = level.built_index()
                if index is None:  # every project's records, this project's first
                    found = level._records()
                    records += sorted(found, key=lambda r: r.get("project", "") not in home)
                else:
                    index.home = home if level is not self else None
                    indexes.append(stack.enter_context(index))
            limit = int(self._settings("agents")["recallLimit"])
            return recall(
                prompt,
                now=self.now(),
                indexes=indexes,
                records=records,
                exclude=exclude,
                limit=limit,
            )

    def timeline(self, item_id: str, *, before: int = 5, after: int = 5) -> list[TimelineEntry]:
        """The chronological neighbours of a memory, message or decision."""
        with self.index() as index:
            return search.timeline(
                self.layout, self.store, item_id, before=before, after=after, index=index
            )
