"""Benchmark: `pmem context` end to end, process start included, at 10k records (the
target: <= 300 ms), plus `pmem search` as a process on the same tree: each in its own
process (``PMEM_SERVER=0``), then answered by a pmem server of the bench's own ("served": the
CPU time is then the client's alone).

    .venv/bin/python bench/bench_context.py [--records N] [--runs N] [--no-write]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import statistics
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_validate import WORDS, build_tree, machine, run_timed
from server import SWITCH, pmem_server

PMEM = str(Path(sys.executable).parent / "pmem")
DOC = Path(__file__).resolve().parent.parent / "docs" / "bench-context.md"
TARGET_MS = 300
COMMANDS = (("pmem context TASK", ["context"]), ("pmem search QUERY --json", ["search", "--json"]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--no-write", action="store_true", help="do not update the docs")
    args = parser.parse_args()
    rng = random.Random(7)
    rows = []
    with tempfile.TemporaryDirectory(prefix="pm-bench-context-") as tmp:
        build_tree(Path(tmp), args.records)
        os.environ[SWITCH] = "0"
        run_timed([PMEM, "-C", tmp, "reindex", "--no-code"])
        for served in (False, True):
            os.environ[SWITCH] = "1" if served else "0"
            with pmem_server() if served else contextlib.nullcontext():
                for name, argv in COMMANDS:
                    walls, cpus = [], []
                    for _ in range(args.runs):
                        words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 6)))
                        cmd = [PMEM, "-C", tmp, *argv[:1], words, *argv[1:]]
                        wall, cpu, out = run_timed(cmd)
                        assert out.strip(), cmd
                        walls.append(wall * 1000)
                        cpus.append(cpu * 1000)
                    rows.append((f"{name}, served" if served else name, walls, cpus))
    lines = [f"records: {args.records:,}; {args.runs} runs each, a fresh process per run"]
    for name, walls, cpus in rows:
        p95 = sorted(walls)[int(0.95 * (len(walls) - 1))]
        lines.append(
            f"{name:<34} p50 {statistics.median(walls):6.0f} ms  p95 {p95:6.0f} ms  "
            f"best {min(walls):6.0f} ms  CPU p50 {statistics.median(cpus):6.0f} ms"
        )
    for name, walls, _cpus in rows:
        if name.startswith("pmem context"):
            verdict = "meets" if statistics.median(walls) <= TARGET_MS else "MISSES"
            lines.append(f"target pmem context <= {TARGET_MS} ms (p50), {name}: {verdict}")
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
