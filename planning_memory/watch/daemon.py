"""The watch daemon: what each batch of changes sets off, its status file, and its process.

A batch (see ``watch``) is sorted into source files, memory JSON, hand-edited Markdown, session
files and control files (``.git/HEAD``, ``.gitignore``, the config). Each kind goes through one
small adapter (``_react_source``, ``_react_memory_json``, ``_react_markdown``,
``_react_summaries``) that imports the part it needs when the daemon starts; a part that is
missing makes that reaction "unavailable" in ``status`` instead of an error. A branch switch, a
queue overflow, a vanished folder or a batch of more than ``MAX_PATHS`` source paths becomes one
full reconcile by content hash.

Process: one daemon per repository, held by ``flock`` on ``contextual/watch.lock`` for its
whole life (not the memory root's lock, which writers take briefly). Its pid, log and status
files live next to it in ``memory/contextual/`` (derived and gitignored); the status file is
rewritten only when something changed, so an idle daemon writes nothing. These runtime files
are written here directly rather than through ``Store``: they must never wait for the memory
lock, which a long reconcile holds.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import importlib
import inspect
import json
import logging
import os
import resource
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from planning_memory.core.layout import Layout
from planning_memory.core.model import timestamp
from planning_memory.errors import ConflictError, LockError, PlanningMemoryError
from planning_memory.memory import Memory
from planning_memory.watch import events as watch

log = logging.getLogger("planning_memory.watch.daemon")

MAX_PATHS = 1000  # a batch with more source paths than this is reconciled in full
IN_PROCESS_MAX_FILES = 20_000  # larger repositories: every scan runs in a child process
HOLD_MAX_S = 10.0  # hold a batch while git works or a big burst goes on, at most this long
TICK_S = 0.25  # longest sleep of the loop: how fast a stop request is seen
STATUS_EVERY_S = 1.0  # status file rewritten at most this often (state changes: at once)
LOG_MAX_BYTES = 1 << 20
START_WAIT_S = 15.0
STOP_WAIT_S = 20.0

# reaction -> what it needs, ``module:attribute`` (``a|b``: the first of a and b that exists)
NEEDS: dict[str, tuple[str, ...]] = {
    "entity": ("planning_memory.entity:scan",),
    "anchors": ("planning_memory.entity.anchors:mark_stale_anchors",),
    "markdown": ("planning_memory.memory:Memory.sync|planning_memory.views.sync:sync",),
    "index": ("planning_memory.search.upkeep:sync", "planning_memory.search.database:Index"),
    "summaries": (
        "planning_memory.sessions.conversation:drain_summary_queue",
        "planning_memory.sessions.summarize:from_config",
    ),
}
CONFIG_SWITCH = {"entity": ("entity", "autoScan"), "index": ("contextual", "autoReindex")}


def _now() -> str:
    return timestamp(datetime.now(UTC))


# -- runtime files ------------------------------------------------------------------------------
@dataclass(frozen=True)
class Runtime:
    """The daemon's files under ``memory/contextual/``."""

    layout: Layout

    @property
    def folder(self) -> Path:
        return self.layout.contextual

    @property
    def lock(self) -> Path:
        return self.folder / "watch.lock"

    @property
    def pid(self) -> Path:
        return self.folder / "watch.pid"

    @property
    def log(self) -> Path:
        return self.folder / "watch.log"

    @property
    def status(self) -> Path:
        return self.folder / "watch-status.json"


def _write_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".pm-tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def _read_json(path: Path) -> dict[str, Any]:
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def _read_pid(rt: Runtime) -> int | None:
    for path in (rt.pid, rt.lock):
        with contextlib.suppress(OSError, ValueError):
            text = path.read_text(encoding="utf-8").strip()
            if text:
                return int(text)
    return None


