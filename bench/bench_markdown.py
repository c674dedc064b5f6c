"""Benchmark: render and sync the Markdown views with 10k records.

Builds a tree of realistic records (the generator of bench_validate.py), then times
``pmem render`` (first render of patterns.md, mistakes.md, CLAUDE.md), a no-op ``render``,
``render --check``, ``sync`` after one hand edit of patterns.md, a one-record ``pmem save``
(which re-renders the stale views), and in-process through ``Memory``: the first refresh with
no render cache, a one-record save, the re-render alone after a one-record change, and a
refresh with nothing stale. Then ``pmem save`` of a new pattern at each of ``--save-sizes``:
median wall and CPU time of ``--save-runs`` processes after one warm-up (start-up included).
Prints the figures and writes them into docs/bench-markdown.md.

    .venv/bin/python bench/bench_markdown.py [--records N] [--save-sizes 100,1000,10000]
        [--save-runs 20] [--no-write]
"""

from __future__ import annotations

import argparse
import re
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_validate import build_tree, machine, run_timed
from installed import as_installed

from planning_memory.memory import Memory

PMEM = str(Path(sys.executable).parent / "pmem")
DOC = Path(__file__).resolve().parent.parent / "docs" / "bench-markdown.md"


def in_process(root: Path, runs: int = 5) -> list[tuple[str, float, float]]:
    """In-process through ``Memory``, the fastest of ``runs`` each: the first refresh with no
    render cache (after a clone, an upgrade, or ``contextual/`` deleted), a one-record save
    (which re-renders the stale views), the re-render alone after a one-record change, and a
    refresh with nothing stale."""
    mem = Memory(root)
    colds, saves, renders, idles = [], [], [], []
    for i in range(runs):
        shutil.rmtree(mem.layout.contextual / "views" / "cache", ignore_errors=True)
        colds.append(timed(mem.refresh_views))
        saves.append(timed(partial(mem.save, f"Bench pattern {i}", "pattern", description="r")))
        mem.longterm.save("pattern", f"Bench change {i}", description=f"one more rule {i}")
        renders.append(timed(mem.refresh_views))
        mem.save(f"Bench note {i}", "learning", learned=f"fact {i}")
        idles.append(timed(mem.refresh_views))  # nothing stale now: the check alone
    return [
        ("refresh_views, no render cache (first call)", *min(colds)),
        ("save one record + re-render the views (in-process)", *min(saves)),
        ("re-render after a one-record change (in-process)", *min(renders)),
        ("refresh_views with nothing stale (in-process)", *min(idles)),
    ]


def save_p50(root: Path, runs: int) -> tuple[float, float]:
    """Median wall and CPU seconds of ``pmem save`` of a new pattern, after one warm-up."""
    walls, cpus = [], []
    for n in range(runs + 1):
        title = f"Timed process rule {n}"
        save = [PMEM, "-C", str(root), "save", title, "-t", "pattern"]
        wall, cpu, _ = run_timed([*save, "--description", f"saved by process number {n}"])
        if n:
            walls.append(wall)
            cpus.append(cpu)
    return statistics.median(walls), statistics.median(cpus)


def timed(call: Callable[[], object]) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    call()
    return time.perf_counter() - wall, time.process_time() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--save-sizes", default="100,1000,10000")
    parser.add_argument("--save-runs", type=int, default=20)
    parser.add_argument("--no-write", action="store_true", help="do not update the docs")
    args = parser.parse_args()
    as_installed()
    with tempfile.TemporaryDirectory(prefix="pm-bench-md-") as tmp:
        root = Path(tmp)
        layout = build_tree(root, args.records)
        (layout.planning / "patterns.md").unlink(missing_ok=True)
        rows = []
        wall, cpu, _ = run_timed([PMEM, "-C", tmp, "render"])
        rows.append(("first render (3 views)", wall, cpu))
        sizes = {p.name: p.stat().st_size for p in layout.planning.glob("*.md")}
        wall, cpu, _ = run_timed([PMEM, "-C", tmp, "render"])
        rows.append(("render, nothing changed", wall, cpu))
        wall, cpu, _ = run_timed([PMEM, "-C", tmp, "render", "--check"])
        rows.append(("render --check", wall, cpu))
        path = layout.patterns_md
        text = path.read_text("utf-8")
        heading = re.search(r"^## (.+?) <!-- id:", text, re.M)
        assert heading is not None
        path.write_text(text.replace(heading.group(0), "## Edited by hand <!-- id:", 1))
        wall, cpu, out = run_timed([PMEM, "-C", tmp, "sync"])
        assert "imported 1 change" in out, out
        rows.append(("sync after one hand edit (import + re-render)", wall, cpu))
        save = [PMEM, "-C", tmp, "save", "Bench process rule", "-t", "pattern"]
        wall, cpu, _ = run_timed([*save, "--description", "saved by a process"])
        rows.append(("pmem save, one pattern (re-renders the views)", wall, cpu))
        rows += in_process(root)
    saves = []
    for size in [int(n) for n in args.save_sizes.split(",") if n]:
        with tempfile.TemporaryDirectory(prefix="pm-bench-md-save-") as tmp:
            build_tree(Path(tmp), size)
            run_timed([PMEM, "-C", tmp, "render"])
            saves.append((size, *save_p50(Path(tmp), args.save_runs)))
    lines = [
        f"records: {args.records:,}; views: "
        + ", ".join(f"{k} {v / 1e6:.1f} MB" for k, v in sorted(sizes.items()))
    ]
    lines += [f"{name:<52} wall {w:6.3f} s  CPU {c:6.3f} s" for name, w, c in rows]
    lines += [
        f"{f'pmem save p50 at {size:,} records':<52} wall {w:6.3f} s  CPU {c:6.3f} s"
        f"  (median of {args.save_runs})"
        for size, w, c in saves
    ]
    lines.append(f"machine: {machine()}")
    print("\n".join(lines))
    if not args.no_write:
        stamp = datetime.now(UTC).strftime("%Y-%m-%d")
        DOC.write_text(
            "# Markdown view benchmarks\n\nMeasured "
            + stamp
            + " by `bench/bench_markdown.py` (processes with start-up included, then"
            + " in-process calls).\n\n```\n"
            + "\n".join(lines)
            + "\n```\n",
            "utf-8",
        )


if __name__ == "__main__":
    main()
