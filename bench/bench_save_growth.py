"""How `Memory.save` grows with the store, and the bytes the derived state takes.

For each size (default 40, 4,000 and 10,000 patterns; ``maxPatterns`` raised so that every one
is live and shown in patterns.md, the worst case for the views), a tree is written and one save
builds what a first save builds; then 12 rounds of saves of new patterns go through
``Memory.save`` as a user calls it (the learning rules, the record write, the views
re-rendered), one save per size in each round, so that the machine's load weighs on every size
alike: p50 wall and CPU time, and the growth from the smallest size. The target is a save at
10k within 2x of one at 40.

Derived bytes at the largest size: everything under ``memory/contextual/`` after the saves and
one search (BM25 only here: ``PMEM_EMBEDDINGS=0``; the vectors' bytes are in
``bench_search.py --vectors``), by file, beside the record files' own bytes. They are measured
as they stay on disk once the commands end: the process's SQLite connections are closed first,
as at a command's exit (the last close checkpoints a write-ahead log and removes it).

``--before REV`` runs the same in a git worktree of REV (a subprocess importing that tree's
package), one after the other in the same run, for a side-by-side figure.

Run: ``.venv/bin/python bench/bench_save_growth.py [--sizes 40,4000,10000] [--before REV]``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
SAVES = 12


def measure(sizes: list[int]) -> dict[str, Any]:
    """The figures of the package on ``sys.path`` (this tree's, or a worktree's)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import bench_scale
    from bench_search import make_records

    os.environ["PMEM_EMBEDDINGS"] = "0"
    out: dict[str, Any] = {"sizes": {}}
    with contextlib.ExitStack() as stack:
        trees = {}
        for n in sizes:  # every tree first: the saves then take turns, so load hits them alike
            tmp = stack.enter_context(tempfile.TemporaryDirectory())
            pool = make_records(n * 4, random.Random(n))
            patterns = [r for r in pool if r["type"] == "pattern"][:n]
            mem = bench_scale.write_tree(Path(tmp), patterns, **bench_scale.UNCAPPED)
            texts = iter(bench_scale.new_texts(SAVES + 2, n))
            start = time.perf_counter()
            title, text = next(texts)
            mem.save(title, "pattern", description=text)  # builds what a first save builds
            trees[n] = (mem, texts, time.perf_counter() - start, [], [])
        for _ in range(SAVES):
            for mem, texts, _first, walls, cpus in trees.values():
                title, text = next(texts)
                wall, cpu = time.perf_counter(), time.process_time()
                mem.save(title, "pattern", description=text)
                walls.append(time.perf_counter() - wall)
                cpus.append(time.process_time() - cpu)
        for n, (mem, _texts, first, walls, cpus) in trees.items():
            figures = {
                "first_s": round(first, 2),
                "wall_p50_ms": round(1000 * statistics.median(walls), 1),
                "cpu_p50_ms": round(1000 * statistics.median(cpus), 1),
            }
            if n == max(sizes):
                mem.search("retry the request on error")
                _close_connections()
                figures["derived"] = _bytes(mem.layout.contextual)
                figures["records_bytes"] = sum(_bytes(mem.layout.long_term).values())
            out["sizes"][str(n)] = figures
    return out


def _close_connections() -> None:
    """Close the SQLite files this process keeps open, as its exit would."""
    from planning_memory import longterm

    longterm.close_catalogs()


def _bytes(folder: Path) -> dict[str, int]:
    return {
        str(p.relative_to(folder)): p.stat().st_size
        for p in sorted(folder.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


def run_before(rev: str, sizes: list[int]) -> dict[str, Any]:
    """``measure`` in a worktree of ``rev``, in a subprocess importing that tree's package."""
    with tempfile.TemporaryDirectory() as tmp:
        tree = Path(tmp) / "tree"
        subprocess.run(
            ["git", "-C", str(REPO), "worktree", "add", "-q", "--detach", str(tree), rev],
            check=True,
        )
        try:
            bench = Path(__file__).read_text()
            (tree / "bench" / "bench_save_growth.py").write_text(bench)
            env = {**os.environ, "PYTHONPATH": str(tree)}
            done = subprocess.run(
                [
                    sys.executable,
                    str(tree / "bench" / "bench_save_growth.py"),
                    "--json",
                    "--sizes",
                    ",".join(map(str, sizes)),
                ],
                check=True,
                capture_output=True,
                text=True,
                env=env,
                cwd=tree,
            )
            return dict(json.loads(done.stdout))
        finally:
            subprocess.run(
                ["git", "-C", str(REPO), "worktree", "remove", "--force", str(tree)], check=False
            )


def report(name: str, figures: dict[str, Any]) -> None:
    sizes = figures["sizes"]
    smallest = sizes[min(sizes, key=int)]
    print(f"== {name}")
    columns = ("patterns", "wall p50 ms", "CPU p50 ms", "CPU x smallest", "first save s")
    print(" ".join(f"{c:>{w}}" for c, w in zip(columns, (9, 12, 11, 15, 13), strict=True)))
    for n, got in sorted(sizes.items(), key=lambda item: int(item[0])):
        growth = got["cpu_p50_ms"] / max(smallest["cpu_p50_ms"], 1e-9)
        print(
            f"{n:>9} {got['wall_p50_ms']:>12} {got['cpu_p50_ms']:>11} {growth:>14.1f}x "
            f"{got['first_s']:>13}"
        )
        if "derived" in got:
            derived = got["derived"]
            total = sum(derived.values())
            records = got["records_bytes"] / 1e6
            print(f"  derived bytes at {n}: {total / 1e6:.1f} MB (record files {records:.1f} MB)")
            for file, size in sorted(derived.items(), key=lambda item: -item[1])[:8]:
                print(f"    {size / 1e6:8.2f} MB  {file}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="40,4000,10000")
    parser.add_argument("--before", default=None, help="also measure this git revision")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON only")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    if args.json:
        print(json.dumps(measure(sizes)))
        return
    print(f"load average {os.getloadavg()[0]:.1f}")
    if args.before:
        report(f"before ({args.before})", run_before(args.before, sizes))
    report("now", measure(sizes))


if __name__ == "__main__":
    main()
