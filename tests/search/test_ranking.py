"""Search: query building, AND-then-OR, ranking boosts, filters, pinned and deleted records."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from planning_memory.core.layout import Layout
from planning_memory.core.model import new_long_term
from planning_memory.search import ranking as search
from planning_memory.search import upkeep as indexer
from planning_memory.search.database import Index
from planning_memory.store import Store

NOW = datetime(2026, 1, 10, 12, 0, tzinfo=UTC)


@pytest.fixture
def env(tmp_path: Path) -> tuple[Layout, Store, Index]:
    layout = Layout.for_repo(tmp_path)
    store = Store(layout)
    index = Index.open(layout)
    indexer.rebuild(index, layout, store)
    yield layout, store, index  # type: ignore[misc]
    index.close()


def put(env: tuple[Layout, Store, Index], rtype: str, rid: str, **fields: Any) -> None:
    layout, _store, index = env
    title = fields.pop("title", rid)
    created = fields.pop("now", NOW)
    indexer.index_record(index, layout, new_long_term(rtype, rid, created, title=title, **fields))


def ids(hits: list[search.Hit]) -> list[str]:
    return [h.ref_id or h.key for h in hits]


def test_query_terms_drop_stopwords_and_duplicates() -> None:
    assert search.query_terms("How do we handle the Auth errors, auth?") == [
        "handle",
        "auth",
        "errors",
    ]
    assert search.query_terms("¿Cómo manejamos la autenticación?") == ["manejamos", "autenticación"]


def test_fts_operators_in_queries_are_inert(env: tuple[Layout, Store, Index]) -> None:
    put(env, "pattern", "pat_1", description="NOT near AND")
    for text in ['NOT OR AND "(', "near(a b)", "*", "col:umn", '"""']:
        search.search(env[2], text, now=NOW)  # no exception


def test_all_terms_first_then_any(env: tuple[Layout, Store, Index]) -> None:
    put(env, "pattern", "pat_both", description="retry with exponential backoff")
    put(env, "pattern", "pat_one", description="exponential growth of the cache")
    index = env[2]
    assert ids(search.search(index, "exponential backoff", now=NOW, limit=1)) == ["pat_both"]
    hits = search.search(index, "exponential backoff", now=NOW, limit=5)
    assert ids(hits) == ["pat_both", "pat_one"]
    assert [h.match for h in hits] == ["all", "any"]
    assert ids(search.search(index, "exponential backoff", now=NOW, match="all")) == ["pat_both"]


def test_scores_are_normalised_and_threshold_filters(env: tuple[Layout, Store, Index]) -> None:
    put(env, "pattern", "pat_a", title="zebra zebra zebra", description="zebra crossing")
    put(env, "learning", "lrn_b", description="a long text " * 30 + "zebra")
    hits = search.search(env[2], "zebra", now=NOW)
    assert hits[0].score == 1.0 and 0 < hits[1].score < 1.0
    assert ids(search.search(env[2], "zebra", now=NOW, threshold=0.99)) == ["pat_a"]


def test_filters(env: tuple[Layout, Store, Index]) -> None:
    put(env, "pattern", "pat_1", description="heron", tags=["python"], scope="project")
    put(env, "mistake", "mis_1", description="heron", tags=["js"], scope="personal")
    put(env, "decision", "lrn_1", description="heron", tags=["python", "db"])
    index = env[2]
    assert set(ids(search.search(index, "heron", now=NOW, types=["mistake"]))) == {"mis_1"}
    assert set(ids(search.search(index, "heron", now=NOW, scope="personal"))) == {"mis_1"}
    assert set(ids(search.search(index, "heron", now=NOW, tags=["python"]))) == {"pat_1", "lrn_1"}
    assert set(ids(search.search(index, "heron", now=NOW, tags=["python", "db"]))) == {"lrn_1"}
    assert search.search(index, "heron", now=NOW, sources=["code"]) == []
    assert len(search.search(index, "heron", now=NOW, limit=2)) == 2


