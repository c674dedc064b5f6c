"""What a merge or a clumsy hand edit leaves in a view never reaches a record: a mangled id
marker is an error (not a new item plus a deletion), git conflict markers are refused by
``sync --prefer md`` and by ``validate``, and a record file named for another id is not
duplicated by the next save."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from planning_memory.errors import InputError
from planning_memory.memory import Memory
from planning_memory.views.parse import parse_view

BIN = Path(sys.executable).parent


def pmem(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(BIN / "pmem"), *args], cwd=cwd, capture_output=True, text=True)


def git(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=False)


@pytest.fixture
def mem(empty_repo: Path) -> Memory:
    mem = Memory(empty_repo)
    mem.save("Use repositories for DB access", "pattern", description="repos, not raw SQL")
    return mem


def _records(mem: Memory) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(mem.layout.long_term.rglob("*.json"))}


# Each of these once imported as a new item while the original pattern was soft-deleted.
MANGLED = [
    "<!- id: {id} -->",
    "<!-- id {id} -->",
    "id: {id} -->",
    "<!-- ids: {id} -->",
    "<-- id: {id} -->",
    "(id: {id})",
    "<!-- {id} -->",
    "{id}",
    "<!-- id: {id} -- >",
]


@pytest.mark.parametrize("mangled", MANGLED)
def test_a_mangled_id_marker_is_reported_not_imported(mem: Memory, mangled: str) -> None:
    record = mem.records("pattern")[0]
    marker = f"<!-- id: {record['id']} -->"
    path = mem.layout.patterns_md
    text = path.read_text("utf-8")
    assert marker in text
    path.write_text(text.replace(marker, mangled.format(id=record["id"])), "utf-8")
    parsed = parse_view(path.read_text("utf-8"), "patterns")
    assert any("malformed id marker" in e.message for e in parsed.errors), parsed.errors
    before = _records(mem)
    with pytest.raises(InputError, match="malformed id marker"):
        mem.sync(prefer="md")
    assert _records(mem) == before
    assert mem.get(record["id"])["deleted_at"] is None


def test_an_id_in_a_title_round_trips_through_the_view(mem: Memory) -> None:
    """A title that merely mentions an id is rendered as a JSON string and read back as is."""
    other = mem.records("pattern")[0]["id"]
    mem.save(f"Supersedes {other} for reads", "pattern", description="x")
    assert mem.render_check() == []
    parsed = parse_view(mem.layout.patterns_md.read_text("utf-8"), "patterns")
    assert parsed.ok and any(other in str(i.fields) for i in parsed.items)


def _conflicted_view(mem: Memory) -> Path:
    """patterns.md as a merge without the driver leaves it: markers inside a description."""
    path = mem.layout.patterns_md
    text = path.read_text("utf-8")
    hunk = "<<<<<<< HEAD\nrepos, zod schemas\n=======\nrepos, valibot\n>>>>>>> feature"
    path.write_text(text.replace("repos, not raw SQL", hunk), "utf-8")
    return path


def test_sync_never_imports_conflict_markers(mem: Memory) -> None:
    _conflicted_view(mem)
    before = _records(mem)
    with pytest.raises(InputError, match="conflict markers"):
        mem.sync(prefer="md")
    assert _records(mem) == before
    assert not any(b"<<<<<<<" in data for data in _records(mem).values())


def test_sync_of_a_conflicted_view_points_at_prefer_json(mem: Memory) -> None:
    path = _conflicted_view(mem)
    done = pmem(mem.layout.repo_root, "sync")
    assert done.returncode != 0
    assert "--prefer json" in done.stderr.splitlines()[-1]
    assert "--prefer md" not in done.stderr.splitlines()[-1]
    fixed = pmem(mem.layout.repo_root, "sync", "--prefer", "json")
    assert fixed.returncode == 0, fixed.stderr
    assert "<<<<<<<" not in path.read_text("utf-8")
    assert "<<<<<<<" in path.with_name("patterns.md.orig").read_text("utf-8")
    assert pmem(mem.layout.repo_root, "validate").returncode == 0


def test_validate_rejects_a_record_holding_conflict_markers(mem: Memory) -> None:
    path = next(mem.layout.long_term.glob("patterns/*.json"))
    record = json.loads(path.read_text("utf-8"))
    record["description"] = "<<<<<<< HEAD\nzod\n=======\nvalibot\n>>>>>>> feature"
    path.write_text(json.dumps(record, indent=2, sort_keys=True) + "\n", "utf-8")
    done = pmem(mem.layout.repo_root, "validate")
    assert done.returncode != 0
    assert "$.description: git conflict markers" in done.stdout + done.stderr
    record["description"] = "mentions >>>>>>> mid-line and <<<<<<< too: fine"
    path.write_text(json.dumps(record, indent=2, sort_keys=True) + "\n", "utf-8")
    assert pmem(mem.layout.repo_root, "validate").returncode == 0


def test_a_plain_merge_then_sync_prefer_md_writes_no_markers(tmp_path: Path) -> None:
    """The reported sequence with real git and no merge driver: both branches change one
    pattern's description, `git merge` leaves markers in patterns.md, `sync --prefer md`."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    assert pmem(repo, "init").returncode == 0
    saved = pmem(repo, "save", "Validate input", "-t", "pattern", "--description", "zod")
    assert saved.returncode == 0
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "init")
    for branch, text in (("a", "zod schemas in src/lib"), ("b", "valibot, smaller bundles")):
        git(repo, "checkout", "-qb", branch, "main")
        view = repo / ".planning" / "patterns.md"
        view.write_text(view.read_text("utf-8").replace("\nzod\n", f"\n{text}\n"), "utf-8")
        assert pmem(repo, "sync").returncode == 0
        git(repo, "commit", "-qam", branch)
    git(repo, "checkout", "-q", "a")
    assert "CONFLICT" in git(repo, "merge", "b").stdout
    git(repo, "checkout", "--theirs", "--", ".planning/memory")  # records: take one side
    done = pmem(repo, "sync", "--prefer", "md")
    assert done.returncode != 0 and "conflict markers" in done.stderr
    assert not any("<<<<<<<" in p.read_text() for p in (repo / ".planning").rglob("*.json"))
    assert pmem(repo, "sync", "--prefer", "json").returncode == 0
    unmerged = pmem(repo, "validate")  # settled here, but git still holds the conflict
    assert unmerged.returncode == 1 and "`git add` it once settled" in unmerged.stdout
    git(repo, "add", ".planning")
    assert pmem(repo, "validate").returncode == 0
    assert pmem(repo, "render", "--check").returncode == 0


def test_a_record_named_for_another_id_is_not_duplicated_on_reinforce(mem: Memory) -> None:
    record = mem.records("pattern")[0]
    path = mem.layout.record_path("pattern", record["id"])
    misnamed = path.with_name("pat_01M8SBZT22VQY8WV5QCDP82TSY.json")
    path.rename(misnamed)
    done = pmem(mem.layout.repo_root, "save", record["title"], "-t", "pattern")
    assert done.returncode == 0, done.stderr
    assert "does not match the file name" in done.stderr
    files = sorted(mem.layout.long_term.glob("patterns/*.json"))
    ids = [json.loads(p.read_text("utf-8"))["id"] for p in files]
    assert len(ids) == len(set(ids)), f"one id in two files: {ids}"
    assert json.loads(misnamed.read_text("utf-8")) == record  # left for the person to fix
