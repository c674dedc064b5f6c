"""Reliability of the store with real processes: parallel writers, kill -9, a dead lock holder.

Each test prints the figures it measured (run with ``-s`` to see them).
"""

from __future__ import annotations

import multiprocessing
import os
import random
import signal
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from planning_memory.core import codec, ids
from planning_memory.core.layout import Layout
from planning_memory.core.model import Record, new_long_term
from planning_memory.errors import LockError
from planning_memory.longterm import records
from planning_memory.store import TEMP_SUFFIX, Store
from planning_memory.validate import validate_tree

pytestmark = pytest.mark.slow  # real processes, long: `make test-slow`

PMEM = str(Path(sys.executable).parent / "pmem")
NOW = datetime(2024, 1, 20, 15, 0, 0, tzinfo=UTC)
WRITERS = 8
PER_WRITER = 250
KILLS = 100
FIXED = 6  # records the killed writer keeps rewriting
BIG = "x" * 20_000  # makes each write long enough to be caught half-way


def init_tree(root: Path) -> Layout:
    from planning_memory.memory import Memory

    return Memory.init(root).layout


def temp_files(layout: Layout) -> list[Path]:
    return sorted(layout.planning.rglob(f"*{TEMP_SUFFIX}"))


# -- 8 writer processes ----------------------------------------------------------------------


def _writer(planning: str, index: int, barrier: Any, out: Any) -> None:
    layout = Layout(Path(planning))
    store = Store(layout, lock_timeout=60)
    kinds = ("pattern", "mistake", "decision", "bugfix", "learning")
    prefix = {"pattern": "pat", "mistake": "mis"}
    barrier.wait(60)
    written = []
    for n in range(PER_WRITER):
        kind = kinds[(index + n) % len(kinds)]
        record_id = ids.new_id(prefix.get(kind, "lrn"))
        record = new_long_term(
            kind,
            record_id,
            NOW,
            title=f"writer {index} record {n}",
            tags=[f"writer-{index}", kind],
            body={"what": f"written by process {os.getpid()}", "why": "", "where": ""},
        )
        assert records.save(layout, store, record) is True
        written.append(record_id)
    out.put((index, written))


def test_eight_writer_processes_lose_nothing(tmp_path: Path) -> None:
    layout = init_tree(tmp_path)
    ctx = multiprocessing.get_context("fork")  # separate processes; fork skips 8 imports
    barrier, out = ctx.Barrier(WRITERS), ctx.Queue()
    procs = [
        ctx.Process(target=_writer, args=(str(layout.planning), i, barrier, out))
        for i in range(WRITERS)
    ]
    for proc in procs:
        proc.start()
    results = dict(out.get(timeout=120) for _ in procs)
    start_join = time.monotonic()
    for proc in procs:
        proc.join(60)
        assert proc.exitcode == 0
    written = [rid for ids_ in results.values() for rid in ids_]
    assert len(written) == WRITERS * PER_WRITER
    assert len(set(written)) == len(written), "duplicate id across processes"

    files = sorted(layout.long_term.rglob("*.json"))
    on_disk = [p.stem for p in files]
    assert len(on_disk) == WRITERS * PER_WRITER
    assert len(set(on_disk)) == len(on_disk)
    assert set(on_disk) == set(written)
    assert temp_files(layout) == []

    started = time.monotonic()
    result = subprocess.run(
        [PMEM, "validate", str(tmp_path)], capture_output=True, text=True, timeout=120
    )
    took = time.monotonic() - started
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr
    assert result.stdout.strip() == f"{WRITERS * PER_WRITER + 1} files checked, 0 problems"
    print(
        f"\n{WRITERS} writers x {PER_WRITER}: {len(on_disk)} files, 0 duplicates, "
        f"`pmem validate` {took:.2f} s (join {time.monotonic() - start_join:.2f} s)"
    )


# -- kill -9 at random points ----------------------------------------------------------------


def fixed_record(i: int, version: int) -> Record:
    return new_long_term(
        "pattern",
        f"pat_fixed{i}",
        NOW,
        title=f"fixed {i} v{version}",
        usage_count=version,
        body={"what": BIG, "why": f"version {version}", "where": "", "learned": ""},
    )


def created_record(round_no: int, n: int) -> Record:
    return new_long_term(
        "pattern",
        f"pat_r{round_no}c{n}",
        NOW,
        title=f"created {round_no} {n}",
        body={"what": BIG, "why": "", "where": "", "learned": ""},
    )


def expected_bytes(value: Record) -> bytes:
    """The bytes the writer would have written for the record with ``value``'s title."""
    words = value["title"].split()
    if words[0] == "fixed":
        return codec.dump_bytes(fixed_record(int(words[1]), int(words[2][1:])))
    return codec.dump_bytes(created_record(int(words[1]), int(words[2])))


