"""Seed 000's learning ``applications``: counted when a learning is delivered into an agent's
context (once per session), or by hand; the counts of two branches add up in git."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner
from clocks import Clock

from planning_memory.cli import cli
from planning_memory.errors import InputError, NotFoundError
from planning_memory.gitops import integration as gitint
from planning_memory.memory import Memory

BIN = Path(sys.executable).parent


def _learning(mem: Memory) -> str:
    """A pinned learning: always in the context block, whatever the task."""
    saved = mem.save(
        "Wrap fetch in try/catch with a timeout",
        "learning",
        learned="Always wrap fetch in try/catch with a timeout",
        trigger="User correction",
        pinned=True,
    )
    return str(saved.record["id"])


def test_seed000_learning_applications_counted(mem: Memory, clock: Clock) -> None:
    rid = _learning(mem)
    before = mem.get(rid)
    clock.now += timedelta(hours=1)
    assert mem.applied(rid).record["applications"] == 1
    assert mem.applied(rid).record["applications"] == 2
    after = mem.get(rid)
    assert after["applications"] == 2
    assert after["updated_at"] == before["updated_at"]  # being used is not an edit
    pattern = mem.learn_pattern("Repository layer", "Data access through repositories")
    with pytest.raises(InputError, match="applications count learnings"):
        mem.applied(str(pattern.record["id"]))
    with pytest.raises(NotFoundError):
        mem.applied("lrn_nope")


def test_seed000_applications_once_per_session_per_learning(mem: Memory, clock: Clock) -> None:
    rid = _learning(mem)
    path = mem.layout.record_path("learning", rid)
    first = str(mem.sessions.start(goal="add a fetch call")["id"])
    pack = mem.context("add a fetch call to the API client", session_id=first)
    assert rid in [item.id for item in pack.items]
    assert mem.get(rid)["applications"] == 1
    written = (path.read_bytes(), path.stat().st_mtime_ns)
    session_file = mem.layout.session_path(first)
    session_bytes = session_file.read_bytes()
    for _ in range(3):  # the next prompts deliver it again: neither file is rewritten
        clock.now += timedelta(minutes=1)
        mem.context("retry the fetch call", session_id=first)
        assert mem.count_applied(first, [rid]) == []
    assert (path.read_bytes(), path.stat().st_mtime_ns) == written
    assert session_file.read_bytes() == session_bytes
    assert mem.sessions.get(first)["applied"] == [rid]
    mem.sessions.end(first)
    mem.context("fetch", session_id=first)  # an ended session counts nothing, fails nothing
    assert mem.get(rid)["applications"] == 1
    second = str(mem.sessions.start()["id"])
    mem.context("fetch", session_id=second)
    assert mem.get(rid)["applications"] == 2
    mem.context("fetch")  # no session: nothing to count once per
    mem.context("fetch", session_id="ses_unknown")  # nor an unknown one (and no error)
    assert mem.get(rid)["applications"] == 2


def test_seed000_applications_of_a_personal_learning(mem: Memory) -> None:
    personal = mem.personal()
    saved = personal.save("Prefer pnpm", "preference", learned="Use pnpm", scope="personal")
    rid = str(saved.record["id"])
    sid = str(mem.sessions.start()["id"])
    assert mem.count_applied(sid, [rid, "lrn_unknown", "pat_x"]) == [rid]
    assert personal.get(rid)["applications"] == 1


def test_seed000_pmem_learning_applied(mem: Memory) -> None:
    rid = _learning(mem)
    runner = CliRunner()
    done = runner.invoke(cli, ["-C", str(mem.layout.repo_root), "learning", "applied", rid])
    assert done.exit_code == 0, done.output
    assert done.output.strip() == f"{rid} applied 1 time(s)"
    done = runner.invoke(
        cli, ["-C", str(mem.layout.repo_root), "learning", "applied", rid, "--json"]
    )
    assert '"applications": 2' in done.output
    bad = subprocess.run(
        [BIN / "pmem", "-C", mem.layout.repo_root, "learning", "applied", "lrn_x"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bad.returncode == 5 and bad.stdout == ""
    assert bad.stderr.count("\n") == 1 and "lrn_x" in bad.stderr


def _git(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def test_seed000_applications_add_up_across_branches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    _git(tmp_path, "init", "-q", "-b", "main")
    mem = Memory.init(tmp_path)
    gitint.install(tmp_path, hook=False)
    rid = _learning(mem)
    _git(tmp_path, "add", "-A")
    _git(tmp_path, "commit", "-q", "-m", "learning")
    for branch, sessions in (("a", 1), ("b", 2)):
        _git(tmp_path, "checkout", "-q", "-b", branch, "main")
        for _ in range(sessions):
            sid = str(mem.sessions.start()["id"])
            mem.context("fetch", session_id=sid)
            mem.sessions.end(sid)
        _git(tmp_path, "commit", "-q", "-am", branch)
    _git(tmp_path, "checkout", "-q", "main")
    _git(tmp_path, "merge", "-q", "--no-edit", "a")
    _git(tmp_path, "merge", "-q", "--no-edit", "b")
    assert mem.get(rid)["applications"] == 3
    assert _git(tmp_path, "status", "--porcelain").stdout == ""
