"""SIGKILL fuzz: writers killed at random points leave no torn file and no stuck lock.

Three kinds of kill, all real processes and real SIGKILLs:

* a forked writer saving records under the lock, killed at a random moment; every third one
  first forks a child that inherits the lock and outlives it (what a scan's pool worker did),
  so the lock is held by a process whose named holder is dead and must be taken over;
* the ``pmem`` console script (``save``, ``learn``, ``pin``) killed while it runs;
* ``pmem scan`` on a generated repository, killed while its worker pool runs: no worker may
  survive it, and a later ``pmem save`` must not wait for the lock.

After every kill: each record file is the old or the new version (never torn), no temp file
survives the next writer, and the lock is free within ``LOCK_FREE_S``.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import select
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from planning_memory.core import Layout, codec
from planning_memory.errors import LockError
from planning_memory.longterm import records
from planning_memory.store import Store

PMEM = str(Path(sys.executable).parent / "pmem")
FORK_KILLS = 300
CLI_KILLS = 12
SCAN_KILLS = 3
FIXED = 4  # records every writer rewrites
LOCK_FREE_S = 2.0
SEED = int(os.environ.get("PM_KILL_SEED", "20261201"))


def init_tree(root: Path) -> Layout:
    subprocess.run([PMEM, "init", str(root)], check=True, capture_output=True, timeout=60)
    return Layout.for_repo(root)


def record(i: int, version: int) -> dict[str, Any]:
    return {
        "anchors": [],
        "body": {"learned": "", "what": "", "where": "", "why": ""},
        "created_at": "2026-01-01T00:00:00Z",
        "deleted_at": None,
        "description": f"version {version} " + "x" * (200 * (i + 1)),
        "duplicate_count": 0,
        "established": False,
        "example": "",
        "id": f"pat_{i:03d}",
        "name": f"pattern {i}",
        "needs_review": False,
        "pinned": False,
        "revision_count": 1,
        "scope": "project",
        "source": "cli",
        "tags": [],
        "title": f"pattern {i}",
        "topic_key": None,
        "type": "pattern",
        "updated_at": "2026-01-01T00:00:00Z",
        "usage_count": version,
    }


def _writer(planning: str, start: int, started: int, orphan: bool) -> None:
    os.setpgid(0, 0)  # its own process group: the test finds an orphan it leaves by it
    layout = Layout(Path(planning))
    store = Store(layout, lock_timeout=10)
    with store.lock():
        if orphan and os.fork() == 0:  # a child that inherits the lock and outlives us
            os.close(started)
            time.sleep(60)
            os._exit(0)
        os.write(started, b"s")
        os.close(started)
        version = start
        while True:
            version += 1
            for i in range(FIXED):
                records.save(layout, store, record(i, version))


def versions(layout: Layout) -> list[int]:
    """The version of each fixed record; fails on a torn or invalid file."""
    found = []
    for i in range(FIXED):
        path = layout.long_term / "patterns" / f"pat_{i:03d}.json"
        value = codec.loads(path.read_bytes(), path=str(path))  # torn -> DecodeError
        records.check_record(value, path=str(path))
        assert value["description"].startswith(f"version {value['usage_count']} ")
        found.append(value["usage_count"])
    return found


def start_writer(planning: str, start: int, orphan: bool) -> int:
    """Fork a writer (os.fork: a multiprocessing sentinel inherited by the orphan would make
    every join wait); its pid once it holds the lock and writes."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        try:
            _writer(planning, start, write, orphan)
        finally:
            os._exit(1)
    os.close(write)
    ready, _, _ = select.select([read], [], [], 10)
    assert ready and os.read(read, 1) == b"s", "writer did not start"
    os.close(read)
    return pid


def lock_wait(layout: Layout) -> float:
    """Seconds until the lock is taken (a figure); a lock still held after ``LOCK_FREE_S``
    is stuck: ``LockError``."""
    began = time.monotonic()
    with Store(layout, lock_timeout=LOCK_FREE_S).lock():
        pass
    return time.monotonic() - began


def temp_files(layout: Layout) -> list[Path]:
    return [p for p in layout.planning.rglob("*.pm-tmp")]


