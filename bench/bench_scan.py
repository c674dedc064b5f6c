"""Benchmark the entity scanner: cold scan, warm rescan, one-file change, and ctags for scale.

Two trees, each put in a fresh git repository under a temporary folder:

- synthetic: ``bench/gen_repo.py``'s deterministic tree (``--files``, default 100,000 small
  files across Python, TypeScript, TSX, JavaScript, Go, Java and Rust);
- stdlib: a copy of this interpreter's standard library (real code, ``site-packages`` left out).

For each: universal-ctags over the same files (``ctags -R --output-format=json``), cold scans
(no ``.planning``), each right after a measure of what tree-sitter alone costs on the same
files (the floor: read, parse, run our query, in one process; its CPU seconds spread over the
machine's cores are the wall floor), the shards committed, a warm rescan with nothing changed
(in this process, and as a new ``python`` process to include start-up), a rescan after a
one-file change, and a scan of just that path after a second change (what the watch daemon
runs after a save).
Prints a table; ``--json`` writes the raw figures.

    .venv/bin/python bench/bench_scan.py [--files 100000] [--only synthetic|stdlib|repo]
        [--repo PATH ...] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from gen_repo import generate

from planning_memory.core.layout import Layout
from planning_memory.entity import scan
from planning_memory.store import Store

CTAGS = shutil.which("ctags") or "/usr/bin/ctags"
ENV = {
    **os.environ,
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@example.invalid",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@example.invalid",
}


def git(root: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", *args], cwd=root, env=ENV, capture_output=True, text=True, check=True
    )
    return done.stdout


def commit_all(root: Path, message: str) -> None:
    git(root, "add", "-A")
    git(root, "commit", "-q", "--no-verify", "-m", message)


def cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def timed_scan(root: Path, paths: list[str] | None = None) -> dict[str, Any]:
    layout = Layout.for_repo(root)
    before_cpu, started = cpu(), time.perf_counter()
    report = scan(layout, Store(layout), {}, paths=paths)
    wall = time.perf_counter() - started
    return {
        "wall": round(wall, 2),
        "cpu": round(cpu() - before_cpu, 2),
        "parsed": report.parsed,
        "unchanged": report.unchanged,
        "shards_written": report.shards_written,
        "errors": report.errors,
        "phases": dict(report.phases),
    }


def process_scan(root: Path) -> float:
    """A warm rescan as a new process (interpreter start and imports included)."""
    code = (
        "from pathlib import Path; from planning_memory.core.layout import Layout;"
        "from planning_memory.store import Store; from planning_memory.entity import scan;"
        f"l = Layout.for_repo(Path({str(root)!r})); r = scan(l, Store(l), {{}});"
        "assert r.shards_written == 0, r"
    )
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-c", code], check=True, cwd=Path(__file__).resolve().parent.parent
    )
    return round(time.perf_counter() - started, 2)


def ctags(root: Path) -> dict[str, Any]:
    if not Path(CTAGS).exists():
        return {"wall": None, "cpu": None}
    out = root.parent / f"{root.name}.tags.json"
    before_cpu, started = cpu(), time.perf_counter()
    subprocess.run(
        [
            CTAGS,
            "-R",
            "--output-format=json",
            "--exclude=.git",
            "--exclude=.planning",
            "-f",
            str(out),
            ".",
        ],
        cwd=root,
        check=True,
        capture_output=True,
    )
    wall = time.perf_counter() - started
    spent = cpu() - before_cpu
    with open(out, "rb") as fh:
        tags = sum(1 for _ in fh)
    out.unlink()
    return {"wall": round(wall, 2), "cpu": round(spent, 2), "tags": tags}


def source_files(root: Path) -> list[tuple[Path, str]]:
    """The tree's source files and their languages (listed once, outside the floor's timing)."""
    from planning_memory.entity.languages import language_for

    found = []
    for folder, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in (".git", ".planning"))
        for name in sorted(names):
            language = language_for(name)
            path = Path(folder, name)
            if language is not None and path.is_file() and not path.is_symlink():
                found.append((path, language))
    return found


def native_floor(files: list[tuple[Path, str]]) -> dict[str, Any]:
    """CPU seconds tree-sitter alone needs (read, parse, run our query; no Python work on the
    result), in this process: the floor under any scan of the tree. Listing the files is not
    timed; ``cpu / cores`` is the wall floor of a perfectly parallel scan."""
    from tree_sitter import QueryCursor

    from planning_memory.entity.languages import go, java, javascript, python, rust

    grammars = {
        "python": python.grammar(),
        "go": go.grammar(),
        "java": java.grammar(),
        "rust": rust.grammar(),
        "javascript": javascript.grammar("javascript"),
        "typescript": javascript.grammar("typescript"),
        "tsx": javascript.grammar("tsx"),
    }
    started = time.process_time()
    count = size = 0
    for path, language in files:
        data = path.read_bytes()
        grammar = grammars[language]
        QueryCursor(grammar.query).captures(grammar.parser.parse(data).root_node)
        count += 1
        size += len(data)
    spent = time.process_time() - started
    cores = os.cpu_count() or 1
    return {
        "cpu": round(spent, 2),
        "wall_floor": round(spent / cores, 2),
        "files": count,
        "mb": round(size / 1e6, 1),
    }


def secret_check(files: list[tuple[Path, str]]) -> float:
    """CPU seconds of the secret check alone: ``privacy.find_secrets`` on each file's text,
    as the scan's workers run it before anything leaves them (reading included)."""
    from planning_memory.core import privacy

    started = time.process_time()
    for path, _language in files:
        privacy.find_secrets(path.read_bytes().decode("utf-8", "replace"))
    return round(time.process_time() - started, 2)


