"""A hook's quick build: the memories indexed at once, the code map and the code left pending
and finished later, in batches that survive an interruption, by one process at a time."""

from __future__ import annotations

import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pytest

from planning_memory.core.layout import Layout
from planning_memory.core.model import new_long_term
from planning_memory.search import upkeep
from planning_memory.search.database import Filters, Index
from planning_memory.store import Store

NOW = datetime(2026, 1, 10, 12, 0, tzinfo=UTC)


def keys(index: Index, query: str) -> set[str]:
    return {r.doc.key for r in index.match(query, Filters(), 1000)}


@pytest.fixture
def repo(tmp_path: Path) -> tuple[Layout, Store]:
    layout = Layout.for_repo(tmp_path)
    store = Store(layout)
    record = new_long_term("pattern", "pat_1", NOW, title="always use pnpm")
    store.write_json(layout.record_path("pattern", "pat_1"), record)
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    for n in range(9):
        (tmp_path / f"mod{n}.py").write_text(f"def wombat_{n}(): return {n}\n", "utf-8")
    return layout, store


def test_memories_first_then_the_code(repo: tuple[Layout, Store]) -> None:
    layout, store = repo
    with Index.open(layout) as index:
        assert upkeep.ensure_memories(index, layout, store) is True
        assert keys(index, '"pnpm"') == {"record:pat_1"}
        assert keys(index, "wombat_0") == set()  # the code waits
        assert upkeep.ensure_memories(index, layout, store) is True  # still pending
        upkeep.ensure_ready(index, layout, store)
        assert keys(index, "wombat_0") == {"code:mod0.py#0"}
        assert upkeep.ensure_memories(index, layout, store) is False


def test_an_interrupted_finish_keeps_its_batches(
    repo: tuple[Layout, Store], monkeypatch: pytest.MonkeyPatch
) -> None:
    layout, store = repo
    monkeypatch.setattr(upkeep, "CODE_BATCH", 2)
    real, calls = upkeep._sync_one, []

    def dies_on_the_fifth(*args: object) -> upkeep.IndexReport:
        calls.append(args)
        if len(calls) == 5:
            raise KeyboardInterrupt  # the process stopped mid-batch
        return real(*args)  # type: ignore[arg-type]

    with Index.open(layout) as index:
        upkeep.ensure_memories(index, layout, store)
        monkeypatch.setattr(upkeep, "_sync_one", dies_on_the_fifth)
        with pytest.raises(KeyboardInterrupt):
            upkeep.ensure_ready(index, layout, store)
    monkeypatch.setattr(upkeep, "_sync_one", real)
    with Index.open(layout) as index:
        # two whole batches were kept; the third (half done) was rolled back
        assert len(keys(index, "wombat_0 OR wombat_1 OR wombat_2 OR wombat_3 OR wombat_4")) == 4
        report = upkeep.ensure_ready(index, layout, store)
        assert report.changed < 9 + 1  # the kept files were not indexed again
        assert len(keys(index, "wombat_0 OR wombat_5 OR wombat_8")) == 3
        assert index.get_meta(upkeep.PENDING) is None


def test_one_finisher_at_a_time(repo: tuple[Layout, Store]) -> None:
    layout, _ = repo
    with Index.open(layout) as first, Index.open(layout) as second:
        with first.build_guard() as mine, second.build_guard() as theirs:
            assert (mine, theirs) == (True, False)
        with second.build_guard() as now_mine:
            assert now_mine


def test_include_patterns_limit_the_code_index_as_they_limit_the_code_map(
    tmp_path: Path,
) -> None:
    """``entity.includePatterns`` (seed 000: ``["src/**/*", "lib/**/*"]``) keep the code the
    index holds to those files; documents such as the README are indexed either way."""
    layout = Layout.for_repo(tmp_path)
    store = Store(layout)
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    for rel in ("src/a.py", "lib/b.py", "scripts/c.py", "README.md"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("numbat = 1\n", "utf-8")
    config = {"memory": {"entity": {"includePatterns": ["src/**/*", "lib/**/*"]}}}
    with Index.open(layout) as index:
        upkeep.rebuild(index, layout, store, config)
        found = {k.split("#")[0] for k in keys(index, "numbat")}
        assert found == {"code:src/a.py", "code:lib/b.py", "doc:README.md"}
        (tmp_path / "scripts/c.py").write_text("numbat = 2\n", "utf-8")
        upkeep.index_files(index, tmp_path, ["scripts/c.py", "src/a.py"], config)
        assert not any("scripts/c.py" in k for k in keys(index, "numbat"))
