"""The viewer's cached reads: only changed record files are read again; the stamp moves on
writes, not on reads or searches."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from planning_memory import Memory
from planning_memory.viewer import jobs
from planning_memory.viewer import reads as reads_module
from planning_memory.viewer.reads import Reads


@pytest.fixture
def reads(example_repo: Path, monkeypatch: pytest.MonkeyPatch) -> Reads:
    """What the reads keep and read again, not how long a page waits: a read here waits for
    its job to finish (a loaded machine may take longer than a page's wait)."""
    monkeypatch.setattr(reads_module, "STAMP_EVERY_S", 0)
    monkeypatch.setattr(jobs, "WAIT_S", 60)
    return Reads(Memory.open(example_repo))


def test_records_are_read_once_then_only_when_their_file_changes(
    reads: Reads, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = reads.records()
    assert len(first) == len(reads.mem.records(deleted=True))
    asked: list[str] = []
    real_get = reads.mem.get
    monkeypatch.setattr(reads.mem, "get", lambda rid: asked.append(rid) or real_get(rid))
    assert reads.records() is first and asked == []
    time.sleep(0.01)
    saved = reads.mem.save("Cache check: one new learning", "learning")
    again = reads.records()
    assert saved.record["id"] in {r["id"] for r in again}
    assert asked == [saved.record["id"]]  # the other records were kept, not read again


def test_a_deleted_file_leaves_the_list(reads: Reads) -> None:
    record = reads.records()[-1]
    path = reads.mem.layout.record_path(record["type"], record["id"])
    reads.mem.forget(record["id"], hard=True)
    assert not path.exists()
    assert record["id"] not in {r["id"] for r in reads.records()}


def test_the_stamp_moves_on_writes_only(reads: Reads) -> None:
    before = reads.stamp()
    reads.mem.search("password")  # builds the derived index: not a change of memory
    reads.records()
    assert reads.stamp() == before
    time.sleep(0.01)
    reads.mem.sessions.start("stamp check")
    assert reads.stamp() != before


def test_memo_keeps_a_value_until_its_part_changes(reads: Reads) -> None:
    calls: list[int] = []
    build = lambda: calls.append(1) or len(calls)  # noqa: E731
    assert reads.memo("k", build, part="long-term") == 1
    assert reads.memo("k", build, part="long-term") == 1
    time.sleep(0.01)
    reads.mem.sessions.start("another part")
    assert reads.memo("k", build, part="long-term") == 1
    reads.mem.save("A long-term change", "learning")
    assert reads.memo("k", build, part="long-term") == 2


def test_injections_are_empty_where_the_memory_keeps_none(
    reads: Reads, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert reads.injections() == []
    monkeypatch.delattr(type(reads.mem.sessions), "injections")
    assert reads.injections() == []


def test_personal_records_are_listed_with_their_scope(reads: Reads) -> None:
    before = len(reads.records())
    reads.mem.save("Personal: I like short commit subjects", "preference", scope="personal")
    found = [r for r in reads.records() if r.get("scope") == "personal"]
    assert len(reads.records()) == before + 1
    assert [r["title"] for r in found] == ["Personal: I like short commit subjects"]
    assert reads.mem.find(found[0]["id"])["id"] == found[0]["id"]


def test_previewing_the_context_counts_no_use(example_repo: Path) -> None:
    """``context`` counts its items as used (a later ranking boost); the viewer's preview
    does not."""
    moment = datetime.now(UTC)  # one fixed clock: the block names the current time
    mem = Memory.open(example_repo, clock=lambda: moment)
    task = "add password reset to the login form"

    def uses() -> dict[str, int]:
        return {h.key: h.access_count for h in mem.search(task, limit=50)}

    before = uses()
    preview = mem.contextual.context
    assert preview(task, touch=False).text == preview(task, touch=False).text
    assert uses() == before
    mem.context(task)
    assert uses() != before
