"""Benchmark the watch daemon (a real background daemon on real git repositories).

1. save -> entity JSON on disk: write a source file (plain writes and editor-style atomic
   renames, alternating), poll its folder's entity shards until the new function name is in
   one of them; p50 / p99 over ``--saves`` saves (targets: p50 <= 150 ms, p99 <= 500 ms).
2. branch switch: ``git checkout`` of a branch that changes ``--switch-files`` files; time
   until the daemon has reconciled and is idle (target <= 15 s), then check the entity tree
   is byte for byte what a fresh scan gives ("nothing lost").
3. the synthetic ``--rss-files`` repository (bench/gen_repo.py when present): cold start to
   ready, daemon RSS (target <= 300 MB), a save's latency there, warm restart to ready.
4. idle: after a save has been handled, ``--idle-seconds`` of nothing; the daemon's CPU
   (target < 1% of a CPU) and whether any file under ``.planning/`` changed (it must not).

Run: ``.venv/bin/python bench/bench_watch.py [--saves 200] [--switch-files 10000]
[--rss-files 100000] [--idle-seconds 10] [--skip-rss] [--only latency|switch|rss|idle]``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import planning_memory.watch as watching
from planning_memory.memory import Memory

HERE = Path(__file__).resolve().parent
PER_DIR = 50
GIT_ENV = {
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@example.invalid",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)


def module_text(i: int, variant: str) -> str:
    return (
        f'"""Synthetic module {i} ({variant})."""\n\nimport os\n\n\n'
        f"def {variant}_handler_{i}(request):\n"
        f'    """Handle request {i}."""\n'
        f"    if request:\n        return helper_{i}(request)\n    return None\n\n\n"
        f"def helper_{i}(value):\n    return os.path.join(str(value), '{variant}')\n"
    )


def own_generator(root: Path, count: int, variant: str = "main") -> str:
    """``count`` small Python files, ``PER_DIR`` per folder."""
    for i in range(count):
        folder = root / "src" / f"d{i // PER_DIR:04d}"
        if i % PER_DIR == 0:
            folder.mkdir(parents=True, exist_ok=True)
        (folder / f"m{i:06d}.py").write_text(module_text(i, variant))
    return "bench_watch's own generator"


def generate(root: Path, count: int) -> str:
    """The scanner helper's synthetic repository when bench/gen_repo.py exists, else ours."""
    gen = HERE / "gen_repo.py"
    if gen.is_file():
        done = subprocess.run(
            [sys.executable, str(gen), str(root), "--files", str(count)], capture_output=True
        )
        if done.returncode == 0:
            return "bench/gen_repo.py"
        print(f"  gen_repo.py failed ({done.stderr.decode()[-200:]}); using our generator")
    return own_generator(root, count)


def make_repo(root: Path, files: int, *, generator: Callable[[Path, int], str]) -> str:
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    source = generator(root, files)
    Memory.init(root)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "init")
    return source


def status(root: Path) -> dict[str, Any]:
    return watching.status(Memory(root))


