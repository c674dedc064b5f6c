"""Memory at scale: save latency, bulk import, recall@5 and merge precision as the store grows,
side by side with Basic Memory on the same corpus.

Corpus: the 60 labelled long-term records of ``tests/fixtures/retrieval/records.json`` (the
oldest records of the store: indexed first) plus synthetic records to reach each size, words
drawn by frequency from the source of click and markdown-it-py (``bench_search.make_records``:
30% patterns, 30% mistakes, 40% learnings, decisions, discoveries and bug fixes). Record files
are written directly to set up; ``maxPatterns`` / ``maxMistakes`` are raised out of the way so
that every record is live (the worst case for the rules: the defaults, 200 / 100, archive the
rest).

Figures, per size (default 100, 1k, 10k, 100k):

- **save in-process**: ``Memory.longterm.save`` of a new pattern (the learning rules and the
  record write, no view re-rendering), p50 wall and CPU time over 40 saves, after a first
  save that builds the catalog (its time is shown too). ``--before COMMIT`` also times the
  rules as they were at COMMIT (every record of the type read on each save).
- **Memory.save**: the same through the facade, which also re-renders the Markdown views.
- **pmem save**: the CLI, a new process per save (Python, click and the CLI's modules at every
  start), p50 of 8 after one warm-up, in the same tree and, taking turns with it, in one with
  the default caps (200 patterns and 100 mistakes live, the rest archived by a first save:
  their files stay, soft-deleted), and of ``pmem save --help`` (the command's start-up) and
  ``python -c pass`` (the interpreter's: the target is a save within 8x of it).
- **recall@5**: the 60 labelled queries of ``tests/fixtures/retrieval/queries.json`` that aim
  at records, recall of their record targets in the first 5 hits, and MRR; search p50 / p95,
  wall and CPU time of the thread (after one warm-up pass). ``--workdir DIR`` keeps each
  size's tree and index under ``DIR/recall-<n>`` and reuses them on the next run.

Once: **bulk import** of 10k memories through the API (``Memory.save`` for each inside
``Memory.bulk()``: one lock, no fsync per file and one sync at the end, one catalog
transaction, one re-render of the views; default settings), and **merge precision**
on ``tests/fixtures/merge_memories.json`` (316 realistic patterns and mistakes, 241 distinct
rules, each labelled with its rule).

Basic Memory (``--basic-memory``): installed at bench time in its own venv under
``bench/.cache/basic-memory-venv`` (``pip install basic-memory``, Python 3.12), driven by
``bench/basic_memory_driver.py``: the same records written as Markdown notes and indexed
(``project add``), 8 ``write_note`` calls and the same queries through its MCP server (stdio).

Run: ``.venv/bin/python bench/bench_scale.py [--sizes 100,1000,10000,100000]
[--basic-memory] [--bm-sizes 1000,10000] [--before 926df0e] [--bulk 10000]
[--skip saves,recall,bulk,merge]``.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from bench_search import make_records
from installed import as_installed

from planning_memory.core import codec
from planning_memory.core.model import new_long_term
from planning_memory.memory import Memory
from planning_memory.search import ranking as search
from planning_memory.search import upkeep as indexer
from planning_memory.search.database import Index

FIXTURES = REPO / "tests" / "fixtures"
NOW = datetime(2026, 2, 1, tzinfo=UTC)
PMEM = str(Path(sys.executable).parent / "pmem")
CACHE = REPO / "bench" / ".cache"
BM_VENV = CACHE / "basic-memory-venv"
BM_VERSION = "0.24.1"
K = 5
SAVES = 40


def labelled() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The labelled records (as complete records) and the queries that aim at records."""
    start = datetime(2025, 6, 1, tzinfo=UTC)
    records = []
    for n, spec in enumerate(json.loads((FIXTURES / "retrieval" / "records.json").read_text())):
        fields = dict(spec)
        rid, rtype, title = fields.pop("id"), fields.pop("type"), fields.pop("title")
        created = start + timedelta(days=3 * n)
        records.append(new_long_term(rtype, rid, created, title=title, **fields))
    queries = []
    for q in json.loads((FIXTURES / "retrieval" / "queries.json").read_text()):
        wanted = [t.split(":", 1)[1] for t in q["relevant"] if t.startswith("record:")]
        if wanted:
            queries.append({"q": q["q"], "relevant": wanted})
    return records, queries


def corpus(n: int) -> list[dict[str, Any]]:
    """The labelled records, then synthetic ones (ids that sort after them) up to ``n``."""
    records, _queries = labelled()
    extra = make_records(max(0, n - len(records)), random.Random(n))
    for record in extra:
        prefix, number = str(record["id"]).split("_", 1)
        record["id"] = f"{prefix}_Z{number}"
    return (records + extra)[:n]


