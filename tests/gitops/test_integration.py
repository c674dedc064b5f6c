"""Memory in real git repositories: the merge driver, resolve, the pre-commit hook, install.

Every test runs real ``git`` (and the ``pmem`` console script, which the merge driver and the
hook call) in a repository under ``tmp_path``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from planning_memory import gitops
from planning_memory.cli import cli
from planning_memory.core import codec
from planning_memory.errors import NotInitializedError
from planning_memory.gitops import integration as gitint
from planning_memory.gitops import merge as gitmerge
from planning_memory.longterm import records
from planning_memory.longterm import rules as learn
from planning_memory.memory import Memory

BIN = Path(sys.executable).parent
AWS_KEY = "AKIA" + "Q3EGRTYJ7NZKXW5P"  # split so that this file itself is no finding


@pytest.fixture(autouse=True)
def _pmem_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    assert (BIN / "pmem").exists(), "the pmem console script must be installed in the venv"
    monkeypatch.setenv("PATH", f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")


def git(cwd: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True)
    if check and done.returncode != 0:
        raise AssertionError(f"git {' '.join(args)}: {done.returncode}\n{done.stdout}{done.stderr}")
    return done


def pmem(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(BIN / "pmem"), *args], cwd=cwd, capture_output=True, text=True)


def new_repo(path: Path, *, driver: bool) -> Memory:
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", "main")
    mem = Memory.init(path)
    if driver:
        gitint.install(path, hook=False)
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "memory")
    return mem


def add(mem: Memory, record_type: str, title: str, **fields: Any) -> dict[str, Any]:
    record = learn.new_record(record_type, mem.now(), title=title, **fields)
    records.save(mem.layout, mem.store, record)
    return record


def change(mem: Memory, record_id: str, **fields: Any) -> dict[str, Any]:
    record = {**mem.get(record_id), **fields}
    records.save(mem.layout, mem.store, record)
    return record


def fixed(at: datetime) -> Callable[[], datetime]:
    return lambda: at


def commit_all(repo: Path, message: str) -> None:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)


def record_file(mem: Memory, record: dict[str, Any]) -> Path:
    return mem.layout.record_path(record["type"], record["id"])


def two_branches(repo: Path, mem: Memory, record: dict[str, Any], ours: Any, theirs: Any) -> None:
    """Branches ``a`` and ``b`` from main, each applying its edit function to ``record``."""
    for name, edit in (("a", ours), ("b", theirs)):
        git(repo, "checkout", "-q", "-b", name, "main")
        edit(mem, record["id"])
        commit_all(repo, name)
    git(repo, "checkout", "-q", "main")


# -- the merge driver --------------------------------------------------------------------------
def test_concurrent_increments_of_one_pattern_add_up(tmp_path: Path) -> None:
    mem = new_repo(tmp_path, driver=True)
    pat = add(mem, "pattern", "Use repositories", name="Use repositories", tags=["db"])
    mis = add(mem, "mistake", "Raw SQL in handlers", description="raw SQL")
    commit_all(tmp_path, "records")

    def ours(m: Memory, _id: str) -> None:
        m.praise(pat["id"])
        change(m, mis["id"], occurrences=2, updated_at="2030-01-01T00:00:00Z")

    def theirs(m: Memory, _id: str) -> None:
        m.praise(pat["id"])
        m.praise(pat["id"])
        change(m, pat["id"], tags=["db", "prisma"])
        change(m, mis["id"], occurrences=2, updated_at="2030-01-02T00:00:00Z")

    two_branches(tmp_path, mem, pat, ours, theirs)
    git(tmp_path, "merge", "-q", "--no-edit", "a")
    done = git(tmp_path, "merge", "--no-edit", "b", check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    merged = mem.get(pat["id"])
    assert merged["usage_count"] == 1 + 1 + 2
    assert merged["tags"] == ["db", "prisma"]
    mistake = mem.get(mis["id"])
    assert mistake["occurrences"] == 3
    assert mistake["severity"] == "high"  # the merge reached the 3rd occurrence
    assert mistake["updated_at"] == "2030-01-02T00:00:00Z"
    assert pmem(tmp_path, "validate").returncode == 0
    assert git(tmp_path, "status", "--porcelain").stdout == ""


def test_two_different_edits_of_one_field_conflict(tmp_path: Path) -> None:
    mem = new_repo(tmp_path, driver=True)
    pat = add(mem, "pattern", "Validate input", name="Validate input", description="zod")
    commit_all(tmp_path, "records")
    two_branches(
        tmp_path,
        mem,
        pat,
        lambda m, i: change(m, i, description="zod schemas in src/lib/validation"),
        lambda m, i: change(m, i, description="valibot, smaller bundles"),
    )
    git(tmp_path, "merge", "-q", "--no-edit", "a")
    done = git(tmp_path, "merge", "--no-edit", "b", check=False)
    assert done.returncode == 1
    path = record_file(mem, pat)
    text = path.read_text()
    assert '<<<<<<< ours\n  "description": "zod schemas in src/lib/validation",\n=======\n' in text
    assert '  "description": "valibot, smaller bundles",\n>>>>>>> theirs\n' in text
    assert git(tmp_path, "ls-files", "-u").stdout.count(path.name) == 3
    again = pmem(tmp_path, "resolve")
    assert again.returncode == 1 and "conflict at $.description" in again.stdout
    assert path.read_text() == text  # resolve gives what the driver gave: still a conflict


@pytest.mark.slow
@pytest.mark.parametrize("driver", [False, True], ids=["plain-git", "driver"])
def test_ten_branches_of_a_hundred_records_merge_without_conflicts(
    tmp_path: Path, driver: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(os, "fsync", lambda fd: None)  # durability is not what this tests
    mem = new_repo(tmp_path, driver=driver)
    shared = add(mem, "pattern", "Shared pattern", name="Shared pattern")
    commit_all(tmp_path, "shared")
    types = ("pattern", "mistake", "decision", "discovery", "learning")
    for branch in range(10):
        git(tmp_path, "checkout", "-q", "-b", f"b{branch}", "main")
        with mem.store.lock():
            for i in range(100):
                add(mem, types[i % 5], f"Branch {branch} record {i}", tags=[f"b{branch}"])
        if driver:  # every branch also reinforces one shared record: the driver adds them up
            at = datetime(2030, 1, 1, 0, 0, branch, tzinfo=UTC)  # docs/git.md: identical sides
            Memory(tmp_path, clock=fixed(at)).praise(shared["id"])
        commit_all(tmp_path, f"branch {branch}")
        git(tmp_path, "checkout", "-q", "main")
    for branch in range(10):
        done = git(tmp_path, "merge", "--no-edit", f"b{branch}", check=False)
        assert done.returncode == 0, done.stdout + done.stderr
        assert "CONFLICT" not in done.stdout
    files = list(mem.layout.long_term.rglob("*.json"))
    assert len(files) == 1 + 1000
    assert git(tmp_path, "ls-files", "-u").stdout == ""
    assert pmem(tmp_path, "validate").returncode == 0
    assert mem.get(shared["id"])["usage_count"] == (11 if driver else 1)


def test_driver_falls_back_to_a_line_merge_for_non_json(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q", "-b", "main")
    base, ours, theirs = (tmp_path / n for n in ("base", "ours", "theirs"))
    base.write_text("a\nb\nc\n")
    ours.write_text("A\nb\nc\n")
    theirs.write_text("a\nb\nC\n")
    assert gitint.merge_driver(base, ours, theirs, "x.json") == 0
    assert ours.read_text() == "A\nb\nC\n"
    theirs.write_text("X\nb\nc\n")
    assert gitint.merge_driver(base, ours, theirs, "x.json") == 1
    assert "<<<<<<<" in ours.read_text()


# -- resolve -----------------------------------------------------------------------------------
def conflicting_history(repo: Path) -> tuple[Memory, Path]:
    """Branches a and b that both reinforce a pattern, tag it differently and edit different
    fields: a plain git merge conflicts; the driver merges it cleanly."""
    mem = new_repo(repo, driver=False)
    pat = add(mem, "pattern", "Repository layer", name="Repository layer", tags=["db"])
    commit_all(repo, "records")

    def ours(m: Memory, i: str) -> None:
        m.praise(i)
        change(m, i, tags=["db", "arch"], updated_at="2030-01-01T00:00:00Z", example="repo.get()")

    def theirs(m: Memory, i: str) -> None:
        m.praise(i)
        change(m, i, tags=["prisma"], updated_at="2030-01-02T00:00:00Z", description="typed")

    two_branches(repo, mem, pat, ours, theirs)
    git(repo, "checkout", "-q", "a")
    return mem, record_file(mem, pat)


def driver_result(repo: Path, rel: str) -> bytes:
    """The merged bytes the driver gives for merging b into a, in a clone with the driver."""
    clone = repo.parent / f"{repo.name}-driver"
    git(repo.parent, "clone", "-q", "-b", "a", str(repo), clone.name)
    gitint.install(clone, hook=False)
    done = git(clone, "merge", "--no-edit", "origin/b", check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    return (clone / rel).read_bytes()


@pytest.mark.parametrize(
    ("style", "source"), [("merge", "index"), ("diff3", "index"), ("merge", "MERGE_HEAD")]
)
def test_resolve_after_a_plain_git_merge_gives_the_driver_result(
    tmp_path: Path, style: str, source: str
) -> None:
    repo = tmp_path / "repo"
    _mem, path = conflicting_history(repo)
    rel = path.relative_to(repo).as_posix()
    expected = driver_result(repo, rel)
    done = git(repo, "-c", f"merge.conflictStyle={style}", "merge", "--no-edit", "b", check=False)
    assert done.returncode == 1 and "<<<<<<<" in path.read_text()
    if source == "MERGE_HEAD":  # the markers were `git add`ed: no stages, the merge goes on
        git(repo, "add", rel)
    out = pmem(repo, "resolve")
    assert out.returncode == 0, out.stdout + out.stderr
    assert f"resolved: {rel} ({source})" in out.stdout
    assert path.read_bytes() == expected
    merged = json.loads(expected)
    assert merged["usage_count"] == 3 and merged["tags"] == ["arch", "prisma"]
    assert merged["example"] == "repo.get()" and merged["description"] == "typed"
    git(repo, "add", rel)
    assert pmem(repo, "resolve").stdout.strip() == "no conflicted memory files"


def test_resolve_repairs_markers_committed_by_a_merge(tmp_path: Path) -> None:
    """A web merge (or a careless `git add`) committed the markers: the merge commit's parents
    give the sides back."""
    repo = tmp_path / "repo"
    mem, path = conflicting_history(repo)
    rel = path.relative_to(repo).as_posix()
    expected = driver_result(repo, rel)
    git(repo, "merge", "--no-edit", "b", check=False)
    commit_all(repo, "merge b (with markers)")
    with pytest.raises(Exception, match="conflict markers"):
        mem.get(path.stem)
    out = pmem(repo, "resolve", rel)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "(merge " in out.stdout
    assert path.read_bytes() == expected


def test_resolve_from_diff3_markers_alone(tmp_path: Path) -> None:
    """No merge state and no merge commit: the sides come from the diff3 markers."""
    repo = tmp_path / "repo"
    mem = new_repo(repo, driver=False)
    base = add(mem, "pattern", "Markers", name="Markers", tags=["a"], description="d")
    ours = {**base, "tags": ["a", "x"], "example": "ours", "updated_at": "2030-01-01T00:00:00Z"}
    theirs = {**base, "tags": ["y"], "description": "theirs", "updated_at": "2030-01-02T00:00:00Z"}
    files = [tmp_path / n for n in ("base.json", "ours.json", "theirs.json")]
    for file, value in zip(files, (base, ours, theirs), strict=True):
        file.write_text(codec.dumps(value))
    git(tmp_path, "merge-file", "--diff3", *map(str, (files[1], files[0], files[2])), check=False)
    path = record_file(mem, base)
    path.write_bytes(files[1].read_bytes())
    assert "|||||||" in path.read_text()
    out = pmem(repo, "resolve")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "(markers)" in out.stdout
    assert json.loads(path.read_text()) == gitmerge.merge_json(base, ours, theirs).value


def test_resolve_reports_a_file_outside_memory(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q", "-b", "main")
    stray = tmp_path / "x.json"
    stray.write_text('{\n<<<<<<< a\n"a": 1\n=======\n"a": 2\n>>>>>>> b\n}\n')
    [found] = gitops.resolve([stray], cwd=tmp_path)
    assert found.status == "error" and "not inside a memory tree" in found.message
    assert "<<<<<<<" in stray.read_text()


# -- the pre-commit hook -----------------------------------------------------------------------
def test_pre_commit_hook_blocks_secrets_and_invalid_records(tmp_path: Path) -> None:
    mem = new_repo(tmp_path, driver=False)
    report = gitint.install(tmp_path)
    assert report.hook == "installed"
    add(mem, "pattern", "Clean record", name="Clean record")
    if pmem(tmp_path, "render", "--help").returncode == 0:  # the hook runs render --check
        assert pmem(tmp_path, "render").returncode == 0
    git(tmp_path, "add", "-A")
    clean = git(tmp_path, "commit", "-q", "-m", "clean", check=False)
    assert clean.returncode == 0, clean.stdout + clean.stderr

    leaky = add(mem, "learning", "Deploy notes")
    path = record_file(mem, leaky)
    path.write_text(path.read_text().replace('"learned": ""', f'"learned": "key {AWS_KEY}"', 1))
    git(tmp_path, "add", "-A")
    blocked = git(tmp_path, "commit", "-q", "-m", "leak", check=False)
    assert blocked.returncode != 0
    assert "a secret is staged" in blocked.stderr
    assert "aws" in blocked.stderr and AWS_KEY not in blocked.stderr + blocked.stdout
    path.unlink()

    bad = mem.layout.record_dir("pattern") / "pat_01HVBAD0000000000000000000.json"
    bad.write_text('{"id": "pat_01HVBAD0000000000000000000", "type": "pattern"}\n')
    git(tmp_path, "add", "-A")
    blocked = git(tmp_path, "commit", "-q", "-m", "invalid", check=False)
    assert blocked.returncode != 0
    assert "memory does not validate" in blocked.stderr
    assert bad.name in blocked.stderr
    assert git(tmp_path, "log", "--format=%s").stdout.split("\n")[0] == "clean"


def test_pre_commit_checks_what_is_staged_not_the_working_tree(tmp_path: Path) -> None:
    """An invalid record that is staged blocks the commit even when the working copy was
    fixed afterwards; an invalid working copy that is not staged does not."""
    mem = new_repo(tmp_path, driver=False)
    gitint.install(tmp_path)
    assert pmem(tmp_path, "render").returncode == 0
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-q", "-m", "setup")
    bad = mem.layout.record_dir("pattern") / "pat_01HVBAD0000000000000000000.json"
    bad.write_text('{"id": "pat_01HVBAD0000000000000000000", "type": "pattern"}\n')
    git(tmp_path, "add", "-A")
    bad.unlink()  # fixed on disk, still staged
    blocked = git(tmp_path, "commit", "-q", "-m", "staged bad", check=False)
    assert blocked.returncode != 0, blocked.stdout + blocked.stderr
    assert "memory does not validate" in blocked.stderr and bad.name in blocked.stderr
    git(tmp_path, "rm", "-q", "--cached", str(bad.relative_to(tmp_path)))
    (tmp_path / "notes.txt").write_text("unrelated\n")
    git(tmp_path, "add", "notes.txt")
    bad.write_text("{ not json")  # broken on disk, not staged
    done = git(tmp_path, "commit", "-q", "-m", "unrelated", check=False)
    assert done.returncode == 0, done.stdout + done.stderr


def test_an_existing_pre_commit_hook_is_chained_not_clobbered(tmp_path: Path) -> None:
    new_repo(tmp_path, driver=False)
    hooks = tmp_path / ".git" / "hooks"
    mine = hooks / "pre-commit"
    mine.write_text('#!/bin/sh\necho ran > "$(git rev-parse --show-toplevel)/.hook-ran"\nexit 0\n')
    mine.chmod(0o755)
    assert gitint.install(tmp_path).hook == "chained"
    assert (hooks / gitint.CHAINED_HOOK).read_text().startswith("#!/bin/sh\necho ran")
    assert gitint.install(tmp_path).hook == "unchanged"
    (tmp_path / "README").write_text("x\n")
    git(tmp_path, "add", "README")
    git(tmp_path, "commit", "-q", "-m", "readme")
    assert (tmp_path / ".hook-ran").exists()
    (hooks / gitint.CHAINED_HOOK).write_text("#!/bin/sh\nexit 3\n")
    (tmp_path / "README").write_text("y\n")
    assert git(tmp_path, "commit", "-q", "-am", "blocked", check=False).returncode != 0
    assert git(tmp_path, "log", "-1", "--format=%s").stdout.strip() == "readme"


# -- install -----------------------------------------------------------------------------------
def test_install_is_idempotent_and_keeps_what_is_there(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q", "-b", "main")
    (tmp_path / ".gitignore").write_text("node_modules/")
    first = gitint.install(tmp_path)
    assert set(first.changed) == {
        ".gitignore",
        ".gitattributes",
        ".git/config",
        ".git/hooks/pre-commit",
    }
    ignore = (tmp_path / ".gitignore").read_text()
    assert ignore.startswith("node_modules/\n\n# planning-memory")
    for line in gitint.GITIGNORE_LINES:
        assert line in ignore.splitlines()
    before = {p: (tmp_path / p).read_bytes() for p in (".gitignore", ".gitattributes")}
    second = gitint.install(tmp_path)
    assert second.changed == [] and second.hook == "unchanged"
    assert {p: (tmp_path / p).read_bytes() for p in before} == before
    assert git(tmp_path, "config", "merge.planning-memory.driver").stdout.strip() == (
        gitint.driver_command(sys.executable)
    )
    attr = git(tmp_path, "check-attr", "merge", ".planning/memory/long-term/patterns/p.json")
    assert attr.stdout.strip().endswith("merge: planning-memory")
    ignored = git(tmp_path, "check-ignore", ".planning/memory/contextual/index.sqlite3")
    assert ignored.returncode == 0


def test_install_outside_git_says_so(tmp_path: Path) -> None:
    with pytest.raises(NotInitializedError, match="not inside a git repository"):
        gitint.install(tmp_path)


def test_cli_git_install_and_secrets_scan(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    git(tmp_path, "init", "-q", "-b", "main")
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    done = runner.invoke(cli, ["git", "install", "--no-hook", "--json"])
    assert done.exit_code == 0, done.output
    assert json.loads(done.output)["hook"] == "skipped"
    notes = tmp_path / ".planning" / "notes.md"
    notes.parent.mkdir()
    notes.write_text(f"deploy\naws key {AWS_KEY}\n")
    (tmp_path / ".planning" / "r.json").write_text(
        json.dumps({"x": {"db_password": "hunter2-Secret"}, "ok": "fine"})
    )
    done = runner.invoke(cli, ["secrets", "scan", ".planning"])
    assert done.exit_code == 1
    assert ".planning/notes.md: line 2: aws" in done.output
    assert ".planning/r.json: $.x.db_password: password" in done.output
    assert AWS_KEY not in done.output and "hunter2" not in done.output
    (tmp_path / "elsewhere.txt").write_text(f"not ours {AWS_KEY}\n")
    default = runner.invoke(cli, ["secrets", "scan", "--json"])
    assert sorted(h["path"] for h in json.loads(default.output)) == [
        ".planning/notes.md",
        ".planning/r.json",
    ]
    git(tmp_path, "add", ".planning/notes.md")
    staged = runner.invoke(cli, ["secrets", "scan", "--staged", "--json"])
    assert staged.exit_code == 1
    assert [h["path"] for h in json.loads(staged.output)] == [".planning/notes.md"]
    notes.write_text("clean\n")
    git(tmp_path, "add", ".planning/notes.md")
    assert runner.invoke(cli, ["secrets", "scan", "--staged"]).exit_code == 0
