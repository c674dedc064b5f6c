"""The watch daemon: event filtering and batching in-process, then a real daemon process on a
real git repository (saves, atomic renames, hand edits, idleness, a branch switch, a kernel
queue overflow, start / stop / status)."""

from __future__ import annotations

import errno
import importlib.util
import inspect
import json
import logging
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from planning_memory.core.layout import Layout
from planning_memory.memory import Memory
from planning_memory.watch import daemon
from planning_memory.watch import events as watch


# -- in-process: what counts and when ----------------------------------------------------------
@pytest.mark.parametrize(
    "name",
    ["x.py~", "4913", ".x.py.swp", ".x.py.swx", ".#x.py", "x.py___jb_tmp___", ".a.json.1.pm-tmp"],
)
def test_editor_temp_files_are_rejected(name: str) -> None:
    assert watch.is_temp_name(name)
    assert watch.quick_reject(f"src/{name}")


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
    assert watch.quick_reject(rel) is rejected


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_batcher_waits_for_quiet_then_releases_everything_once() -> None:
    clock = FakeClock()
    b = watch.Batcher(quiet=0.12, max_wait=2.0, clock=clock)
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
    b = watch.Batcher(quiet=0.12, max_wait=2.0, clock=clock)
    for _ in range(40):  # an event every 60 ms never leaves a quiet window
        b.add("log.txt")
        clock.now += 0.06
    assert b.due_in() == 0
    assert b.age() == pytest.approx(2.4)


def test_batcher_full_request_and_deleted_dirs() -> None:
    b = watch.Batcher(quiet=0.1, max_wait=1.0, clock=FakeClock())
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
    rules = watch.IgnoreRules(str(tmp_path), ["node_modules/**"])
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
    Memory.init(tmp_path)
    layout = Layout.for_repo(tmp_path)
    own = watch.OwnWrites()
    store = watch.RecordingStore(layout, own)
    path = layout.entity / "files" / "src.json"
    assert store.write_json(path, {"a": 1})
    assert own.is_own(str(path))
    assert not store.write_json(path, {"a": 1})  # equal bytes: nothing written, still ours
    assert own.is_own(str(path))
    assert store.take_written() == [path] and store.take_written() == []
    time.sleep(0.01)
    path.write_text('{"a": 2}\n')  # an editor, git, another process
    assert not own.is_own(str(path))
    assert not own.is_own(str(layout.entity / "never-written.json"))
    store.delete(path)
    assert own.is_own(str(path))  # deleted by us


def test_overflow_log_requests_one_full_reconcile(tmp_path: Path) -> None:
    b = watch.Batcher(clock=FakeClock())
    w = watch.Watcher(str(tmp_path), b, watch.OwnWrites())
    w.start()
    try:
        for _ in range(3):
            logging.getLogger("watchdog.observers.inotify_c").warning(
                "Inotify queue overflowed; filesystem events were lost"
            )
    finally:
        w.stop()
    assert b.take().full == ["queue overflow"]
    requests: list[int] = []
    hook = watch._OverflowHook(lambda: requests.append(1), window=60)
    for _ in range(2):  # watchdog's two lines for one overflow: one request
        hook.emit(logging.LogRecord("w", logging.WARNING, "", 0, "queue overflowed", (), None))
    assert requests == [1]


def test_watch_limit_falls_back_to_polling_with_a_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    class Full:
        def __init__(self, **_kwargs: Any) -> None:
            raise OSError(errno.ENOSPC, "inotify watch limit reached")

    monkeypatch.setattr(watch, "Observer", Full)
    b = watch.Batcher(quiet=0.05, max_wait=0.5)
    w = watch.Watcher(str(tmp_path), b, watch.OwnWrites())
    with caplog.at_level(logging.WARNING, "planning_memory.watch.events"):
        kind = w.start()
    try:
        assert kind == "polling" and w.alive()
        assert "watch limit" in w.warnings[0] and "watch limit" in caplog.text
        assert b.take().full == ["switched to polling"]
        (tmp_path / "new.py").write_text("x = 1\n")
        deadline = time.monotonic() + 10
        while "new.py" not in b.take().paths:  # the polling observer still sees changes
            assert time.monotonic() < deadline
            time.sleep(0.1)
    finally:
        w.stop()


def test_watch_limit_hit_later_on_a_subfolder_switches_to_polling(tmp_path: Path) -> None:
    """Watchdog swallows ENOSPC for a sub-folder; the wrapper notices and ``check`` falls back."""
    b = watch.Batcher()
    w = watch.Watcher(str(tmp_path), b, watch.OwnWrites())
    assert w.start() == "inotify"
    try:
        real_fd: Any = getattr(w._observer, "_inotify_fd")  # noqa: B009
        assert not inspect.ismethod(real_fd.add_callback)  # our wrapper is installed

        class FullFD:
            def add_callback(self, *_args: Any) -> None:
                raise OSError(errno.ENOSPC, "inotify watch limit reached")

        class FakeObserver:
            _inotify_fd = FullFD()

        fake: Any = FakeObserver()
        w._detect_limit(fake)
        with pytest.raises(OSError):
            fake._inotify_fd.add_callback(b"/repo/deep/folder", 0, None, 0)
        assert w.limit_hit
        w.check()
        assert w.kind == "polling" and w.alive() and "watch limit" in w.warnings[0]
    finally:
        w.stop()