def write_tree(root: Path, records: list[dict[str, Any]], **settings: Any) -> Memory:
    Memory.init(root)
    config = root / ".planning" / "memory-config.json"
    value = json.loads(config.read_text())
    value["memory"]["longTerm"].update(settings)
    config.write_text(json.dumps(value))
    mem = Memory(root)
    for record in records:
        path = mem.layout.record_path(str(record["type"]), str(record["id"]))
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(codec.dump_bytes(record))
    return Memory(root)


UNCAPPED = {"maxPatterns": 10**7, "maxMistakes": 10**7}


def new_texts(count: int, seed: int) -> list[tuple[str, str]]:
    """(title, description) of new memories, from the same words as the corpus."""
    made = make_records(count, random.Random(10_000 + seed))
    return [(str(r["title"]), str(r.get("description") or r.get("learned"))[:200]) for r in made]


def p50(values: list[float]) -> float:
    return 1000 * statistics.median(values)


def timed(call: Callable[..., object], *args: Any, **kwargs: Any) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    call(*args, **kwargs)
    return time.perf_counter() - wall, time.process_time() - cpu


def old_rules(commit: str) -> Any:
    """``planning_memory.longterm.rules`` as it was at ``commit`` (read every record)."""
    source = subprocess.run(
        ["git", "-C", str(REPO), "show", f"{commit}:planning_memory/longterm/rules.py"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    path = Path(tempfile.mkdtemp()) / "old_rules.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("old_rules", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["old_rules"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def bench_saves(n: int, before: str | None) -> dict[str, float]:
    out: dict[str, float] = {"records": n}
    texts = iter(new_texts(SAVES * 3 + 60, n))
    with tempfile.TemporaryDirectory() as tmp:
        mem = write_tree(Path(tmp), corpus(n), **UNCAPPED)
        title, text = next(texts)
        save = mem.longterm.save
        out["first_save_s"] = timed(save, "pattern", title, description=text)[0]
        walls, cpus = [], []
        for _ in range(SAVES):
            title, text = next(texts)
            wall, cpu = timed(save, "pattern", title, description=text)
            walls.append(wall)
            cpus.append(cpu)
        out["save_p50_ms"], out["save_cpu_p50_ms"] = p50(walls), p50(cpus)
        if before:
            old = old_rules(before)
            tree, now = mem.longterm.tree, mem.longterm.clock
            walls = []
            for _ in range(min(SAVES, 10 if n >= 10_000 else SAVES)):
                title, text = next(texts)
                record = old.new_record("pattern", now(), title=title, name=title, description=text)
                walls.append(timed(old.remember, tree, record, now())[0])
            out["before_save_p50_ms"] = p50(walls)
        walls = []
        for _ in range(10):
            title, text = next(texts)
            walls.append(timed(mem.save, title, "pattern", description=text)[0])
        out["memory_save_p50_ms"] = p50(walls)
        with tempfile.TemporaryDirectory() as capped:  # the default caps: 200 / 100 live
            title, text = next(texts)
            write_tree(Path(capped), corpus(n)).save(title, "pattern", description=text)
            # ^ archives what is over the caps
            runs: dict[str, str | list[str]] = {
                "save": tmp,
                "save_default_caps": capped,
                "help": [PMEM, "save", "--help"],  # the command's start-up
                "python": [sys.executable, "-c", "pass"],  # the interpreter's
            }
            times = cli_saves(list(runs.values()), texts)
        for (wall, cpu), name in zip(times, runs, strict=True):
            out[f"cli_{name}_p50_ms"], out[f"cli_{name}_cpu_p50_ms"] = wall, cpu
    return out


def cli_saves(
    runs: list[str | list[str]], texts: Iterator[tuple[str, str]]
) -> list[tuple[float, float]]:
    """p50 wall and CPU time of ``pmem save`` (a new process each) in each run's tree (a list:
    that command instead), 8 runs each after one warm-up, taking turns (the machine's speed
    drifts)."""
    walls: list[list[float]] = [[] for _ in runs]
    cpus: list[list[float]] = [[] for _ in runs]
    for i in range(9):
        for k in range(len(runs)) if i % 2 else reversed(range(len(runs))):
            title, text = next(texts)
            cmd = runs[k]
            if isinstance(cmd, str):
                cmd = [PMEM, "-C", cmd, "save", title, "-t", "pattern", "--description", text]
            before_run = resource.getrusage(resource.RUSAGE_CHILDREN)
            wall = timed(subprocess.run, cmd, check=True, capture_output=True)[0]
            after_run = resource.getrusage(resource.RUSAGE_CHILDREN)
            if i:  # the first one warms the page cache
                walls[k].append(wall)
                used = after_run.ru_utime + after_run.ru_stime
                cpus[k].append(used - before_run.ru_utime - before_run.ru_stime)
    return [(p50(w), p50(c)) for w, c in zip(walls, cpus, strict=True)]


def recall(n: int, workdir: str | None = None) -> dict[str, float]:
    """recall@5, MRR and search times of the labelled record queries in a store of ``n``."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(workdir) / f"recall-{n}" if workdir else Path(tmp)
        ready = (root / ".planning").exists()
        mem = Memory(root) if ready else write_tree(root, corpus(n))
        with Index.open(mem.layout) as index:
            if not ready or not index.built:
                indexer.rebuild(index, mem.layout, mem.store, code=False)
            return recall_figures(index, n)


def recall_figures(index: Index, n: int) -> dict[str, float]:
    _records, queries = labelled()
    for q in queries:  # warm-up: page cache and the stemmer's cache
        search.search(index, q["q"], now=NOW, limit=K, include_pinned=False)
    found, rr, walls, cpus = 0.0, 0.0, [], []
    for q in queries:
        start, cpu = time.perf_counter(), time.thread_time()
        hits = search.search(index, q["q"], now=NOW, limit=K, include_pinned=False)
        walls.append(time.perf_counter() - start)
        cpus.append(time.thread_time() - cpu)
        got = [h.ref_id for h in hits[:K]]
        found += len(set(got) & set(q["relevant"])) / len(q["relevant"])
        rank = next((i for i, rid in enumerate(got, 1) if rid in q["relevant"]), 0)
        rr += 1 / rank if rank else 0.0
    walls.sort()
    cpus.sort()
    return {
        "records": n,
        "recall": round(found / len(queries), 3),
        "mrr": round(rr / len(queries), 3),
        "search_p50_ms": round(p50(walls), 2),
        "search_p95_ms": round(1000 * walls[int(0.95 * len(walls))], 2),
        "search_cpu_p50_ms": round(p50(cpus), 2),
        "search_cpu_p95_ms": round(1000 * cpus[int(0.95 * len(cpus))], 2),
    }


def bulk_import(n: int = 10_000) -> dict[str, float]:
    """``n`` memories saved one by one through ``Memory.save`` (all the rules; default
    settings) inside ``Memory.bulk()``: one lock, no fsync per file and one sync at the end,
    one catalog transaction, the views rendered once when it ends."""
    memories = make_records(n, random.Random(7))
    with tempfile.TemporaryDirectory() as tmp:
        Memory.init(tmp)
        mem = Memory(tmp)
        actions: dict[str, int] = {}
        start, cpu = time.perf_counter(), time.process_time()
        with mem.bulk():
            for r in memories:
                keys = ("description", "correction", "severity", "learned")
                fields = {k: r[k] for k in keys if r.get(k)}
                outcome = mem.save(str(r["title"]), str(r["type"]), **fields)
                key = "merged" if outcome.merged is not None else outcome.action
                actions[key] = actions.get(key, 0) + 1
                actions["archived"] = actions.get("archived", 0) + len(outcome.archived)
            saves = time.perf_counter() - start
        total = time.perf_counter() - start
        live = len(mem.records())
    return {
        "memories": n,
        "saves_s": saves,
        "total_s": total,
        "cpu_s": time.process_time() - cpu,
        "live": live,
        **{f"n_{k}": v for k, v in actions.items()},
    }


class Clock:
    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


def merge_precision() -> dict[str, float]:
    items = json.loads((FIXTURES / "merge_memories.json").read_text())
    totals = {"merges": 0, "right": 0, "expected": 0}
    for seed in (1, 2, 3):
        order = items[:]
        random.Random(seed).shuffle(order)
        with tempfile.TemporaryDirectory() as tmp:
            write_tree(Path(tmp), [], maxPatterns=10_000, maxMistakes=10_000)
            clock = Clock(NOW)
            mem = Memory(tmp, clock=clock)
            rule_of: dict[str, str] = {}
            saved: set[tuple[str, str]] = set()
            for item in order:
                clock.now += timedelta(hours=1)
                totals["expected"] += (item["type"], item["group"]) in saved
                if item["type"] == "pattern":
                    outcome = mem.longterm.learn_pattern(item["text"])
                else:
                    outcome = mem.longterm.learn_mistake(item["text"])
                if outcome.merged is None:
                    rule_of[outcome.record["id"]] = item["group"]
                    saved.add((item["type"], item["group"]))
                else:
                    totals["merges"] += 1
                    totals["right"] += rule_of[outcome.record["id"]] == item["group"]
    return {
        "memories": len(items),
        "rules": len({i["group"] for i in items}),
        "precision": totals["right"] / totals["merges"],
        "recall": totals["right"] / totals["expected"],
        "merges_per_order": totals["merges"] / 3,
    }


# -- Basic Memory ----------------------------------------------------------------------------
def install_basic_memory() -> str | None:
    """Basic Memory's venv (made once); None, or why it cannot run."""
    python = BM_VENV / "bin" / "python"
    if python.exists():
        return None
    interpreter = shutil.which("python3.12") or shutil.which("python3.13")
    if interpreter is None:
        return "Basic Memory needs Python >= 3.12 and none is installed"
    steps = [
        [interpreter, "-m", "venv", str(BM_VENV)],
        [str(BM_VENV / "bin" / "pip"), "install", "-q", f"basic-memory=={BM_VERSION}"],
    ]
    for step in steps:
        done = subprocess.run(step, capture_output=True, text=True)
        if done.returncode:
            shutil.rmtree(BM_VENV, ignore_errors=True)
            return f"{' '.join(step[:3])} failed: {done.stderr.strip()[-300:]}"
    return None


def basic_memory(n: int) -> dict[str, Any]:
    _records, queries = labelled()
    notes = []
    for r in corpus(n):
        text = " ".join(
            str(r.get(k) or "") for k in ("description", "correction", "learned", "example")
        ).strip()
        notes.append({"id": r["id"], "title": r["title"], "text": text})
    writes = [{"title": t, "text": d} for t, d in new_texts(9, n)]
    with tempfile.TemporaryDirectory(dir=CACHE) as tmp:
        job = {
            "home": f"{tmp}/home",
            "project": f"{tmp}/project",
            "notes": notes,
            "writes": writes,
            "queries": [q["q"] for q in queries],
            "k": K,
        }
        done = subprocess.run(
            [str(BM_VENV / "bin" / "python"), str(REPO / "bench" / "basic_memory_driver.py")],
            input=json.dumps(job),
            capture_output=True,
            text=True,
            timeout=4 * 3600,
        )
    if done.returncode:
        return {"records": n, "error": done.stderr.strip()[-400:]}
    answer = json.loads(done.stdout.strip().splitlines()[-1])
    found = 0.0
    for q, got in zip(queries, answer["found"], strict=True):
        ids = {g.rsplit("/", 1)[-1] for g in got[:K]}
        found += len(ids & set(q["relevant"])) / len(q["relevant"])
    return {
        "records": n,
        "index_s": answer["add_s"],
        "write_p50_ms": p50(answer["write_s"][1:]),
        "recall": found / len(queries),
        "search_p50_ms": p50(answer["search_s"]),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100,1000,10000,100000")
    parser.add_argument("--recall-sizes", default="1000,10000,100000")
    parser.add_argument("--basic-memory", action="store_true")
    parser.add_argument("--bm-sizes", default="1000,10000")
    parser.add_argument("--before", default=None, help="also time the rules of this commit")
    parser.add_argument("--skip", default="", help="comma list of: saves,recall,bulk,merge")
    parser.add_argument("--workdir", default=None, help="keep and reuse the recall trees here")
    parser.add_argument("--bulk", type=int, default=10_000, help="memories in the bulk import")
    args = parser.parse_args()
    skip = set(args.skip.split(","))
    as_installed()
    print(f"load average {os.getloadavg()[0]:.1f}", flush=True)
    if "merge" not in skip:
        print(json.dumps({"merge": merge_precision()}), flush=True)
    if "saves" not in skip:
        for n in (int(s) for s in args.sizes.split(",")):
            print(json.dumps({"saves": bench_saves(n, args.before)}), flush=True)
    if "recall" not in skip:
        for n in (int(s) for s in args.recall_sizes.split(",")):
            print(json.dumps({"recall": recall(n, args.workdir)}), flush=True)
    if "bulk" not in skip:
        print(json.dumps({"bulk": bulk_import(args.bulk)}), flush=True)
    if args.basic_memory:
        problem = install_basic_memory()
        if problem:
            print(json.dumps({"basic_memory": {"error": problem}}), flush=True)
        else:
            for n in (int(s) for s in args.bm_sizes.split(",")):
                print(json.dumps({"basic_memory": basic_memory(n)}), flush=True)
    print(f"load average {os.getloadavg()[0]:.1f}", flush=True)


if __name__ == "__main__":
    main()
