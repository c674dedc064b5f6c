"""Long work off the request: a job runs in its own thread while the page shows its progress.

Reading 10k records, building the search index on a first search, reading a 100k-file code
map for its reverse look-ups: each can take seconds, and no request should wait that long. A
page asks ``Jobs.run`` for a job's result; the job starts (once per key), the request waits at
most ``WAIT_S`` for it, and when it is not done the page shows a progress line (``line``)
instead of the result. The page's script asks ``/api/stamp`` for the running jobs' progress
(and shows it in that line); when the job is no longer running, the page fetches itself
again, this time with the result.

Jobs of one ``lane`` run one at a time (the search index is built by one of them, never by
two at once); a job waiting for its lane says so.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from planning_memory.viewer.html import Html, tag

WAIT_S = 0.1  # how long a request waits for a job before it shows the progress line
KEPT = 64  # finished jobs kept (their results answer the page that started them)


class Job:
    """One piece of long work: what it is doing (``stage``, ``done`` of ``total``) and its
    result or error once ``finished``."""

    def __init__(self, key: str, label: str, lane: str) -> None:
        self.key, self.label, self.lane = key, label, lane
        self.id = hashlib.blake2b(key.encode(), digest_size=6).hexdigest()
        self.stage = "waiting to start"
        self.done, self.total = 0, 0
        self.started = time.monotonic()
        self.ended: float | None = None
        self.result: Any = None
        self.error: Exception | None = None
        self._event = threading.Event()

    @property
    def finished(self) -> bool:
        return self._event.is_set()

    def wait(self, timeout: float) -> bool:
        return self._event.wait(timeout)

    def step(self, stage: str, done: int = 0, total: int = 0) -> None:
        """Say what the job does now (``done`` of ``total`` when it can count)."""
        self.stage, self.done, self.total = stage, done, total

    def text(self) -> str:
        """The progress line: ``label: stage, done of total (elapsed)``."""
        count = f", {self.done:,} of {self.total:,}" if self.total else ""
        elapsed = (self.ended or time.monotonic()) - self.started
        return f"{self.label}: {self.stage}{count} ({elapsed:.0f} s)"

    def value(self) -> Any:
        """The result, or the job's error raised again."""
        if self.error is not None:
            raise self.error
        return self.result


class Pending(Exception):  # not an error: the answer is on its way
    """A page's data is still being worked out: the page shows ``job``'s progress line."""

    def __init__(self, job: Job) -> None:
        super().__init__(job.text())
        self.job = job


class Jobs:
    """The jobs of one server."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._jobs: OrderedDict[str, Job] = OrderedDict()
        self._lanes: dict[str, threading.Lock] = {}
        self._kept: dict[str, tuple[float, int, str]] = {}  # name -> (when, rounds, version)
        self._request = threading.local()  # the running request's deadline, per thread

    def start(self, key: str, label: str, work: Callable[[Job], Any], *, lane: str = "") -> Job:
        """The job of ``key``: the running or finished one, or a new one started now."""
        with self._lock:
            job = self._jobs.get(key)
            if job is not None:
                self._jobs.move_to_end(key)
                return job
            job = self._jobs[key] = Job(key, label, lane)
            lock = self._lanes.setdefault(lane or key, threading.Lock())
            self._prune()
        thread = threading.Thread(
            target=self._run, args=(job, work, lock), name=f"pmem-ui-{job.id}", daemon=True
        )
        thread.start()
        return job

    def run(
        self,
        key: str,
        label: str,
        work: Callable[[Job], Any],
        *,
        lane: str = "",
        wait: float | None = None,
    ) -> Any:
        """``work``'s result when it is ready within ``wait`` seconds (by default what is left
        of the request's ``WAIT_S``: see ``begin``), else ``Pending``."""
        job = self.start(key, label, work, lane=lane)
        if wait is None:
            deadline = getattr(self._request, "deadline", None)
            wait = WAIT_S if deadline is None else max(0.0, deadline - time.monotonic())
        if not job.wait(wait):
            raise Pending(job)
        return job.value()

    def begin(self) -> None:
        """A request starts on this thread: all it waits for jobs adds up to ``WAIT_S``."""
        self._request.deadline = time.monotonic() + WAIT_S
        self._request.stale = False

    def stale(self) -> bool:
        """Whether this thread's request answered with an older result while a newer one is
        worked out (its page then asks again soon: see ``layout.document``)."""
        return bool(getattr(self._request, "stale", False))

    def older(self, prefix: str, waiting: Pending) -> Any:
        """The newest result of a job of ``prefix`` while ``waiting`` works out a newer one
        (the request counts as stale), or ``waiting`` raised again when there is none."""
        before = self.latest(prefix)
        if before is None:
            raise waiting
        self._request.stale = True
        return before.value()

    def _prune(self) -> None:
        """Forget the oldest finished jobs past ``KEPT``, but never the newest of a kind
        (the part of its key before the first ``:``: what ``kept`` answers with)."""
        newest: dict[str, Job] = {}
        for job in self._jobs.values():
            kind = job.key.split(":", 1)[0]
            if job.finished and (job.ended or 0) >= (newest.get(kind, job).ended or 0):
                newest[kind] = job
        keep = {j.key for j in newest.values()}
        spare = [k for k, j in self._jobs.items() if j.finished and k not in keep]
        for old in spare[: max(0, len(self._jobs) - KEPT)]:
            del self._jobs[old]

    def kept(
        self,
        name: str,
        label: str,
        work: Callable[[Job], Any],
        *,
        every: float,
        version: str = "",
        lane: str = "",
    ) -> Any:
        """``work``'s latest result, worked out again in the background when ``version``
        changed or ``every`` seconds passed since it last was; ``Pending`` only while no result
        was ever worked out (afterwards a page answers with the one it has meanwhile)."""
        now = time.monotonic()
        with self._lock:
            since, rounds, seen = self._kept.get(name, (now, 0, version))
            due = rounds == 0 or seen != version or now - since >= every
            if due:
                rounds += 1
                self._kept[name] = (now, rounds, version)
        latest = self.latest(f"{name}:")
        if latest is not None and not due:
            return latest.value()
        try:
            return self.run(f"{name}:{rounds}", label, work, lane=lane or name)
        except Pending as waiting:
            return self.older(f"{name}:", waiting)

    def latest(self, prefix: str) -> Job | None:
        """The newest finished job whose key starts with ``prefix`` that did not fail."""
        with self._lock:
            done = [j for k, j in self._jobs.items() if k.startswith(prefix) and j.finished]
        ok = [j for j in done if j.error is None]
        return max(ok, key=lambda j: j.ended or 0) if ok else None

    def running(self) -> dict[str, str]:
        """The progress line of each job not finished, by its id."""
        with self._lock:
            return {j.id: j.text() for j in self._jobs.values() if not j.finished}

    def _run(self, job: Job, work: Callable[[Job], Any], lane: threading.Lock) -> None:
        if not lane.acquire(blocking=False):
            job.step("waiting for the work before it")
            lane.acquire()
        try:
            job.step("started")
            job.result = work(job)
        except Exception as exc:  # handed to the page that asks for the result
            job.error = exc
        finally:
            lane.release()
            job.ended = time.monotonic()
            job._event.set()


def line(job: Job) -> Html:
    """The progress line a page shows while ``job`` runs (its script keeps it current)."""
    return tag(
        "p",
        job.text(),
        class_="progress",
        role="status",
        aria_live="polite",
        data_job=job.id,
    )
