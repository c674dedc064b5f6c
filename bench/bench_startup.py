"""Benchmark: start-up time of ``pmem show``, ``pmem --help`` and a ``pmem save`` (median of
10 runs each), and ``pmem search`` / ``pmem save`` at 10k records as multiples of
``python -c pass``, with where their imports go.

Runs each command as a process on a copy of ``.planning.example/`` and reports wall and CPU
time, next to a bare ``python -c pass`` for the interpreter's own share; a save of a new
pattern each run (the learning rules, the record write, the views' re-render) on a tree this
small is mostly start-up. Every ``pmem`` command runs in its own process.

Then, on a tree of ``--records`` records (indexed first), ``pmem search QUERY --json`` and
``pmem save`` of a new pattern take turns with ``python -c pass``: their p50 wall and CPU as
multiples of it (the targets: search <= 6x, save <= 8x), and one run of each under an import
profile: every import timed, those made through ``importlib.import_module`` and lazy
``__getattr__`` too (``-X importtime`` leaves those out), totalled by origin (click, the
package, other libraries, the standard library) and the dearest modules by their own time.
Prints the figures and writes them into docs/bench-foundation.md.

    .venv/bin/python bench/bench_startup.py [--runs N] [--records N] [--no-write]
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_validate import PMEM, WORDS, build_tree, machine, run_timed, write_section
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
    parser.add_argument("--records", type=int, default=10_000, help="0: skip the large tree")
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
    if args.records:
        large = at_scale(args.records, max(args.runs, 10))
        if not args.no_write:
            title = f"`pmem search` and `pmem save` at {args.records:,} records"
            write_section("startup-scale", f"{title} (`bench/bench_startup.py`)", large)


def line(label: str, median: float, best: float, cpu: float) -> str:
    return (
        f"{label:50} median {median * 1000:6.0f} ms, best {best * 1000:6.0f} ms, "
        f"CPU {cpu * 1000:6.0f} ms"
    )


TARGETS = {"search": 6.0, "save": 8.0}  # times python -c pass, p50 wall


def at_scale(records: int, runs: int) -> list[str]:
    """``pmem search`` and ``pmem save`` on a tree of ``records`` records, in turns with
    ``python -c pass``: p50 wall and CPU, as multiples of it; then their import profiles."""
    rng = random.Random(11)
    numbers = itertools.count()
    with tempfile.TemporaryDirectory(prefix="pm-bench-startup-") as tmp:
        root = Path(tmp)
        build_tree(root, records)
        run_timed([PMEM, "-C", tmp, "reindex", "--no-code"])
        commands: dict[str, Callable[[], list[str]]] = {
            "python -c pass": lambda: [sys.executable, "-c", "pass"],
            "search": lambda: [PMEM, "-C", tmp, "search", " ".join(rng.sample(WORDS, 3)), "--json"],
            "save": lambda: [
                *(PMEM, "-C", tmp, "save", f"Scale rule {next(numbers)} {rng.choice(WORDS)}"),
                *("-t", "pattern", "--description", "Keep the command line quick to start"),
            ],
        }
        walls: dict[str, list[float]] = {name: [] for name in commands}
        cpus: dict[str, list[float]] = {name: [] for name in commands}
        for command in commands.values():  # warm the file cache (and the index)
            run_timed(command())
        for _ in range(runs):  # taking turns: the machine's speed drifts
            for name, command in commands.items():
                wall, cpu, _ = run_timed(command())
                walls[name].append(wall)
                cpus[name].append(cpu)
        profiles = {name: import_profile(commands[name]()) for name in TARGETS}
    p50 = {name: statistics.median(values) for name, values in walls.items()}
    cpu = {name: statistics.median(values) for name, values in cpus.items()}
    base, base_cpu = p50["python -c pass"], cpu["python -c pass"]
    vectors = "off (PMEM_EMBEDDINGS=0)" if os.environ.get("PMEM_EMBEDDINGS") == "0" else "on"
    lines = [
        f"records: {records:,}; {runs} runs each in turns, a fresh process per run; "
        f"embeddings {vectors}"
    ]
    lines.append(f"{'python -c pass':16} p50 {base * 1000:6.1f} ms, CPU {base_cpu * 1000:6.1f} ms")
    for name, target in TARGETS.items():
        times = p50[name] / base
        verdict = "meets" if times <= target else "MISSES"
        lines.append(
            f"{'pmem ' + name:16} p50 {p50[name] * 1000:6.1f} ms = {times:4.1f}x "
            f"(target <= {target:g}x: {verdict}), CPU {cpu[name] * 1000:6.1f} ms = "
            f"{cpu[name] / base_cpu:4.1f}x"
        )
    for name in TARGETS:
        lines += profile_lines(f"pmem {name}", profiles[name])
    lines.append(f"machine: {machine()}")
    print("\n".join(lines))
    return lines


# Run in the measured process: every import timed by wrapping importlib's ``_find_and_load``,
# which both the ``import`` statement and ``importlib.import_module`` go through.
PROFILER = """
import json, sys, time
start = time.perf_counter()
import importlib._bootstrap as bootstrap
found, stack, rows = bootstrap._find_and_load, [], []
def timed(name, import_):
    began = time.perf_counter()
    stack.append(0.0)
    try:
        return found(name, import_)
    finally:
        spent = time.perf_counter() - began
        inner = stack.pop()
        if stack:
            stack[-1] += spent
        rows.append((name, spent - inner))