def _repo(tmp_path: Path) -> Path:
    subprocess.run(["git", "init", "-q", "-b", "main", str(tmp_path)], check=True)
    Memory.init(tmp_path)
    return tmp_path


def test_plan_sorts_paths_and_turns_big_or_branch_changes_into_one_full_reconcile(
    tmp_path: Path,
) -> None:
    root = _repo(tmp_path)
    (root / ".gitignore").write_text("dist/\n")
    d = daemon.Daemon(Layout.for_repo(root))
    batch = watch.Batch(
        paths={
            "src/a.py",
            "dist/bundle.js",
            ".planning/patterns.md",
            ".planning/memory/long-term/patterns/pat_01.json",
            ".planning/memory/short-term/queue/ses_01.json",
            ".planning/memory/short-term/session-ses_01.json",
            ".planning/memory/entity/files/src.json",
            ".git/HEAD",
        }
    )
    plan = d.plan(batch)
    assert plan.source == {"src/a.py"}
    assert plan.markdown == {".planning/patterns.md"}
    assert plan.memory_json == {".planning/memory/long-term/patterns/pat_01.json"}
    assert plan.queue == {".planning/memory/short-term/queue/ses_01.json"}
    assert plan.sessions == {".planning/memory/short-term/session-ses_01.json"}
    assert plan.entity == {".planning/memory/entity/files/src.json"}
    assert plan.full == []  # HEAD was touched but names the same branch
    (root / ".git" / "HEAD").write_text("ref: refs/heads/other\n")
    assert d.plan(watch.Batch(paths={".git/HEAD"})).full == ["branch switch"]
    big = d.plan(watch.Batch(paths={f"src/m{i}.py" for i in range(daemon.MAX_PATHS + 1)}))
    assert big.full == [f"{daemon.MAX_PATHS + 1} paths changed"]
    gone = d.plan(watch.Batch(deleted_dirs={"src/old"}))
    assert gone.source == {"src/old"} and not gone.full  # moved away: the scan drops its files
    removed = d.plan(watch.Batch(paths={"src/old/a.py"}, deleted_dirs={"src/old"}))
    assert removed.full == [] and removed.source == {"src/old/a.py"}  # rm -rf reports files
    assert d.plan(watch.Batch(paths={"src/.gitignore"})).full == [".gitignore changed"]


def test_a_due_batch_waits_for_git_and_for_a_big_burst_to_end_but_not_forever(
    tmp_path: Path,
) -> None:
    root = _repo(tmp_path)
    d = daemon.Daemon(Layout.for_repo(root))
    clock = FakeClock()
    d.batcher = watch.Batcher(quiet=0.1, max_wait=2.0, clock=clock)
    d.batcher.add("src/a.py")
    clock.now += 0.2
    assert d.batcher.due_in() == 0 and d._hold() is None
    (root / ".git" / "index.lock").write_text("")
    assert d._hold() == "waiting for git"
    (root / ".git" / "index.lock").unlink()
    for i in range(daemon.MAX_PATHS + 1):  # still arriving: max_wait passed, quiet not yet
        d.batcher.add(f"src/m{i}.py")
        clock.now += 0.003
    assert d.batcher.due_in() == 0 and d._hold() == "waiting for the burst to end"
    clock.now += 0.1
    assert d._hold() is None  # the burst is over
    d.batcher.add("src/late.py")
    (root / ".git" / "index.lock").write_text("")
    clock.now += daemon.HOLD_MAX_S
    assert d._hold() is None  # a stale index.lock holds nothing back for long


