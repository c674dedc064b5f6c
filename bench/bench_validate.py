"""Benchmark: validate a tree of 10k long-term records (target: <= 2 s).

Generates realistic patterns, mistakes and learnings in a temporary tree, then times
``validate_tree`` in-process and ``pmem validate`` as a process (start-up included). Prints
the figures and writes them into docs/bench-foundation.md.

    .venv/bin/python bench/bench_validate.py [--records N] [--runs N] [--no-write]
"""

from __future__ import annotations

import argparse
import gc
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from planning_memory.core import codec, ids
from planning_memory.core.layout import Layout
from planning_memory.core.model import Record, new_long_term
from planning_memory.memory import Memory
from planning_memory.validate import validate_tree

TARGET_SECONDS = 2.0
DOC = Path(__file__).resolve().parent.parent / "docs" / "bench-foundation.md"
DOC_HEAD = """# Foundation benchmarks

Figures measured by `bench/bench_validate.py` and `bench/bench_startup.py` (each rewrites its
own section). The targets are benchmarks, not timed tests.
"""
PMEM = str(Path(sys.executable).parent / "pmem")
WORDS = (  # noqa: SIM905
    "auth session token prisma repository service hook component layout route handler cache "
    "retry timeout error fetch zod schema form validation middleware cookie refresh login "
    "logout register password hash bcrypt database query migration test vitest mock render"
).split()
DIRS = ["src/lib/auth", "src/services", "src/hooks", "src/app/api/auth", "src/components/Auth"]
LEARNING_TYPES = ["bugfix", "decision", "discovery", "architecture", "config", "learning"]


def sentence(rng: random.Random, low: int, high: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(low, high))).capitalize() + "."


def realistic(i: int, rng: random.Random, start: datetime) -> Record:
    kind = ("pattern", "mistake", rng.choice(LEARNING_TYPES))[i % 3]
    prefix = {"pattern": "pat", "mistake": "mis"}.get(kind, "lrn")
    created = start + timedelta(minutes=i * 7)
    millis = int(created.timestamp() * 1000)
    title = sentence(rng, 3, 8)[:-1]
    anchors = [
        {
            "path": f"{rng.choice(DIRS)}/{rng.choice(WORDS)}.ts",
            "symbol": rng.choice([None, rng.choice(WORDS)]),
            "hash": "sha256:" + os.urandom(32).hex(),
        }
        for _ in range(rng.randint(0, 2))
    ]
    fields: dict[str, object] = {
        "body": {
            "what": sentence(rng, 10, 40),
            "why": sentence(rng, 8, 30),
            "where": rng.choice(DIRS) + "/",
            "learned": sentence(rng, 0, 20) if rng.random() < 0.6 else "",
        },
        "tags": sorted({rng.choice(WORDS) for _ in range(rng.randint(1, 4))}),
        "topic_key": f"{rng.choice(WORDS)}/{rng.choice(WORDS)}-{i}" if rng.random() < 0.3 else None,
        "pinned": rng.random() < 0.05,
        "source": rng.choice(["human", "cli", "api", "agent:claude-code"]),
        "anchors": anchors,
    }
    if kind == "pattern":
        fields |= {
            "description": sentence(rng, 5, 15),
            "example": "try { await fetch(url) } catch (error) { if (error instanceof AuthError) }",
            "usage_count": rng.randint(1, 12),
        }
    elif kind == "mistake":
        fields |= {
            "description": sentence(rng, 5, 15),
            "correction": sentence(rng, 5, 15),
            "severity": rng.choice(["low", "medium", "high", "critical"]),
            "occurrences": rng.randint(1, 5),
        }
    else:
        fields |= {
            "trigger": "User correction",
            "original": sentence(rng, 4, 12),
            "learned": sentence(rng, 4, 12),
            "confidence": round(rng.uniform(0.5, 1.0), 2),
            "applications": rng.randint(0, 10),
        }
    record_id = ids.new_id(prefix, now_ms=millis)
    return new_long_term(kind, record_id, created, title=title, **fields)


