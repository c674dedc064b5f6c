"""Seed 000's ``entity.scanInterval``: ``on-change``, a duration (a warm rescan that often) or
``manual``; the pure decisions, the config's check, then a real daemon process (``pmem watch
start``) on a real git repository."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import planning_memory.watch as watching
from planning_memory.core import DEFAULT_CONFIG, effective_config
from planning_memory.memory import Memory
from planning_memory.watch import plan
from planning_memory.watch.reactions import REACTIONS


def config(**entity: Any) -> dict[str, Any]:
    return effective_config({"memory": {"entity": entity}})


@pytest.mark.parametrize(
    ("value", "seconds"),
    [("on-change", None), ("manual", None), ("30s", 30.0), ("5m", 300.0), ("1h", 3600.0)],
)
def test_seed000_scan_interval_values(value: str, seconds: float | None) -> None:
    assert plan.scan_mode(config(scanInterval=value)) == value
    assert plan.rescan_every(config(scanInterval=value)) == seconds
    assert plan.rescan_every(config(scanInterval=value, autoScan=False)) is None
    assert DEFAULT_CONFIG["memory"]["entity"]["scanInterval"] == "on-change"


def test_seed000_scan_interval_manual_turns_the_daemons_scans_off() -> None:
    found = plan.switched(REACTIONS, config(scanInterval="manual"))
    assert found["entity"] == "disabled by config (entity.scanInterval: manual)"
    assert found["index"] == found["markdown"] == found["summaries"] == "available"
    assert plan.switched(REACTIONS, config(scanInterval="5m"))["entity"] == "available"


PMEM = [sys.executable, "-m", "planning_memory.cli.run"]


def pmem(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*PMEM, "-C", str(root), *args], capture_output=True, text=True)


@pytest.mark.parametrize("value", ["5 minutes", "0s", "10d", "", "on change"])
def test_seed000_scan_interval_bad_values_are_one_clear_line(tmp_path: Path, value: str) -> None:
    Memory.init(tmp_path)
    path = tmp_path / ".planning" / "memory-config.json"
    data = json.loads(path.read_text())
    data["memory"]["entity"]["scanInterval"] = value
    path.write_text(json.dumps(data))
    done = pmem(tmp_path, "show")
    assert done.returncode != 0 and "Traceback" not in done.stderr
    line = done.stderr.strip()
    assert "\n" not in line and "memory-config.json" in line and "scanInterval" in line
    assert f"{value!r} is not a scan interval" in line and '"on-change", "manual"' in line


# -- a real daemon -------------------------------------------------------------------------------
def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path: Path) -> Iterator[Path]:
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    for i in range(3):
        (root / "src" / f"m{i}.py").write_text(f"def original_{i}(x):\n    return x\n")
    Memory.init(root)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "init")
    yield root
    watching.stop(Memory(root), timeout=10)


def set_interval(root: Path, value: str) -> None:
    path = root / ".planning" / "memory-config.json"
    data = json.loads(path.read_text())
    data["memory"]["entity"]["scanInterval"] = value
    path.write_text(json.dumps(data))


def status(root: Path) -> dict[str, Any]:
    return watching.status(Memory(root))


def wait_until(check: Callable[[], bool], root: Path, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            log = watching.Runtime(Memory(root)).log
            tail = log.read_text()[-3000:] if log.exists() else "(no log)"
            raise AssertionError(f"timed out\n{json.dumps(status(root), indent=1)}\n{tail}")
        time.sleep(0.05)


def start(root: Path, *extra: str) -> None:
    done = pmem(root, "watch", "start", *extra, "--json")
    assert done.returncode == 0, done.stderr
    wait_until(lambda: status(root).get("state") == "idle" and status(root)["batches"] >= 1, root)


def entity_text(root: Path) -> str:
    folder = root / ".planning" / "memory" / "entity"
    return "".join(p.read_text() for p in sorted(folder.rglob("*.json")))


def edit_unseen(path: Path, old: str, new: str) -> None:
    """Change a file in place keeping its size and modification time: the polling observer
    (as on a network file system) sees no change."""
    assert len(old) == len(new)
    st = path.stat()
    data = path.read_bytes().replace(old.encode(), new.encode())
    with open(path, "r+b") as fh:
        fh.write(data)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def test_seed000_scan_interval_on_change_misses_what_no_event_names(repo: Path) -> None:
    """The yardstick for the next test: with events only, the unseen edit stays unseen."""
    start(repo, "--polling")
    assert "original_0" in entity_text(repo)
    edit_unseen(repo / "src" / "m0.py", "original_0", "unseen_ed0")
    time.sleep(3.0)  # the poller looks every second
    assert "unseen_ed0" not in entity_text(repo)
    info = status(repo)
    assert info["scan_interval"] == "on-change" and info["rescans"] == 0


def test_seed000_scan_interval_duration_rescans_and_catches_a_missed_change(repo: Path) -> None:
    set_interval(repo, "1s")
    start(repo, "--polling")
    edit_unseen(repo / "src" / "m0.py", "original_0", "unseen_ed0")
    wait_until(lambda: "unseen_ed0" in entity_text(repo), repo, timeout=30)
    wait_until(lambda: status(repo)["rescans"] >= 2, repo, timeout=30)  # and again, and again
    info = status(repo)
    assert info["scan_interval"] == "1s" and info["last_rescan_at"] and info["last_error"] is None
    log = watching.Runtime(Memory(repo)).log.read_text()
    assert "full reconcile (scan interval)" in log
    text = pmem(repo, "watch", "status").stdout
    assert "scan interval: 1s; " in text and "warm rescans, last " in text


def test_seed000_scan_interval_manual_daemon_never_scans(repo: Path) -> None:
    set_interval(repo, "manual")
    start(repo)
    info = status(repo)
    assert info["reactions"]["entity"] == "disabled by config (entity.scanInterval: manual)"
    assert "original_0" not in entity_text(repo)  # not even the startup reconcile scans
    batches = info["batches"]
    (repo / "src" / "m1.py").write_text("def saved_while_manual(x):\n    return x\n")
    wait_until(lambda: status(repo)["batches"] > batches and status(repo)["queue"] == 0, repo)
    assert "saved_while_manual" not in entity_text(repo)
    assert pmem(repo, "scan").returncode == 0  # `pmem scan` only
    assert "saved_while_manual" in entity_text(repo)
