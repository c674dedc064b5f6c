"""A merge whose driver cannot start, with real git and the real ``pmem``: git keeps one
side's counters without a marker; ``pmem validate`` and the pre-commit hook refuse it;
``pmem resolve`` gives the driver's merge back.

Branch ``b`` reinforces a pattern nine times, ``main`` once (one use in the base): the
driver's merge is 11 uses; git's fallback keeps main's 2.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from planning_memory.core import codec
from planning_memory.gitops import integration as gitint

pytestmark = pytest.mark.slow  # real processes, long: `make test-slow`

BIN = Path(sys.executable).parent
TITLE = "Use repositories for DB access"
OLD_DRIVER = "pmem merge-driver %O %A %B %P"  # what `pmem git install` wrote before


def without_pmem() -> dict[str, str]:
    """The environment with a PATH that has git but not ``pmem``."""
    git_dir = str(Path(shutil.which("git") or "/usr/bin/git").parent)
    path = os.pathsep.join(d for d in (git_dir, "/usr/bin", "/bin") if Path(d) != BIN)
    assert shutil.which("pmem", path=path) is None
    return {**os.environ, "PATH": path}


def run(
    cwd: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(args), cwd=cwd, capture_output=True, text=True, env=env)


def git(
    cwd: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return run(cwd, "git", *args, env=env)


def pmem(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run(cwd, str(BIN / "pmem"), *args)


def ok(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 0, f"{done.args}: {done.returncode}\n{done.stdout}{done.stderr}"
    return done.stdout


@pytest.fixture(autouse=True)
def _pmem_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")


def diverged(repo: Path) -> Path:
    """A repository set up by `pmem git install`, with branches ``main`` (one more use of
    the pattern) and ``b`` (nine more), on ``main``; the pattern's file."""
    repo.mkdir()
    ok(git(repo, "init", "-q", "-b", "main"))
    ok(pmem(repo, "init"))
    ok(pmem(repo, "git", "install"))
    ok(pmem(repo, "save", TITLE, "-t", "pattern", "--description", "never raw SQL"))
    ok(git(repo, "add", "-A"))
    ok(git(repo, "commit", "-q", "-m", "memory"))
    ok(git(repo, "checkout", "-q", "-b", "b"))
    for _ in range(9):
        ok(pmem(repo, "save", TITLE, "-t", "pattern"))
    ok(git(repo, "commit", "-q", "-am", "b: nine uses"))
    ok(git(repo, "checkout", "-q", "main"))
    ok(pmem(repo, "save", TITLE, "-t", "pattern"))
    ok(git(repo, "commit", "-q", "-am", "main: one use"))
    [path] = (repo / ".planning" / "memory" / "long-term" / "patterns").glob("*.json")
    return path


def uses(path: Path) -> int:
    return int(json.loads(path.read_text("utf-8"))["usage_count"])


def merge_without_the_driver(repo: Path) -> subprocess.CompletedProcess[str]:
    """`git merge b` in a clone whose driver is the plain `pmem` command and whose PATH has
    no `pmem` (a teammate's GUI client, a shell without the virtualenv)."""
    ok(git(repo, "config", "merge.planning-memory.driver", OLD_DRIVER))
    return git(repo, "merge", "--no-edit", "b", env=without_pmem())


def test_an_unmerged_fallback_fails_validate_and_resolve_restores_the_counters(
    tmp_path: Path,
) -> None:
    repo = tmp_path / "repo"
    path = diverged(repo)
    rel = path.relative_to(repo).as_posix()
    done = merge_without_the_driver(repo)
    assert done.returncode == 1 and "pmem: not found" in done.stderr
    assert uses(path) == 2  # git kept main's side, no marker
    assert "<<<<<<<" not in path.read_text("utf-8")

    checked = pmem(repo, "validate")
    assert checked.returncode == 1
    [line] = [x for x in checked.stdout.splitlines() if x.startswith(rel)]
    assert "unmerged after a merge" in line and "run `pmem resolve`" in line
    assert pmem(repo, "resolve", "--check").returncode == 1

    out = ok(pmem(repo, "resolve"))
    assert f"resolved: {rel} (index), staged" in out
    assert "resolved: .planning/patterns.md (records), staged" in out
    assert uses(path) == 11
    assert ok(pmem(repo, "validate")).splitlines()[-1].endswith(", 0 problems")
    ok(pmem(repo, "render", "--check"))
    ok(pmem(repo, "resolve", "--check"))
    ok(git(repo, "commit", "-q", "--no-edit"))  # through the pre-commit hook
    assert git(repo, "status", "--porcelain").stdout == ""
    assert uses(path) == 11