def build_tree(root: Path, count: int) -> Layout:
    """``count`` records written straight to disk (the store's fsyncs would only slow setup)."""
    mem = Memory.init(root)
    rng = random.Random(20240120)
    start = datetime(2024, 1, 1, tzinfo=UTC)
    for i in range(count):
        record = realistic(i, rng, start)
        path = mem.layout.record_path(record["type"], record["id"])
        path.write_bytes(codec.dump_bytes(record))
    return mem.layout


def time_in_process(layout: Layout, runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        gc.collect()  # no garbage of the setup or the previous run in the figure
        started = time.perf_counter()
        report = validate_tree(layout)
        times.append(time.perf_counter() - started)
        assert report.ok, [f.line() for f in report.findings[:3]]
    return times


def run_timed(cmd: list[str], cwd: Path | None = None) -> tuple[float, float, str]:
    """Wall and CPU seconds (user + system, a figure a busy machine inflates less) of a
    process, and its output; it must succeed."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    assert done.returncode == 0, done.stdout[-500:] + done.stderr[-500:]
    return wall, cpu, done.stdout


def time_process(root: Path, runs: int) -> tuple[list[float], list[float]]:
    walls, cpus = [], []
    for _ in range(runs):
        wall, cpu, _ = run_timed([PMEM, "validate", str(root)])
        walls.append(wall)
        cpus.append(cpu)
    return walls, cpus


def machine() -> str:
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    return f"{os.cpu_count()} CPUs, Python {sys.version.split()[0]}, load average {load}"


def write_section(key: str, title: str, lines: list[str]) -> None:
    """Replace (or add) the section ``key`` of docs/bench-foundation.md."""
    text = DOC.read_text("utf-8") if DOC.exists() else DOC_HEAD
    start, end = f"<!-- {key} -->", f"<!-- /{key} -->"
    stamp = datetime.now(UTC).strftime("%Y-%m-%d")
    body = "\n".join(
        [start, f"## {title}", "", f"Measured {stamp}.", "", "```", *lines, "```", end]
    )
    if start in text and end in text:
        text = text[: text.index(start)] + body + text[text.index(end) + len(end) :]
    else:
        text = text.rstrip("\n") + "\n\n" + body + "\n"
    DOC.write_text(text, "utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--no-write", action="store_true", help="do not update the docs")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="pm-bench-validate-") as tmp:
        started = time.perf_counter()
        layout = build_tree(Path(tmp), args.records)
        built = time.perf_counter() - started
        inproc = time_in_process(layout, args.runs)
        proc, cpu = time_process(Path(tmp), args.runs)
        size = sum(p.stat().st_size for p in layout.long_term.rglob("*.json"))
    med_in, med_proc = statistics.median(inproc), statistics.median(proc)
    # the best run is the figure a busy shared machine distorts least (as timeit advises)
    verdict = "meets" if min(proc) <= TARGET_SECONDS else "MISSES"
    lines = [
        f"records: {args.records:,} ({size / 1e6:.1f} MB of JSON; tree built in {built:.1f} s)",
        f"validate_tree in-process: median {med_in:.3f} s, best {min(inproc):.3f} s "
        f"({med_in / args.records * 1e6:.0f} us/record, {args.runs} runs)",
        f"`pmem validate` process:  median {med_proc:.3f} s, best {min(proc):.3f} s, "
        f"CPU {statistics.median(cpu):.3f} s (start-up included, {args.runs} runs)",
        f"target <= {TARGET_SECONDS:g} s for the process: {verdict} (best run)",
        f"machine: {machine()}",
    ]
    print("\n".join(lines))
    if not args.no_write:
        write_section("validate", "Validate 10k records (`bench/bench_validate.py`)", lines)


if __name__ == "__main__":
    main()
