"""Ten branches of ordinary memory work merged into main with real git and the real ``pmem``:
no view conflicts, no markers in any record, the views current after every merge, and the
counters of the shared records summed.

Each branch (made with the CLI, committed through the pre-commit hook ``pmem git install``
writes) adds a pattern and a mistake, reinforces one shared pattern, repeats one shared
mistake, and edits its own pattern by hand in patterns.md (imported with ``pmem sync``).
The figures are printed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

BIN = Path(sys.executable).parent
BRANCHES = 10
SHARED = ("Use repositories for DB access", "Raw SQL in request handlers")
MARKERS = ("<<<<<<<", ">>>>>>>", "|||||||")
OWN = [  # one pattern per branch, edited by hand there
    "Structured logging through structlog processors",
    "Retries wrap network calls with tenacity backoff",
    "Timestamps stored in UTC, shown in the viewer zone",
    "Database migrations written with alembic revisions",
    "Outbound HTTP goes through one shared httpx client",
    "Fixtures live in conftest files beside the tests",
    "Settings read once through pydantic BaseSettings",
    "Background jobs queued on celery with acks late",
    "Redis caches keyed by tenant and schema version",
    "Images resized by a thumbor sidecar, never inline",
]
ADDED = [  # a pattern and a mistake each branch adds
    ("GraphQL resolvers batch lookups with dataloader", "Forgot pagination cursor on export"),
    ("Feature flags read from the unleash client", "Shadowed builtin name in parser loop"),
    ("Websocket handlers acknowledge every frame", "Leaked file handle in archive reader"),
    ("CSV imports validated by a frictionless schema", "Timezone-naive datetime compared"),
    ("Payments idempotency keys derive from order ids", "Float used for currency totals"),
    ("Emails rendered from mjml templates", "Missing await on coroutine in hook"),
    ("Search indexes rebuilt by a nightly cron", "Mutable default argument in helper"),
    ("Uploads scanned by clamav before storage", "Unbounded recursion on nested menus"),
    ("Metrics exported through prometheus client", "Off-by-one in page count footer"),
    ("Translations extracted with babel catalogs", "Race on lazy singleton creation"),
]


def run(cwd: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(list(args), cwd=cwd, capture_output=True, text=True, timeout=300)
    if check and done.returncode != 0:
        raise AssertionError(f"{' '.join(args)}: {done.returncode}\n{done.stdout}{done.stderr}")
    return done


def pmem(cwd: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return run(cwd, str(BIN / "pmem"), *args, check=check)


def git(cwd: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return run(cwd, "git", *args, check=check)


def save(repo: Path, title: str, kind: str, *fields: str) -> str:
    """``pmem save`` through the CLI; the id of the record it wrote."""
    value = json.loads(pmem(repo, "save", title, "-t", kind, *fields, "--json").stdout)
    return str(value.get("id") or value["record"]["id"])


def record(repo: Path, record_id: str) -> dict[str, object]:
    found = list((repo / ".planning" / "memory" / "long-term").rglob(f"{record_id}.json"))
    assert len(found) == 1, found
    value: dict[str, object] = json.loads(found[0].read_text("utf-8"))
    return value


def edit_by_hand(repo: Path, old: str, new: str) -> None:
    view = repo / ".planning" / "patterns.md"
    text = view.read_text("utf-8")
    assert text.count(f"\n{old}\n") == 1, old
    view.write_text(text.replace(f"\n{old}\n", f"\n{new}\n"), "utf-8")


@pytest.fixture(autouse=True)
def _pmem_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")


@pytest.mark.slow
def test_ten_branches_merge_with_no_view_conflict_and_no_marker(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    pmem(repo, "init")
    pmem(repo, "git", "install")
    shared = save(repo, SHARED[0], "pattern", "--description", "repositories, never raw SQL")
    repeated = save(repo, SHARED[1], "mistake", "--correction", "go through a repository")
    own = [save(repo, OWN[b], "pattern", "--description", f"original text {b}") for b in range(10)]
    assert len(set(own)) == BRANCHES
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "memory")

    for b in range(BRANCHES):
        git(repo, "checkout", "-q", "-b", f"b{b}", "main")
        pattern, mistake = ADDED[b]
        pmem(repo, "save", pattern, "-t", "pattern", "--description", f"added on {b}")
        pmem(repo, "save", mistake, "-t", "mistake", "--correction", f"fixed on {b}")
        pmem(repo, "save", SHARED[0], "-t", "pattern")  # similar: reinforced
        pmem(repo, "save", SHARED[1], "-t", "mistake")  # similar: counted again
        edit_by_hand(repo, f"original text {b}", f"edited on branch {b}")
        pmem(repo, "sync")
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", f"branch {b}")  # through the pre-commit hook
        git(repo, "checkout", "-q", "main")

    view_conflicts = record_conflicts = stale_after = 0
    for b in range(BRANCHES):
        done = git(repo, "merge", "--no-edit", f"b{b}", check=False)
        unmerged = git(repo, "diff", "--name-only", "--diff-filter=U").stdout.split()
        view_conflicts += sum(name.endswith(".md") for name in unmerged)
        record_conflicts += sum(name.endswith(".json") for name in unmerged)
        assert done.returncode == 0, done.stdout + done.stderr
        stale_after += pmem(repo, "render", "--check", check=False).returncode != 0
    records = list((repo / ".planning").rglob("*.json"))
    marked = [p for p in records if any(m in p.read_text("utf-8") for m in MARKERS)]
    validate = pmem(repo, "validate", check=False)
    check = pmem(repo, "render", "--check", check=False)
    uses = record(repo, shared)["usage_count"]
    occurrences = record(repo, repeated)["occurrences"]
    edited = [record(repo, own[b])["description"] == f"edited on branch {b}" for b in range(10)]
    edits = sum(edited)

    print(f"\nmerge suite: {BRANCHES} branches merged into main with real git")
    print(f"  view conflicts {view_conflicts}, record conflicts {record_conflicts}")
    print(f"  views stale after a merge: {stale_after} of {BRANCHES}")
    print(f"  record files {len(records)}, with conflict markers {len(marked)}")
    print(f"  validate: {validate.stdout.strip().splitlines()[-1]}")
    print(f"  shared pattern uses {uses}, shared mistake occurrences {occurrences} (both")
    print(f"  expected {1 + BRANCHES}), hand edits kept {edits} of {BRANCHES}")

    assert view_conflicts == 0 and record_conflicts == 0
    assert marked == []
    assert validate.returncode == 0, validate.stdout + validate.stderr
    assert stale_after == 0 and check.returncode == 0, check.stdout
    assert uses == 1 + BRANCHES and occurrences == 1 + BRANCHES
    assert edits == BRANCHES
    assert git(repo, "status", "--porcelain").stdout == ""


@pytest.mark.slow
def test_a_merge_that_establishes_a_pattern_leaves_claude_md_current(tmp_path: Path) -> None:
    """Neither side's CLAUDE.md shows the pattern (4 uses on one side, 2 on the other, 1 in
    the base); the merge gives 5 uses, so it is established and CLAUDE.md must show it."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    pmem(repo, "init")
    pmem(repo, "git", "install")
    pmem(repo, "save", "Use repositories for DB access", "-t", "pattern", "--description", "x")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "memory")
    for branch, uses in (("a", 3), ("b", 1)):
        git(repo, "checkout", "-q", "-b", branch, "main")
        for _ in range(uses):
            pmem(repo, "save", "Use repositories for DB access", "-t", "pattern")
        git(repo, "commit", "-q", "-am", branch)
    assert "Use repositories" not in (repo / ".planning" / "CLAUDE.md").read_text("utf-8")
    git(repo, "checkout", "-q", "a")
    git(repo, "merge", "--no-edit", "b")
    assert "Use repositories" in (repo / ".planning" / "CLAUDE.md").read_text("utf-8")
    assert pmem(repo, "render", "--check", check=False).returncode == 0
    assert git(repo, "status", "--porcelain").stdout == ""


