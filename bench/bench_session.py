"""Session benchmarks: recording a message and reading the window at 10k messages per session.

Two regimes, because a session file's size decides what a recorded message costs (every
append re-reads and rewrites the live file under the lock):

- backlog: nothing has summarised the session, so all 10k messages are still in the live
  ``messages`` list (no daemon, no ``pmem session summarize``);
- drained: the summary queue is drained, so summarised messages older than the window moved
  to archive chunks and the live list stays near ``maxConversationLength`` (50).

Also measured: the catch-up drain that turns the first regime into the second (built-in
extractive summariser), an append followed by a drain (what a daemon does per message), a
window larger than the live list (reads archive chunks), the full history, and 10 processes
appending 100 messages each into one session.

Run: ``.venv/bin/python bench/bench_session.py [--messages 10000] [--markdown out.md]``.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import random
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from planning_memory.core.ids import new_id
from planning_memory.core.layout import Layout
from planning_memory.core.model import timestamp
from planning_memory.sessions import Appended, ExtractiveSummarizer, Sessions
from planning_memory.store import Store

T0 = datetime(2026, 2, 1, tzinfo=UTC)
SENTENCES = [
    "Can you look at the login form again?",
    "Sure, I am reading src/app/login/page.tsx now.",
    "The tests fail with a timeout in the auth callback.",
    "I changed the handler to await the session before redirecting.",
    "That fixed it, thanks.",
    "Let's also check the middleware.",
    "The middleware only matches /dashboard routes.",
    "Here is the diff for review.",
    "Looks good to me.",
    "What about the error message when the password is wrong?",
    "I will add a toast with the message from the API.",
    "Ok, go ahead.",
    "Running npm test now.",
    "All 42 tests pass.",
    "I prefer small commits with one change each.",
    "We decided to use NextAuth with the Prisma adapter.",
    "The server runs on 10.0.0.12 with Docker Compose.",
    "Next we need to add rate limiting to the login route.",
]
SAMPLE_TEXT = " ".join(SENTENCES[:3])


def text(rng: random.Random) -> str:
    """A message of 1-4 sentences; about one sentence in six is a fact, a decision or a
    preference the extractive summariser keeps."""
    return " ".join(rng.choice(SENTENCES) for _ in range(rng.randint(1, 4)))


def sessions_at(root: Path, clock: Callable[[], datetime], lock_timeout: float = 30.0) -> Sessions:
    layout = Layout.for_repo(root)
    return Sessions(layout, Store(layout, lock_timeout=lock_timeout), clock=clock)


def build_backlog(sessions: Sessions, n: int, rng: random.Random) -> str:
    """A session with ``n`` live messages, written once (setting up by appending one at a
    time would take the very time this measures, n times over)."""
    session = sessions.start(goal="bench")
    for i in range(n):
        at = T0 + timedelta(seconds=i)
        session["messages"].append(
            {
                "id": new_id("msg", int(at.timestamp() * 1000)),
                "role": "user" if i % 2 == 0 else "assistant",
                "content": text(rng),
                "at": timestamp(at),
                "tool_results": [],
            }
        )
    sessions.store.write_json(sessions.path(session["id"]), session)
    return str(session["id"])


def timed(fn: Callable[[], Any], repeat: int) -> list[float]:
    """Milliseconds per call, ``repeat`` calls."""
    out = []
    for _ in range(repeat):
        began = time.perf_counter()
        fn()
        out.append((time.perf_counter() - began) * 1000)
    return out


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


class Bench:
    def __init__(self, n: int) -> None:
        self.n = n
        self.rows: list[tuple[str, str, str]] = []
        self.rng = random.Random(7)
        self.tick = 0

    def now(self) -> datetime:
        self.tick += 1
        return T0 + timedelta(days=1, seconds=self.tick)

    def row(self, what: str, values: list[float], note: str = "") -> None:
        if len(values) == 1:
            figure = f"{values[0]:.1f} ms"
        else:
            figure = f"p50 {pct(values, 0.5):.2f} ms, p95 {pct(values, 0.95):.2f} ms"
        self.rows.append((what, figure, note))
        print(f"{what:58} {figure:34} {note}", flush=True)

    def append(self, sessions: Sessions, sid: str) -> Appended:
        return sessions.append(sid, "user", text(self.rng))

    def run(self, root: Path) -> None:
        sessions = sessions_at(root, self.now)
        sessions.summarizer = ExtractiveSummarizer()
        sid = build_backlog(sessions, self.n, self.rng)
        size = sessions.path(sid).stat().st_size
        note = f"live file {size / 1e6:.1f} MB"
        self.row(
            f"backlog: record a message ({self.n:,} live)",
            timed(lambda: self.append(sessions, sid), 20),
            note,
        )
        self.row(
            f"backlog: read the window of 15 ({self.n:,} live)",
            timed(lambda: sessions.window(sid, 15), 20),
            note,
        )
        self.row(
            f"backlog: get + schema check ({self.n:,} live)",
            timed(lambda: sessions.get(sid), 3),
            note,
        )
        [catch_up] = timed(sessions.drain, 1)
        session = sessions.get(sid)
        live = len(session["messages"])
        self.row(
            f"catch-up drain of {self.n:,} messages (extractive)",
            [catch_up],
            f"{session['archived_count']:,} archived, {live} live",
        )
        size = sessions.path(sid).stat().st_size
        note = f"live file {size / 1e3:.0f} kB"
        self.row(
            f"drained: record a message ({self.n:,} in session)",
            timed(lambda: self.append(sessions, sid), 200),
            note,
        )
        self.row(
            "drained: read the window of 15",
            timed(lambda: sessions.window(sid, 15), 200),
            note,
        )
        self.row(
            "drained: read a window of 200 (reads archive chunks)",
            timed(lambda: sessions.window(sid, 200), 50),
        )
        self.row(
            f"drained: full history ({self.n:,} messages)",
            timed(lambda: sessions.history(sid), 5),
        )

        def append_and_drain() -> None:
            self.append(sessions, sid)
            sessions.drain()

        self.row("drained: record + drain (a daemon keeping up)", timed(append_and_drain, 100))

        def append_and_drain_10() -> None:
            self.append(sessions, sid)
            sessions.drain(min_batch=10)

        self.row("drained: record + drain with min_batch=10", timed(append_and_drain_10, 100))
        chunks = len(sessions.chunk_paths(sid))
        self.row(
            "drained: temporal context",
            timed(lambda: sessions.temporal(sid), 50),
            f"{chunks} archive chunks",
        )


def _utc_now() -> datetime:
    return datetime.now(UTC)


def _writer(root: str, sid: str, worker: int, count: int, go: Any, waits: Any) -> None:
    sessions = sessions_at(Path(root), _utc_now, lock_timeout=600)
    go.wait()
    worst = 0.0
    for i in range(count):
        began = time.perf_counter()
        sessions.append(sid, "user", f"w{worker}-{i} {SAMPLE_TEXT}")
        worst = max(worst, time.perf_counter() - began)
    waits.put(worst)


def parallel(root: Path, workers: int, count: int) -> tuple[float, int, float]:
    """Seconds for ``workers`` processes to append ``count`` messages each, the messages
    kept, and the longest single append (mostly waiting for the lock)."""
    sessions = sessions_at(root, lambda: T0)
    sid = sessions.start()["id"]
    ctx = multiprocessing.get_context("fork" if sys.platform == "linux" else "spawn")
    go, waits = ctx.Event(), ctx.Queue()
    procs = [
        ctx.Process(target=_writer, args=(str(root), sid, w, count, go, waits))
        for w in range(workers)
    ]
    for p in procs:
        p.start()
    began = time.perf_counter()
    go.set()
    worst = max(waits.get() for _ in procs)
    for p in procs:
        p.join()
    took = time.perf_counter() - began
    return took, len(sessions.history(sid)), worst


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=10_000)
    parser.add_argument("--markdown", type=Path, help="also write the table to this file")
    args = parser.parse_args()
    bench = Bench(args.messages)
    print(f"cpus {os.cpu_count()}, load average before {os.getloadavg()[0]:.1f}", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        bench.run(Path(tmp) / "a")
        took, kept, worst = parallel(Path(tmp) / "b", 10, 100)
        bench.row(
            "10 processes x 100 appends, one session, no drain",
            [took * 1000],
            f"{kept} of 1000 kept, {1000 / took:.0f} appends/s, slowest append {worst:.1f} s",
        )
    load = os.getloadavg()[0]
    print(f"load average after {load:.1f}")
    if args.markdown:
        lines = [f"cpus {os.cpu_count()}, load average after the run {load:.1f}", ""]
        lines += ["| what | figure | note |", "| --- | --- | --- |"]
        lines += [f"| {w} | {f} | {n} |" for w, f, n in bench.rows]
        args.markdown.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