def test_recency_breaks_ties_but_stays_bounded(env: tuple[Layout, Store, Index]) -> None:
    old = datetime(2024, 1, 1, tzinfo=UTC)
    put(env, "pattern", "pat_old", description="marmot burrow", now=old)
    put(env, "pattern", "pat_new", description="marmot burrow", now=NOW)
    assert ids(search.search(env[2], "marmot", now=NOW))[:2] == ["pat_new", "pat_old"]
    # a much better (older) match still beats a weak recent one
    put(env, "pattern", "pat_good", title="gecko", description="gecko gecko gecko", now=old)
    put(env, "learning", "lrn_weak", description="word " * 200 + "gecko", now=NOW)
    assert ids(search.search(env[2], "gecko", now=NOW))[0] == "pat_good"
    assert search.recency_boost("2026-01-10T12:00:00Z", NOW) == pytest.approx(0.15)
    assert search.recency_boost("2025-12-11T12:00:00Z", NOW) == pytest.approx(0.075)


def test_access_counts_break_ties(env: tuple[Layout, Store, Index]) -> None:
    put(env, "pattern", "pat_a", description="lynx")
    put(env, "pattern", "pat_b", description="lynx")
    index = env[2]
    first = ids(search.search(index, "lynx", now=NOW))[0]
    other = {"pat_a", "pat_b"} - {first}
    index.touch([f"record:{other.pop()}"] * 1, "2026-01-10T00:00:00Z")
    assert ids(search.search(index, "lynx", now=NOW))[0] != first
    assert search.access_boost(10**6) == pytest.approx(search.ACCESS_WEIGHT)


def test_pinned_only_when_matched_deleted_never(env: tuple[Layout, Store, Index]) -> None:
    put(env, "pattern", "pat_pin", description="unrelated ibis", pinned=True)
    put(env, "pattern", "pat_other", description="unrelated", pinned=True)
    put(env, "pattern", "pat_del", description="ibis", deleted_at="2026-01-01T00:00:00Z")
    put(env, "pattern", "pat_live", description="ibis")
    hits = search.search(env[2], "ibis", now=NOW, limit=1)
    assert ids(hits) == ["pat_live", "pat_pin"]  # a matching pinned record past the limit
    assert hits[1].match == "pinned" and "pinned" in hits[1].reason
    assert ids(search.search(env[2], "ibis", now=NOW, limit=1, include_pinned=False)) == [
        "pat_live"
    ]
    assert search.search(env[2], "ibis", now=NOW, sources=["code"]) == []
    assert search.search(env[2], "foobarbaz", now=NOW) == []  # pinned, but not asked for


def test_reason_names_the_matched_terms(env: tuple[Layout, Store, Index]) -> None:
    put(env, "pattern", "pat_1", description="jaguar habitat")
    hit = search.search(env[2], "jaguar lemur", now=NOW)[0]
    assert hit.reason.startswith("matches jaguar")
    assert "lemur" not in hit.reason


