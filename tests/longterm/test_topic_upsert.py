"""Seed 003's topic upsert across types: saving with a topic_key updates the memory of that
topic in the same scope, whatever type it was saved as."""

from __future__ import annotations

import json
from datetime import timedelta

from click.testing import CliRunner
from clocks import Clock

from planning_memory.cli import cli
from planning_memory.memory import Memory

TOPIC = "auth/session-strategy"


def _files(mem: Memory) -> list[str]:
    return sorted(
        str(p.relative_to(mem.layout.long_term)) for p in mem.layout.long_term.rglob("*.json")
    )


def test_seed003_topic_upsert_across_types(mem: Memory, clock: Clock) -> None:
    first = mem.save("Sessions live in the DB", "decision", topic_key=TOPIC, pinned=True)
    clock.now += timedelta(days=1)
    second = mem.save(
        "Sessions are JWTs", "architecture", topic_key=TOPIC, body={"why": "edge runtime"}
    )
    assert second.action == "upserted"
    assert second.record["id"] == first.record["id"]  # same folder: the id stays
    assert second.record["type"] == "architecture"
    assert second.record["revision_count"] == 2 and second.record["pinned"] is True
    assert second.notes == ["type changed from decision to architecture"]
    assert _files(mem) == [f"learnings/{first.record['id']}.json"]
    assert [r["type"] for r in mem.records()] == ["architecture"]


def test_seed003_topic_upsert_into_another_folder(mem: Memory, clock: Clock) -> None:
    first = mem.save("Sessions live in the DB", "decision", topic_key=TOPIC, pinned=True)
    clock.now += timedelta(days=1)
    moved = mem.save(
        "Session tokens", "pattern", topic_key=TOPIC, description="Signed JWT in an httpOnly cookie"
    )
    old_id, new_id = first.record["id"], moved.record["id"]
    assert moved.action == "upserted" and new_id.startswith("pat_")
    assert moved.record["revision_count"] == 2 and moved.record["pinned"] is True
    assert moved.record["created_at"] == first.record["created_at"]
    assert moved.record["updated_at"] == "2024-01-21T15:00:00Z"
    assert moved.notes == [
        f"type changed from decision to pattern: {old_id} is replaced by {new_id} and "
        f"soft-deleted (`pmem memory show {old_id}` still shows it)"
    ]
    assert [r["id"] for r in mem.records()] == [new_id]
    assert mem.get(old_id)["deleted_at"] == "2024-01-21T15:00:00Z"
    clock.now += timedelta(days=1)
    back = mem.save("Sessions in the DB again", "decision", topic_key=TOPIC)
    assert back.action == "upserted" and back.record["id"].startswith("lrn_")
    assert back.record["id"] != old_id and back.record["revision_count"] == 3
    assert [r["id"] for r in mem.records()] == [back.record["id"]]


def test_seed003_topic_upsert_stays_within_the_scope(mem: Memory) -> None:
    mem.save("Project: DB sessions", "decision", topic_key=TOPIC)
    personal = mem.save("Mine: JWT", "architecture", topic_key=TOPIC, scope="personal")
    assert personal.action == "created"
    assert len(mem.records()) == 1 and len(mem.personal().records()) == 1


def test_seed003_topic_upsert_same_type_first(mem: Memory, clock: Clock) -> None:
    """Two live records of one topic (one restored after a move): the type saved wins."""
    first = mem.save("DB sessions", "decision", topic_key=TOPIC)
    clock.now += timedelta(minutes=20)
    mem.save("Session tokens", "pattern", topic_key=TOPIC, description="JWT")
    mem.restore(first.record["id"])  # now a decision and a pattern hold the topic
    clock.now += timedelta(minutes=20)
    again = mem.save("Cookie sessions", "pattern", topic_key=TOPIC, description="cookies")
    assert again.record["type"] == "pattern" and again.notes == []


def test_seed003_pmem_save_says_the_type_changed(mem: Memory) -> None:
    root = str(mem.layout.repo_root)
    runner = CliRunner()
    done = runner.invoke(
        cli, ["-C", root, "save", "DB sessions", "-t", "decision", "--topic", TOPIC]
    )
    assert done.exit_code == 0, done.output
    done = runner.invoke(
        cli, ["-C", root, "save", "JWT sessions", "-t", "architecture", "--topic", TOPIC, "--json"]
    )
    data = json.loads(done.output)
    assert data["action"] == "upserted"
    assert data["notes"] == ["type changed from decision to architecture"]
    text = runner.invoke(cli, ["-C", root, "save", "Tokens", "-t", "pattern", "--topic", TOPIC])
    assert "type changed from architecture to pattern" in text.output
