"""Benchmark: start-up time of ``pmem show``, ``pmem --help`` and a ``pmem save`` (median of
10 runs each).

Runs each command as a process on a copy of ``.planning.example/`` and reports wall and CPU
time, next to a bare ``python -c pass`` for the interpreter's own share; a save of a new
pattern each run (the learning rules, the record write, the views' re-render) on a tree this
small is mostly start-up. Every ``pmem`` command runs in its own process. Prints the figures
and writes them into docs/bench-foundation.md.

    .venv/bin/python bench/bench_startup.py [--runs N] [--no-write]
"""

from __future__ import annotations

import argparse
import itertools
import shutil
import statistics
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_validate import PMEM, machine, run_timed, write_section
from installed import as_installed

EXAMPLE = Path(__file__).resolve().parent.parent / ".planning.example"


def measure(
    cmd: list[str] | Callable[[], list[str]], cwd: Path, runs: int
) -> tuple[float, float, float]:
    """Median wall, best wall and median CPU seconds of ``cmd`` (after one warm-up run); a
    callable gives the command of each run."""
    command = cmd if callable(cmd) else lambda: cmd
    run_timed(command(), cwd)
    walls, cpus = [], []
    for _ in range(runs):
        wall, cpu, _ = run_timed(command(), cwd)
        walls.append(wall)
        cpus.append(cpu)
    return statistics.median(walls), min(walls), statistics.median(cpus)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--no-write", action="store_true", help="do not update the docs")
    args = parser.parse_args()
    as_installed()
    numbers = itertools.count()
    commands: dict[str, list[str] | Callable[[], list[str]]] = {
        "python -c pass (interpreter only)": [sys.executable, "-c", "pass"],
        "pmem --help": [PMEM, "--help"],
        "pmem show": [PMEM, "show"],
        "pmem show --json": [PMEM, "show", "--json"],
    }
    files = sum(1 for _ in EXAMPLE.rglob("*.json"))
    commands[f"pmem validate (example tree, {files} files)"] = [PMEM, "validate"]
    commands["pmem save (example tree, a new pattern)"] = lambda: [
        *(PMEM, "save", f"Start-up rule {next(numbers)}", "-t", "pattern"),
        *("--description", "Keep the command line quick to start"),
    ]
    lines = []
    with tempfile.TemporaryDirectory(prefix="pm-bench-startup-") as tmp:
        repo = Path(tmp)
        shutil.copytree(EXAMPLE, repo / ".planning")
        for label, cmd in commands.items():
            lines.append(line(label, *measure(cmd, repo, args.runs)))
    lines.append(f"{args.runs} runs each after one warm-up; machine: {machine()}")
    print("\n".join(lines))
    if not args.no_write:
        write_section("startup", "Start-up time (`bench/bench_startup.py`)", lines)


def line(label: str, median: float, best: float, cpu: float) -> str:
    return (
        f"{label:50} median {median * 1000:6.0f} ms, best {best * 1000:6.0f} ms, "
        f"CPU {cpu * 1000:6.0f} ms"
    )


if __name__ == "__main__":
    main()
