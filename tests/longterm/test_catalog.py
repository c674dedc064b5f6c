"""The catalog answers a save as reading every record would: merges, upserts, duplicates and
archiving compared step by step with a full reading on generated stores."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from clocks import Clock

from planning_memory.core import ID_PREFIX, LONG_TERM_DIRS, Record, parse_timestamp
from planning_memory.errors import UnsafePathError
from planning_memory.longterm import catalog, lookups, records, rules, similarity
from planning_memory.longterm.live import Live
from planning_memory.memory import Memory

T0 = datetime(2025, 3, 1, 9, 0, tzinfo=UTC)
# a small vocabulary, so that many saves are similar to an earlier one
WORDS = [
    "pnpm",
    "npm",
    "yarn",
    "zod",
    "schema",
    "validation",
    "form",
    "input",
    "api",
    "client",
    "timeout",
    "retry",
    "fetch",
    "error",
    "handling",
    "test",
    "fixture",
    "mock",
    "database",
    "query",
    "transaction",
    "migration",
    "index",
    "cache",
    "redis",
    "logging",
    "logger",
    "config",
    "environment",
    "variable",
    "secret",
    "token",
    "auth",
    "session",
    "cookie",
    "header",
    "request",
    "response",
    "component",
    "props",
    "state",
    "hook",
    "useEffect",
    "render",
    "style",
    "css",
    "commit",
    "branch",
    "rebase",
    "merge",
    "review",
]
TOPICS = ["auth/flow", "db/migrations", "release/steps", "ui/styling"]


def _tree(tmp_path: Path, threshold: float) -> tuple[Memory, Clock]:
    Memory.init(tmp_path)
    cfg_path = tmp_path / ".planning" / "memory-config.json"
    cfg = json.loads(cfg_path.read_text())
    cfg["memory"]["longTerm"].update(maxPatterns=12, maxMistakes=8, similarityThreshold=threshold)
    cfg_path.write_text(json.dumps(cfg))
    clock = Clock(T0)
    return Memory(tmp_path, clock=clock), clock


def _full_reading(mem: Memory, record: Record, now: datetime) -> tuple[str, str, list[str]]:
    """What a save does, decided from every record file read (the rules without a catalog):
    (what happened, the id it happened to, the ids archived)."""
    tree = mem.longterm.tree
    settings = tree.long_term
    kind = record["type"]
    live = records.load_all(tree.layout, tree.store, [kind])
    key = record.get("topic_key")
    topic = sorted(
        (
            other
            for other in records.load_all(tree.layout, tree.store, None)
            if key and other.get("topic_key") == key and other.get("scope") == record.get("scope")
        ),
        key=lambda o: (o["type"] != kind, f"{LONG_TERM_DIRS[o['type']]}/{o['id']}.json"),
    )  # any type holds a topic (seed 003), the same type first
    moved = bool(topic) and ID_PREFIX[topic[0]["type"]] != ID_PREFIX[kind]
    if topic and not moved:
        return "upserted", topic[0]["id"], []
    window = timedelta(minutes=int(settings["dedupWindowMinutes"]))
    for other in [] if moved else live:
        same = lookups.fingerprint(other) == lookups.fingerprint(record)
        if same and now - parse_timestamp(other["updated_at"]) <= window:
            return "duplicate", other["id"], []
    if kind in ("pattern", "mistake") and not moved:
        pool = [
            (c["id"], lookups.text_of(c))
            for c in live
            if c["type"] == kind and c.get("scope") == record.get("scope")
        ]
        found = similarity.best_match(
            lookups.text_of(record), pool, float(settings["similarityThreshold"])
        )
        if found is not None:
            return "merged", found[0], []
    action = "upserted" if moved else "created"  # moved: a new record of the new type
    cap = {"pattern": "maxPatterns", "mistake": "maxMistakes"}.get(kind)
    if cap is None:
        return action, record["id"], []
    after = [*live, record]
    uses = "usage_count" if kind == "pattern" else "occurrences"
    victims = sorted(
        (r for r in after if not r.get("pinned") and not r.get("established")),
        key=lambda r: (r[uses], r["updated_at"], r["id"]),
    )
    victims = [v for v in victims if v["id"] != record["id"]]
    excess = max(0, len(after) - int(settings[cap]))
    return action, record["id"], [v["id"] for v in victims[:excess]]


def _text(rng: random.Random) -> str:
    return " ".join(rng.sample(WORDS, rng.randint(2, 6)))


def _new(rng: random.Random, now: datetime, said: list[str]) -> Record:
    kind = rng.choice(["pattern", "pattern", "mistake", "mistake", "decision"])
    text = rng.choice(said[-2:]) if said and rng.random() < 0.15 else _text(rng)
    said.append(text)
    fields: dict[str, Any] = {}
    if rng.random() < 0.1:
        fields["topic_key"] = rng.choice(TOPICS)
    if kind == "pattern":
        fields.update(name=text.split()[0], description=text)
    elif kind == "mistake":
        fields.update(description=text, correction=rng.choice(["", _text(rng)]))
    else:
        fields["learned"] = text
    return rules.new_record(kind, now, title=text[:40], **fields)


def _meddle(mem: Memory, rng: random.Random, clock: Clock) -> None:
    """Changes made around the rules: pin, forget, restore, a file rewritten by another tool
    (a `git pull`) and a broken file, which the catalog must notice."""
    live = mem.longterm.records(["pattern", "mistake"], deleted=True)
    if not live:
        return
    target = rng.choice(live)
    roll = rng.random()
    if roll < 0.3:
        mem.longterm.pin(target["id"], not target.get("pinned"))
    elif roll < 0.5:
        if target.get("deleted_at") is None:
            mem.longterm.forget(target["id"], hard=rng.random() < 0.3)
        else:
            mem.longterm.restore(target["id"])
    elif roll < 0.8:
        time.sleep(0.02)  # a later tick of the file system's clock than the last save
        edited = dict(target, updated_at=rules.timestamp(clock.now))
        text = _text(rng)
        edited["description"] = text
        path = mem.layout.record_path(target["type"], target["id"])
        mem.store.write_json(path, edited)  # not through records.save
    elif roll < 0.9:
        time.sleep(0.02)
        folder = mem.layout.record_dir(target["type"])
        name = f"{target['id'].split('_')[0]}_broken{rng.randint(0, 9)}.json"
        (folder / name).write_text(json.dumps(target))  # its id is not its name: skipped
    else:
        os.utime(mem.layout.long_term / "patterns", ns=(1, 1))  # a stamp that matches nothing


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::planning_memory.errors.BrokenFileWarning")  # on purpose
@pytest.mark.parametrize(("threshold", "seed"), [(0.5, 1), (0.5, 2), (0.4, 3), (0.62, 4)])
@pytest.mark.parametrize("lookup", ["sqlite", "memory", "bitmaps"])
def test_every_save_matches_the_full_reading(
    tmp_path: Path, threshold: float, seed: int, lookup: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # where ``similar`` finds its candidates: SQLite only; the in-memory copy from the first
    # lookup on, trying each record sharing a word; the same through its bitmaps
    monkeypatch.setattr(catalog.Catalog, "MIRROR_AFTER", 10**9 if lookup == "sqlite" else 0)
    monkeypatch.setattr(Live, "direct_below", 0 if lookup == "bitmaps" else 10**9)
    mem, clock = _tree(tmp_path, threshold)
    rng = random.Random(seed)
    said: list[str] = []
    seen = {"merged": 0, "archived": 0, "upserted": 0, "duplicate": 0}
    for _ in range(220):
        clock.now += timedelta(minutes=rng.choice([1, 2, 5, 30]))
        if rng.random() < 0.12:
            _meddle(mem, rng, clock)
        record = _new(rng, clock.now, said)
        want = _full_reading(mem, record, clock.now)
        out = rules.remember(mem.longterm.tree, record, clock.now)
        action = "merged" if out.merged is not None else out.action
        assert (action, out.record["id"], out.archived) == want
        seen[action] = seen.get(action, 0) + 1
        seen["archived"] += len(out.archived)
    assert min(seen.values()) > 0, seen  # every path was taken
    _assert_postings_are_the_live_words(mem)


def _assert_postings_are_the_live_words(mem: Memory) -> None:
    """The catalog's postings hold each word of each live pattern and mistake, nothing else,
    and its FTS5 index is sound."""
    conn = catalog.Catalog.of(mem.layout, mem.store).conn
    want = {
        (term, rid)
        for rid, kind, words in conn.execute(
            "SELECT rid, type, words FROM entries WHERE live AND words != ''"
        )
        for term in lookups.terms_of(kind, words.split())
    }
    assert want
    assert set(conn.execute("SELECT term, doc FROM posted")) == want
    conn.execute("INSERT INTO postings(postings) VALUES ('integrity-check')")


def test_postings_follow_archiving_restoring_and_rewrites(tmp_path: Path) -> None:
    mem, clock = _tree(tmp_path, 0.5)
    saved = [
        mem.longterm.learn_pattern(f"Use {word}", f"Always {word} with pnpm and {word}s")
        for word in ("install", "fetch", "schema", "retry")
    ]
    mistake = mem.longterm.learn_mistake("Forgot the lock file", "Commit pnpm-lock.yaml")
    _assert_postings_are_the_live_words(mem)
    first, second, third = (out.record["id"] for out in saved[:3])
    mem.longterm.forget(first)
    mem.longterm.forget(second, hard=True)
    mem.longterm.pin(third, True)  # the same text: its row updated, its postings kept
    _assert_postings_are_the_live_words(mem)
    mem.longterm.restore(first)
    clock.now += timedelta(hours=1)
    again = mem.longterm.learn_pattern("Use retry", "Always retry with pnpm and retrys")
    assert again.record["id"] == saved[3].record["id"]  # the same text: counted again
    edited = dict(mistake.record, description="Forgot to commit the lock file after adding")
    mem.store.write_json(mem.layout.record_path("mistake", edited["id"]), edited)
    catalog.Catalog.of(mem.layout, mem.store).current(full=True)  # the edit seen
    _assert_postings_are_the_live_words(mem)


def test_deleting_the_catalog_rebuilds_it(tmp_path: Path) -> None:
    mem, clock = _tree(tmp_path, 0.5)
    first = mem.longterm.learn_pattern("Use pnpm", "Always install packages with pnpm")
    catalog.path_of(mem.layout).unlink()
    clock.now += timedelta(hours=1)
    again = mem.longterm.learn_pattern("pnpm", "Install packages with pnpm, always")
    assert again.merged is not None
    assert again.record["id"] == first.record["id"]


def test_a_record_edited_in_place_is_read_again_when_picked(tmp_path: Path) -> None:
    mem, clock = _tree(tmp_path, 0.5)
    first = mem.longterm.learn_pattern("Use pnpm", "Always install packages with pnpm")
    mem.longterm.pin(first.record["id"])
    path = mem.layout.record_path("pattern", first.record["id"])
    stamp = os.stat(path.parent)
    value = json.loads(path.read_text())
    value["usage_count"] = 4
    with open(path, "w") as fh:  # in place: the folder's stamp does not change
        fh.write(json.dumps(value, indent=2))
    os.utime(path.parent, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))
    clock.now += timedelta(hours=1)
    again = mem.longterm.learn_pattern("pnpm", "Install packages with pnpm, always")
    assert again.record["usage_count"] == 5  # 4 from the edited file, not 1 + 1
    assert again.record["established"]


def test_no_shared_word_but_the_same_trigrams_still_merges_at_the_default_threshold(
    tmp_path: Path,
) -> None:
    # "bb bbbb" and "bbb" share no word but every trigram: the score is exactly 0.5
    assert similarity.similarity("bb bbbb", "bbb") == 0.5
    mem, clock = _tree(tmp_path, 0.5)
    first = mem.longterm.learn_mistake("bb bbbb")
    clock.now += timedelta(hours=1)
    again = mem.longterm.learn_mistake("bbb")
    assert again.merged == 0.5
    assert again.record["id"] == first.record["id"]


def test_a_tree_without_a_catalog_gets_none_from_plain_writes(tmp_path: Path) -> None:
    mem, _clock = _tree(tmp_path, 0.5)
    catalog.close_all()
    for made in mem.layout.contextual.glob(f"{catalog.CATALOG_NAME}*"):
        made.unlink()  # the views made one when the tree was rendered
    record = rules.new_record("decision", T0, title="Use SQLite", learned="for the index")
    records.save(mem.layout, mem.store, record)
    assert not catalog.path_of(mem.layout).exists()


def test_ceiling_bounds_the_score() -> None:
    rng = random.Random(5)
    for _ in range(300):
        a, b = _text(rng), _text(rng)
        mine, theirs = similarity.profile(a), similarity.profile(b)
        counts = (len(theirs[0]), len(theirs[1]), len(theirs[2]))
        bound = similarity.ceiling(
            mine,
            similarity.gram_layers(mine[2]),
            len(mine[0] & theirs[0]),
            counts,
            similarity.gram_mask(theirs[2]),
        )
        score = similarity.similarity(a, b)
        assert score <= bound + 1e-12
        shared = len(mine[0] & theirs[0])
        mask = similarity.gram_mask(theirs[2])
        assert similarity.may_reach(mine, score - 1e-9)(shared, *counts, mask)


def test_the_in_memory_copy_sees_a_save_made_by_another_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(catalog.Catalog, "MIRROR_AFTER", 0)
    mem, clock = _tree(tmp_path, 0.5)
    mem.longterm.learn_pattern("Use zod", "Validate forms with zod schemas")  # copy made
    pmem = str(Path(sys.executable).parent / "pmem")
    done = subprocess.run(
        [
            pmem,
            "-C",
            str(tmp_path),
            "save",
            "Use pnpm",
            "-t",
            "pattern",
            "--json",
            "--description",
            "Always install packages with pnpm",
        ],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    theirs = json.loads(done.stdout)["id"]
    shelf = catalog.Catalog.of(mem.layout, mem.store)
    assert shelf.is_fresh("patterns")  # the other process kept the catalog up to date
    clock.now += timedelta(hours=1)
    again = mem.longterm.learn_pattern("pnpm", "Install packages with pnpm in CI")  # 78%
    assert again.merged is not None and again.record["id"] == theirs


@pytest.mark.parametrize("suffix", ["", "-wal", "-shm"])
def test_a_catalog_file_linked_out_of_the_tree_is_never_opened(tmp_path: Path, suffix: str) -> None:
    mem = Memory.init(tmp_path / "repo")
    canary = tmp_path / "bashrc"
    canary.write_text("export PATH=$HOME/bin:$PATH\n")
    link = Path(f"{catalog.path_of(mem.layout)}{suffix}")
    link.unlink(missing_ok=True)
    link.symlink_to(canary)
    with pytest.raises(UnsafePathError) as info:
        Memory(mem.layout.repo_root).save("Prefer small functions", "pattern")
    assert info.value.path == f".planning/memory/contextual/longterm.sqlite3{suffix}"
    assert canary.read_text() == "export PATH=$HOME/bin:$PATH\n"
