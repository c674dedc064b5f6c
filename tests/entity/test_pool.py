"""The parse pool: this process parses a share beside its worker processes, results in order,
workers with the cyclic collector paused."""

from __future__ import annotations

import gc
import multiprocessing
import os
from pathlib import Path

import pytest

from planning_memory.entity import parsefile, pool
from planning_memory.entity.settings import Settings


def jobs_for(root: Path, count: int) -> list[parsefile.Job]:
    jobs: list[parsefile.Job] = []
    for i in range(count):
        name = f"m{i:03d}.py"
        (root / name).write_text(f"def f{i}(x):\n    return g(x) + {i}\n")
        jobs.append(
            {
                "path": name,
                "location": str(root / name),
                "language": "python",
                "git_hash": None,
                "known": None,
                "max_bytes": 1_000_000,
            }
        )
    return jobs


def test_this_process_parses_beside_one_worker_fewer_and_none_collects(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if "fork" not in multiprocessing.get_all_start_methods():  # Windows
        pytest.skip("the spy reaches the workers only through fork, which this platform lacks")
    assert pool.can_fork()  # one thread here: the pool forks, and its workers inherit the spy
    jobs = jobs_for(tmp_path, 400)
    log = tmp_path / "pids.log"
    real = parsefile.run

    def spy(job: parsefile.Job) -> parsefile.Parsed:
        with open(log, "a") as fh:
            fh.write(f"{os.getpid()} {gc.isenabled()}\n")
        return real(job)

    monkeypatch.setattr(parsefile, "run", spy)  # forked workers inherit it
    setup = (str(tmp_path), frozenset(job["path"] for job in jobs))
    settings = Settings(workers=2, parallel_threshold=1)
    progress: list[int] = []
    results = list(pool.parse(jobs, settings, setup, lambda done, _total: progress.append(done)))
    assert [r["path"] for r in results] == [job["path"] for job in jobs]
    assert all(r["status"] == "ok" for r in results)
    assert progress[-1] == 400 and progress == sorted(progress)
    seen = {tuple(line.split()) for line in log.read_text().splitlines()}
    pids = {pid for pid, _enabled in seen}
    assert len(pids) == 2 and str(os.getpid()) in pids  # this process and one worker
    assert {enabled for pid, enabled in seen if pid != str(os.getpid())} == {"False"}