def test_plan_ignores_the_daemons_own_writes(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    d = daemon.Daemon(Layout.for_repo(root))
    shard = d.layout.entity / "files" / "src.json"
    d.store.write_json(shard, {"files": {}})
    rel = ".planning/memory/entity/files/src.json"
    assert not d.plan(watch.Batch(paths={rel}))
    shard.write_text("{}\n")  # not ours any more
    assert d.plan(watch.Batch(paths={rel})).entity == {rel}


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
    daemon.stop(Layout.for_repo(root), timeout=10)


def runtime(root: Path) -> daemon.Runtime:
    return daemon.Runtime(Layout.for_repo(root))


def start(root: Path) -> int:
    done = pmem(root, "watch", "start", "--json")
    assert done.returncode == 0, done.stderr
    pid = int(json.loads(done.stdout)["pid"])
    wait_until(lambda: status(root).get("state") == "idle" and status(root)["batches"] >= 1, root)
    assert status(root)["last_error"] is None, report(root)
    return pid


def status(root: Path) -> dict[str, Any]:
    return daemon.status(Layout.for_repo(root))


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


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


def test_start_status_stop_and_a_second_start_refuses(repo: Path) -> None:
    before = pmem(repo, "watch", "status")
    assert before.returncode == 0 and before.stdout.startswith("not running")
    pid = start(repo)
    info = json.loads(pmem(repo, "watch", "status", "--json").stdout)
    assert info["running"] and info["pid"] == pid and info["uptime_s"] >= 0
    assert info["observer"] == "inotify" and info["queue"] == 0 and info["last_error"] is None
    assert set(info["reactions"]) == set(daemon.NEEDS)
    assert runtime(repo).pid.read_text().strip() == str(pid)
    text = pmem(repo, "watch", "status").stdout
    assert f"running, pid {pid}" in text and "last event:" in text and "queue: 0" in text
    again = pmem(repo, "watch", "start")
    assert again.returncode == 7 and "already runs" in again.stderr and str(pid) in again.stderr
    foreground = pmem(repo, "watch", "--foreground")
    assert foreground.returncode == 7
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
    wait_until(lambda: not daemon.is_running(runtime(repo)), repo, timeout=10)
    wait_until(lambda: not alive(pid), repo, timeout=10)
    assert not runtime(repo).pid.exists()
    last = json.loads(runtime(repo).status.read_text())
    assert last["state"] == "stopped" and last["last_error"] is None
    assert "stopped" in runtime(repo).log.read_text()
    assert start(repo) != pid  # the lock was released: a new daemon can start


def test_a_killed_daemon_leaves_no_lock_behind(repo: Path) -> None:
    pid = start(repo)
    os.kill(pid, signal.SIGKILL)
    wait_until(lambda: not daemon.is_running(runtime(repo)), repo, timeout=10)
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
    assert not daemon.is_running(runtime(repo))


def test_queued_session_summaries_are_drained(repo: Path) -> None:
    from datetime import UTC, datetime

    from planning_memory.sessions import conversation as session
    from planning_memory.store import Store

    start(repo)
    layout = Layout.for_repo(repo)
    store = Store(layout)
    now = datetime(2024, 1, 20, 15, 0, tzinfo=UTC)
    ses = session.start(layout, store, None, now=now, goal="ship the watch daemon")
    for i in range(20):  # past the default window of 15: the session queues a summary
        session.append_message(layout, store, None, ses["id"], "user", f"step {i} done", now=now)
    assert session.queued(layout, store) == [ses["id"]]
    wait_until(lambda: session.queued(layout, store) == [], repo)
    rolling = session.get(layout, store, ses["id"])["rolling_summary"]
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


def cpu_ticks(pid: int) -> int:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime + stime (fields 14 and 15)


def planning_snapshot(root: Path) -> dict[str, tuple[int, int, int]]:
    found = {}
    for folder, _dirs, files in os.walk(root / ".planning"):
        for name in files:
            st = os.stat(os.path.join(folder, name))
            found[os.path.join(folder, name)] = (st.st_ino, st.st_mtime_ns, st.st_size)
    return found


def test_the_daemons_own_writes_cause_no_further_work(repo: Path) -> None:
    """After a save has been handled, 10 s of nothing: no file under .planning changes (the
    status file included) and the daemon uses under 1% of a CPU."""
    pid = start(repo)
    batches = status(repo)["batches"]
    write_module(repo / "src" / "pkg" / "m4.py", "one_more_save")
    wait_until(lambda: "one_more_save" in entity_text(repo), repo)
    wait_until(settled(repo, batches), repo)
    time.sleep(1.5)  # let the status file catch up
    batches = status(repo)["batches"]
    before, ticks = planning_snapshot(repo), cpu_ticks(pid)
    time.sleep(10)
    cpu = (cpu_ticks(pid) - ticks) / os.sysconf("SC_CLK_TCK") / 10
    assert planning_snapshot(repo) == before
    assert status(repo)["batches"] == batches
    assert cpu < 0.01, f"daemon used {cpu:.1%} of a CPU while idle"


def test_a_branch_switch_of_2000_files_converges_to_a_fresh_scan(repo: Path) -> None:
    from planning_memory.entity import scan
    from planning_memory.store import Store

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
    assert "full reconcile (branch switch" in runtime(repo).log.read_text()
    daemon.stop(Layout.for_repo(repo))
    by_daemon = entity_tree(repo)
    entity = repo / ".planning" / "memory" / "entity"
    shutil.rmtree(entity)
    entity.mkdir()
    mem = Memory(repo)
    scan(mem.layout, Store(mem.layout), mem.config)
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


# The daemon also keeps the Markdown views in step with the records.
if importlib.util.find_spec("planning_memory.views.sync") is not None:

    def test_json_written_elsewhere_is_rendered_and_a_hand_edit_of_patterns_md_is_imported(
        repo: Path,
    ) -> None:
        start(repo)
        assert status(repo)["reactions"]["markdown"] == "available"
        mem = Memory(repo)  # another writer: the API does not render the views itself
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
