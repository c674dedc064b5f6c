"""``Memory.bulk()``: many saves through the learning rules as one batch."""

from __future__ import annotations

import contextlib
import json
import os
import random
import sqlite3
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from planning_memory.memory import Memory


def test_saves_in_bulk_follow_the_rules_and_render_the_views_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    Memory.init(tmp_path)
    mem = Memory(tmp_path)
    view = tmp_path / ".planning" / "patterns.md"
    before = view.read_text()
    syncs: list[int] = []
    real_sync = os.sync

    def counted() -> None:
        syncs.append(1)
        real_sync()

    monkeypatch.setattr(os, "sync", counted)
    with mem.bulk() as same:
        assert same is mem
        first = mem.save("Use pnpm", "pattern", description="Always install packages with pnpm")
        again = mem.save("pnpm", "pattern", description="Install packages with pnpm, always")
        other = mem.save("Prefer zod", "pattern", description="Validate forms with zod schemas")
        with mem.bulk():  # nested: one batch
            mem.save("Wrong import", "mistake", description="imported lodash whole")
        assert view.read_text() == before  # not re-rendered inside the batch
        assert syncs == []
    assert syncs == [1]
    assert first.action == "created" and other.action == "created"
    assert again.merged is not None and again.record["id"] == first.record["id"]
    rendered = view.read_text()
    assert "pnpm" in rendered and "zod" in rendered
    assert mem.get(first.record["id"])["usage_count"] == 2
    single = mem.save("Use ruff", "pattern", description="Lint with ruff")
    assert "ruff" in view.read_text() and single.action == "created"  # outside: at once


def test_an_error_in_bulk_keeps_what_was_saved(tmp_path: Path) -> None:
    Memory.init(tmp_path)
    mem = Memory(tmp_path)
    saved: dict[str, Any] = {}
    with pytest.raises(KeyError), mem.bulk():
        saved["one"] = mem.save("Use pnpm", "pattern", description="pnpm everywhere")
        raise KeyError("stop")
    assert mem.get(saved["one"].record["id"])["name"] == "Use pnpm"
    mem.save("Use ruff", "pattern", description="Lint with ruff")  # the lock was released
    assert "pnpm" in (tmp_path / ".planning" / "patterns.md").read_text()


class _Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


_WORDS_TEXT = """
cache retry index query schema token branch merge render hook props fixture
parser lexer socket thread mutex logger config router handler session cookie
header payload encoder decoder buffer stream widget layout button dialog window cursor
column table migration replica shard backup restore deploy release rollback commit rebase
tag package module plugin adapter driver client server worker queue scheduler timer
metric trace span alert budget quota limit locale timezone currency invoice
"""
_WORDS = _WORDS_TEXT.split()


def _memories(count: int) -> list[tuple[str, str, dict[str, Any]]]:
    """Saves that meet every rule: near repeats (merges), exact repeats (duplicates), topic
    keys (upserts, some across types), more patterns and mistakes than the caps (archives)."""
    rng = random.Random(500)
    out: list[tuple[str, str, dict[str, Any]]] = []
    for n in range(count):
        if out and rng.random() < 0.1:
            out.append(rng.choice(out[-10:]))  # again, within the dedup window or not
            continue
        kind = rng.choice(["pattern", "pattern", "mistake", "learning", "decision"])
        if rng.random() < 0.3:  # near repeats: merged into a similar pattern or mistake
            text = " ".join(rng.sample(_WORDS[:12], 4))
        else:  # distinct: a new record, an archive past the cap
            text = " ".join(rng.sample(_WORDS, 6))
        fields: dict[str, Any] = {
            "pattern": {"description": text},
            "mistake": {"description": text, "correction": f"check {text}"},
        }.get(kind, {"learned": text})
        if rng.random() < 0.1:
            fields["topic_key"] = f"topic/{rng.randrange(12)}"
        if rng.random() < 0.05:
            fields["pinned"] = True
        out.append((f"memory {n % 97} {text[:20]}", kind, fields))
    return out


def _saved(root: Path, memories: list[tuple[str, str, dict[str, Any]]], bulk: bool) -> tuple:
    Memory.init(root)
    config = root / ".planning" / "memory-config.json"
    value = json.loads(config.read_text())
    value["memory"]["longTerm"].update(maxPatterns=40, maxMistakes=25)
    config.write_text(json.dumps(value))
    clock = _Clock()
    mem = Memory(root, clock=clock)
    outcomes = []
    with mem.bulk() if bulk else contextlib.nullcontext(mem):
        for n, (title, kind, fields) in enumerate(memories):
            clock.now += timedelta(seconds=40 if n % 5 else 1200)  # some past the dedup window
            outcome = mem.save(title, kind, **fields)
            outcomes.append(
                (outcome.action, outcome.record["id"], outcome.archived, outcome.merged)
            )
    files = {
        path.stem: path.read_text()
        for path in sorted((root / ".planning").rglob("long-term/*/*.json"))
    }
    rank = {rid: f"#{n}" for n, rid in enumerate(sorted(files))}  # ULIDs: creation order

    def same(text: str) -> str:
        for rid, label in rank.items():
            text = text.replace(rid, label)
        return text

    return (
        {rank[rid]: same(text) for rid, text in files.items()},
        [same(json.dumps(outcome)) for outcome in outcomes],
    )


@pytest.mark.slow
def test_saves_in_bulk_leave_the_same_records_as_saves_one_by_one(tmp_path: Path) -> None:
    memories = _memories(500)
    one_by_one = _saved(tmp_path / "single", memories, bulk=False)
    in_bulk = _saved(tmp_path / "bulk", memories, bulk=True)
    actions = Counter(json.loads(o)[0] for o in one_by_one[1])
    merged = sum(json.loads(o)[3] is not None for o in one_by_one[1])
    archived = sum(len(json.loads(o)[2]) for o in one_by_one[1])
    assert actions["created"] and actions["duplicate"] and actions["upserted"]  # every rule ran
    assert merged > 30 and archived > 80
    assert in_bulk[1] == one_by_one[1]  # the same outcome for each save
    assert in_bulk[0] == one_by_one[0]  # byte for byte, ids aside


def test_the_catalog_commits_once_when_the_bulk_ends(tmp_path: Path) -> None:
    Memory.init(tmp_path)
    mem = Memory(tmp_path)
    mem.save("Use ruff", "pattern", description="Lint with ruff")  # the catalog exists
    catalog = mem.layout.contextual / "longterm.sqlite3"

    def patterns() -> int:  # as another process sees the catalog
        with contextlib.closing(sqlite3.connect(catalog)) as db:
            return int(
                db.execute("SELECT count(*) FROM entries WHERE type = 'pattern'").fetchone()[0]
            )

    topics = ["parser errors", "socket timeouts", "invoice totals", "locale dates", "shard keys"]
    with mem.bulk():
        for topic in topics:
            assert mem.save(topic, "pattern", description=f"check {topic}").action == "created"
        assert patterns() == 1  # not committed yet: a kill here loses rows and stamps together
    assert patterns() == 1 + len(topics)
    assert mem.save("Use pnpm", "pattern", description="pnpm installs").action == "created"
    assert patterns() == 2 + len(topics)  # outside a bulk: each save commits