def version_of(layout: Layout, i: int) -> int:
    path = layout.record_path("pattern", f"pat_fixed{i}")
    return int(codec.loads(path.read_bytes())["title"].rsplit("v", 1)[1])


def _churn(planning: str, round_no: int, started: Any) -> None:
    """Rewrite the fixed records and create new ones, forever (until killed)."""
    layout = Layout(Path(planning))
    store = Store(layout, lock_timeout=10)
    versions = [version_of(layout, i) for i in range(FIXED)]
    n = rewrites = 0
    while True:
        if n % 3 == 2:
            records.save(layout, store, created_record(round_no, n))
        else:
            i = (round_no + rewrites) % FIXED
            versions[i] += 1
            rewrites += 1
            records.save(layout, store, fixed_record(i, versions[i]))
        n += 1
        if n == 1:
            started.set()


def check_every_file_is_old_or_new(layout: Layout, before: list[int]) -> list[int]:
    """Every record file decodes and is byte for byte one version the writer wrote; the fixed
    records never go back. Returns the fixed records' versions."""
    for path in Store(layout).list_json(layout.record_dir("pattern")):
        data = path.read_bytes()
        value = codec.loads(data, path=str(path))  # a torn file fails here
        assert data == expected_bytes(value), f"{path.name} is a mix of versions"
        assert value["id"] == path.stem
    now = [version_of(layout, i) for i in range(FIXED)]
    assert all(a >= b for a, b in zip(now, before, strict=True)), (before, now)
    return now


@pytest.mark.slow
def test_writer_killed_at_random_points_leaves_no_torn_file(tmp_path: Path) -> None:
    layout = init_tree(tmp_path)
    store = Store(layout)
    for i in range(FIXED):
        records.save(layout, store, fixed_record(i, 1))
    seed = int(os.environ.get("PM_KILL_SEED", "20240120"))
    rng = random.Random(seed)
    ctx = multiprocessing.get_context("fork")
    versions = [1] * FIXED
    left_temp = 0
    started_at = time.monotonic()
    for round_no in range(KILLS):
        started = ctx.Event()
        child = ctx.Process(target=_churn, args=(str(layout.planning), round_no, started))
        child.start()
        assert started.wait(10), "writer did not start"
        time.sleep(rng.uniform(0, 0.025))
        assert child.pid is not None
        os.kill(child.pid, signal.SIGKILL)
        child.join(10)
        assert child.exitcode == -signal.SIGKILL

        versions = check_every_file_is_old_or_new(layout, versions)
        left_temp += bool(temp_files(layout))
        with Store(layout, lock_timeout=2).lock():  # the next start sweeps leftovers
            pass
        assert temp_files(layout) == [], f"temp file left after kill {round_no}"
    elapsed = time.monotonic() - started_at

    report = validate_tree(layout)
    assert report.ok, [f.line() for f in report.findings[:5]]
    result = subprocess.run(
        [PMEM, "validate", str(tmp_path)], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stdout[-2000:]
    print(
        f"\n{KILLS} SIGKILLs (seed {seed}) in {elapsed:.1f} s: 0 torn files, 0 mixed versions, "
        f"{left_temp} kills left a temp file (all swept on the next start), "
        f"{report.files} files valid; fixed records reached v{min(versions)}..v{max(versions)}"
    )


# -- a killed lock holder --------------------------------------------------------------------

HOLDER = """
import sys, time
from pathlib import Path
from planning_memory.core.layout import Layout
from planning_memory.store import Store
store = Store(Layout(Path(sys.argv[1])))
with store.lock():
    print("locked", flush=True)
    time.sleep(120)
"""


def test_lock_is_free_within_a_second_after_its_holder_is_killed(tmp_path: Path) -> None:
    layout = init_tree(tmp_path)
    waits = []
    for _ in range(5):
        holder = subprocess.Popen(
            [sys.executable, "-c", HOLDER, str(layout.planning)],
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert holder.stdout is not None
            assert holder.stdout.readline().strip() == "locked"
            with pytest.raises(LockError), Store(layout, lock_timeout=0.1).lock():
                pass
            killed = time.monotonic()
            holder.send_signal(signal.SIGKILL)
            with Store(layout, lock_timeout=5).lock():
                waits.append(time.monotonic() - killed)
        finally:
            holder.kill()
            holder.wait(10)
            if holder.stdout is not None:
                holder.stdout.close()
    print(
        f"\nlock free after SIGKILL of its holder: median {statistics.median(waits) * 1000:.1f} "
        f"ms, max {max(waits) * 1000:.1f} ms over {len(waits)} kills"
    )
