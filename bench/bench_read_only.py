"""What a read-only checkout costs a reading command: ``pmem search`` and ``pmem show`` as
processes on a tree of N records, writable against read-only, the read-only one as a checkout
that was used (its derived files there: each command copies the index and the catalog into
memory and brings them up to date) and as a fresh clone (none: each command builds them in
memory from the files).

The read-only trees have their write bits off; run as root, each command runs with the
capabilities that override file modes dropped (as ``tests/test_read_only.py`` does). The three
trees take turns in every round, so the machine's load weighs on each alike. The figure is the
CPU time (user + system) of the command's process, median of the rounds.

Run: ``.venv/bin/python bench/bench_read_only.py [--records 1000] [--rounds 7]``.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from bench_search import make_records, write_records
from test_read_only import _LAUNCH, set_writable

from planning_memory.core import Layout
from planning_memory.memory import Memory

PMEM = Path(sys.executable).parent / "pmem"
COMMANDS = {"search": ["search", "request validation"], "show": ["show"]}


def cpu(tree: Path, args: list[str]) -> float:
    """CPU seconds of ``pmem args`` in ``tree``, in a child that file modes bind."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(
        [sys.executable, "-c", _LAUNCH, str(PMEM), *args], cwd=tree, capture_output=True
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{args} in {tree}: {done.stderr.decode()}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def trees(root: Path, n: int) -> dict[str, Path]:
    """The writable tree, its read-only copy with the derived files its owner's commands left
    (made by this process, which file modes do not bind when it is root), and a read-only
    fresh clone without them."""
    base = root / "writable" / "repo"
    Memory.init(base)
    write_records(Layout.for_repo(base), make_records(n, random.Random(7)))
    made = {"writable": base}
    for name in ("read-only, used", "read-only, fresh clone"):
        copy = root / name.replace(" ", "").replace(",", "-") / "repo"
        shutil.copytree(base, copy)
        set_writable(copy, False)
        made[name] = copy
    for name in ("writable", "read-only, used"):  # after the chmod, which moves every ctime
        warm = [str(PMEM), "search", "warm up"]
        subprocess.run(warm, cwd=made[name], check=True, capture_output=True)
    return made


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=7)
    opts = parser.parse_args()
    os.environ.update(PMEM_SERVER="0", PMEM_BACKGROUND="0", PMEM_EMBEDDINGS="0")
    with tempfile.TemporaryDirectory() as tmp:
        made = trees(Path(tmp), opts.records)
        times: dict[tuple[str, str], list[float]] = {}
        for _ in range(opts.rounds):
            for command, args in COMMANDS.items():
                for name, tree in made.items():
                    times.setdefault((command, name), []).append(cpu(tree, args))
        print(f"{opts.records} records, {opts.rounds} rounds, load {os.getloadavg()[0]:.1f}")
        for (command, name), got in times.items():
            print(f"pmem {command:6}  {name:24}  {statistics.median(got) * 1000:7.0f} ms CPU p50")
        for tree in made.values():
            set_writable(tree, True)


if __name__ == "__main__":
    main()