def is_running(rt: Runtime) -> bool:
    """True while some process holds the daemon lock of this repository."""
    try:
        fd = os.open(rt.lock, os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError as exc:
        if exc.errno in (errno.EAGAIN, errno.EACCES):
            return True
        raise
    finally:
        os.close(fd)  # closing drops our probe lock
    return False


def _running_error(rt: Runtime) -> LockError:
    pid = _read_pid(rt)
    return LockError(
        f"a watch daemon already runs for this repository (pid {pid})",
        path=rt.layout.relative(rt.lock),
        hint="`pmem watch status` tells what it does; `pmem watch stop` stops it",
    )


def acquire(rt: Runtime, wait: float = 1.0) -> int:
    """Take the daemon lock (a status probe may hold it for a moment) and write our pid in it."""
    rt.folder.mkdir(parents=True, exist_ok=True)
    fd = os.open(rt.lock, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    deadline = time.monotonic() + wait
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            break
        except OSError as exc:
            if exc.errno not in (errno.EAGAIN, errno.EACCES) or time.monotonic() > deadline:
                os.close(fd)
                raise _running_error(rt) from None
            time.sleep(0.02)
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    return fd


# -- reactions ----------------------------------------------------------------------------------
def _resolve(spec: str) -> Any:
    """The object named by ``module:attr.attr`` (or the first of ``a|b`` that exists)."""
    error: Exception = ImportError(spec)
    for option in spec.split("|"):
        module_name, _, attrs = option.partition(":")
        try:
            found: Any = importlib.import_module(module_name)
            for attr in attrs.split("."):
                found = getattr(found, attr)
        except (ImportError, AttributeError) as exc:
            error = exc
            continue
        return found
    raise error


def probe_reactions(config: dict[str, Any]) -> dict[str, str]:
    """``available``, ``disabled by config`` or ``unavailable: <why>`` for each reaction."""
    found: dict[str, str] = {}
    for name, specs in NEEDS.items():
        try:
            for spec in specs:
                _resolve(spec)
        except (ImportError, AttributeError) as exc:
            missing = spec.replace(":", ".").replace("|", " or ")
            found[name] = f"unavailable (no {missing}: {type(exc).__name__})"
            continue
        section, key = CONFIG_SWITCH.get(name, ("", ""))
        enabled = not section or config["memory"][section].get(key, True)
        found[name] = "available" if enabled else f"disabled by config ({section}.{key})"
    return found


class ScanChildError(PlanningMemoryError):
    """The scan's child process failed."""


def _takes(func: Callable[..., Any], name: str) -> bool:
    try:
        return name in inspect.signature(func).parameters
    except (TypeError, ValueError):
        return False


@dataclass
class Plan:
    """A batch sorted by what it sets off."""

    source: set[str] = field(default_factory=set)
    memory_json: set[str] = field(default_factory=set)
    markdown: set[str] = field(default_factory=set)
    sessions: set[str] = field(default_factory=set)
    queue: set[str] = field(default_factory=set)
    entity: set[str] = field(default_factory=set)
    full: list[str] = field(default_factory=list)
    gitignore: bool = False
    config: bool = False

    def groups(self) -> tuple[set[str], ...]:
        return (
            self.source,
            self.memory_json,
            self.markdown,
            self.sessions,
            self.queue,
            self.entity,
        )

    def __bool__(self) -> bool:
        return bool(self.full or self.config or any(self.groups()))

    def count(self) -> int:
        return sum(len(group) for group in self.groups())


def sort_planning(plan: Plan, rel: str) -> None:
    """Put a path under ``.planning/`` in its group (or nowhere)."""
    sub = rel[len(".planning/") :]
    if sub == "memory-config.json":
        plan.config = True
    elif sub.startswith("memory/long-term/") and sub.endswith(".json"):
        plan.memory_json.add(rel)
    elif sub.startswith("memory/short-term/queue/"):
        plan.queue.add(rel)
    elif sub.startswith("memory/short-term/"):
        plan.sessions.add(rel)
    elif sub.startswith("memory/entity/"):
        plan.entity.add(rel)
    elif "/" not in sub and sub.endswith(".md"):
        plan.markdown.add(rel)


class Daemon:
    """Watches one repository and keeps its memory current until ``request_stop``."""

    def __init__(
        self,
        layout: Layout,
        *,
        quiet: float = watch.QUIET_S,
        max_wait: float = watch.MAX_BATCH_S,
        polling: bool = False,
        on_status: Callable[[dict[str, Any]], None] | None = None,
    ) -> None:
        self.layout = layout
        self.root = str(layout.repo_root)
        self.rt = Runtime(layout)
        self.own = watch.OwnWrites()
        self.store = watch.RecordingStore(layout, self.own)
        self.side_store = watch.RecordingStore(layout, self.own)  # the summaries thread's
        self.memory = Memory(layout.planning)
        self.memory.store = self.store
        self.config = self.memory.config
        exclude = self.config["memory"]["entity"].get("excludePatterns", [])
        self.ignore = watch.IgnoreRules(self.root, exclude)
        self.batcher = watch.Batcher(quiet, max_wait)
        self.watcher = watch.Watcher(
            self.root, self.batcher, self.own, git_head=watch.git_head_path(self.root),
            polling=polling,
        )  # fmt: skip
        self.reactions = probe_reactions(self.config)
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
        }

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
            summaries.join(timeout=STOP_WAIT_S)
            self.info["state"] = "stopped"
            self.flush_status(force=True)
            log.info("stopped")

    def _tick(self) -> None:
        self.watcher.check()
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
        """Why a due batch should wait (bounded by ``HOLD_MAX_S``): git holds its index lock
        while it rewrites the work tree; a burst of more than ``MAX_PATHS`` changes that is
        still arriving will be one full reconcile anyway, so it may as well be complete."""
        if self.batcher.age() >= HOLD_MAX_S:
            return None
        if os.path.exists(os.path.join(self.root, ".git", "index.lock")):
            return "waiting for git"
        if len(self.batcher) > MAX_PATHS and self.batcher.idle_for() < self.batcher.quiet:
            return "waiting for the burst to end"
        return None

    # -- one batch -----------------------------------------------------------------------------
    def plan(self, batch: watch.Batch) -> Plan:
        plan = Plan(full=list(batch.full))
        for rel in batch.paths:
            self._sort(plan, rel)
        for rel in batch.deleted_dirs:
            if rel.startswith(".planning/"):
                plan.memory_json.add(rel)
            elif not self.ignore.ignored(rel) and not watch.under_any(rel, batch.paths):
                plan.source.add(rel)  # moved out of the tree: the scan drops what was inside
        if len(plan.source) > MAX_PATHS:
            plan.full.append(f"{len(plan.source)} paths changed")
        if plan.gitignore or plan.config:
            plan.full.append(".gitignore changed" if plan.gitignore else "config changed")
        return plan

    def _sort(self, plan: Plan, rel: str) -> None:
        if rel == watch.GIT_HEAD:
            head = self._read_head()
            if head != self._head:
                self._head = head
                plan.full.append("branch switch")
        elif self.own.is_own(os.path.join(self.root, rel)):
            return
        elif rel.startswith(".planning/"):
            sort_planning(plan, rel)
        elif rel.rpartition("/")[2] == ".gitignore":
            plan.gitignore = True
        elif not self.ignore.ignored(rel):
            plan.source.add(rel)

    def _read_head(self) -> str:
        path = watch.git_head_path(self.root) or os.path.join(self.root, ".git", "HEAD")
        try:
            with open(path, encoding="utf-8", errors="replace") as fh:
                return fh.read()
        except OSError:
            return ""

    def process(self, batch: watch.Batch) -> Plan:
        """Sort a batch and run the reactions it calls for."""
        plan = self.plan(batch)
        if not plan:
            return plan
        started = time.monotonic()
        self.info["state"] = "busy"
        self.info["last_event_at"] = _now()
        self.flush_status(force=True)
        if plan.gitignore:
            self.ignore.refresh()
        if plan.config:
            self._reload_config()
        self.store.take_written()
        full = bool(plan.full)
        if full or plan.source:
            self._react_source(None if full else sorted(plan.source))
        if full:  # a HEAD event still on its way names what was just reconciled
            self._head = self._read_head()
        written = self.store.take_written()
        if plan.markdown:
            self._react_markdown(sorted(plan.markdown))
        records = (
            self._long_term(written) | plan.memory_json | self._long_term(self.store.take_written())
        )
        if records:
            self._react_memory_json(sorted(records))
        if plan.entity or plan.sessions:
            self._index_sync()
        if plan.queue:
            self._summaries_wake.set()
        self._finish(plan, started, started - batch.first_at)
        return plan

    def _long_term(self, paths: list[Path]) -> set[str]:
        prefix = str(self.layout.long_term) + os.sep
        return {self.layout.relative(p) for p in paths if str(p).startswith(prefix)}

    def _finish(self, plan: Plan, started: float, waited: float) -> None:
        seconds = round(time.monotonic() - started, 3)
        self.info["batches"] += 1
        self.info["full_reconciles"] += bool(plan.full)
        self.info["last_batch"] = {
            "at": _now(),
            "paths": plan.count(),
            "source": len(plan.source),
            "full": "; ".join(plan.full) or None,
            "seconds": seconds,
            "waited": round(waited, 3),
        }
        what = f"full reconcile ({'; '.join(plan.full)})" if plan.full else "batch"
        log.info(
            "%s: %d paths, %d source, waited %.3f s, took %.3f s",
            what, plan.count(), len(plan.source), waited, seconds,
        )  # fmt: skip
        self.info["state"] = "idle"
        self.flush_status(force=True)

    def _reload_config(self) -> None:
        fresh = Memory(self.layout.planning)
        fresh.store = self.store
        try:
            self.config = fresh.config
        except PlanningMemoryError as exc:
            self._error("config", exc)
            return
        self.memory = fresh
        self.ignore = watch.IgnoreRules(
            self.root, self.config["memory"]["entity"].get("excludePatterns", [])
        )
        self.reactions.update(probe_reactions(self.config))

    # -- the adapters --------------------------------------------------------------------------
    def _on(self, name: str) -> bool:
        return self.reactions.get(name) == "available"

    @contextlib.contextmanager
    def _guard(self, name: str) -> Iterator[None]:
        """Run one reaction: an error is logged and shown in ``status``, never fatal."""
        try:
            yield
        except PlanningMemoryError as exc:
            self._error(name, exc)
        except Exception as exc:
            log.exception("%s reaction failed", name)
            self._error(name, exc)

    def _error(self, name: str, exc: Exception) -> None:
        text = exc.one_line() if isinstance(exc, PlanningMemoryError) else repr(exc)
        log.warning("%s: %s", name, text)
        self.info["errors"] += 1
        self.info["last_error"] = {"at": _now(), "reaction": name, "message": text}

    def _react_source(self, paths: list[str] | None) -> None:
        """Source files changed (``None``: reconcile everything): entity JSON, anchored
        memories, then the search index."""
        if self._on("entity"):
            with self._guard("entity"):
                if paths is None or self._files_seen > IN_PROCESS_MAX_FILES:
                    self._scan_in_child(paths)
                else:
                    scan = _resolve(NEEDS["entity"][0])
                    scan(self.layout, self.store, self.config, paths=paths)
        if self._on("anchors"):
            with self._guard("anchors"):
                _resolve(NEEDS["anchors"][0])(self.layout, self.store)
        if self._on("index"):
            with self._guard("index"), self._index() as index:
                if index is not None:
                    self._index_source(index, paths)

    def _scan_in_child(self, paths: list[str] | None) -> None:
        """Scan in a child process: a full reconcile (``paths`` None), or any scan of a large
        repository, holds every entity in memory at once, and a child returns that memory to
        the system when it ends. The files it wrote are adopted as the daemon's own. A stop
        request ends it early (the next start reconciles again)."""
        argv = [sys.executable, "-m", "planning_memory.watch.daemon", "--scan", self.root]
        proc = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            cwd=self.root, text=True,
        )  # fmt: skip
        job: str | None = json.dumps({"paths": paths})
        while True:
            try:
                out, err = proc.communicate(job, timeout=TICK_S)
                break
            except subprocess.TimeoutExpired:
                job = None  # sent with the first call
                if self._stop.is_set():
                    proc.terminate()
                    proc.communicate()
                    log.info("scan interrupted by the stop request")
                    return
        if proc.returncode != 0:
            lines = err.strip().splitlines() or [f"exit code {proc.returncode}"]
            raise ScanChildError(f"scan failed: {lines[-1]}")
        result = json.loads(out)
        self.store.adopt(result["written"])
        peak = max(self.info["scan_child_peak_rss_mb"], float(result["peak_rss_mb"]))
        self.info["scan_child_peak_rss_mb"] = peak
        if paths is None:
            self._files_seen = int(result["files_seen"])

    def _index_source(self, index: Any, paths: list[str] | None) -> None:
        indexer = importlib.import_module("planning_memory.search.upkeep")
        entity = [p for p in self.store.written if str(p).startswith(str(self.layout.entity))]
        if paths is None:
            indexer.reindex_codebase(index, self.layout, self.config)
            indexer.index_entity_files(index, self.layout, self.store, None)
        else:
            indexer.index_files(index, self.layout.repo_root, paths, self.config)
            indexer.index_entity_files(index, self.layout, self.store, entity)

    def _react_memory_json(self, paths: list[str]) -> None:
        """Memory JSON changed (a ``git pull``, another process): re-render the Markdown, then
        update the index."""
        self._sync_views()
        self._index_sync()

    def _react_markdown(self, paths: list[str]) -> None:
        """``patterns.md`` / ``mistakes.md`` edited by hand: import the edits (the sync
        workflow tells a hand edit from a stale render)."""
        self._sync_views()

    def _sync_views(self) -> None:
        """The Markdown sync workflow: the facade's ``Memory.sync()`` when it has one, else
        ``planning_memory.views.sync.sync(layout, store, config[, now=])``."""
        if not self._on("markdown"):
            return
        with self._guard("markdown"):
            method = getattr(self.memory, "sync", None)
            if callable(method):
                report = method()
            else:
                sync = _resolve(NEEDS["markdown"][0])
                kwargs = {"now": datetime.now(UTC)} if _takes(sync, "now") else {}
                report = sync(self.layout, self.store, self.config, **kwargs)
            conflicts = [self.layout.relative(c.path) for c in getattr(report, "conflicts", [])]
            if conflicts:
                raise ConflictError(
                    f"{', '.join(conflicts)} changed both by hand and in the JSON; nothing "
                    "was written",
                    hint="run `pmem sync --prefer md|json`",
                )

    def _react_summaries(self) -> None:
        """Drain the summary queue that sessions fill."""
        if not self._on("summaries"):
            return
        with self._guard("summaries"):
            summarizer = _resolve(NEEDS["summaries"][1])(self.config)
            _resolve(NEEDS["summaries"][0])(
                self.layout, self.side_store, self.config, summarizer, datetime.now(UTC)
            )
        if self.side_store.take_written():
            self._index_sync()

    def _index_sync(self) -> None:
        if not self._on("index"):
            return
        with self._guard("index"), self._index() as index:
            if index is not None:
                _resolve(NEEDS["index"][0])(index, self.layout, self.store)

    @contextlib.contextmanager
    def _index(self) -> Iterator[Any]:
        """The search index if it was built (``pmem reindex``), else None."""
        with self._index_lock:
            if not _resolve("planning_memory.search.database:index_path")(self.layout).is_file():
                yield None
                return
            index = _resolve(NEEDS["index"][1]).open(self.layout)
            try:
                yield index if index.built else None
            finally:
                index.close()

    def _summaries_loop(self) -> None:
        while not self._stop.is_set():
            self._summaries_wake.wait()
            self._summaries_wake.clear()
            if not self._stop.is_set():
                self._react_summaries()

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
        with contextlib.suppress(OSError):
            _write_atomic(self.rt.status, json.dumps(snap, indent=2, sort_keys=True) + "\n")
            self._status_written = snap
            self._status_at = now


