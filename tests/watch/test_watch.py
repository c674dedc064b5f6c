"""The watch daemon: event filtering and batching in-process, the pure plan, the part's
layering, then a real daemon process on a real git repository (saves, atomic renames, hand
edits, idleness, a branch switch, a kernel queue overflow, start / stop / status, the
foreground command)."""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import planning_memory.watch as watching
from planning_memory.entity import IgnoreRules
from planning_memory.memory import Memory
from planning_memory.watch import daemon, events, plan
from planning_memory.watch.reactions import REACTIONS


# -- in-process: what counts and when ----------------------------------------------------------
@pytest.mark.parametrize(
    "name",
    ["x.py~", "4913", ".x.py.swp", ".x.py.swx", ".#x.py", "x.py___jb_tmp___", ".a.json.1.pm-tmp"],
)
def test_editor_temp_files_are_rejected(name: str) -> None:
    assert events.is_temp_name(name)
    assert events.quick_reject(f"src/{name}")


@pytest.mark.parametrize(
    ("rel", "rejected"),
    [
        ("src/app.py", False),
        (".git/HEAD", False),
        (".git/index", True),
        (".git/objects/ab/cdef", True),
        (".git/refs/heads/main", True),
        (".planning/memory/contextual/index.sqlite3", True),
        (".planning/memory/contextual/watch-status.json", True),
        (".planning/.lock", True),
        (".planning/patterns.md", False),
        (".planning/memory/entity/files/src.json", False),
    ],
)
def test_quick_reject(rel: str, rejected: bool) -> None:
    assert events.quick_reject(rel) is rejected


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_batcher_waits_for_quiet_then_releases_everything_once() -> None:
    clock = FakeClock()
    b = events.Batcher(quiet=0.12, max_wait=2.0, clock=clock)
    assert b.due_in() is None
    b.add("a.py")
    assert b.due_in() == pytest.approx(0.12)
    clock.now += 0.1
    b.add("b.py")
    b.add("a.py")
    assert b.due_in() == pytest.approx(0.12)  # the quiet window restarts
    assert len(b) == 2
    clock.now += 0.12
    assert b.due_in() == 0
    batch = b.take()
    assert batch.paths == {"a.py", "b.py"} and not batch.full
    assert b.due_in() is None and len(b) == 0


def test_batcher_max_wait_bounds_a_continuous_stream() -> None:
    clock = FakeClock()
    b = events.Batcher(quiet=0.12, max_wait=2.0, clock=clock)
    for _ in range(40):  # an event every 60 ms never leaves a quiet window
        b.add("log.txt")
        clock.now += 0.06
    assert b.due_in() == 0
    assert b.age() == pytest.approx(2.4)


def test_batcher_full_request_and_deleted_dirs() -> None:
    b = events.Batcher(quiet=0.1, max_wait=1.0, clock=FakeClock())
    b.request_full("queue overflow")
    b.request_full("queue overflow")
    b.add_deleted_dir("old")
    batch = b.take()
    assert batch.full == ["queue overflow"] and batch.deleted_dirs == {"old"}


def test_ignore_rules_root_nested_exclude_and_config(tmp_path: Path) -> None:
    (tmp_path / ".git" / "info").mkdir(parents=True)
    (tmp_path / ".git" / "info" / "exclude").write_text("secret.py\n")
    (tmp_path / ".gitignore").write_text("build/\n*.log\n!keep.log\n")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / ".gitignore").write_text("generated_*.py\n")
    rules = IgnoreRules(str(tmp_path), ["node_modules/**"])
    assert rules.ignored("build/x/y.py")
    assert rules.ignored("src/build/y.py")
    assert rules.ignored("debug.log") and not rules.ignored("keep.log")
    assert rules.ignored("secret.py")
    assert rules.ignored("node_modules/a/b.js")
    assert rules.ignored("pkg/generated_models.py")
    assert not rules.ignored("generated_models.py")  # the nested rule applies below pkg/ only
    assert not rules.ignored("src/app.py")
    (tmp_path / ".gitignore").write_text("src/\n")
    assert not rules.ignored("src/app.py")  # cached until refreshed
    rules.refresh()
    assert rules.ignored("src/app.py") and not rules.ignored("debug.log")


def test_own_writes_are_recognised_until_someone_else_writes(tmp_path: Path) -> None:
    own = events.OwnWrites()
    writes = events.WriteLog(own)
    Memory.init(tmp_path)
    store = Memory(tmp_path, on_write=writes.note).store
    layout = store.layout
    path = layout.entity / "files" / "src.json"
    assert store.write_json(path, {"a": 1})
    assert own.is_own(str(path))
    assert not store.write_json(path, {"a": 1})  # equal bytes: nothing written, still ours
    assert own.is_own(str(path))
    assert writes.take_written() == [path] and writes.take_written() == []
    time.sleep(0.01)
    path.write_text('{"a": 2}\n')  # an editor, git, another process
    assert not own.is_own(str(path))
    assert not own.is_own(str(layout.entity / "never-written.json"))
    store.delete(path)
    assert own.is_own(str(path))  # deleted by us