def _eval_module() -> Any:
    import importlib.util

    path = Path(__file__).resolve().parents[2] / "bench" / "eval_retrieval.py"
    spec = importlib.util.spec_from_file_location("eval_retrieval", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_labelled_set_is_large_and_well_formed() -> None:
    import json

    fixtures = Path(__file__).resolve().parents[1] / "fixtures" / "retrieval"
    queries = json.loads((fixtures / "queries.json").read_text())
    records = {r["id"] for r in json.loads((fixtures / "records.json").read_text())}
    assert len(queries) >= 100
    for q in queries:
        assert q["q"] and q["relevant"]
        for target in q["relevant"]:
            kind, _, name = target.partition(":")
            assert kind in ("record", "file", "decision", "message")
            if kind == "record":
                assert name in records


def test_search_beats_substring_baseline_on_a_labelled_subset() -> None:
    evaluate = _eval_module().evaluate
    results = evaluate(every=3, hybrid=False, context=False, languages=False)["all"]
    ours, naive = results["bm25"], results["substring"]
    assert ours["queries"] >= 40
    assert ours["recall@5"] > naive["recall@5"]
    assert ours["mrr"] > naive["mrr"]
    assert ours["recall@5"] >= 0.8


def test_decay_enabled_ranks_an_old_unused_record_lower(tmp_path: Path) -> None:
    import shutil

    from planning_memory.memory import Memory

    now = datetime(2026, 11, 30, tzinfo=UTC)
    plain_repo, decay_repo = tmp_path / "plain", tmp_path / "decay"
    Memory.init(plain_repo)
    old = Memory(plain_repo, clock=lambda: now - timedelta(days=900))
    body = {"what": "zod schema validation zod schema", "why": "", "where": "", "learned": ""}
    old_id = old.save("Zod schema validation for forms", "learning", body=body).record["id"]
    new_id = Memory(plain_repo, clock=lambda: now).save("Validation with zod").record["id"]
    shutil.copytree(plain_repo, decay_repo)  # before any search: no access counts yet
    cfg_path = decay_repo / ".planning" / "memory-config.json"
    cfg = json.loads(cfg_path.read_text())
    cfg["memory"]["longTerm"]["decayEnabled"] = True
    cfg_path.write_text(json.dumps(cfg))

    def order(repo: Path) -> list[str]:
        hits = Memory(repo, clock=lambda: now).search("zod schema validation", match="any")
        return [h.ref_id for h in hits if h.ref_id in (old_id, new_id)]

    assert order(plain_repo) == [old_id, new_id]
    assert order(decay_repo) == [new_id, old_id]


# -- source names: only the ones the index stores --------------------------------------------
def test_an_unknown_source_is_an_input_error(env: tuple[Layout, Store, Index]) -> None:
    from planning_memory.errors import InputError

    put(env, "pattern", "pat_1", description="heron")
    index = env[2]
    assert ids(search.search(index, "heron", now=NOW, sources=["record"])) == ["pat_1"]
    assert search.check_sources("code") == ("code",)
    for bad in (["bogus"], ["record", "memory"], "memory"):
        with pytest.raises(InputError) as caught:
            search.search(index, "heron", now=NOW, sources=bad)
        line = caught.value.one_line()
        assert "\n" not in line
        assert ("'bogus'" if bad == ["bogus"] else "'memory'") in line
        assert "record, entity, code, doc, message, decision, session" in line
    with pytest.raises(InputError, match="for saved memories use 'record'"):
        search.check_sources(["memory"])


def test_the_cli_offers_the_sources_the_index_stores() -> None:
    from planning_memory.cli import contextual
    from planning_memory.search import documents

    assert tuple(contextual.SOURCES) == documents.SOURCES


def _tree(root: Path) -> dict[str, tuple[int, int]]:
    return {
        str(p.relative_to(root)): (p.stat().st_mtime_ns, p.stat().st_size)
        for p in sorted(root.rglob("*"))
    }


@pytest.mark.parametrize("bad", ["bogus", "memory"])
def test_cli_search_rejects_an_unknown_source(tmp_path: Path, bad: str) -> None:
    from click.testing import CliRunner

    from planning_memory.cli import cli
    from planning_memory.memory import Memory

    Memory.init(tmp_path)
    Memory(tmp_path).save("Heron wading pattern", "pattern")
    before = _tree(tmp_path)
    args = ["-C", str(tmp_path), "search", "heron", "--source", "record", "--source", bad]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2  # as every other usage error (see EXIT_CODES)
    assert result.stdout == ""  # no results, not even "No results."
    errors = [line for line in result.stderr.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1, result.stderr
    assert f"'{bad}'" in errors[0] and "--source" in errors[0]
    assert all(f"'{name}'" in errors[0] for name in search.SOURCES)
    assert _tree(tmp_path) == before  # nothing changed: not even the index was built
    ok = CliRunner().invoke(cli, ["-C", str(tmp_path), "search", "heron", "--source", "record"])
    assert ok.exit_code == 0 and "Heron wading pattern" in ok.stdout


def test_cli_search_help_lists_the_real_sources() -> None:
    from click.testing import CliRunner

    from planning_memory.cli import cli

    text = " ".join(CliRunner().invoke(cli, ["search", "--help"]).output.split())
    line = text[text.index("--source SOURCE") : text.index("--type TEXT")]
    assert all(name in line for name in search.SOURCES)
    assert "there is no 'memory' source" in line
    assert "(repeatable): memory" not in line


def test_memory_search_api_rejects_an_unknown_source(tmp_path: Path) -> None:
    from planning_memory.errors import InputError
    from planning_memory.memory import Memory

    Memory.init(tmp_path)
    mem = Memory(tmp_path)
    mem.save("Heron wading pattern", "pattern")
    assert [h.title for h in mem.search("heron", sources=["record"])] == ["Heron wading pattern"]
    with pytest.raises(InputError, match="unknown search source 'bogus'"):
        mem.search("heron", sources=["bogus"])


def test_the_or_step_scores_every_match_not_only_the_newest(
    env: tuple[Layout, Store, Index],
) -> None:
    """The best match, indexed first (the oldest), is found behind a thousand newer ones:
    the any-word step takes the rarest words while their documents add up to at most
    ``OR_BUDGET`` (here "alpha" and "gizmo", not "widget" too) and scores every match."""
    from planning_memory.search.database import SCAN_CAP

    put(env, "pattern", "pat_best", description="alpha widget")
    per_term = SCAN_CAP // 2 + 10
    assert per_term < search.OR_BUDGET < 2 * per_term
    with env[2].write():
        for n in range(per_term):
            put(env, "learning", f"lrn_w{n}", learned=f"widget number {n}")
            put(env, "learning", f"lrn_g{n}", learned=f"gizmo number {n}")
    hits = search.search(env[2], "alpha widget gizmo", now=NOW, limit=5)
    assert hits[0].ref_id == "pat_best"
    assert hits[0].match == "any"


def test_a_word_found_nowhere_does_not_empty_the_search(env: tuple[Layout, Store, Index]) -> None:
    put(env, "pattern", "pat_both", description="retry with exponential backoff")
    put(env, "pattern", "pat_one", description="exponential growth of the cache")
    hits = search.search(env[2], "exponential backoff zyzzyva", now=NOW, limit=5)
    assert ids(hits) == ["pat_both", "pat_one"]
    assert [h.match for h in hits] == ["all", "any"]
    assert search.search(env[2], "exponential zyzzyva", now=NOW, match="all") == []


def test_all_word_matches_likely_by_chance_rank_with_the_rest(
    env: tuple[Layout, Store, Index],
) -> None:
    """Where many documents hold every word by chance, they do not go first: one list, ranked
    by BM25 over all the words. Where that is unlikely, they do (the test above)."""
    with env[2].write():
        for n in range(40):
            filler = " ".join(f"word{n}x{k}" for k in range(30))
            put(env, "learning", f"lrn_{n}", learned=f"alpha {filler} beta {filler} gamma")
    put(env, "pattern", "pat_short", title="gamma beta", description="gamma beta")
    hits = search.search(env[2], "alpha beta gamma", now=NOW, limit=5)
    assert hits[0].ref_id == "pat_short"
    assert hits[0].match == "any" and hits[1].match == "all"


def test_words_in_a_title_are_found_when_too_common_for_the_any_step(
    env: tuple[Layout, Store, Index], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(search, "OR_BUDGET", 10)  # each word is in 20 documents
    with env[2].write():
        for n in range(20):
            for word in ("heron", "egret", "stork"):
                put(env, "learning", f"lrn_{word}{n}", learned=f"{word} note {n}")
    put(env, "pattern", "pat_title", title="Heron and egret", description="wading birds")
    hits = search.search(env[2], "heron egret stork", now=NOW, limit=5)
    assert hits[0].ref_id == "pat_title"
    monkeypatch.setattr(search, "TITLE_BUDGET", 0)
    assert search.search(env[2], "heron egret stork", now=NOW, limit=5) == []
