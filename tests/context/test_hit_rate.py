"""The context block's hit rate on a labelled set: 100+ task prompts over a realistic memory
(`.planning.example/` plus `tests/fixtures/context/memory.json`), each labelled with the
records that must be in its block (`tests/fixtures/context/tasks.jsonl`). The evaluation is
`bench/bench_context_hits.py`'s, which prints the same figures."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures" / "context"


def bench() -> ModuleType:
    path = REPO / "bench" / "bench_context_hits.py"
    spec = importlib.util.spec_from_file_location("bench_context_hits", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclass looks its module up
    spec.loader.exec_module(module)
    return module


def test_the_labelled_set_is_large_and_names_real_records() -> None:
    tasks = [
        json.loads(line)
        for line in (FIXTURES / "tasks.jsonl").read_text("utf-8").split("\n")
        if line
    ]
    assert len(tasks) >= 100
    known = {r["id"] for r in json.loads((FIXTURES / "memory.json").read_text("utf-8"))["records"]}
    known |= {
        p.stem for p in (REPO / ".planning.example" / "memory" / "long-term").rglob("*_*.json")
    }
    for case in tasks:
        assert case["task"] and case["expect"], case
        assert set(case["expect"]) <= known, case


def test_the_hit_rate_is_at_least_0_9() -> None:
    result = bench().evaluate()
    print("\n" + "\n".join(result.lines()))
    assert result.tasks >= 100
    assert result.hit_rate >= 0.9, result.misses
