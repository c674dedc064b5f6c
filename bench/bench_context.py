"""Benchmark: `pmem context` end to end, process start included, at 10k records (the
target: <= 300 ms), plus `pmem search` as a process on the same tree (the target: <= 6x
``python -c pass``, timed in the same run). Every ``pmem`` command runs in its own process.

    .venv/bin/python bench/bench_context.py [--records N] [--runs N] [--no-write]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_validate import WORDS, build_tree, machine, run_timed
from installed import as_installed

PMEM = str(Path(sys.executable).parent / "pmem")
DOC = Path(__file__).resolve().parent.parent / "docs" / "bench-context.md"
TARGET_MS = 300
SEARCH_TIMES = 6  # pmem search in its own process, against python -c pass
PASS = [sys.executable, "-c", "pass"]
COMMANDS = {  # name: pmem's arguments around the words (none: python -c pass)
    "pmem context TASK": ["context"],
    "pmem search QUERY --json": ["search", "--json"],
    "python -c pass": [],
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--no-write", action="store_true", help="do not update the docs")
    args = parser.parse_args()
    as_installed()
    rng = random.Random(7)
    walls: dict[str, list[float]] = {name: [] for name in COMMANDS}
    cpus: dict[str, list[float]] = {name: [] for name in COMMANDS}
    with tempfile.TemporaryDirectory(prefix="pm-bench-context-") as tmp:
        build_tree(Path(tmp), args.records)
        run_timed([PMEM, "-C", tmp, "reindex", "--no-code"])
        for _ in range(args.runs):  # taking turns: the machine's speed drifts
            words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 6)))
            for name, argv in COMMANDS.items():
                cmd = [PMEM, "-C", tmp, argv[0], words, *argv[1:]] if argv else PASS
                wall, cpu, out = run_timed(cmd)
                assert out.strip() or not argv, cmd
                walls[name].append(wall * 1000)
                cpus[name].append(cpu * 1000)
    lines = [f"records: {args.records:,}; {args.runs} runs each, a fresh process per run"]
    for name in COMMANDS:
        ms = walls[name]
        p95 = sorted(ms)[int(0.95 * (len(ms) - 1))]
        lines.append(
            f"{name:<34} p50 {statistics.median(ms):6.0f} ms  p95 {p95:6.0f} ms  "
            f"best {min(ms):6.0f} ms  CPU p50 {statistics.median(cpus[name]):6.0f} ms"
        )
    p50 = {name: statistics.median(ms) for name, ms in walls.items()}
    verdict = "meets" if p50["pmem context TASK"] <= TARGET_MS else "MISSES"
    lines.append(f"target pmem context <= {TARGET_MS} ms (p50), pmem context TASK: {verdict}")
    times = p50["pmem search QUERY --json"] / p50["python -c pass"]
    verdict = "meets" if times <= SEARCH_TIMES else "MISSES"
    lines.append(
        f"target pmem search <= {SEARCH_TIMES}x python -c pass (p50): {times:.1f}x, {verdict}"
    )
    lines.append(f"machine: {machine()}")
    print("\n".join(lines))
    if not args.no_write:
        stamp = datetime.now(UTC).strftime("%Y-%m-%d")
        DOC.write_text(
            f"# `pmem context` end to end\n\nMeasured {stamp} by "
            "`bench/bench_context.py`.\n\n```\n" + "\n".join(lines) + "\n```\n",
            "utf-8",
        )


if __name__ == "__main__":
    main()
