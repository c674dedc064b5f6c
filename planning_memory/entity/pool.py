"""The process pools of a scan: parsing files, and writing shards from forked workers.

Parsing shares the batches of files between this process and one worker process fewer than
it wants parsers: the workers take batches from the front, this process from the back, so it
never idles and what it parses is never pickled. Workers are started with ``fork`` when this
process runs a single thread (a daemon's threads make fork unsafe), else ``forkserver`` (or
``spawn``); they get the repository root and the source file set once, through the pool
initializer, and parse with the cyclic collector paused, as this process does. Writing many
shards uses forked workers only: they inherit the scan's state and the memory lock, so
nothing big is pickled.

Every worker dies with the process that started it (``PR_SET_PDEATHSIG`` on Linux, else a
thread that watches the parent): a killed scan leaves no worker holding the memory lock.
"""

from __future__ import annotations

import ctypes
import gc
import multiprocessing
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from typing import TypeVar

from planning_memory.entity import parsefile
from planning_memory.entity.settings import Settings

Progress = Callable[[int, int], None]
PR_SET_PDEATHSIG = 1  # linux/prctl.h
WATCH_PARENT_S = 0.5
IN_PROCESS_BATCH = 64  # files parsed in this process between two progress reports
# small batches (16 files for the standard library): when this process finds none left to
# take, a worker still holds up to three (one running, two queued) and this process waits
BATCHES_PER_PROCESS = 64
T = TypeVar("T")
R = TypeVar("R")


def can_fork() -> bool:
    return "fork" in multiprocessing.get_all_start_methods() and threading.active_count() == 1


def parse(
    jobs: list[parsefile.Job],
    settings: Settings,
    setup: tuple[str, frozenset[str]],
    progress: Progress | None,
) -> Iterator[parsefile.Parsed]:
    """The results of ``jobs``, in job order: parsed in this process when few, else shared
    between this process and ``workers - 1`` worker processes (``_shared``)."""
    total = len(jobs)
    workers = settings.workers or os.cpu_count() or 1
    if jobs:
        parsefile.prepare(*setup)
    if total < max(settings.parallel_threshold, 1) or workers < 2:
        batches: Iterator[list[parsefile.Parsed]] = map(
            parsefile.run_batch, _split(jobs, IN_PROCESS_BATCH)
        )
    else:
        batches = _shared(jobs, workers, setup)
    done = 0
    for batch in batches:
        yield from batch
        done += len(batch)
        if progress is not None:
            progress(done, total)


def _split(jobs: list[parsefile.Job], size: int) -> list[list[parsefile.Job]]:
    return [jobs[i : i + size] for i in range(0, len(jobs), size)]


def _shared(
    jobs: list[parsefile.Job], workers: int, setup: tuple[str, frozenset[str]]
) -> Iterator[list[parsefile.Parsed]]:
    """Batches of ``jobs`` parsed by ``workers - 1`` worker processes, which take them from
    the front of the queue, and by this process, which takes them from the back while it
    waits for the next batch in order: no process idles, one fewer process starts, and the
    results parsed here are never pickled. Yields the batches' results in job order."""
    batches = _split(jobs, max(16, min(256, len(jobs) // (workers * BATCHES_PER_PROCESS))))
    pool = ProcessPoolExecutor(
        max_workers=workers - 1,
        mp_context=context(),
        initializer=_worker,
        initargs=(os.getpid(), *setup),
    )
    try:
        futures = [pool.submit(parsefile.run_batch, batch) for batch in batches]
        own: dict[int, list[parsefile.Parsed]] = {}
        last = len(futures) - 1  # the last batch not yet looked at from the back
        for index, future in enumerate(futures):
            while last >= index and not future.done():
                if futures[last].cancel():  # no worker has taken it yet
                    own[last] = parsefile.run_batch(batches[last])
                last -= 1
            yield own.pop(index) if index in own else future.result()
    finally:
        pool.shutdown(cancel_futures=True)


def _worker(owner: int, root: str, sources: frozenset[str]) -> None:
    die_with_parent(owner)
    gc.disable()  # parsing makes no reference cycles: the collector would only traverse
    parsefile.prepare(root, sources)


def context() -> multiprocessing.context.BaseContext:
    if can_fork():
        return multiprocessing.get_context("fork")
    if "forkserver" in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("forkserver")
    return multiprocessing.get_context("spawn")


def forked(
    fn: Callable[[list[T]], R],
    chunks: list[list[T]],
    processes: int,
    meanwhile: Callable[[], object] | None = None,
) -> Iterator[R]:
    """``fn`` over ``chunks`` in forked workers (the caller checked ``can_fork``); once the
    workers are forked and the chunks handed out, ``meanwhile`` runs here while they work."""
    with ProcessPoolExecutor(
        max_workers=processes,
        mp_context=multiprocessing.get_context("fork"),
        initializer=die_with_parent,
        initargs=(os.getpid(),),
    ) as pool:
        results = pool.map(fn, chunks)
        if meanwhile is not None:
            meanwhile()
        yield from results


def die_with_parent(owner: int) -> None:
    """Make this worker process end when its parent does. ``owner`` is the process that made
    the pool: the parent itself (fork), or the parent of a forkserver, which exits with it."""
    if sys.platform.startswith("linux") and _set_death_signal():
        if os.getppid() != owner and not _alive(owner):  # it died before the prctl
            os._exit(1)
        return
    parent = os.getppid()
    threading.Thread(target=_watch_parent, args=(parent,), daemon=True).start()


def _set_death_signal() -> bool:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return bool(libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _watch_parent(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(WATCH_PARENT_S)
    os._exit(1)