bootstrap._find_and_load = timed
out, sys.argv = sys.argv[1], ["pmem", *sys.argv[2:]]
def report():
    with open(out, "w") as file:
        json.dump({"rows": rows, "total": time.perf_counter() - start}, file)
import atexit
atexit.register(report)
from planning_memory.cli import main
main()
"""


def import_profile(command: list[str]) -> dict[str, float]:
    """Seconds of own import time per module in one run of ``pmem ARGS`` (``command``), the
    best of three, and the run's time from the profiler's start (``"(run)"``)."""
    best: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="pm-bench-imports-") as tmp:
        out = Path(tmp) / "imports.json"
        for _ in range(3):
            subprocess.run(
                [sys.executable, "-c", PROFILER, str(out), *command[1:]],
                check=True,
                capture_output=True,
            )
            found = json.loads(out.read_text("utf-8"))
            run: dict[str, float] = {"(run)": found["total"]}
            for name, spent in found["rows"]:
                run[name] = run.get(name, 0.0) + spent
            best = {k: min(v, best.get(k, v)) for k, v in run.items()}
    return best


def origin(module: str) -> str:
    top = module.split(".")[0]
    if top == "planning_memory":
        return "planning_memory"
    if top == "click":
        return "click"
    spec = sys.modules.get(top)
    where = getattr(spec, "__file__", None) or ""
    if not where:
        try:
            import importlib.util

            found = importlib.util.find_spec(top)
            where = (found.origin or "") if found else ""
        except (ImportError, ValueError):
            where = ""
    return "other libraries" if "site-packages" in where else "standard library"


def profile_lines(label: str, profile: dict[str, float], top: int = 12) -> list[str]:
    """The imports of one command: totals by origin, then the dearest modules."""
    modules = {k: v for k, v in profile.items() if k != "(run)"}
    totals: dict[str, float] = {}
    for name, spent in modules.items():
        totals[origin(name)] = totals.get(origin(name), 0.0) + spent
    shares = ", ".join(
        f"{kind} {spent * 1000:.1f} ms"
        for kind, spent in sorted(totals.items(), key=lambda kv: -kv[1])
    )
    imported, run = sum(modules.values()) * 1000, profile["(run)"] * 1000
    lines = [
        f"{label}: imports {imported:.1f} ms of a {run:.0f} ms run under the profiler "
        f"({len(modules)} modules): {shares}",
    ]
    dearest = sorted(modules.items(), key=lambda kv: -kv[1])[:top]
    lines.append("  dearest: " + ", ".join(f"{n} {s * 1000:.1f}" for n, s in dearest))
    return lines


if __name__ == "__main__":
    main()
