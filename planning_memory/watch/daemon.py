"""The daemon's loop: take each ready batch, sort it (``plan``), run its reactions, report.

The daemon is an entrypoint: it reaches the memory only through the ``Memory`` facade, backed
by a store that records the daemon's own writes so that their events cause no further work.
A batch's source files go to the ``entity`` reaction (in this process for a few paths of a
small repository, in a child process for a full reconcile), then to the search index; memory
JSON and hand-edited views to the Markdown sync workflow; the summary queue to a thread of its
own, so that a slow summariser never delays a save. A reaction that fails is logged, counted
and shown in ``status``; the daemon carries on. With ``entity.scanInterval`` a duration, a
full reconcile also runs that long after the last one ended (a warm rescan: it catches changes
whose events never came, as on a network file system).

``python -m planning_memory.watch.daemon ROOT [--polling]`` is the background daemon's process
(see ``process.start``); ``--scan ROOT`` is its scan child.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from planning_memory.errors import PlanningMemoryError
from planning_memory.memory import Memory
from planning_memory.watch import child, events, plan, process
from planning_memory.watch.plan import Plan
from planning_memory.watch.reactions import REACTIONS, SUMMARY_IDLE, Reaction

log = logging.getLogger("planning_memory.watch.daemon")

TICK_S = 0.25  # longest sleep of the loop: how fast a stop request is seen
STATUS_EVERY_S = 1.0  # status file rewritten at most this often (state changes: at once)

StatusHook = Callable[[dict[str, Any]], None]


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class Daemon:
    """Watches one repository and keeps its memory current until ``request_stop``."""

    def __init__(
        self,
        memory: Memory,
        *,
        quiet: float = events.QUIET_S,
        max_wait: float = events.MAX_BATCH_S,
        polling: bool = False,
        on_status: StatusHook | None = None,
    ) -> None:
        self.planning = memory.layout.planning
        self.clock = memory.clock
        self.root = str(memory.layout.repo_root)
        self.rt = process.Runtime(memory)
        self.own = events.OwnWrites()
        self.writes = events.WriteLog(self.own)
        self.side_writes = events.WriteLog(self.own)  # the summaries thread's
        self.memory, self.side_memory = self._open()
        self.reactions = plan.switched(REACTIONS, self.memory.config)  # a bad config raises
        self.rescan_every = plan.rescan_every(self.memory.config)
        self._next_rescan = float("inf")  # monotonic time of the next warm rescan
        self.ignore = self.memory.code.ignore_rules()
        self.batcher = events.Batcher(quiet, max_wait)
        self.watcher = events.Watcher(
            self.root, self.batcher, self.own, git_head=events.git_head_path(self.root),
            polling=polling,
        )  # fmt: skip
        self.on_status = on_status
        self._stop = threading.Event()
        self._summaries_wake = threading.Event()
        self._index_lock = threading.Lock()
        self._head = self._read_head()
        self._files_seen = 0  # source files the last full reconcile listed
        self._status_written: dict[str, Any] = {}
        self._status_at = 0.0
        self.info: dict[str, Any] = {
            "pid": os.getpid(),
            "root": self.root,
            "started_at": _now(),
            "started_epoch": time.time(),
            "state": "starting",
            "observer": "",
            "last_event_at": None,
            "last_batch": None,
            "batches": 0,
            "full_reconciles": 0,
            "last_error": None,
            "errors": 0,
            "reactions": self.reactions,
            "warnings": [],
            "scan_child_peak_rss_mb": 0.0,
            "busy_since_epoch": None,
            "files_with_errors": 0,
            "error_files": [],
            "scan_interval": plan.scan_mode(self.memory.config),
            "rescans": 0,
            "last_rescan_at": None,
        }

    def _open(self) -> tuple[Memory, Memory]:
        """The facade twice: the loop's and the summaries thread's, each noting its writes."""
        memory = Memory(self.planning, clock=self.clock, on_write=self.writes.note)
        side = Memory(self.planning, clock=self.clock, on_write=self.side_writes.note)
        return memory, side

    # -- loop ----------------------------------------------------------------------------------
    def request_stop(self) -> None:
        self._stop.set()

    def run(self) -> None:
        """Watch until ``request_stop``; finish the batch in progress, then return."""
        self.info["observer"] = self.watcher.start()
        self.info["warnings"] = list(self.watcher.warnings)
        summaries = threading.Thread(target=self._summaries_loop, name="summaries", daemon=True)
        summaries.start()
        self.batcher.request_full("startup")
        self._summaries_wake.set()
        log.info("watching %s (%s)", self.root, self.info["observer"])
        try:
            while not self._stop.is_set():
                self._tick()
        finally:
            self.watcher.stop()
            self._summaries_wake.set()
            summaries.join(timeout=process.STOP_WAIT_S)
            self.info["state"] = "stopped"
            self.flush_status(force=True)
            log.info("stopped")

    def _tick(self) -> None:
        self.watcher.check()
        if time.monotonic() >= self._next_rescan:  # ``entity.scanInterval`` a duration
            self._next_rescan = float("inf")  # until the reconcile it asks for is done
            self.batcher.request_full(plan.INTERVAL)
        self.info["observer"] = self.watcher.kind
        self.info["warnings"] = list(self.watcher.warnings)
        due = self.batcher.due_in()
        hold = self._hold() if due == 0 else None
        if due is None or due > 0 or hold:
            self.info["state"] = "idle" if due is None else hold or "pending"
            self.flush_status()
            if due is None:
                self.batcher.wake.wait(TICK_S)
            else:  # held: look again in half a quiet window
                time.sleep(min(due or self.batcher.quiet / 2, TICK_S))
            return
        self.process(self.batcher.take())

    def _hold(self) -> str | None:
        """Why a due batch should wait (see ``plan.hold``)."""
        return plan.hold(
            age=self.batcher.age(),
            git_busy=os.path.exists(os.path.join(self.root, ".git", "index.lock")),
            pending=len(self.batcher),
            idle_for=self.batcher.idle_for(),
            quiet=self.batcher.quiet,
        )

    # -- one batch -----------------------------------------------------------------------------
    def sort(self, batch: events.Batch) -> Plan:
        """The batch's plan: ``plan.make`` told which paths are the daemon's own writes,
        which are gitignored and whether ``HEAD`` names another branch."""
        paths = {
            rel
            for rel in batch.paths
            if rel != events.GIT_HEAD and not self.own.is_own(os.path.join(self.root, rel))
        }
        maybe = {rel for rel in paths | batch.deleted_dirs if plan.maybe_source(rel)}
        return plan.make(
            paths,
            batch.deleted_dirs,
            batch.full,
            ignored={rel for rel in maybe if self.ignore.ignored(rel)},
            branch_switched=events.GIT_HEAD in batch.paths and self._head_moved(),
        )

    def _head_moved(self) -> bool:
        head = self._read_head()
        moved, self._head = head != self._head, head
        return moved

    def _read_head(self) -> str:
        path = events.git_head_path(self.root) or os.path.join(self.root, ".git", "HEAD")
        try:
            with open(path, encoding="utf-8", errors="replace") as fh:
                return fh.read()
        except OSError:
            return ""

    def process(self, batch: events.Batch) -> Plan:
        """Sort a batch and run the reactions it calls for."""
        todo = self.sort(batch)
        if not todo:
            return todo
        started = time.monotonic()
        self.info["state"] = "busy"
        self.info["busy_since_epoch"] = time.time()
        self.info["last_event_at"] = _now()
        self.flush_status(force=True)
        if todo.gitignore:
            self.ignore.refresh()
        if todo.config:
            self._reload_config()
        self.writes.take_written()
        if todo.full or todo.source:
            self._react_source(None if todo.full else sorted(todo.source))
        if todo.full:  # a HEAD event still on its way names what was just reconciled
            self._head = self._read_head()
        written = self._records_written()
        if todo.markdown:
            self._react("markdown", sorted(todo.markdown))
        records = written | todo.memory_json | self._records_written()
        if records:  # a `git pull`, another process, anchors just marked: render, then index
            self._react("markdown", sorted(records))
            self._react_index([])
        if todo.entity or todo.sessions:
            self._react_index([])
        if todo.queue or todo.sessions:  # a session that grew may now have a whole batch
            self._summaries_wake.set()
        self._finish(todo, started, started - batch.first_at)
        return todo

    def _records_written(self) -> set[str]:
        """The long-term records the daemon wrote since the last call (they are passed on to
        the views directly, once, instead of through events)."""
        relative = self.memory.layout.relative
        return plan.records(relative(path) for path in self.writes.take_written())

    def _finish(self, todo: Plan, started: float, waited: float) -> None:
        seconds = round(time.monotonic() - started, 3)
        self.info["batches"] += 1
        self.info["full_reconciles"] += bool(todo.full)
        self.info["last_batch"] = plan.summary(todo, at=_now(), seconds=seconds, waited=waited)
        if todo.full:  # any full reconcile restarts the interval
            every = self.rescan_every
            self._next_rescan = float("inf") if every is None else time.monotonic() + every
        if plan.INTERVAL in todo.full:
            self.info["rescans"] += 1
            self.info["last_rescan_at"] = _now()
        what = f"full reconcile ({'; '.join(todo.full)})" if todo.full else "batch"
        log.info(
            "%s: %d paths, %d source, waited %.3f s, took %.3f s",
            what, todo.count(), len(todo.source), waited, seconds,
        )  # fmt: skip
        self.info["state"] = "idle"
        self.info["busy_since_epoch"] = None
        self.flush_status(force=True)

    def _reload_config(self) -> None:
        memory, side = self._open()
        try:
            reactions = plan.switched(REACTIONS, memory.config)  # reads and checks the config
        except PlanningMemoryError as exc:
            self._error("config", exc)
            return
        self.memory, self.side_memory = memory, side
        self.ignore = self.memory.code.ignore_rules()
        self.reactions.update(reactions)
        self.rescan_every = plan.rescan_every(memory.config)  # timed from this reconcile's end
        self.info["scan_interval"] = plan.scan_mode(memory.config)

    # -- reactions -----------------------------------------------------------------------------
    def _react(
        self,
        name: str,
        paths: list[str] | None,
        reaction: Reaction | None = None,
        memory: Memory | None = None,
    ) -> None:
        """Run one reaction (``REACTIONS[name]`` unless given) when it is on: an error is
        logged and shown in ``status``, never fatal."""
        if self.reactions.get(name) != "available":
            return
        try:
            result = (reaction or REACTIONS[name])(memory or self.memory, paths)
        except PlanningMemoryError as exc:
            self._error(name, exc)
        except Exception as exc:
            log.exception("%s reaction failed", name)
            self._error(name, exc)
        else:
            if name == "entity":
                self._note_scan(result)

    def _note_scan(self, report: object) -> None:
        """Files the code map holds with errors (syntax errors, unreadable shards), for
        ``status``; a scan of a few paths reports every such file the map knows."""
        if isinstance(report, dict):  # the scan child's answer
            errors, paths = report.get("errors"), report.get("error_paths")
        else:
            errors, paths = getattr(report, "errors", None), getattr(report, "error_paths", None)
        if isinstance(errors, int):
            self.info["files_with_errors"] = errors
            self.info["error_files"] = list(paths or ())[:10]

    def _error(self, name: str, exc: Exception) -> None:
        text = exc.one_line() if isinstance(exc, PlanningMemoryError) else repr(exc)
        log.warning("%s: %s", name, text)
        self.info["errors"] += 1
        self.info["last_error"] = {"at": _now(), "reaction": name, "message": text}

    def _react_source(self, paths: list[str] | None) -> None:
        """Source files changed (``None``: reconcile everything): entity JSON and anchored
        memories, then the search index."""
        in_child = plan.scan_in_child(paths, self._files_seen)
        self._react("entity", paths, self._scan_in_child if in_child else None)
        self._react_index(paths)

    def _react_index(self, paths: list[str] | None) -> None:
        with self._index_lock:  # the summaries thread syncs it too
            self._react("index", paths)

    def _scan_in_child(self, memory: Memory, paths: list[str] | None) -> dict[str, Any] | None:
        """The ``entity`` reaction in the scan child; the files it wrote become our own."""
        result = child.run(self.root, paths, self._stop)
        if result is None:
            log.info("scan interrupted by the stop request")
            return None
        self.writes.adopt(result["written"])
        peak = max(self.info["scan_child_peak_rss_mb"], float(result["peak_rss_mb"]))
        self.info["scan_child_peak_rss_mb"] = peak
        if paths is None:
            self._files_seen = int(result["files_seen"])
        return result

    def _summaries_loop(self) -> None:
        while not self._stop.is_set():
            # also look again once a waiting session has been quiet long enough
            self._summaries_wake.wait(SUMMARY_IDLE.total_seconds())
            self._summaries_wake.clear()
            if self._stop.is_set():
                return
            self._react("summaries", None, memory=self.side_memory)
            if self.side_writes.take_written():
                self._react_index([])

    # -- status --------------------------------------------------------------------------------
    def snapshot(self) -> dict[str, Any]:
        return {**self.info, "queue": len(self.batcher)}

    def flush_status(self, *, force: bool = False) -> None:
        """Write the status file when it changed (at most once a second unless forced)."""
        snap = self.snapshot()
        if self.on_status is not None:
            self.on_status(snap)
        if snap == self._status_written:
            return
        now = time.monotonic()
        force = force or snap["state"] != self._status_written.get("state")
        if not force and now - self._status_at < STATUS_EVERY_S:
            return
        try:
            process.write_status(self.rt, json.dumps(snap, indent=2, sort_keys=True) + "\n")
        except (OSError, PlanningMemoryError):
            return
        self._status_written = snap
        self._status_at = now


# -- the daemon's process -----------------------------------------------------------------------
def run_foreground(
    memory: Memory, *, on_status: StatusHook | None = None, polling: bool = False
) -> None:
    """Run a daemon in this process until SIGTERM / SIGINT / SIGHUP (one per repository:
    ``LockError`` when one runs already)."""
    rt = process.Runtime(memory)
    fd = process.acquire(rt)
    try:
        daemon = Daemon(memory, on_status=on_status, polling=polling)

        def stop(_signum: int, _frame: Any) -> None:
            daemon.request_stop()

        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(sig, stop)
        daemon.run()
    finally:
        process.release(rt, fd)


def main(argv: list[str] | None = None) -> int:
    """``ROOT [--polling]``: the daemon; ``--scan ROOT``: one scan of the
    ``{"paths": [...] | null}`` read from stdin, the files it wrote printed as JSON."""
    args = sys.argv[1:] if argv is None else argv
    logging.basicConfig(
        level=logging.INFO, stream=sys.stderr, format="%(asctime)s %(levelname)s %(message)s"
    )
    roots = [a for a in args if not a.startswith("--")]
    try:
        start = Path(roots[0]) if roots else None
        if "--scan" in args:
            print(json.dumps(child.job(start, json.load(sys.stdin)["paths"])))
            return 0
        run_foreground(Memory.open(start), polling="--polling" in args)
    except PlanningMemoryError as exc:
        print(f"pmem watch: error: {exc.one_line()}", file=sys.stderr)
        return exc.exit_code
    return 0


if __name__ == "__main__":
    sys.exit(main())
