"""What the pages read from one memory, kept until its files change.

A memory of 10k records takes a second or more to load whole, too slow for any page. So
``Reads`` loads them in a background job (``jobs``: a page shows its progress line meanwhile),
keeps them, each with its file's modification time, and after a change re-reads only the files
that changed (a folder's listing and ``stat``s: milliseconds), answering with the records it
has until that is done. Searches and context blocks, which may have to build the search index
first, run as jobs too (``indexed``), one at a time.
The change ``stamp`` the page polls is the newest modification time of the memory's folders
(the store writes atomically, so a written file changes its folder's time; a record folder
whose time is unchanged is not even listed); the derived search index is left out, so a
search does not look like a change.

Reads only: everything goes through ``Memory`` (``get``, ``sessions``, ``code``, ``counts``).
"""

from __future__ import annotations

import multiprocessing
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from planning_memory.errors import PlanningMemoryError
from planning_memory.viewer.codeindex import CodeIndex, CodeIndexes
from planning_memory.viewer.jobs import Job, Jobs, Pending

if TYPE_CHECKING:
    from planning_memory.memory import Memory
    from planning_memory.sessions import SessionInfo

Record = dict[str, Any]
_T = TypeVar("_T")
_S = TypeVar("_S")
RECORDS_LABEL = "Reading the long-term records"
STAMP_EVERY_S = 0.25  # a page asks for the stamp several times: measure it once


def _newest(paths: list[Path]) -> str:
    """The newest change time (ctime, as ``core.stamps`` reads a file: an mtime can be set
    back) of ``paths``, and how many there are."""
    newest, count = 0, 0
    for path in paths:
        try:
            newest = max(newest, path.stat().st_ctime_ns)
            count += 1
        except OSError:
            continue
    return f"{newest}-{count}"


def prepare_index(planning: Path, job: Job) -> None:
    """Bring the search index up to date in a process of its own (building it can take
    minutes of CPU, which in this process's threads would slow every page), saying each step
    in ``job``; when that process fails, the work itself brings the index up (and says why)."""
    context = multiprocessing.get_context("spawn")
    steps, told = context.Pipe(duplex=False)
    child = context.Process(target=_index_in_child, args=(str(planning), told), daemon=True)
    child.start()
    told.close()
    try:
        while child.is_alive() or steps.poll():
            if steps.poll(0.2):
                try:
                    job.step(steps.recv())
                except EOFError:
                    break
    finally:
        steps.close()
        child.join()


def _index_in_child(planning: str, told: Any) -> None:
    """In the child process: the memories first (quick), then the code map and the code."""
    from planning_memory.memory import Memory

    try:
        mem = Memory(planning)
        told.send("indexing the memories")
        with mem.index(quick=True):
            pending = mem.contextual.pending
        if pending:
            told.send("indexing the code map and the code")
            mem.contextual.finish_index()
    except PlanningMemoryError:
        pass  # the work after it meets the same problem, and its page says what it is
    finally:
        told.close()


