"""Writing a scan's shards: one per changed folder, in forked workers when there are many.

Each folder's shard is encoded to canonical bytes and written only when its bytes differ;
with many folders, forked workers do it, so that their fsyncs overlap (where a cold scan's
write time goes).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from planning_memory.entity import pool
from planning_memory.entity.scanstate import Clock, Run
from planning_memory.entity.shards import RELATIONSHIPS, Shard

Entity = dict[str, Any]


def write(run: Run, clock: Clock, document: dict[str, Any] | None) -> int:
    folders = sorted(run.dirty | run.symbols.dirty)
    by_folder = run.table.by_folder(set(folders))
    global _writing
    _writing = (run, by_folder)
    try:
        written = _flush(folders, run)
    finally:
        _writing = None
    run.written.update(by_folder)
    clock.lap("write")
    if document is not None:
        written += int(run.store.write_json(run.layout.entity / RELATIONSHIPS, document))
    clock.lap("areas")
    return written


_writing: tuple[Run, dict[str, dict[str, Entity]]] | None = None  # read by forked writers

PARALLEL_WRITE = 200  # folders to write before encoding and writing move to forked workers


def _flush(folders: list[str], run: Run) -> int:
    """Encode and write the shards of ``folders``; returns the files changed. With many
    folders, forked workers do it: their fsyncs overlap, which is where a cold scan's write
    time goes. Each writes through its inherited copy of the ``Store``; the files they changed
    are told to the parent's store (``written_elsewhere``), so its ``on_write`` hears of them."""
    if len(folders) < PARALLEL_WRITE or not pool.can_fork():
        return sum(_write_folder(folder) for folder in folders)
    writers = max(2, min(8, 2 * (os.cpu_count() or 1)))
    size = max(8, len(folders) // (writers * 4))
    chunks = [folders[i : i + size] for i in range(0, len(folders), size)]
    written = 0
    for count, broken, changed in pool.forked(_write_chunk, chunks, writers):
        written += count
        run.shards.broken.extend(b for b in broken if b not in run.shards.broken)
        run.shards.changed.extend(Path(p) for p in changed)
        run.store.written_elsewhere(Path(p) for p in changed)
    return written


def _write_chunk(folders: list[str]) -> tuple[int, list[str], list[str]]:
    assert _writing is not None
    shards = _writing[0].shards
    shards.changed = []
    written = sum(_write_folder(folder) for folder in folders)
    return written, shards.broken, [str(p) for p in shards.changed]


def _write_folder(folder: str) -> int:
    assert _writing is not None
    run, by_folder = _writing
    shard = Shard(
        files=by_folder[folder],
        functions=run.symbols.flat(folder, "functions"),
        components=run.symbols.flat(folder, "components"),
    )
    return run.shards.write_dir(folder, shard)
