"""A real ``pmem watch`` process through a sequence of edits, folder moves, branch switches
and special files: after each step, once its queue has drained, the code map under
``.planning/memory/entity`` must be byte for byte what a fresh scan of a copy of the
repository writes, ``git checkout`` must never be refused because of the daemon's writes, and
the daemon must never hang. The figures are printed (``pytest -s``)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import planning_memory.watch as watching
from planning_memory.memory import Memory

PMEM = [
    sys.executable,
    "-c",
    "import planning_memory.cli.watch; from planning_memory.cli import main; main()",
]
ENTITY = Path(".planning") / "memory" / "entity"
CHECKOUTS = ("switch back to main", "switch to the branch again", "and back to main again")


def pmem(root: Path, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*PMEM, "-C", str(root), *args], capture_output=True, text=True, timeout=timeout
    )


def git(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", "-C", str(root), *args], capture_output=True, text=True, timeout=60, check=False
    )


def status(root: Path) -> dict[str, Any]:
    return watching.status(Memory(root))


def report(root: Path) -> str:
    log = watching.Runtime(Memory(root)).log
    tail = log.read_text()[-3000:] if log.exists() else "(no log)"
    return f"status: {json.dumps(status(root), indent=1)}\nlog:\n{tail}"


def drained(root: Path, batches: int, timeout: float = 60.0) -> dict[str, Any]:
    """Wait until the daemon ran a batch after ``batches``, has nothing queued and stays
    so for half a second (events of one step may arrive in more than one batch)."""
    deadline = time.monotonic() + timeout
    stable: dict[str, Any] | None = None
    while True:
        info = status(root)
        quiet = info["batches"] > batches and info["state"] == "idle" and info["queue"] == 0
        if quiet and stable is not None and stable["batches"] == info["batches"]:
            return info
        stable = info if quiet else None
        if time.monotonic() > deadline:
            raise AssertionError(f"not drained after {timeout:g} s\n{report(root)}")
        time.sleep(0.5 if quiet else 0.05)


def entity_tree(root: Path) -> dict[str, bytes]:
    folder = root / ENTITY
    return {
        str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


def fresh_scan(root: Path, work: Path) -> dict[str, bytes]:
    """The entity tree a first scan of a copy of ``root`` writes (special files copied as
    such: ``cp -a``)."""
    copy = work / "copy"
    if copy.exists():
        shutil.rmtree(copy)
    subprocess.run(["cp", "-a", str(root), str(copy)], check=True, timeout=60)
    shutil.rmtree(copy / ENTITY)
    shutil.rmtree(copy / ".planning" / "memory" / "contextual", ignore_errors=True)
    Memory(copy).scan()
    return entity_tree(copy)


def differences(got: dict[str, bytes], want: dict[str, bytes]) -> list[str]:
    found = [f"only in the daemon's map: {k}" for k in sorted(got.keys() - want.keys())]
    found += [f"only in a fresh scan: {k}" for k in sorted(want.keys() - got.keys())]
    found += [f"differs: {k}" for k in sorted(got.keys() & want.keys()) if got[k] != want[k]]
    return found


def module(path: Path, *functions: str, calls: str = "") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    body = "".join(f"def {name}(x):\n    return {calls or 'x'}\n\n\n" for name in functions)
    path.write_text(f'"""Module {path.stem}."""\n\n\n{body}')


@pytest.fixture
def repo(tmp_path: Path) -> Iterator[Path]:
    """A git repository with Python and TypeScript files and its code map, all committed."""
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.email", "t@example.com")
    git(root, "config", "user.name", "t")
    (root / ".gitignore").write_text("build/\n")
    for i in range(4):
        module(root / "src" / "pkg" / f"m{i}.py", f"original_{i}")
    module(root / "lib" / "util.py", "helper")
    (root / "web").mkdir()
    (root / "web" / "a.ts").write_text("export function total(x: number) { return x + 1; }\n")
    (root / "web" / "b.ts").write_text(
        "import { total } from './a';\nexport function show() { return total(2); }\n"
    )
    Memory.init(root)
    Memory(root).scan()
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "init")
    yield root
    watching.stop(Memory(root), timeout=10)


def checkout(root: Path, branch: str) -> None:
    done = git(root, "checkout", "-q", branch)
    assert done.returncode == 0, f"git checkout {branch} refused:\n{done.stderr}\n{report(root)}"


def commit_all(root: Path, message: str) -> None:
    git(root, "add", "-A")
    done = git(root, "commit", "-q", "-m", message)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.slow
def test_after_every_daemon_step_the_code_map_is_what_a_fresh_scan_writes(
    repo: Path, tmp_path: Path
) -> None:
    src = repo / "src"
    steps: list[tuple[str, Callable[[], None]]] = [
        ("create a file", lambda: module(src / "pkg" / "new.py", "fresh_one")),
        ("edit a file", lambda: module(src / "pkg" / "m0.py", "edited_0", calls="helper(x)")),
        (
            "create a folder of files",
            lambda: [module(src / "feature" / f"f{i}.py", f"feature_{i}") for i in range(3)],
        ),
        ("delete a file", lambda: (src / "pkg" / "m1.py").unlink()),
        ("rename a file", lambda: os.rename(src / "pkg" / "m2.py", src / "pkg" / "m2b.py")),
        ("rename a folder", lambda: os.rename(src / "feature", src / "feature2")),
        ("move a folder into another", lambda: os.rename(src / "feature2", repo / "lib" / "f2")),
        ("delete a folder", lambda: shutil.rmtree(repo / "lib" / "f2")),
        ("create nested folders", lambda: module(repo / "deep" / "a" / "b" / "x.py", "deep_x")),
        ("delete nested folders", lambda: shutil.rmtree(repo / "deep")),
        (
            "rename an imported function",
            lambda: (repo / "web" / "a.ts").write_text(
                "export function sum(x: number) { return x + 1; }\n"
            ),
        ),
        ("rename a folder others import from", lambda: os.rename(repo / "web", repo / "app")),
        (
            "a file changes language",
            lambda: os.rename(src / "pkg" / "m3.py", src / "pkg" / "m3.txt"),
        ),
        ("a syntax error", lambda: (src / "pkg" / "broken.py").write_text("def broken(:\n")),
        (
            "move a folder out of the repository",
            lambda: os.rename(repo / "lib", tmp_path / "lib-moved-away"),
        ),
        ("a FIFO among the sources", lambda: os.mkfifo(src / "pkg" / "pipe.py")),
        (
            "a tracked file replaced by a FIFO",
            lambda: ((src / "pkg" / "m0.py").unlink(), os.mkfifo(src / "pkg" / "m0.py")),
        ),
        (
            "the FIFOs removed",
            lambda: ((src / "pkg" / "pipe.py").unlink(), (src / "pkg" / "m0.py").unlink()),
        ),
    ]
    branch_steps: list[tuple[str, Callable[[], None]]] = [
        ("switch to a new branch and change it", lambda: _new_branch(repo)),
        ("commit", lambda: commit_all(repo, "on the branch")),
        (CHECKOUTS[0], lambda: checkout(repo, "main")),
        (CHECKOUTS[1], lambda: checkout(repo, "other")),
        (CHECKOUTS[2], lambda: checkout(repo, "main")),
    ]
    pid = _start(repo)
    equal = 0
    problems: list[str] = []
    done: list[str] = []
    for name, act in [*steps, ("commit", lambda: commit_all(repo, "steps")), *branch_steps]:
        before = status(repo)["batches"]
        started = time.monotonic()
        act()
        info = drained(repo, before) if name != "commit" else _idle(repo)
        seconds = time.monotonic() - started
        assert _alive(pid), f"the daemon died at step {name!r}\n{report(repo)}"
        assert info["last_error"] is None, f"step {name!r}: {info['last_error']}\n{report(repo)}"
        if name == "a syntax error":  # status names the files the map holds with errors
            assert info["files_with_errors"] == 1, report(repo)
            assert info["error_files"][0].startswith("src/pkg/broken.py: syntax errors")
            assert "code map: 1 files with errors" in pmem(repo, "watch", "status").stdout
        found = differences(entity_tree(repo), fresh_scan(repo, tmp_path))
        equal += not found
        done.append(f"{name}: {'equal' if not found else 'DIFFERENT'} ({seconds:.2f} s)")
        print(done[-1], *found, sep="\n  ")
        problems += [f"{name}: {d}" for d in found]
        if name in CHECKOUTS:  # the daemon left the branch's files as they were committed
            dirty = git(repo, "status", "--porcelain", "--", str(ENTITY)).stdout
            assert not dirty, f"after {name!r} the daemon changed tracked files:\n{dirty}"
    print(f"\ndaemon steps: {len(done)}; code map equal to a fresh scan after {equal}")
    print("\n".join(done))
    assert len(done) >= 19
    assert problems == [], "\n".join(problems)


def _new_branch(root: Path) -> None:
    done = git(root, "checkout", "-q", "-b", "other")
    assert done.returncode == 0, done.stderr
    module(root / "src" / "pkg" / "m2b.py", "on_the_branch")
    module(root / "src" / "branch_only" / "only.py", "branch_only")
    shutil.rmtree(root / "app")


def _idle(root: Path) -> dict[str, Any]:
    """A commit changes no source file: wait until the daemon is idle with an empty queue."""
    time.sleep(0.5)
    deadline = time.monotonic() + 30
    while True:
        info = status(root)
        if info["state"] == "idle" and info["queue"] == 0:
            return info
        assert time.monotonic() < deadline, report(root)
        time.sleep(0.05)


def _start(root: Path) -> int:
    done = pmem(root, "watch", "start", "--json")
    assert done.returncode == 0, done.stderr
    pid = int(json.loads(done.stdout)["pid"])
    drained(root, 0)
    return pid


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


def test_status_shows_how_long_a_batch_has_been_running(tmp_path: Path) -> None:
    """A batch stuck on something shows as ``busy_s`` growing, in the JSON and the text."""
    from planning_memory.watch import daemon, process

    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    Memory.init(root)
    memory = Memory(root)
    rt = process.Runtime(memory)
    fd = process.acquire(rt)  # as the daemon's process holds it
    try:
        d = daemon.Daemon(memory)
        d.info.update(state="busy", busy_since_epoch=time.time() - 42)
        d.flush_status(force=True)
        info = status(root)
        assert info["state"] == "busy" and 42 <= info["busy_s"] < 60
        assert "busy for 4" in pmem(root, "watch", "status").stdout
    finally:
        process.release(rt, fd)
    assert "busy_s" not in status(root)