def test_events_lost_requests_one_full_reconcile(tmp_path: Path) -> None:
    """Watchdog's ``EventsLostEvent`` (one per watch of the observer) asks for one reconcile."""
    from watchdog.events import EventsLostEvent

    b = events.Batcher(clock=FakeClock())
    w = events.Watcher(str(tmp_path), b, events.OwnWrites())
    for _ in range(2):
        w.note(EventsLostEvent(str(tmp_path), is_directory=True))
    assert b.take().full == ["queue overflow"]


# A watcher on real watchdog inside a user namespace whose inotify watch limit
# (/proc/sys/user/max_inotify_watches, owned by the namespace) is lowered to ``limit``.
LIMITED_WATCHER = """
import json, os, sys, time
from planning_memory.watch import events

root, limit = sys.argv[1], int(sys.argv[2])
with open("/proc/sys/user/max_inotify_watches", "w") as fh:
    fh.write(str(limit))
b = events.Batcher(quiet=0.05, max_wait=0.5)
w = events.Watcher(root, b, events.OwnWrites())
seen = {"start": w.start(), "full": []}
for i in range(limit + 2):  # more new folders than watches are left
    os.makedirs(os.path.join(root, f"new{i}", "deep"))
deadline = time.monotonic() + 15
while w.kind != "polling" and time.monotonic() < deadline:
    time.sleep(0.05)
    w.check()
seen["after"], seen["warnings"] = w.kind, w.warnings
seen["full"] += b.take().full
last = os.path.join(root, f"new{limit + 1}", "deep", "late.py")
with open(last, "w") as fh:
    fh.write("x = 1\\n")
rel = os.path.relpath(last, root)
while rel not in b.take().paths and time.monotonic() < deadline + 10:
    time.sleep(0.1)
seen["late_seen"] = time.monotonic() < deadline + 10
w.stop()
print(json.dumps(seen))
"""