def test_a_fallback_staged_with_git_add_is_refused_by_validate_and_the_hook(
    tmp_path: Path,
) -> None:
    repo = tmp_path / "repo"
    path = diverged(repo)
    rel = path.relative_to(repo).as_posix()
    merge_without_the_driver(repo)
    ok(git(repo, "add", "-A"))  # the file looked fine: the user marks it resolved

    checked = pmem(repo, "validate")
    assert checked.returncode == 1
    assert f"{rel}: staged as one side of the merge only" in checked.stdout
    commit = git(repo, "commit", "-q", "--no-edit", env=without_pmem())
    assert commit.returncode == 1
    assert "commit blocked: a memory file is not merged" in commit.stderr
    assert f"{rel}: staged as one side" in commit.stderr
    assert git(repo, "rev-parse", "-q", "--verify", "MERGE_HEAD").returncode == 0

    out = ok(pmem(repo, "resolve"))
    assert f"resolved: {rel} (MERGE_HEAD), staged" in out
    assert uses(path) == 11
    ok(pmem(repo, "validate"))
    ok(pmem(repo, "render", "--check"))
    ok(git(repo, "commit", "-q", "--no-edit", env=without_pmem()))
    assert json.loads(ok(git(repo, "show", f"HEAD:{rel}")))["usage_count"] == 11


def test_resolved_in_the_working_tree_but_not_staged_is_said(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    path = diverged(repo)
    rel = path.relative_to(repo).as_posix()
    merge_without_the_driver(repo)
    ok(git(repo, "add", "-A"))
    ok(pmem(repo, "resolve"))
    ok(git(repo, "reset", "-q", "--", rel))  # the index back to main's side
    ok(git(repo, "add", "--", ".planning/patterns.md", ".planning/CLAUDE.md"))
    checked = pmem(repo, "validate")
    assert f"{rel}: merged in the working tree but not staged" in checked.stdout
    assert f"resolved: {rel} (MERGE_HEAD), staged" in ok(pmem(repo, "resolve"))
    ok(pmem(repo, "validate"))


def test_the_installed_driver_runs_where_pmem_is_not_on_path(tmp_path: Path) -> None:
    """`pmem git install` writes a driver that falls back to `python -m planning_memory`
    with the Python that installed it; an older install's command is replaced."""
    repo = tmp_path / "repo"
    path = diverged(repo)
    ok(git(repo, "config", "merge.planning-memory.driver", OLD_DRIVER))
    assert ".git/config" in ok(pmem(repo, "git", "install"))
    command = ok(git(repo, "config", "merge.planning-memory.driver")).strip()
    assert command == gitint.driver_command(sys.executable)
    ok(git(repo, "merge", "--no-edit", "b", env=without_pmem()))
    assert uses(path) == 11
    ok(pmem(repo, "validate"))
    ok(pmem(repo, "render", "--check"))


def test_a_side_chosen_for_a_real_conflict_or_a_hand_edit_is_left_alone(tmp_path: Path) -> None:
    """Only git's fallback is repaired: a real conflict settled by taking one side is the
    user's choice, and an unmerged file edited by hand is not overwritten."""
    repo = tmp_path / "repo"
    path = diverged(repo)
    rel = path.relative_to(repo).as_posix()
    for branch, text in (("b", "through repositories"), ("main", "repositories only")):
        ok(git(repo, "checkout", "-q", branch))
        record = json.loads(path.read_text("utf-8"))
        path.write_text(codec.dumps({**record, "description": text}), "utf-8")
        ok(pmem(repo, "render"))
        ok(git(repo, "commit", "-q", "-am", f"{branch}: describe"))
    merge_without_the_driver(repo)
    edited = {**json.loads(path.read_text("utf-8")), "usage_count": 11, "example": "repo.get()"}
    path.write_text(codec.dumps(edited), "utf-8")
    done = pmem(repo, "resolve", rel)
    assert done.returncode == 1 and "not one side of the merge (settled by hand?)" in done.stdout
    assert json.loads(path.read_text("utf-8")) == edited

    ok(git(repo, "checkout", "--ours", "--", rel))  # the user keeps main's record
    ok(git(repo, "add", "--", rel))
    checked = pmem(repo, "validate")
    assert rel not in checked.stdout  # a real conflict (description), settled by a choice
