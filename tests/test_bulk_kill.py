"""A bulk import killed with SIGKILL mid-batch leaves no torn record file.

``Memory.bulk()`` writes record files without a per-file fsync (one sync at the end of the
batch); each write is still a temp file renamed over its target. Real processes saving
memories through the learning rules inside ``Memory.bulk()`` are killed at random moments;
after each kill every record file is whole and valid, the next writer sweeps the temp files,
the catalog still answers a save, and ``pmem validate`` passes.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import select
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from planning_memory.core import codec
from planning_memory.longterm import records
from planning_memory.memory import Memory

pytestmark = pytest.mark.slow  # real processes, long: `make test-slow`

PMEM = str(Path(sys.executable).parent / "pmem")
KILLS = 8
WORDS = [
    "cache",
    "retry",
    "index",
    "query",
    "schema",
    "token",
    "branch",
    "merge",
    "render",
    "hook",
    "props",
    "fixture",
]

_IMPORTER = textwrap.dedent(
    """
    import os, random, sys
    from planning_memory.memory import Memory

    root, seed = sys.argv[1], int(sys.argv[2])
    words = sys.argv[3].split()
    rng = random.Random(seed)
    mem = Memory(root)
    with mem.bulk():
        n = 0
        while True:
            n += 1
            kind = rng.choice(["pattern", "mistake", "learning"])
            text = " ".join(rng.sample(words, 4)) + f" case {seed} {n}"
            field = {"pattern": "description", "mistake": "correction"}.get(kind, "learned")
            mem.save(f"memory {seed} {n}", kind, **{field: text})
            if n == 3:
                os.write(1, b"s")  # saving inside the batch
    """
)


def _start(root: Path, seed: int) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen(
        [sys.executable, "-c", _IMPORTER, str(root), str(seed), " ".join(WORDS)],
        stdout=subprocess.PIPE,
    )
    assert proc.stdout is not None
    ready, _, _ = select.select([proc.stdout], [], [], 60)
    assert ready and proc.stdout.read(1) == b"s", "the importer did not start"
    return proc


def _check_every_record(root: Path) -> int:
    """How many record files there are; fails on a torn or invalid one."""
    layout = Memory(root).layout
    count = 0
    for path in sorted(layout.long_term.rglob("*.json")):
        value = codec.loads(path.read_bytes(), path=str(path))  # torn -> DecodeError
        records.check_record(value, path=str(path))
        assert value["id"] == path.stem
        count += 1
    return count


def _check_catalog(root: Path) -> int:
    """The catalog's rows of every folder whose stamp it holds as fresh match the files on
    disk (a batch's uncommitted rows and stamps are lost together); how many were fresh."""
    layout = Memory(root).layout
    with contextlib.closing(sqlite3.connect(layout.contextual / "longterm.sqlite3")) as db:
        stamps = dict(db.execute("SELECT key, value FROM meta WHERE key LIKE 'stamp:%'"))
        fresh = 0
        for key, stamp in stamps.items():
            folder = key.removeprefix("stamp:")
            st = os.stat(layout.long_term / folder)
            if stamp != f"{st.st_ctime_ns} {st.st_ino}":
                continue  # stale: the next lookup reads the folder again
            fresh += 1
            rows = db.execute("SELECT file, ctime, size FROM entries WHERE folder = ?", (folder,))
            # a stamp too recent to trust is kept negated (read again once it can be trusted)
            catalogued = {file: (abs(ctime), size) for file, ctime, size in rows}
            on_disk = {}
            for path in (layout.long_term / folder).glob("*.json"):
                st = path.stat()
                on_disk[f"{folder}/{path.name}"] = (st.st_ctime_ns, st.st_size)
            assert catalogued == on_disk, f"{folder}: the catalog holds it fresh, but is not"
    return fresh


def test_a_killed_bulk_import_leaves_no_torn_record(tmp_path: Path) -> None:
    Memory.init(tmp_path)
    config = tmp_path / ".planning" / "memory-config.json"
    value = json.loads(config.read_text())
    value["memory"]["longTerm"].update(maxPatterns=15, maxMistakes=10)  # archiving rewrites
    config.write_text(json.dumps(value))
    rng = random.Random(20261201)
    counts = []
    for seed in range(KILLS):
        proc = _start(tmp_path, seed)
        time.sleep(rng.uniform(0.05, 0.6))
        os.kill(proc.pid, signal.SIGKILL)
        assert proc.wait(10) == -signal.SIGKILL
        counts.append(_check_every_record(tmp_path))
        mem = Memory(tmp_path)
        outcome = mem.save(f"after kill {seed}", "pattern", description=f"kill {seed} retry")
        assert outcome.action in ("created", "reinforced")
        assert mem.get(outcome.record["id"])["updated_at"] == outcome.record["updated_at"]
        assert _check_catalog(tmp_path) >= 1  # the folder of the save at least
        temps = list((tmp_path / ".planning").rglob("*.pm-tmp"))
        assert temps == [], f"temp files left after kill {seed}: {temps}"
    assert counts == sorted(counts) and counts[-1] > KILLS * 3  # every kill came mid-import
    report = subprocess.run(
        [PMEM, "validate", str(tmp_path)], capture_output=True, text=True, timeout=120
    )
    assert report.returncode == 0, report.stdout[-2000:]