def limited_watcher(root: Path, limit: int) -> dict[str, Any]:
    if subprocess.run(["unshare", "-U", "-r", "true"], capture_output=True).returncode:
        pytest.skip("this kernel refuses an unprivileged user namespace (unshare -U)")
    done = subprocess.run(
        ["unshare", "-U", "-r", sys.executable, "-c", LIMITED_WATCHER, str(root), str(limit)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=Path(__file__).parents[2],
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def test_watch_limit_at_start_falls_back_to_polling_with_a_warning(tmp_path: Path) -> None:
    for name in ("a/b", "c", "d"):
        (tmp_path / name).mkdir(parents=True)
    seen = limited_watcher(tmp_path, 3)  # five folders, three watches
    assert seen["start"] == "polling" and "watch limit" in seen["warnings"][0]
    assert "switched to polling" in seen["full"]
    assert seen["late_seen"]  # the polling observer still sees changes


def test_watch_limit_hit_later_on_a_subfolder_switches_to_polling(tmp_path: Path) -> None:
    """Watchdog logs a failed watch on a new sub-folder and goes on; ``check`` finds the
    folder unwatched and falls back, and a file written in it is still seen."""
    (tmp_path / "src").mkdir()
    seen = limited_watcher(tmp_path, 6)
    assert seen["start"] == "inotify"
    assert seen["after"] == "polling" and "watch limit" in seen["warnings"][0]
    assert "switched to polling" in seen["full"]
    assert seen["late_seen"]


def test_new_folders_that_are_watched_keep_inotify(tmp_path: Path) -> None:
    b = events.Batcher(quiet=0.05, max_wait=0.5)
    w = events.Watcher(str(tmp_path), b, events.OwnWrites())
    assert w.start() == "inotify"
    try:
        (tmp_path / "pkg" / "sub").mkdir(parents=True)
        (tmp_path / "pkg" / "sub" / "m.py").write_text("x = 1\n")
        deadline = time.monotonic() + 10
        while "pkg/sub/m.py" not in b.take().paths:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        w.check()
        assert w.kind == "inotify" and not w.warnings
        assert events.unwatched([str(tmp_path / "pkg"), str(tmp_path / "pkg" / "sub")]) == []
    finally:
        w.stop()
    # a folder no inotify instance of this process watches is reported
    (tmp_path / "loose").mkdir()
    assert events.unwatched([str(tmp_path / "loose")]) == [str(tmp_path / "loose")]


# -- the plan: pure ---------------------------------------------------------------------------
def test_plan_sorts_paths_by_what_they_set_off() -> None:
    p = plan.make(
        {
            "src/a.py",
            "dist/bundle.js",
            ".planning/patterns.md",
            ".planning/memory/long-term/patterns/pat_01.json",
            ".planning/memory/short-term/queue/ses_01.json",
            ".planning/memory/short-term/session-ses_01.json",
            ".planning/memory/entity/files/src.json",
            ".planning/memory/entity/files/.notes.txt",
            ".planning/docs/notes.md",  # not a view: nothing to do
        },
        ignored={"dist/bundle.js"},
    )
    assert p.source == {"src/a.py"}
    assert p.markdown == {".planning/patterns.md"}
    assert p.memory_json == {".planning/memory/long-term/patterns/pat_01.json"}
    assert p.queue == {".planning/memory/short-term/queue/ses_01.json"}
    assert p.sessions == {".planning/memory/short-term/session-ses_01.json"}
    assert p.entity == {
        ".planning/memory/entity/files/src.json",
        ".planning/memory/entity/files/.notes.txt",
    }
    assert p.full == [] and not p.gitignore and not p.config
    assert p.count() == 7 and p


def test_a_branch_switch_a_big_batch_or_a_rule_change_is_one_full_reconcile() -> None:
    assert plan.make({"src/a.py"}, branch_switched=True).full == ["branch switch"]
    assert plan.make((), full=["startup"], branch_switched=True).full == [
        "startup",
        "branch switch",
    ]
    many = {f"src/m{i}.py" for i in range(plan.MAX_PATHS + 1)}
    assert plan.make(many).full == [f"{plan.MAX_PATHS + 1} paths changed"]
    assert plan.make(set(list(many)[: plan.MAX_PATHS])).full == []
    changed = plan.make({"src/.gitignore"})
    assert changed.gitignore and changed.full == [".gitignore changed"] and not changed.source
    config = plan.make({".planning/memory-config.json"})
    assert config.config and config.full == ["config changed"]
    assert plan.make({"src/.gitignore"}, ignored={"src/.gitignore"}).gitignore


def test_plan_deleted_folders() -> None:
    gone = plan.make((), deleted_dirs={"src/old"})
    assert gone.source == {"src/old"} and not gone.full  # moved away: the scan drops its files
    removed = plan.make({"src/old/a.py"}, deleted_dirs={"src/old"})
    assert removed.source == {"src/old/a.py"}  # rm -rf reports the files: they are enough
    assert not plan.make((), deleted_dirs={"build"}, ignored={"build"})
    records = plan.make((), deleted_dirs={".planning/memory/long-term/patterns"})
    assert records.memory_json == {".planning/memory/long-term/patterns"}


def test_an_empty_plan_is_false_and_the_helpers_agree_with_it() -> None:
    assert not plan.make(())
    assert plan.maybe_source("src/a.py") and not plan.maybe_source(".planning/patterns.md")
    assert not plan.maybe_source("src/.gitignore")
    assert plan.records(
        [".planning/memory/long-term/mistakes/mis_01.json", ".planning/memory/entity/a.json"]
    ) == {".planning/memory/long-term/mistakes/mis_01.json"}


@pytest.mark.parametrize(
    ("age", "git_busy", "pending", "idle_for", "reason"),
    [
        (0.2, False, 1, 0.2, None),
        (0.2, True, 1, 0.2, "waiting for git"),
        (0.2, False, plan.MAX_PATHS + 1, 0.01, "waiting for the burst to end"),
        (0.2, False, plan.MAX_PATHS + 1, 0.1, None),  # the burst is over
        (0.2, False, plan.MAX_PATHS, 0.01, None),  # not a burst
        (plan.HOLD_MAX_S, True, plan.MAX_PATHS + 1, 0.0, None),  # never held for long
    ],
)
def test_a_due_batch_waits_for_git_and_for_a_big_burst_to_end_but_not_forever(
    age: float, git_busy: bool, pending: int, idle_for: float, reason: str | None
) -> None:
    held = plan.hold(age=age, git_busy=git_busy, pending=pending, idle_for=idle_for, quiet=0.1)
    assert held == reason


def test_scans_of_a_full_reconcile_or_a_large_repository_run_in_a_child() -> None:
    assert plan.scan_in_child(None, 0)
    assert not plan.scan_in_child(["a.py"], plan.IN_PROCESS_MAX_FILES)
    assert plan.scan_in_child(["a.py"], plan.IN_PROCESS_MAX_FILES + 1)


def test_config_switches_turn_reactions_off() -> None:
    config = {"memory": {"entity": {"autoScan": False}, "contextual": {}}}
    assert plan.switched(["entity", "index", "markdown"], config) == {
        "entity": "disabled by config (entity.autoScan)",
        "index": "available",
        "markdown": "available",
    }


def test_the_batch_summary() -> None:
    p = plan.make({"src/a.py", ".planning/patterns.md"}, full=["startup"])
    assert plan.summary(p, at="2024-01-20T15:00:00Z", seconds=0.5, waited=0.12345) == {
        "at": "2024-01-20T15:00:00Z",
        "paths": 2,
        "source": 1,
        "full": "startup",
        "seconds": 0.5,
        "waited": 0.123,
    }


def test_plan_is_pure() -> None:
    """The plan module imports nothing that does I/O, and nothing of the package."""
    imported = imports_of(Path(plan.__file__))
    assert {m.split(".")[0] for m in imported} <= {
        "__future__",
        "collections",
        "dataclasses",
        "typing",
    }


# -- the part's layering ------------------------------------------------------------------------
def imports_of(path: Path) -> set[str]:
    """Every module ``path`` imports (function-level and ``TYPE_CHECKING`` ones included)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            found.add(node.module or "")
    return found


def ours(imported: set[str]) -> set[str]:
    return {m for m in imported if m.split(".")[0] == "planning_memory"}


WATCH = Path(watching.__file__).parent


@pytest.mark.parametrize("name", ["__init__", "child", "daemon", "plan", "process", "reactions"])
def test_the_daemon_reaches_the_memory_only_through_the_facade(name: str) -> None:
    allowed = {"planning_memory.memory", "planning_memory.errors", "planning_memory.watch"}
    bad = {
        m
        for m in ours(imports_of(WATCH / f"{name}.py"))
        if m not in allowed and not m.startswith("planning_memory.watch.")
    }
    assert bad == set()


def test_the_cli_uses_the_watch_package_not_its_modules() -> None:
    cli = Path(watching.__file__).parent.parent / "cli" / "watch.py"
    allowed = {"planning_memory.watch", "planning_memory.memory", "planning_memory.errors"}
    assert {m for m in ours(imports_of(cli)) if not m.startswith("planning_memory.cli")} <= (
        allowed
    )


def test_help_does_not_import_watchdog() -> None:
    code = (
        "import sys\n"
        "from planning_memory.cli import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        "import planning_memory.watch as w\n"
        "w.status, w.start, w.stop\n"
        "assert 'watchdog' not in sys.modules, 'watchdog imported'\n"
        "w.run_foreground\n"
        "assert 'watchdog' in sys.modules\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "watch" in done.stdout


def test_the_registry_names_the_reactions_status_reports() -> None:
    assert set(REACTIONS) == {"entity", "markdown", "index", "summaries"}
    assert set(plan.SWITCHES) <= set(REACTIONS)


# -- the daemon's view of a batch (in-process) --------------------------------------------------
def _repo(tmp_path: Path) -> Path:
    subprocess.run(["git", "init", "-q", "-b", "main", str(tmp_path)], check=True)
    Memory.init(tmp_path)
    return tmp_path


def test_the_daemon_asks_gitignore_and_head_before_sorting(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    (root / ".gitignore").write_text("dist/\n")
    d = daemon.Daemon(Memory(root))
    batch = events.Batch(paths={"src/a.py", "dist/bundle.js", ".planning/patterns.md", ".git/HEAD"})
    p = d.sort(batch)
    assert p.source == {"src/a.py"} and p.markdown == {".planning/patterns.md"}
    assert p.full == []  # HEAD was touched but names the same branch
    (root / ".git" / "HEAD").write_text("ref: refs/heads/other\n")
    assert d.sort(events.Batch(paths={".git/HEAD"})).full == ["branch switch"]
    assert d.sort(events.Batch(paths={".git/HEAD"})).full == []  # once
    assert d.sort(events.Batch(deleted_dirs={"dist/old", "src/old"})).source == {"src/old"}


def test_the_daemon_holds_a_batch_while_git_holds_its_index_lock(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    d = daemon.Daemon(Memory(root))
    clock = FakeClock()
    d.batcher = events.Batcher(quiet=0.1, max_wait=2.0, clock=clock)
    d.batcher.add("src/a.py")
    clock.now += 0.2
    assert d.batcher.due_in() == 0 and d._hold() is None
    (root / ".git" / "index.lock").write_text("")
    assert d._hold() == "waiting for git"
    clock.now += plan.HOLD_MAX_S
    assert d._hold() is None  # a stale index.lock holds nothing back for long


def test_the_daemons_own_writes_are_left_out_of_the_plan(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    d = daemon.Daemon(Memory(root))
    shard = d.memory.layout.entity / "files" / "src.json"
    d.memory.store.write_json(shard, {"files": {}})
    rel = ".planning/memory/entity/files/src.json"
    assert not d.sort(events.Batch(paths={rel}))
    shard.write_text("{}\n")  # not ours any more
    assert d.sort(events.Batch(paths={rel})).entity == {rel}


def test_a_reaction_that_fails_is_counted_and_shown_and_the_daemon_carries_on(
    tmp_path: Path,
) -> None:
    root = _repo(tmp_path)
    d = daemon.Daemon(Memory(root))

    def broken(memory: Memory, paths: list[str] | None) -> None:
        raise RuntimeError("boom")

    d._react("entity", ["a.py"], broken)
    assert d.info["errors"] == 1 and d.info["last_error"]["reaction"] == "entity"
    assert "boom" in d.info["last_error"]["message"]
    d.reactions["entity"] = "disabled by config (entity.autoScan)"
    d._react("entity", ["a.py"], broken)  # switched off: not run
    assert d.info["errors"] == 1


# -- a real daemon process on a real git repository ---------------------------------------------
PMEM = [
    sys.executable,
    "-c",
    "import planning_memory.cli.watch; from planning_memory.cli import main; main()",
]


def pmem(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*PMEM, "-C", str(root), *args], capture_output=True, text=True, timeout=60
    )


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)


def write_module(path: Path, *functions: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    body = "".join(f"def {name}(x):\n    return x + 1\n\n\n" for name in functions)
    path.write_text(f'"""Module {path.stem}."""\n\n\n{body}')


@pytest.fixture
def repo(tmp_path: Path) -> Iterator[Path]:
    """A git repository with a few Python files, committed, and an empty memory tree."""
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / ".gitignore").write_text("build/\n")
    for i in range(5):
        write_module(root / "src" / "pkg" / f"m{i}.py", f"original_{i}")
    Memory.init(root)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "init")
    yield root
    watching.stop(Memory(root), timeout=10)


def runtime(root: Path) -> watching.Runtime:
    return watching.Runtime(Memory(root))


def start(root: Path) -> int:
    done = pmem(root, "watch", "start", "--json")
    assert done.returncode == 0, done.stderr
    pid = int(json.loads(done.stdout)["pid"])
    wait_until(lambda: status(root).get("state") == "idle" and status(root)["batches"] >= 1, root)
    assert status(root)["last_error"] is None, report(root)
    return pid


def status(root: Path) -> dict[str, Any]:
    return watching.status(Memory(root))


def wait_until(check: Callable[[], bool], root: Path, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s\n{report(root)}")
        time.sleep(0.02)


def report(root: Path) -> str:
    """The daemon's status and log, for failure messages."""
    log = runtime(root).log
    tail = log.read_text()[-3000:] if log.exists() else "(no log)"
    return f"status: {json.dumps(status(root), indent=1)}\nlog:\n{tail}"


def settled(root: Path, batches: int) -> Callable[[], bool]:
    """The daemon processed a batch after ``batches`` and has nothing pending."""

    def check() -> bool:
        info = status(root)
        return bool(info["batches"] > batches and info["state"] == "idle" and info["queue"] == 0)

    return check


def entity_text(root: Path) -> str:
    folder = root / ".planning" / "memory" / "entity"
    return "".join(p.read_text() for p in sorted(folder.rglob("*.json")))


def replaced(root: Path, old: str, new: str) -> bool:
    """Every shard has caught up (they are written one after another)."""
    text = entity_text(root)
    return new in text and old not in text


def entity_tree(root: Path) -> dict[str, bytes]:
    folder = root / ".planning" / "memory" / "entity"
    return {
        str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


def proc_state(pid: int) -> str:
    """The process's state letter (``R``, ``S``, ``T`` stopped, ``Z`` zombie); "" when gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return ""


def alive(pid: int) -> bool:
    return proc_state(pid) not in ("", "Z")


def test_start_status_stop_and_a_second_start_refuses(repo: Path) -> None:
    before = pmem(repo, "watch", "status")
    assert before.returncode == 0 and before.stdout.startswith("not running")
    pid = start(repo)
    wait_until(lambda: status(repo)["queue"] == 0, repo)  # the status file lags up to 1 s
    info = json.loads(pmem(repo, "watch", "status", "--json").stdout)
    assert info["running"] and info["pid"] == pid and info["uptime_s"] >= 0
    assert info["observer"] == "inotify" and info["queue"] == 0 and info["last_error"] is None
    assert info["reactions"] == dict.fromkeys(REACTIONS, "available")
    assert runtime(repo).pid.read_text().strip() == str(pid)
    text = pmem(repo, "watch", "status").stdout
    assert f"running, pid {pid}" in text and "last event:" in text and "queue: 0" in text
    again = pmem(repo, "watch", "start")
    assert again.returncode == 7 and "already runs" in again.stderr and str(pid) in again.stderr
    foreground = pmem(repo, "watch")  # the foreground daemon refuses too
    assert foreground.returncode == 7 and "already runs" in foreground.stderr
    assert alive(pid)
    stopped = pmem(repo, "watch", "stop")
    assert stopped.returncode == 0 and stopped.stdout.strip() == f"stopped pid {pid}"
    wait_until(lambda: not alive(pid), repo, timeout=10)
    assert not runtime(repo).pid.exists()
    assert pmem(repo, "watch", "status").stdout.startswith("not running")
    assert pmem(repo, "watch", "stop").stdout.strip() == "not running"


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_signals_stop_cleanly(repo: Path, sig: signal.Signals) -> None:
    pid = start(repo)
    os.kill(pid, sig)
    wait_until(lambda: not watching.is_running(runtime(repo)), repo, timeout=10)
    wait_until(lambda: not alive(pid), repo, timeout=10)
    assert not runtime(repo).pid.exists()
    last = json.loads(runtime(repo).status.read_text())
    assert last["state"] == "stopped" and last["last_error"] is None
    assert "stopped" in runtime(repo).log.read_text()
    assert start(repo) != pid  # the lock was released: a new daemon can start


def test_a_killed_daemon_leaves_no_lock_behind(repo: Path) -> None:
    pid = start(repo)
    os.kill(pid, signal.SIGKILL)
    wait_until(lambda: not watching.is_running(runtime(repo)), repo, timeout=10)
    assert runtime(repo).pid.exists()  # stale, and harmless
    assert pmem(repo, "watch", "status").stdout.startswith("not running")
    assert start(repo) != pid


def test_foreground_watch_logs_lines_without_a_terminal_and_stops_on_ctrl_c(repo: Path) -> None:
    proc = subprocess.Popen(
        [*PMEM, "-C", str(repo), "watch"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_until(lambda: status(repo).get("state") == "idle", repo)
        assert status(repo)["pid"] == proc.pid
        write_module(repo / "src" / "pkg" / "m2.py", "seen_in_the_foreground")
        wait_until(lambda: "seen_in_the_foreground" in entity_text(repo), repo)
    finally:
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=20)
    assert proc.returncode == 0, err
    assert "\r" not in out  # no status line when stdout is not a terminal
    assert "watching" in err and "batch: " in err and "stopped" in err
    assert not watching.is_running(runtime(repo))


def test_queued_session_summaries_are_drained(repo: Path) -> None:
    from datetime import UTC, datetime

    start(repo)
    now = datetime(2024, 1, 20, 15, 0, tzinfo=UTC)
    mem = Memory(repo, clock=lambda: now)
    sid = str(mem.sessions.start(goal="ship the watch daemon")["id"])
    queue = repo / ".planning" / "memory" / "short-term" / "queue"
    for i in range(20):  # past the default window of 15: the session queues a summary
        mem.log(f"step {i} done", session_id=sid)
    assert (queue / f"{sid}.json").exists()
    wait_until(lambda: not list(queue.glob("*.json")), repo)
    rolling = mem.get_session_context(sid)["rolling_summary"]
    assert rolling["message_count"] >= 5 and rolling["summary"]


def test_a_save_and_an_atomic_rename_reach_entity_json_temp_and_ignored_files_do_not(
    repo: Path,
) -> None:
    start(repo)
    assert "original_0" in entity_text(repo)
    batches = status(repo)["batches"]
    write_module(repo / "src" / "pkg" / "m0.py", "saved_in_place")
    wait_until(lambda: replaced(repo, "original_0", "saved_in_place"), repo)
    wait_until(settled(repo, batches), repo)
    batches = status(repo)["batches"]
    target = repo / "src" / "pkg" / "m1.py"
    tmp = target.with_name("m1.py.tmp")
    write_module(tmp, "saved_by_rename")
    os.replace(tmp, target)  # how vim (backupcopy=no), JetBrains and many tools save
    wait_until(lambda: replaced(repo, "original_1", "saved_by_rename"), repo)
    wait_until(settled(repo, batches), repo)
    batches = status(repo)["batches"]
    for name in ("4913", ".m2.py.swp", "m2.py~", ".#m2.py", "m2.py___jb_tmp___"):
        write_module(repo / "src" / "pkg" / name, "from_a_temp_file")
    write_module(repo / "build" / "gen.py", "in_a_gitignored_folder")
    time.sleep(1.0)
    assert status(repo)["batches"] == batches  # nothing to do: no batch ran
    text = entity_text(repo)
    assert "from_a_temp_file" not in text and "in_a_gitignored_folder" not in text
    (repo / "src" / "pkg" / "m3.py").unlink()
    wait_until(lambda: "original_3" not in entity_text(repo), repo)


def test_the_search_index_follows_a_save_once_it_exists(repo: Path) -> None:
    index = repo / ".planning" / "memory" / "contextual" / "index.sqlite3"
    start(repo)
    batches = status(repo)["batches"]
    write_module(repo / "src" / "pkg" / "m0.py", "before_the_index")
    wait_until(settled(repo, batches), repo)
    assert not index.exists()  # the daemon keeps an index current; it does not build one
    Memory(repo).reindex()
    batches = status(repo)["batches"]
    write_module(repo / "src" / "pkg" / "m1.py", "zeta_quux_indexed")
    wait_until(settled(repo, batches), repo)
    assert status(repo)["last_error"] is None, report(repo)
    hits = Memory(repo).search("zeta_quux_indexed")  # a search syncs memory files, not code
    assert any(hit.source == "code" for hit in hits), report(repo)


def planning_snapshot(root: Path) -> dict[str, tuple[int, int, int]]:
    found = {}
    for folder, _dirs, files in os.walk(root / ".planning"):
        for name in files:
            st = os.stat(os.path.join(folder, name))
            found[os.path.join(folder, name)] = (st.st_ino, st.st_mtime_ns, st.st_size)
    return found


def test_the_daemons_own_writes_cause_no_further_work(repo: Path) -> None:
    """After a save has been handled, nothing: no file under .planning changes (the status
    file included) and no batch runs. (``bench/bench_watch.py`` measures the idle CPU.)"""
    start(repo)
    batches = status(repo)["batches"]
    write_module(repo / "src" / "pkg" / "m4.py", "one_more_save")
    wait_until(lambda: "one_more_save" in entity_text(repo), repo)
    wait_until(settled(repo, batches), repo)
    time.sleep(1.5)  # let the status file catch up
    batches = status(repo)["batches"]
    before = planning_snapshot(repo)
    time.sleep(1.5)
    assert planning_snapshot(repo) == before
    assert status(repo)["batches"] == batches


@pytest.mark.slow
def test_a_branch_switch_of_2000_files_converges_to_a_fresh_scan(repo: Path) -> None:
    for i in range(2000):
        write_module(repo / "src" / f"d{i // 50:02d}" / f"f{i}.py", f"main_{i}")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "2000 files")
    git(repo, "checkout", "-q", "-b", "other")
    for i in range(2000):
        path = repo / "src" / f"d{i // 50:02d}" / f"f{i}.py"
        if i % 20 == 0:
            path.unlink()  # 100 files gone
        else:
            write_module(path, f"other_{i}")  # 1,900 changed
    for i in range(100):
        write_module(repo / "src" / "added" / f"n{i}.py", f"added_{i}")  # 100 new
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "other")
    git(repo, "checkout", "-q", "main")
    start(repo)
    assert "main_1999" in entity_text(repo), report(repo)
    before = status(repo)
    git(repo, "checkout", "-q", "other")

    def converged() -> bool:
        info = status(repo)
        return bool(
            info["full_reconciles"] > before["full_reconciles"]
            and info["queue"] == 0
            and (info["state"] == "idle")
        )

    wait_until(converged, repo, timeout=60)
    after = status(repo)
    assert after["full_reconciles"] - before["full_reconciles"] == 1, report(repo)  # no storm
    assert after["batches"] - before["batches"] <= 2, report(repo)
    # one full reconcile, for HEAD naming another branch or, when the checkout's events
    # reach the daemon before HEAD's (a loaded machine), for the burst of changed paths
    log = runtime(repo).log.read_text()
    assert re.search(r"full reconcile \((branch switch|\d+ paths changed)", log), log
    watching.stop(Memory(repo))
    by_daemon = entity_tree(repo)
    entity = repo / ".planning" / "memory" / "entity"
    shutil.rmtree(entity)
    entity.mkdir()
    Memory(repo).scan()
    assert by_daemon == entity_tree(repo)
    assert "other_1999" in entity_text(repo) and "main_1999" not in entity_text(repo)


def test_a_kernel_queue_overflow_leads_to_a_full_reconcile_that_misses_nothing(
    repo: Path,
) -> None:
    """Freeze the daemon, flood its inotify queue past ``max_queued_events`` and create a file
    whose events the kernel drops: the overflow's reconcile still finds it."""
    pid = start(repo)
    before = status(repo)
    limit = int(Path("/proc/sys/fs/inotify/max_queued_events").read_text())
    noise = [repo / "notes-a.txt", repo / "notes-b.txt"]
    for path in noise:
        path.write_text("noise\n")
    time.sleep(0.5)
    os.kill(pid, signal.SIGSTOP)
    wait_until(lambda: proc_state(pid) == "T", repo, timeout=10)  # stopped, not stopping
    try:
        for i in range(limit + 1000):  # one attribute event each; alternating: no coalescing
            os.utime(noise[i % 2], ns=(i, i))
        write_module(repo / "src" / "pkg" / "lost.py", "created_during_overflow")
    finally:
        os.kill(pid, signal.SIGCONT)
    wait_until(lambda: "created_during_overflow" in entity_text(repo), repo)
    wait_until(lambda: status(repo)["queue"] == 0 and status(repo)["state"] == "idle", repo)
    after = status(repo)
    assert after["full_reconciles"] >= before["full_reconciles"] + 1, report(repo)
    assert "full reconcile (queue overflow)" in runtime(repo).log.read_text()


def test_json_written_elsewhere_is_rendered_and_a_hand_edit_of_patterns_md_is_imported(
    repo: Path,
) -> None:
    start(repo)
    assert status(repo)["reactions"]["markdown"] == "available"
    mem = Memory(repo)  # another writer
    saved = mem.save(
        title="Use zod for request validation",
        record_type="pattern",
        description="validate every request body with zod",
    )
    record_id = saved.summary()["id"]
    view = repo / ".planning" / "patterns.md"
    wait_until(lambda: view.exists() and record_id in view.read_text(), repo)
    wait_until(lambda: status(repo)["state"] == "idle" and status(repo)["queue"] == 0, repo)
    batches = status(repo)["batches"]
    edited = view.read_text().replace(
        "validate every request body with zod", "validate every body and query with zod"
    )
    view.write_text(edited)  # by hand
    wait_until(lambda: "body and query" in mem.get(record_id)["description"], repo)
    wait_until(settled(repo, batches), repo)
    assert status(repo)["last_error"] is None, report(repo)
    assert "body and query" in view.read_text()
    before = planning_snapshot(repo)
    time.sleep(1.0)
    assert planning_snapshot(repo) == before  # the import and re-render did not echo
    record = repo / ".planning" / "memory" / "long-term" / "patterns" / f"{record_id}.json"
    value = json.loads(record.read_text())
    value["description"] = "validate every body with zod, as pulled"
    record.write_text(json.dumps(value, indent=2, sort_keys=True) + "\n")  # as a `git pull` does
    wait_until(lambda: "as pulled" in view.read_text(), repo)
    assert status(repo)["last_error"] is None, report(repo)


# -- a hostile tree, and file names that are not UTF-8 ---------------------------------------------
def daemons_of(root: Path) -> list[int]:
    """The pids of daemon processes started for ``root`` (from their command lines)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if (
            entry.name.isdigit()
            and b"planning_memory.watch.daemon" in argv
            and os.fsencode(root) in argv
        ):
            found.append(int(entry.name))
    return found


@pytest.mark.parametrize("name", ["watch.lock", "watch.pid", "watch.log", "watch-status.json"])
def test_a_runtime_file_linked_out_of_the_tree_is_refused_and_nothing_starts(
    repo: Path, tmp_path: Path, name: str
) -> None:
    canary = tmp_path / "canary"
    canary.write_text("precious\n")
    link = repo / ".planning" / "memory" / "contextual" / name
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(canary)
    for argv in (["watch", "start"], ["watch"], ["watch", "status"], ["watch", "stop"]):
        done = pmem(repo, *argv)
        assert done.returncode == 4, (argv, done.stderr)
        assert done.stderr.count("\n") == 1 and f"contextual/{name}" in done.stderr
        assert "leads outside the memory tree" in done.stderr and "rm " in done.stderr
    assert canary.read_text() == "precious\n"
    assert daemons_of(repo) == []
    link.unlink()  # the fixture's teardown stops the daemon it would have started


def test_a_folder_linked_out_of_the_tree_while_the_daemon_runs_is_never_written(
    repo: Path, tmp_path: Path
) -> None:
    """A `git pull` may bring a link in after the daemon looked the tree over at its start:
    each write is checked again, so the reaction fails out loud and the daemon carries on."""
    pid = start(repo)
    files = repo / ".planning" / "memory" / "entity" / "files"
    outside = tmp_path / "outside"
    shutil.copytree(files, outside)
    before = {p.name: p.read_bytes() for p in outside.rglob("*") if p.is_file()}
    shutil.rmtree(files)
    files.symlink_to(outside, target_is_directory=True)
    raw = runtime(repo).status  # read as it is: a command refuses the tree while the link is there
    batches = json.loads(raw.read_text())["batches"]

    def failed() -> bool:
        info = json.loads(raw.read_text())
        return bool(info["batches"] > batches and info["state"] == "idle" and info["errors"])

    write_module(repo / "src" / "pkg" / "m0.py", "changed_after_the_link")
    wait_until(failed, repo)
    assert {p.name: p.read_bytes() for p in outside.rglob("*") if p.is_file()} == before
    last_error = json.loads(raw.read_text())["last_error"]
    assert "leads outside the memory tree" in str(last_error), last_error
    assert alive(pid)
    files.unlink()
    shutil.copytree(outside, files)
    write_module(repo / "src" / "pkg" / "m0.py", "changed_once_it_is_gone")
    wait_until(lambda: "changed_once_it_is_gone" in entity_text(repo), repo)


def test_a_file_name_that_is_not_utf8_is_left_out_and_the_daemon_carries_on(repo: Path) -> None:
    pid = start(repo)
    batches = status(repo)["batches"]
    bad = os.path.join(os.fsencode(repo / "src" / "pkg"), b"caf\xe9.py")
    with open(bad, "w") as fh:
        fh.write("def in_a_file_named_badly(x):\n    return x\n")
    write_module(repo / "src" / "pkg" / "after.py", "written_after_the_bad_name")
    wait_until(lambda: "written_after_the_bad_name" in entity_text(repo), repo)
    wait_until(settled(repo, batches), repo)
    info = status(repo)
    assert info["last_error"] is None and info["errors"] == 0, report(repo)
    assert "in_a_file_named_badly" not in entity_text(repo)
    assert "caf\\xe9.py" in runtime(repo).log.read_text()
    full = pmem(repo, "scan", "--full")  # a full reconcile of the same tree
    assert full.returncode == 0 and full.stderr.count("caf\\xe9.py") == 1, full.stderr
    assert alive(pid) and status(repo)["last_error"] is None