# -- process management -------------------------------------------------------------------------
def run_foreground(
    layout: Layout,
    *,
    on_status: Callable[[dict[str, Any]], None] | None = None,
    polling: bool = False,
) -> None:
    """Run a daemon in this process until SIGTERM / SIGINT (one per repository)."""
    rt = Runtime(layout)
    fd = acquire(rt)
    try:
        daemon = Daemon(layout, on_status=on_status, polling=polling)
        _write_atomic(rt.pid, f"{os.getpid()}\n")

        def stop(_signum: int, _frame: Any) -> None:
            daemon.request_stop()

        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(sig, stop)
        daemon.run()
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(rt.pid)
        os.close(fd)


def _rotate(path: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        if path.stat().st_size > LOG_MAX_BYTES:
            os.replace(path, path.with_suffix(".log.1"))


def start(layout: Layout, *, wait: float = START_WAIT_S, polling: bool = False) -> dict[str, Any]:
    """Start a background daemon and return once it watches (its first reconcile may still
    run). Refuses when one already runs for this repository."""
    rt = Runtime(layout)
    if is_running(rt):
        raise _running_error(rt)
    rt.folder.mkdir(parents=True, exist_ok=True)
    _rotate(rt.log)
    argv = [sys.executable, "-m", "planning_memory.watch.daemon", str(layout.repo_root)]
    with open(rt.log, "ab") as out:
        proc = subprocess.Popen(
            [*argv, "--polling"] if polling else argv,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=layout.repo_root,
            start_new_session=True,
        )
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        code = proc.poll()
        if code is not None:
            raise _start_failed(rt, code)
        info = _read_json(rt.status)
        if info.get("pid") == proc.pid and info.get("state") not in (None, "starting"):
            return status(layout)
        time.sleep(0.05)
    return {**status(layout), "note": f"still starting after {wait:g} s"}


def _start_failed(rt: Runtime, code: int) -> PlanningMemoryError:
    lines = [ln for ln in _tail(rt.log).splitlines() if ln.strip()]
    last = lines[-1] if lines else f"exit code {code}"
    if is_running(rt):
        return _running_error(rt)
    return PlanningMemoryError(
        f"the watch daemon exited at start: {last}", path=rt.layout.relative(rt.log)
    )


def _tail(path: Path, size: int = 4096) -> str:
    try:
        with open(path, "rb") as fh:
            fh.seek(max(0, fh.seek(0, os.SEEK_END) - size))
            return fh.read().decode("utf-8", "replace")
    except OSError:
        return ""


def stop(layout: Layout, *, timeout: float = STOP_WAIT_S) -> dict[str, Any]:
    """Ask the daemon to stop (SIGTERM: it finishes its batch) and wait for it."""
    rt = Runtime(layout)
    pid = _read_pid(rt)
    if not is_running(rt) or pid is None:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(rt.pid)
        return {"running": False, "stopped": False, "pid": None}
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while is_running(rt):
        if time.monotonic() > deadline:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            time.sleep(0.2)
            return {"running": is_running(rt), "stopped": True, "pid": pid, "killed": True}
        time.sleep(0.05)
    return {"running": False, "stopped": True, "pid": pid}


def status(layout: Layout) -> dict[str, Any]:
    """What the daemon of this repository is doing (or last did)."""
    rt = Runtime(layout)
    running = is_running(rt)
    info = _read_json(rt.status)
    result: dict[str, Any] = {
        "running": running,
        "pid": _read_pid(rt) if running else None,
        "log": layout.relative(rt.log),
        **{k: v for k, v in info.items() if k not in ("pid", "started_epoch")},
    }
    if running and "started_epoch" in info:
        result["uptime_s"] = round(time.time() - float(info["started_epoch"]), 1)
    elif not running:
        result["state"] = "stopped"
        result["queue"] = 0
    return result


def scan_job(layout: Layout, paths: list[str] | None) -> dict[str, Any]:
    """One scan and the files it wrote: what the daemon's child process runs."""
    store = watch.RecordingStore(layout, watch.OwnWrites())
    config = Memory(layout.planning).config
    report = _resolve(NEEDS["entity"][0])(layout, store, config, paths=paths)
    return {
        "written": [str(p) for p in store.take_written()],
        "files_seen": getattr(report, "files_seen", 0),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }


def main(argv: list[str] | None = None) -> int:
    """``python -m planning_memory.watch.daemon ROOT [--polling]``: what ``start`` runs;
    ``--scan ROOT``: one scan of the ``{"paths": [...] | null}`` read from stdin, the files
    it wrote printed as JSON (the daemon's child)."""
    args = sys.argv[1:] if argv is None else argv
    logging.basicConfig(
        level=logging.INFO, stream=sys.stderr, format="%(asctime)s %(levelname)s %(message)s"
    )
    paths = [a for a in args if not a.startswith("--")]
    try:
        mem = Memory.open(Path(paths[0]) if paths else None)
        if "--scan" in args:
            print(json.dumps(scan_job(mem.layout, json.load(sys.stdin)["paths"])))
            return 0
        run_foreground(mem.layout, polling="--polling" in args)
    except PlanningMemoryError as exc:
        print(f"pmem watch: error: {exc.one_line()}", file=sys.stderr)
        return exc.exit_code
    return 0


if __name__ == "__main__":
    sys.exit(main())
