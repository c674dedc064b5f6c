"""Sessions shared by the worktrees of a repository, and what a session is told of the others:
their unfinished work, and near-duplicate texts said once."""

from __future__ import annotations

import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from planning_memory.errors import UnsafePathError
from planning_memory.memory import Memory
from planning_memory.sessions import collapse_repeats, repeat_words, said_before


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


@pytest.fixture
def worktrees(tmp_path: Path) -> tuple[Path, Path]:
    """A repository whose ``.planning/`` is committed, and a linked worktree of it."""
    main, linked = tmp_path / "main", tmp_path / "linked"
    main.mkdir()
    git(main, "init", "-q")
    git(main, "config", "user.email", "dev@example.com")
    git(main, "config", "user.name", "Dev")
    Memory.init(main)
    (main / "README.md").write_text("x\n", "utf-8")
    git(main, "add", "-A")
    git(main, "commit", "-q", "-m", "init with memory")
    git(main, "worktree", "add", "-q", str(linked), "-b", "feature")
    return main.resolve(), linked.resolve()


def test_a_linked_worktree_keeps_its_records_and_shares_the_main_sessions(
    worktrees: tuple[Path, Path],
) -> None:
    main, linked = worktrees
    assert (linked / ".planning" / "memory-config.json").is_file()  # its own checkout
    mem = Memory.open(linked)
    assert mem.layout.planning == linked / ".planning"
    assert mem.layout.short_term == main / ".planning" / "memory" / "short-term"
    assert mem.layout.lock_file == main / ".planning" / ".lock"

    sid = str(mem.sessions.start(name="feature work")["id"])
    mem.log("Let's add refunds", session_id=sid)
    (linked / "src").mkdir()
    (linked / "src" / "refunds.py").write_text("x = 1\n", "utf-8")
    mem.record_file_access(str(linked / "src" / "refunds.py"), "created", session_id=sid)
    saved = mem.save("Refunds go through the payments queue", "learning").summary()["id"]

    there = Memory.open(main)
    assert [i.id for i in there.sessions.list()] == [sid]
    assert there.sessions.get(sid)["files_accessed"][0]["path"] == "src/refunds.py"
    assert not list((main / ".planning" / "memory" / "long-term").rglob(f"{saved}.json"))
    assert list((linked / ".planning" / "memory" / "long-term").rglob(f"{saved}.json"))
    assert Memory.open(main).layout.shared is None
    # the worktree's search index holds the shared session, keyed as in the main tree
    hits = Memory.open(linked).search("refunds", sources=["message"])
    assert [h.session_id for h in hits] == [sid]


def test_a_symlink_out_of_the_shared_sessions_is_refused(worktrees: tuple[Path, Path]) -> None:
    main, linked = worktrees
    (main / ".planning" / "memory" / "short-term" / "evil.json").symlink_to("/etc/hostname")
    with pytest.raises(UnsafePathError):
        Memory.open(linked).sessions.list()


def test_without_its_own_tree_a_worktree_uses_the_main_one(tmp_path: Path) -> None:
    main = tmp_path / "main"
    main.mkdir()
    git(main, "init", "-q")
    git(main, "config", "user.email", "dev@example.com")
    git(main, "config", "user.name", "Dev")
    (main / "README.md").write_text("x\n", "utf-8")
    git(main, "add", "README.md")
    git(main, "commit", "-q", "-m", "init")
    Memory.init(main)  # untracked: the worktree has no .planning/ of its own
    git(main, "worktree", "add", "-q", str(tmp_path / "wt"))
    layout = Memory.open(tmp_path / "wt").layout
    assert (layout.planning, layout.shared) == (main.resolve() / ".planning", None)


# -- the unfinished work of the other sessions -------------------------------------------------
class Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


def test_a_new_session_hears_of_the_unfinished_ones_at_once(tmp_path: Path) -> None:
    clock = Clock()
    Memory.init(tmp_path)
    mem = Memory(tmp_path, clock=clock)
    crashed = str(mem.sessions.start(goal="Add the refund endpoint", name="term 1")["id"])
    mem.log("Let's add the refund endpoint", session_id=crashed)
    mem.log("Refund handler written. Next: add the refund.succeeded webhook.", "assistant", crashed)
    empty = str(mem.sessions.start(name="nothing said")["id"])
    done = str(mem.sessions.start(goal="old work")["id"])
    mem.log("finish the old work", session_id=done)
    mem.sessions.end(done)
    clock.now += timedelta(minutes=1)  # a restart a minute later
    new = str(mem.sessions.start()["id"])

    [told] = mem.sessions.unfinished(exclude=[new])
    assert (told.session_id, told.goal) == (crashed, "Add the refund endpoint")
    assert "refund.succeeded webhook" in told.next_step
    line = told.line(clock.now)
    assert line.startswith("term 1: goal: Add the refund endpoint; next step: ")
    assert line.endswith("last active 2026-03-02T09:00:00Z (1 min ago)")
    assert empty not in [u.session_id for u in mem.sessions.unfinished()]

    clock.now += timedelta(hours=13)  # idle for long: no longer news
    assert mem.sessions.unfinished(exclude=[new]) == []


# -- near duplicates ----------------------------------------------------------------------------
def test_near_duplicates_collapse_and_numbers_are_news() -> None:
    said = [
        "run the tests again please (3)",
        "Tests still failing: 2 failures.",
        "Run the tests again, please (2)",
        "tests still failing: 2 failures",
        "run the tests again please",
        "Set the retry limit to 9",
        "Set the retry limit to 7",
    ]
    assert collapse_repeats(said) == [(0, 3), (1, 2), (5, 1), (6, 1)]
    fact = repeat_words("The webhook retries 3 times with backoff")
    assert said_before("The webhook retries 3 times, with backoff!", [fact])
    assert not said_before("Earlier session: the webhook retries 3 times", [fact])
    line = "Earlier session: the webhook retries 3 times with backoff"
    assert said_before(line, [fact], within=True)  # a fact inside a line that says it
    assert not said_before("run", [repeat_words("run the tests")], within=True)
