"""The render cache's files as a base and a delta: a one-record save rewrites the small delta,
not the base; past the limit the base is written again; a delta that does not belong to its
base (a run stopped between the two writes, another renderer, a broken file) is ignored, and
the views stay the full render."""

from __future__ import annotations

import json
from pathlib import Path
from unittest import mock

import pytest

from planning_memory.memory import Memory
from planning_memory.views import cachefile
from planning_memory.views.cache import cache_dir

from .test_cache import full_render, on_disk

BASES = ("index.json", "patterns.items", "claude.items")


@pytest.fixture
def mem(example_repo: Path) -> Memory:
    mem = Memory(example_repo)
    assert not mem.render().conflicts
    mem.save("First rule", "pattern", description="sets the bases up")
    return mem


def _bytes(mem: Memory, *names: str) -> dict[str, bytes]:
    return {name: (cache_dir(mem.layout) / name).read_bytes() for name in names}


def test_a_save_writes_the_deltas_not_the_bases(mem: Memory) -> None:
    bases = _bytes(mem, *BASES)
    deltas = _bytes(mem, *(f"{name}.delta" for name in BASES))
    out = mem.save("Feature folders", "pattern", description="Group UI code by feature")
    assert _bytes(mem, *BASES) == bases
    after = _bytes(mem, *(f"{name}.delta" for name in BASES))
    assert after["index.json.delta"] != deltas["index.json.delta"]
    assert after["patterns.items.delta"] != deltas["patterns.items.delta"]
    index = json.loads(after["index.json.delta"])
    assert index["entries"] == {}  # no table of the record files: the catalog keeps it
    assert set(index["head"]) == {"hashes", "known", "preferences"}
    assert out.record["id"] in _bytes(mem, "patterns.items.delta")["patterns.items.delta"].decode()
    assert on_disk(mem) == full_render(mem) and mem.render_check() == []


def test_past_the_limit_the_base_is_written_again(mem: Memory) -> None:
    bases = _bytes(mem, *BASES)
    rules = [  # unrelated: each save creates a record (similar ones would reinforce one)
        ("Feature folders", "Group UI code by feature"),
        ("Zod at the edges", "Validate request bodies with zod schemas"),
        ("Pin CI images", "Reference container images by digest in workflows"),
    ]
    with mock.patch.object(cachefile, "limit", return_value=2):
        for title, description in rules:
            assert mem.save(title, "pattern", description=description).action == "created"
    assert _bytes(mem, "patterns.items")["patterns.items"] != bases["patterns.items"]
    for name in BASES:
        delta = json.loads(_bytes(mem, f"{name}.delta")[f"{name}.delta"])
        assert len(delta["entries"]) <= 2
    assert on_disk(mem) == full_render(mem) and mem.render_check() == []
    Memory(mem.layout.repo_root).views().cache.items("patterns")  # reads back


@pytest.mark.parametrize(
    "damage",
    [
        lambda value: {**value, "base": "1.1"},  # the delta of an older base
        lambda value: {**value, "code": "another renderer"},
        lambda value: {**value, "entries": {"patterns/x.json": [1, 2]}},  # not a row
        lambda value: "not an object",
    ],
)
def test_a_delta_that_does_not_belong_is_ignored(mem: Memory, damage: object) -> None:
    mem.save("Feature folders", "pattern", description="Group UI code by feature")
    for name in BASES:
        path = cache_dir(mem.layout) / f"{name}.delta"
        path.write_text(json.dumps(damage(json.loads(path.read_text("utf-8")))), "utf-8")  # type: ignore[operator]
    mem.save("And another", "pattern", description="after the deltas broke")
    assert on_disk(mem) == full_render(mem) and mem.render_check() == []


def test_a_broken_delta_file_is_ignored(mem: Memory) -> None:
    (cache_dir(mem.layout) / "index.json.delta").write_bytes(b"{not json")
    mem.save("And another", "pattern", description="after the delta broke")
    assert on_disk(mem) == full_render(mem) and mem.render_check() == []
