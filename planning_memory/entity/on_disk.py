"""The code map's files on disk, counted and dated without loading the scanner."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path

from planning_memory.core import Layout


def last_written(layout: Layout) -> str | None:
    """When the code map was last written (its newest file), or None before any scan."""
    newest = max((p.stat().st_mtime for p in _entity_files(layout)), default=0.0)
    if not newest:
        return None
    return datetime.fromtimestamp(newest, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def count_files(layout: Layout) -> int:
    """How many files the code map holds on disk (shards, indexes, relationships)."""
    return sum(1 for _ in _entity_files(layout))


def _entity_files(layout: Layout) -> Iterable[Path]:
    return layout.entity.rglob("*.json") if layout.entity.is_dir() else ()