class Reads:
    """Cached reads of one memory, safe to share between the server's threads."""

    def __init__(self, mem: Memory) -> None:
        self.mem = mem
        self._lock = threading.Lock()
        # store -> (its catalog's epoch and generation, record file -> (digest, the record))
        self._catalogs: dict[str, tuple[str, int, dict[str, tuple[str, Record]]]] = {}
        self._sorted: list[Record] | None = None
        self._sessions: tuple[str, list[SessionInfo]] | None = None
        self._memo: dict[str, tuple[str, float, Any]] = {}
        self._stamps: tuple[float, dict[str, str]] | None = None
        self._personal: Memory | None = None
        self._index_checked = False
        self._derived: dict[str, tuple[object, object]] = {}
        self._builders: dict[str, Callable[[Any], object]] = {}
        self.jobs = Jobs()
        self._code = CodeIndexes(self)

    # -- the change stamp ---------------------------------------------------------------------
    def _watched(self) -> dict[str, list[Path]]:
        lay = self.mem.layout
        short = [lay.short_term]
        store = self.mem.store  # never a link out of the tree
        if lay.short_term.is_dir():
            short += [
                Path(e.path) for e in os.scandir(store.check_inside(lay.short_term)) if e.is_dir()
            ]
        entity = [lay.entity]
        if lay.entity.is_dir():
            entity += [
                Path(e.path) for e in os.scandir(store.check_inside(lay.entity)) if e.is_file()
            ]
        return {
            "config": [lay.config],
            "long-term": [
                f for m in self._stores() for f in (m.layout.long_term, *m.layout.record_dirs())
            ],
            "short-term": short,
            "entity": entity,
        }

    def stamps(self) -> dict[str, str]:
        """Per part of the memory, a text that changes when a file in it is written, deleted
        or added (measured at most every ``STAMP_EVERY_S``)."""
        now = time.monotonic()
        known = self._stamps
        if known is not None and now - known[0] < STAMP_EVERY_S:
            return known[1]
        found = {part: _newest(paths) for part, paths in self._watched().items()}
        self._stamps = (now, found)
        return found

    def stamp(self) -> str:
        """A text that changes whenever a memory file is written, deleted or added."""
        return "/".join(self.stamps().values())

    def memo(self, key: str, build: Any, *, part: str | None = None, max_age: float = 0) -> Any:
        """``build()``, kept until ``part`` of the memory (default: any) changes, or after
        ``max_age`` seconds when given (for what the stamp cannot see: deep code map folders)."""
        stamp = self.stamps()[part] if part else self.stamp()
        found = self._memo.get(key)
        fresh = found is not None and (not max_age or time.monotonic() - found[1] < max_age)
        if found is not None and fresh and found[0] == stamp:
            return found[2]
        value = build()
        self._memo[key] = (stamp, time.monotonic(), value)
        return value

    def warm(self) -> None:
        """Start reading what every page needs (the records), so the first page is quick;
        called when the server starts."""
        self.jobs.start(self._records_key(), RECORDS_LABEL, self._load_records, lane="records")

    # -- long-term records ----------------------------------------------------------------------
    def _records_key(self) -> str:
        return "records:" + self.stamps()["long-term"]

    def records(self) -> list[Record]:
        """Every long-term record, soft-deleted ones too, newest first; ``Pending`` while the
        first reading runs (a later one, after a change, answers with the records read before
        until it is done)."""
        try:
            found: list[Record] = self.jobs.run(
                self._records_key(), RECORDS_LABEL, self._load_records, lane="records"
            )
        except Pending as waiting:
            older: list[Record] = self.jobs.older("records:", waiting)
            return older
        return found

    def _load_records(self, job: Job) -> list[Record]:
        job.step("listing the record files")
        changed = False
        stores = self._stores()
        for mem in stores:
            changed = self._refresh(mem, job) or changed
        kept = {str(mem.layout.planning) for mem in stores}
        with self._lock:
            for gone in self._catalogs.keys() - kept:  # the personal store's records are gone
                del self._catalogs[gone]
                changed = True
            if changed or self._sorted is None:
                every = [rec for *_, files in self._catalogs.values() for _, rec in files.values()]
                self._sorted = sorted(
                    every, key=lambda r: (str(r.get("created_at") or ""), r["id"]), reverse=True
                )
            found = self._sorted
        job.step("indexing them")
        for name, build in list(self._builders.items()):  # here, not in a page's request
            self.derived(name, found, build)
        return found

    def derived(self, name: str, source: _S, build: Callable[[_S], _T]) -> _T:
        """``build(source)``, kept while ``source`` is the same object (the records read);
        after a first use, the records' job works it out for each new reading of them."""
        self._builders[name] = build
        known = self._derived.get(name)
        if known is not None and known[0] is source:
            return known[1]  # type: ignore[return-value]
        value = build(source)
        self._derived[name] = (source, value)
        return value

    # -- work on the search index ----------------------------------------------------------------
    def indexed(self, key: str, label: str, work: Callable[[], _T]) -> _T:
        """``work()`` (a search, a context block: what reads the search index), run as a job of
        the index's lane; ``Pending`` while it runs past the wait. The first such job of the
        server brings the index up to date first, in steps its progress line names (a fresh
        clone, or a deleted index, builds it: the memories, then the code map and the code)."""

        def run(job: Job) -> _T:
            if not self._index_checked:
                prepare_index(self.mem.layout.planning, job)
                self._index_checked = True
            job.step("working")
            return work()

        found: _T = self.jobs.run(f"{key}:{self.stamp()}", label, run, lane="index")
        return found

    def code_index(self) -> CodeIndex:
        """The code map's reverse look-ups (``Pending`` while it is first read)."""
        return self._code.get()

    def _stores(self) -> list[Memory]:
        """The project's memory, and the personal store when it holds records (its records
        show with ``scope: personal``)."""
        if self._personal is None:
            self._personal = self.mem.personal()
        has_records = self._personal.layout.long_term.is_dir()
        return [self.mem, self._personal] if has_records else [self.mem]

    def _refresh(self, mem: Memory, job: Job) -> bool:
        """Re-read the records of ``mem`` whose files changed since the last reading, as the
        one catalog of the record files tells (``LongTerm.files``); whether any did."""
        key = str(mem.layout.planning)
        epoch, gen, known = self._catalogs.get(key, ("", -1, {}))
        now_epoch, now_gen, rows, gone = mem.longterm.files(gen)
        if now_epoch != epoch and gen >= 0:  # a new catalog: its generations start again
            now_epoch, now_gen, rows, gone = mem.longterm.files()
            known, gone = {}, []
        if now_gen == gen and not rows and not gone:
            return False
        fresh = dict(known)
        for file in gone:
            fresh.pop(file, None)
        for count, (file, _ctime, _size, digest, record_id, *_rest) in enumerate(rows):
            if count % 200 == 0:
                job.step("reading", count, len(rows))
            had = fresh.get(file)
            if had is not None and had[0] == digest:
                continue
            if not digest:  # no longer a record (or unreadable): validate says so
                fresh.pop(file, None)
                continue
            try:
                fresh[file] = (digest, mem.get(record_id))
            except PlanningMemoryError:
                fresh.pop(file, None)
        with self._lock:
            self._catalogs[key] = (now_epoch, now_gen, fresh)
        return True

    # -- sessions ---------------------------------------------------------------------------------
    def sessions(self) -> list[SessionInfo]:
        """Every session, newest first (re-read when a session file changes)."""
        stamp = self.stamps()["short-term"]
        with self._lock:
            if self._sessions is None or self._sessions[0] != stamp:
                self._sessions = (stamp, self.mem.sessions.list())
            return self._sessions[1]

    def injections(self, session_id: str | None = None, limit: int = 50) -> list[dict[str, Any]]:
        """What was injected at session starts, newest first (of one session, or of all);
        [] where the memory keeps no such history."""
        method = getattr(self.mem.sessions, "injections", None)
        if method is None:
            return []
        if session_id:
            return list(method(session_id=session_id, limit=limit) or [])
        found = self.memo(f"injections-{limit}", lambda: method(limit=limit), part="short-term")
        return list(found or [])