def wait(check: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise SystemExit(f"timed out waiting for {what}")
        time.sleep(0.01)


def idle_after(root: Path, batches: int) -> Callable[[], bool]:
    def check() -> bool:
        info = status(root)
        return info.get("batches", 0) > batches and info["state"] == "idle" and not info["queue"]

    return check


def start(root: Path, timeout: float = 600) -> tuple[int, float]:
    """Start the daemon; return its pid and the seconds until its first reconcile is done."""
    began = time.perf_counter()
    info = watching.start(Memory(root), wait=60)
    wait(idle_after(root, 0), timeout, "the first reconcile")
    return int(info["pid"]), time.perf_counter() - began


def rss_mb(pid: int) -> tuple[float, float]:
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        fields[key] = value.strip()
    return int(fields["VmRSS"].split()[0]) / 1024, int(fields["VmHWM"].split()[0]) / 1024


def children_rss_mb(pid: int) -> float:
    done = subprocess.run(["ps", "-o", "rss=", "--ppid", str(pid)], capture_output=True, text=True)
    return sum(int(x) for x in done.stdout.split()) / 1024


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


# -- 1. save latency ----------------------------------------------------------------------------
def save_once(root: Path, rel: str, name: str, atomic: bool, timeout: float = 10) -> float:
    folder = rel.rsplit("/", 1)[0] if "/" in rel else ""
    entity = root / ".planning" / "memory" / "entity"
    pattern = f"*/{folder}/_shard*.json" if folder else "*/_shard*.json"
    text = f'"""Edited."""\n\n\ndef {name}(x):\n    return x * 2\n'
    path = root / rel
    began = time.perf_counter()
    if atomic:
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(text)
        os.replace(tmp, path)
    else:
        path.write_text(text)
    while True:
        for shard in entity.glob(pattern):  # the folder's shards, whatever their kind
            try:
                if name in shard.read_text():
                    return time.perf_counter() - began
            except FileNotFoundError:
                pass
        if time.perf_counter() - began > timeout:
            raise SystemExit(f"{name} never reached the entity JSON")
        time.sleep(0.002)


def bench_latency(base: Path, saves: int) -> dict[str, Any]:
    root = base / "latency"
    make_repo(root, 500, generator=own_generator)
    pid, ready = start(root)
    latencies = []
    try:
        for i in range(saves):
            batches = status(root)["batches"]
            rel = f"src/d{i % 10:04d}/m{(i % 10) * PER_DIR + i % 7:06d}.py"
            latencies.append(save_once(root, rel, f"saved_fn_{i}", atomic=bool(i % 2)))
            wait(idle_after(root, batches), 10, "the daemon to settle")
    finally:
        watching.stop(Memory(root))
    return {
        "saves": saves,
        "p50_ms": round(pct(latencies, 0.5) * 1000, 1),
        "p99_ms": round(pct(latencies, 0.99) * 1000, 1),
        "max_ms": round(max(latencies) * 1000, 1),
        "mean_ms": round(statistics.fmean(latencies) * 1000, 1),
        "first_ready_s": round(ready, 2),
        "pid": pid,
    }


# -- 2. branch switch ---------------------------------------------------------------------------
def entity_tree(root: Path) -> dict[str, bytes]:
    folder = root / ".planning" / "memory" / "entity"
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def fresh_scan(root: Path) -> dict[str, bytes]:
    """Move the daemon's entity tree away, scan from nothing, return the fresh tree."""
    entity = root / ".planning" / "memory" / "entity"
    shutil.move(str(entity), str(root.parent / "entity-by-daemon"))
    entity.mkdir()
    Memory(root).scan()
    return entity_tree(root)


def bench_switch(base: Path, files: int) -> dict[str, Any]:
    root = base / "switch"
    make_repo(root, files, generator=own_generator)
    git(root, "checkout", "-q", "-b", "other")
    own_generator(root, files, "other")
    git(root, "commit", "-q", "-am", "other")
    git(root, "checkout", "-q", "main")
    _pid, ready = start(root)
    before = status(root)
    began = time.perf_counter()
    git(root, "checkout", "-q", "other")
    git_s = time.perf_counter() - began

    def converged() -> bool:
        info = status(root)
        return (
            info["full_reconciles"] > before["full_reconciles"]
            and info["state"] == "idle"
            and not info["queue"]
        )

    wait(converged, 300, "the branch switch to converge")
    seconds = time.perf_counter() - began
    after = status(root)
    watching.stop(Memory(root))
    by_daemon = entity_tree(root)
    identical = by_daemon == fresh_scan(root)
    return {
        "files": files,
        "git_checkout_s": round(git_s, 2),
        "converged_s": round(seconds, 2),
        "batches": after["batches"] - before["batches"],
        "full_reconciles": after["full_reconciles"] - before["full_reconciles"],
        "identical_to_fresh_scan": identical,
        "first_ready_s": round(ready, 2),
    }


# -- 3. the 100k-file repository ----------------------------------------------------------------
def bench_rss(base: Path, files: int) -> dict[str, Any]:
    root = base / "big"
    began = time.perf_counter()
    source = make_repo(root, files, generator=generate)
    made = time.perf_counter() - began
    pid, cold = start(root, timeout=1800)
    rss, hwm = rss_mb(pid)
    kids = children_rss_mb(pid)
    listed = subprocess.run(
        ["git", "-C", str(root), "ls-files", "*.py"], capture_output=True, text=True, check=True
    )
    rel = listed.stdout.split()[0]
    batches = status(root)["batches"]
    save = save_once(root, rel, "big_repo_saved_fn", atomic=True, timeout=300)
    wait(idle_after(root, batches), 60, "the daemon to settle")
    rss_after, hwm_after = rss_mb(pid)
    child_peak = status(root)["scan_child_peak_rss_mb"]
    watching.stop(Memory(root))
    _pid2, warm = start(root, timeout=600)
    rss_warm, hwm_warm = rss_mb(_pid2)
    watching.stop(Memory(root))
    return {
        "files": files,
        "generator": source,
        "repo_setup_s": round(made, 1),
        "cold_start_to_ready_s": round(cold, 2),
        "rss_mb_after_cold_scan": round(rss, 1),
        "peak_rss_mb_cold": round(max(hwm, hwm_after), 1),
        "children_rss_mb": round(kids, 1),
        "rss_mb_after_a_save": round(rss_after, 1),
        "scan_child_peak_rss_mb": child_peak,
        "save_to_entity_ms": round(save * 1000, 1),
        "warm_restart_to_ready_s": round(warm, 2),
        "rss_mb_warm": round(rss_warm, 1),
        "peak_rss_mb_warm": round(hwm_warm, 1),
    }


# -- 4. idle ------------------------------------------------------------------------------------
def cpu_seconds(pid: int) -> float:
    """CPU time of every thread of ``pid`` (the scheduler's nanoseconds, not clock ticks)."""
    tasks = Path(f"/proc/{pid}/task").glob("*/schedstat")
    return sum(int(task.read_text().split()[0]) for task in tasks) / 1e9


def planning_snapshot(root: Path) -> dict[str, tuple[int, int, int]]:
    found = {}
    for folder, _dirs, files in os.walk(root / ".planning"):
        for name in files:
            st = os.stat(os.path.join(folder, name))
            found[os.path.join(folder, name)] = (st.st_ino, st.st_mtime_ns, st.st_size)
    return found


def bench_idle(base: Path, seconds: float) -> dict[str, Any]:
    """A save handled, then ``seconds`` of nothing: the daemon's CPU and its writes."""
    root = base / "idle"
    make_repo(root, 50, generator=own_generator)
    pid, _ready = start(root)
    try:
        batches = status(root)["batches"]
        save_once(root, "src/d0000/m000003.py", "idle_bench_saved_fn", atomic=False)
        wait(idle_after(root, batches), 10, "the daemon to settle")
        time.sleep(1.5)  # the status file catches up at most once a second
        batches = status(root)["batches"]
        before, cpu = planning_snapshot(root), cpu_seconds(pid)
        time.sleep(seconds)
        used = (cpu_seconds(pid) - cpu) / seconds
        quiet = planning_snapshot(root) == before and status(root)["batches"] == batches
    finally:
        watching.stop(Memory(root))
    return {"seconds": seconds, "cpu_percent": round(used * 100, 3), "wrote_nothing": quiet}


PARTS = ("latency", "switch", "rss", "idle")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--saves", type=int, default=200)
    parser.add_argument("--switch-files", type=int, default=10_000)
    parser.add_argument("--rss-files", type=int, default=100_000)
    parser.add_argument("--idle-seconds", type=float, default=10.0)
    parser.add_argument("--skip-rss", action="store_true")
    parser.add_argument("--only", choices=PARTS, action="append", help="run only these parts")
    parser.add_argument("--keep", action="store_true", help="keep the temporary repositories")
    args = parser.parse_args()
    os.environ.update(GIT_ENV)
    base = Path(tempfile.mkdtemp(prefix="bench-watch-"))
    print(f"bench_watch: {os.cpu_count()} CPUs, repositories in {base}")
    parts = set(args.only or PARTS) - ({"rss"} if args.skip_rss else set())
    try:
        if "latency" in parts:
            lat = bench_latency(base, args.saves)
            print(f"save -> entity JSON: p50 {lat['p50_ms']} ms, p99 {lat['p99_ms']} ms {lat}")
        if "switch" in parts:
            sw = bench_switch(base, args.switch_files)
            print(f"branch switch of {sw['files']} files: converged in {sw['converged_s']} s {sw}")
        if "rss" in parts:
            big = bench_rss(base, args.rss_files)
            print(f"{big['files']} files: peak RSS {big['peak_rss_mb_cold']} MB {big}")
        if "idle" in parts:
            idle = bench_idle(base, args.idle_seconds)
            print(f"idle for {idle['seconds']:g} s: {idle['cpu_percent']}% of a CPU {idle}")
    finally:
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
