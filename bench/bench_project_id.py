"""What the project id costs a command (``core.project_id``): by the folder's real path alone,
from the first commit kept in the git directory, and the first time, when git finds it.

    python bench/bench_project_id.py [--commits N]

Prints microseconds per call (median of the runs) in a fresh repository of N commits."""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from planning_memory.core import legacy_id
from planning_memory.gitops.project import ROOT_CACHE, project_id


def per_call_us(call: Callable[[], object], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        call()
        times.append((time.perf_counter() - start) * 1e6)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--commits", type=int, default=200)
    args = parser.parse_args()
    env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b"}
    env |= {"GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@b"}
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "app"
        repo.mkdir()
        subprocess.run(["git", "init", "-q"], cwd=repo, check=True, env=env)
        for n in range(args.commits):
            commit = ["git", "commit", "-q", "--allow-empty", "-m", f"c{n}"]
            subprocess.run(commit, cwd=repo, env=env, check=True)
        kept = repo / ".git" / ROOT_CACHE

        def first_time() -> None:
            kept.unlink(missing_ok=True)
            project_id(repo)

        figures = {
            "real path alone (no git)": per_call_us(lambda: legacy_id(repo), 2000),
            "first commit kept in .git": per_call_us(lambda: project_id(repo), 2000),
            f"first time: git finds it ({args.commits} commits)": per_call_us(first_time, 30),
        }
    load = os.getloadavg()[0]
    print(f"project id per call, median, load {load:.2f}")
    for name, us in figures.items():
        print(f"  {name:<45} {us:9.1f} us")


if __name__ == "__main__":
    main()