def one_file_change(root: Path, name: str = "bench_added_function") -> Path:
    """Add a function to a Python file of the tree (a comment to another source file when
    the tree holds no Python)."""
    candidates = sorted(p for p in root.rglob("*.py") if ".planning" not in p.parts)
    if candidates:
        target = candidates[len(candidates) // 2]
        added = f"\n\ndef {name}(value):\n    return value\n"
    else:
        others = source_files(root)
        target = others[len(others) // 2][0]
        added = f"\n// {name}\n"
    with open(target, "a", encoding="utf-8") as fh:
        fh.write(added)
    return target


def cold_scans(root: Path, repeat: int) -> dict[str, Any]:
    """``repeat`` cold scans (the entity tree removed before each), each right after the
    tree-sitter floor of the same files (a shared machine's speed drifts between runs, so each
    scan is set against its own yardstick); the fastest scan with its floor and ratios, and
    every run as ``[wall, cpu, floor cpu]``, with the median of the runs' CPU ratios."""
    files = source_files(root)
    runs = []
    for _ in range(repeat):
        floor = native_floor(files)
        shutil.rmtree(root / ".planning", ignore_errors=True)
        runs.append({**timed_scan(root), "floor": floor})
    best = min(runs, key=lambda r: r["wall"])
    floor = best["floor"]
    ratios = [r["cpu"] / r["floor"]["cpu"] for r in runs if r["floor"]["cpu"]]
    return {
        **best,
        "ratio_wall": round(best["wall"] / floor["wall_floor"], 2) if floor["cpu"] else None,
        "ratio_cpu": round(best["cpu"] / floor["cpu"], 2) if floor["cpu"] else None,
        # each run's CPU over its own floor's, the median: steadier than the fastest run's
        # on a small tree, whose floor is a few hundredths of a second
        "ratio_cpu_median": round(statistics.median(ratios), 2) if ratios else None,
        "runs": [[r["wall"], r["cpu"], r["floor"]["cpu"]] for r in runs],
    }


def stage_costs(root: Path, floor_cpu: float, secrets_cpu: float) -> dict[str, float]:
    """CPU seconds per step of one cold scan run in this process (no worker pool, so every
    step's CPU is this process'): the scanner's own laps (``ScanReport.phases``, timed here
    with ``time.process_time`` instead of the wall clock), the ``parse`` step split into
    tree-sitter (parse and our query: the floor, measured right before), the secret check
    (measured alone, right before) and the Python extraction on top of them (reading,
    walking the captures, types, side effects, building entities)."""
    from planning_memory.entity import scanstate

    def start(clock: Any) -> None:
        clock.last = time.process_time()
        clock.laps = []

    def lap(clock: Any, name: str) -> None:
        now = time.process_time()
        clock.laps.append((name, round(now - clock.last, 3)))
        clock.last = now

    shutil.rmtree(root / ".planning", ignore_errors=True)
    layout = Layout.for_repo(root)
    saved = scanstate.Clock.__init__, scanstate.Clock.lap
    scanstate.Clock.__init__, scanstate.Clock.lap = start, lap  # type: ignore[method-assign]
    try:
        single = {"memory": {"entity": {"parallelThreshold": 10**9, "scanWorkers": 1}}}
        report = scan(layout, Store(layout), single)
    finally:
        scanstate.Clock.__init__, scanstate.Clock.lap = saved  # type: ignore[method-assign]
    stages = dict(report.phases)
    parse = stages.pop("parse", 0.0)
    secrets = min(secrets_cpu, max(0.0, parse - floor_cpu))
    stages = {
        "tree-sitter parse+query": round(min(floor_cpu, parse), 2),
        "secret check": round(secrets, 2),
        "extraction (Python)": round(max(0.0, parse - floor_cpu - secrets), 2),
        **{name: round(seconds, 2) for name, seconds in stages.items()},
    }
    stages["total"] = round(sum(stages.values()), 2)
    return stages


def bench_tree(name: str, root: Path, files: int, repeat: int = 1) -> dict[str, Any]:
    print(f"\n== {name}: {files:,} source files in {root}", flush=True)
    result: dict[str, Any] = {"tree": name, "files": files}
    result["ctags"] = ctags(root)
    print(f"ctags        {result['ctags']}", flush=True)
    result["cold"] = cold_scans(root, repeat)
    result["tree_sitter_floor"] = result["cold"]["floor"]
    print(f"tree-sitter only (1 process) {result['tree_sitter_floor']}", flush=True)
    print(f"cold scan    {result['cold']}", flush=True)
    listed = source_files(root)
    floor_cpu = native_floor(listed)["cpu"]
    stages = stage_costs(root, floor_cpu, secret_check(listed))
    result["stages"] = {"floor_cpu": floor_cpu, **stages}
    result["stages_ratio"] = round(stages["total"] / floor_cpu, 2) if floor_cpu else None
    print(f"stages (one process, cpu s) {result['stages']}", flush=True)
    commit_all(root, "entity memory")
    result["warm"] = timed_scan(root)
    print(f"warm rescan  {result['warm']}", flush=True)
    result["warm_process"] = process_scan(root)
    print(f"warm, new process: {result['warm_process']} s", flush=True)
    clean = git(root, "status", "--porcelain") == ""
    result["git_status_clean"] = clean
    changed = one_file_change(root)
    result["one_change"] = timed_scan(root)
    result["one_change"]["file"] = changed.relative_to(root).as_posix()
    print(f"one change   {result['one_change']}", flush=True)
    # what the daemon runs after a save: a scan of that one path
    changed = one_file_change(root, "bench_added_again")
    result["one_path"] = timed_scan(root, [changed.relative_to(root).as_posix()])
    print(f"one path     {result['one_path']}", flush=True)
    planning = root / ".planning"
    result["shard_files"] = sum(1 for _ in planning.rglob("_shard*.json"))
    result["largest_shard"] = max(p.stat().st_size for p in planning.rglob("_shard*.json"))
    result["planning_bytes"] = sum(p.stat().st_size for p in planning.rglob("*.json"))
    cold = result["cold"]["wall"]
    result["files_per_second"] = round(result["cold"]["parsed"] / cold) if cold else None
    if result["ctags"]["wall"]:
        result["ratio_to_ctags"] = round(cold / result["ctags"]["wall"], 1)
    if result["ctags"]["cpu"]:
        result["cpu_ratio_to_ctags"] = round(result["cold"]["cpu"] / result["ctags"]["cpu"], 1)
    return result


def copy_tree(work: Path, source: Path, repeat: int) -> dict[str, Any]:
    """A copy of an existing source tree (``--repo``: a corpus of bench_accuracy's cache)."""
    root = work / source.name
    shutil.copytree(source, root, symlinks=True, ignore=shutil.ignore_patterns(".git", ".planning"))
    git(root, "init", "-q")
    commit_all(root, source.name)
    return bench_tree(source.name, root, len(source_files(root)), repeat)


def synthetic(work: Path, files: int, repeat: int) -> dict[str, Any]:
    root = work / "synthetic"
    count = generate(root, files)
    git(root, "init", "-q")
    commit_all(root, "synthetic tree")
    return bench_tree("synthetic", root, count, repeat)


def stdlib(work: Path, repeat: int) -> dict[str, Any]:
    source = Path(sysconfig.get_paths()["stdlib"])
    root = work / "stdlib"
    shutil.copytree(
        source,
        root,
        symlinks=True,
        ignore=shutil.ignore_patterns("site-packages", "__pycache__", "*.pyc"),
    )
    git(root, "init", "-q")
    commit_all(root, "stdlib")
    count = sum(1 for p in root.rglob("*.py"))
    return bench_tree("stdlib", root, count, repeat)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=100_000)
    parser.add_argument("--only", choices=("synthetic", "stdlib", "repo"))
    parser.add_argument(
        "--repo",
        type=Path,
        action="append",
        default=[],
        help="also bench a copy of this source tree",
    )
    parser.add_argument("--workdir", type=Path)
    parser.add_argument("--json", type=Path, help="write the raw figures here")
    parser.add_argument("--repeat", type=int, default=1, help="cold scans per tree (fastest kept)")
    args = parser.parse_args()
    work = args.workdir or Path(tempfile.mkdtemp(prefix="bench-scan-"))
    work.mkdir(parents=True, exist_ok=True)
    print(f"cpus: {os.cpu_count()}, load: {os.getloadavg()}", flush=True)
    results = []
    try:
        if args.only in (None, "stdlib"):
            results.append(stdlib(work, args.repeat))
        if args.only in (None, "synthetic"):
            results.append(synthetic(work, args.files, args.repeat))
        for source in args.repo:
            results.append(copy_tree(work, source.resolve(), args.repeat))
    finally:
        if args.workdir is None:
            shutil.rmtree(work, ignore_errors=True)
    print(
        "\n| tree | files | cold s (cpu s) | files/s | tree-sitter alone, cpu s (wall floor s) |"
        " cold wall / wall floor | cold cpu / tree-sitter cpu | ctags s |"
        " ratio to ctags | warm s | warm, new process s | one change s | that path only s |"
        " shards written |"
    )
    print("| --- " * 14 + "|")
    for r in results:
        floor = r["tree_sitter_floor"]
        print(
            f"| {r['tree']} | {r['files']:,} | {r['cold']['wall']} ({r['cold']['cpu']}) | "
            f"{r['files_per_second']:,} | {floor['cpu']} ({floor['wall_floor']}) | "
            f"{r['cold']['ratio_wall']}x | {r['cold']['ratio_cpu']}x | "
            f"{r['ctags'].get('wall')} | {r.get('ratio_to_ctags')} | {r['warm']['wall']} | "
            f"{r['warm_process']} | {r['one_change']['wall']} | {r['one_path']['wall']} | "
            f"{r['one_change']['shards_written']} |"
        )
    print(
        "\n| tree | cold cpu s | / tree-sitter cpu | median of runs | ctags cpu s | / ctags cpu | "
        + " | ".join(f"{stage} s" for stage in results[0]["stages"] if stage != "floor_cpu")
        + " | one process / tree-sitter cpu |"
    )
    print("| --- " * (6 + len(results[0]["stages"])) + "|")
    for r in results:
        stages = [f"{v}" for k, v in r["stages"].items() if k != "floor_cpu"]
        print(
            f"| {r['tree']} | {r['cold']['cpu']} | {r['cold']['ratio_cpu']}x | "
            f"{r['cold']['ratio_cpu_median']}x | {r['ctags'].get('cpu')} | "
            f"{r.get('cpu_ratio_to_ctags')}x | " + " | ".join(stages) + f" | {r['stages_ratio']}x |"
        )
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