def reap(pids: list[int]) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def orphans_of(pid: int) -> list[int]:
    """Children the killed writer forked, found by their parent link or process group."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if stat[0] != "Z" and int(stat[2]) == pid:  # same process group as the writer
                found.append(int(entry))
    return found


@pytest.mark.slow
def test_kill_fuzz_leaves_no_torn_file_and_no_stuck_lock(tmp_path: Path) -> None:
    layout = init_tree(tmp_path)
    store = Store(layout)
    for i in range(FIXED):
        records.save(layout, store, record(i, 1))
    rng = random.Random(SEED)
    waits: list[float] = []
    stuck = torn = left_temp = taken_over = 0
    before = versions(layout)
    began = time.monotonic()
    for round_no in range(FORK_KILLS):
        orphan = round_no % 3 == 0
        pid = start_writer(str(layout.planning), max(before), orphan)
        time.sleep(rng.uniform(0, 0.02))
        leftovers = [p for p in orphans_of(pid) if p != pid] if orphan else []
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        try:
            try:
                now = versions(layout)
            except Exception:
                torn += 1
                raise
            assert all(n >= b for n, b in zip(now, before, strict=True))
            before = now
            left_temp += bool(temp_files(layout))
            try:
                waits.append(lock_wait(layout))
            except LockError:
                stuck += 1
            taken_over += orphan and any(_alive(p) for p in leftovers)
            assert temp_files(layout) == [], f"temp file left after kill {round_no}"
        finally:
            reap(leftovers)
    elapsed = time.monotonic() - began
    cli = _cli_kills(tmp_path, layout, rng)
    assert torn == 0 and stuck == 0
    report = subprocess.run(
        [PMEM, "validate", str(tmp_path)], capture_output=True, text=True, timeout=60
    )
    assert report.returncode == 0, report.stdout[-2000:]
    print(
        f"\n{FORK_KILLS + cli} SIGKILLs (seed {SEED}; {FORK_KILLS} forked writers in "
        f"{elapsed:.1f} s, {cli} pmem processes): {torn} torn files, {stuck} stuck locks; "
        f"{taken_over} locks held by a live orphan of a dead holder were taken over; lock free "
        f"after max {max(waits) * 1000:.0f} ms; {left_temp} kills left a temp file (swept by "
        "the next writer); the tree validates"
    )


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _cli_kills(root: Path, layout: Layout, rng: random.Random) -> int:
    """Kill ``pmem`` itself mid-command; the lock must be free and the tree whole after."""
    commands = [
        ["save", "Use zod for request validation", "-t", "pattern"],
        ["learn", "always use pnpm, never npm"],
        ["save", "Do not use any", "-t", "mistake", "--correction", "use unknown"],
    ]
    for n in range(CLI_KILLS):
        proc = subprocess.Popen(
            [PMEM, "-C", str(root), *commands[n % len(commands)]],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        time.sleep(rng.uniform(0.05, 0.6))
        proc.kill()
        proc.wait(10)
        lock_wait(layout)
        versions(layout)
    return CLI_KILLS


# -- pmem session log: a message that was logged is never lost ----------------------------------
LOG_ROUNDS = 30


@pytest.mark.slow
def test_killed_session_logs_lose_no_logged_message(tmp_path: Path) -> None:
    """Each round logs one message to the end, then kills another ``pmem session log`` at a
    random moment: every message whose command succeeded is in the session afterwards, past
    the window's summaries (``--all``), and the lock is free."""
    layout = init_tree(tmp_path)
    rng = random.Random(SEED)
    run = [PMEM, "-C", str(tmp_path), "session"]
    subprocess.run([*run, "start", "--goal", "kill test"], check=True, capture_output=True)
    logged = []
    for n in range(LOG_ROUNDS):
        done = subprocess.run([*run, "log", f"kept message {n}"], capture_output=True, timeout=60)
        assert done.returncode == 0, done.stderr
        logged.append(f"kept message {n}")
        proc = subprocess.Popen(
            [*run, "log", f"killed message {n}"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        time.sleep(rng.uniform(0.02, 0.5))
        proc.kill()
        proc.wait(10)
        lock_wait(layout)
    shown = subprocess.run(
        [*run, "show", "--all", "--json"], capture_output=True, text=True, timeout=60
    )
    assert shown.returncode == 0, shown.stderr
    lost = [m for m in logged if m not in strings(json.loads(shown.stdout))]
    assert lost == []
    print(f"\n{LOG_ROUNDS} pmem session log processes killed: {len(lost)} logged messages lost")


def strings(value: Any) -> set[str]:
    """Every string inside a JSON value."""
    if isinstance(value, str):
        return {value}
    items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else []
    return set().union(*(strings(item) for item in items))


# -- pmem scan: its worker pool dies with it ---------------------------------------------------


def make_repo(root: Path, files: int = 480) -> None:
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    body = "".join(
        f"def fn_{i}(x):\n    return x + {i}\n\n\nclass C{i}:\n    def m(self):\n"
        f"        return fn_{i}(1)\n\n\n"
        for i in range(40)
    )
    for n in range(files):
        folder = root / "src" / f"pkg{n % 40}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"mod{n}.py").write_text(body)
    subprocess.run([PMEM, "init", str(root)], check=True, capture_output=True, timeout=60)


def descendants(pid: int) -> list[int]:
    kids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid and fields[0] != "Z":
                kids.append(int(entry))
    return kids


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_killed_scan_leaves_no_worker_and_no_held_lock(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    make_repo(repo)
    layout = Layout.for_repo(repo)
    rng = random.Random(SEED)
    survivors: list[int] = []
    saves = []
    for _ in range(SCAN_KILLS):
        scan = subprocess.Popen(
            [PMEM, "-C", str(repo), "scan"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        workers: list[int] = []
        deadline = time.monotonic() + 30
        while not workers and time.monotonic() < deadline and scan.poll() is None:
            time.sleep(0.02)
            workers = descendants(scan.pid)
        assert workers, "the scan started no worker pool"
        time.sleep(rng.uniform(0.05, 0.3))
        workers = sorted({*workers, *descendants(scan.pid)})
        scan.kill()
        scan.wait(10)
        gone_by = time.monotonic() + 3
        while any(_alive(w) for w in workers) and time.monotonic() < gone_by:
            time.sleep(0.05)
        alive = [w for w in workers if _alive(w)]
        survivors += alive
        reap(alive)
        began = time.monotonic()
        result = subprocess.run(
            [PMEM, "-C", str(repo), "save", "after a killed scan"],
            capture_output=True,
            text=True,
            timeout=60,
        )
        saves.append(time.monotonic() - began)
        assert result.returncode == 0, result.stderr
        lock_wait(layout)
    assert survivors == [], f"workers outlived their killed scan: {survivors}"
    print(
        f"\n{SCAN_KILLS} `pmem scan` SIGKILLs: 0 workers left (all gone within 3 s), the next "
        f"`pmem save` took at most {max(saves):.2f} s"
    )


HOLDER = """
import os, sys, time
from pathlib import Path
from planning_memory.core.layout import Layout
from planning_memory.store import Store
store = Store(Layout(Path(sys.argv[1])))
with store.lock():
    if os.fork() == 0:  # inherits the lock, like a pool worker of a scan
        time.sleep(120)
        os._exit(0)
    print("locked", flush=True)
    time.sleep(120)
"""


def test_a_lock_kept_by_the_orphan_of_a_dead_holder_is_taken_over(tmp_path: Path) -> None:
    layout = init_tree(tmp_path)
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(layout.planning)],
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "locked"
        with (
            pytest.raises(LockError, match=f"process {holder.pid}"),
            Store(layout, lock_timeout=0.3).lock(),
        ):
            pass
        holder.kill()
        holder.wait(10)
        lock_wait(layout)  # the orphan still holds the old flock: taken over
        records.save(layout, Store(layout, lock_timeout=1), record(0, 1))
    finally:
        os.killpg(holder.pid, signal.SIGKILL)
        holder.wait(10)
        if holder.stdout is not None:
            holder.stdout.close()


def _increment(planning: str, times: int) -> None:
    layout = Layout(Path(planning))
    store = Store(layout, lock_timeout=30)
    counter = layout.planning / "counter.json"
    for _ in range(times):
        with store.lock():
            value = store.read_json(counter)
            store.write_json(counter, {"n": value["n"] + 1})
    os._exit(0)


def test_writers_racing_for_a_taken_over_lock_lose_no_update(tmp_path: Path) -> None:
    """Four writers wait on a lock kept by the orphan of a dead holder; they all see it dead
    at once, one replaces it, and from then on they take turns: no update is lost."""
    layout = init_tree(tmp_path)
    Store(layout).write_json(layout.planning / "counter.json", {"n": 0})
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(layout.planning)],
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    writers: list[int] = []
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "locked"
        for _ in range(4):
            pid = os.fork()
            if pid == 0:
                try:
                    _increment(str(layout.planning), 50)
                finally:
                    os._exit(1)
            writers.append(pid)
        time.sleep(0.3)  # they are all waiting now
        holder.kill()
        holder.wait(10)
        for pid in writers:
            _, status = os.waitpid(pid, 0)
            assert os.waitstatus_to_exitcode(status) == 0
    finally:
        reap(writers)
        os.killpg(holder.pid, signal.SIGKILL)
        holder.wait(10)
        if holder.stdout is not None:
            holder.stdout.close()
    assert Store(layout).read_json(layout.planning / "counter.json") == {"n": 200}