@pytest.mark.slow
def test_committing_a_resolved_record_conflict_renders_the_views(tmp_path: Path) -> None:
    """A real conflict in a record leaves the views as ours (nothing to render yet); the
    pre-commit hook renders them from the resolved records and stages them in the merge."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    pmem(repo, "init")
    pmem(repo, "git", "install")
    pmem(repo, "save", "Validate input", "-t", "pattern", "--description", "zod")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "memory")
    for branch in ("a", "b"):
        git(repo, "checkout", "-q", "-b", branch, "main")
        edit_by_hand(repo, "zod", f"zod on {branch}")
        pmem(repo, "sync")
        git(repo, "commit", "-q", "-am", branch)
    git(repo, "checkout", "-q", "a")
    assert "CONFLICT" in git(repo, "merge", "--no-edit", "b", check=False).stdout
    [name] = git(repo, "diff", "--name-only", "--diff-filter=U").stdout.split()
    path = repo / name
    text = path.read_text("utf-8")
    ours = text.split("<<<<<<< ours\n")[1].split("=======\n")[0]
    path.write_text(text.split("<<<<<<< ours\n")[0] + ours + text.split(">>>>>>> theirs\n")[1])
    git(repo, "add", name)
    git(repo, "commit", "-q", "--no-edit")  # through the pre-commit hook
    assert pmem(repo, "render", "--check", check=False).returncode == 0
    assert pmem(repo, "validate", check=False).returncode == 0
    assert git(repo, "status", "--porcelain").stdout == ""
