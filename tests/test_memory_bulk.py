"""``Memory.bulk()``: many saves through the learning rules as one batch."""

from __future__ import annotations

import os
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
