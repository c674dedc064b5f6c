"""Benchmark: the context block's hit rate on a labelled set of task prompts.

The memory is `.planning.example/` plus the records of `tests/fixtures/context/memory.json`
(83 records: what people taught, patterns, mistakes, decisions, notes of a Next.js shop);
`tests/fixtures/context/tasks.jsonl` holds 100+ task prompts, each with the record ids that
must be in its context block. Hit rate = labelled ids found in the block / labelled ids; a
task is "whole" when every one of its ids is there. `tests/context/test_hit_rate.py` runs
the same evaluation and asserts the hit rate.

    .venv/bin/python bench/bench_context_hits.py [--budget TOKENS] [--misses]
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from planning_memory.core.model import new_long_term
from planning_memory.memory import Memory

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "tests" / "fixtures" / "context"
EXAMPLE = REPO / ".planning.example"
SAVED_AT = datetime(2024, 1, 21, 9, 0, tzinfo=UTC)  # the fixture records' date
NOW = datetime(2024, 1, 22, 9, 0, tzinfo=UTC)  # the day after: the example session is a day old


@dataclass
class Result:
    """What the evaluation found: per task, the labelled ids that were missing."""

    budget: int
    tasks: int = 0
    labels: int = 0
    found: int = 0
    whole: int = 0
    misses: list[tuple[str, list[str]]] = field(default_factory=list)

    @property
    def hit_rate(self) -> float:
        return self.found / self.labels if self.labels else 0.0

    def lines(self) -> list[str]:
        return [
            f"tasks: {self.tasks}, labelled ids: {self.labels}, budget: {self.budget} tokens",
            f"hit rate (labelled ids in the block): {self.hit_rate:.3f}",
            f"tasks with every labelled id: {self.whole}/{self.tasks} "
            f"({self.whole / max(self.tasks, 1):.3f})",
        ]


def tasks() -> list[dict[str, Any]]:
    lines = (FIXTURES / "tasks.jsonl").read_text("utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def build_memory(root: Path) -> Memory:
    """``root`` as a repository whose memory is the example tree plus the fixture records."""
    shutil.copytree(EXAMPLE, root / ".planning")
    mem = Memory(root, clock=lambda: NOW)
    records = json.loads((FIXTURES / "memory.json").read_text("utf-8"))["records"]
    for fields in records:
        fields = dict(fields)
        rid, rtype, title = fields.pop("id"), fields.pop("type"), fields.pop("title")
        record = new_long_term(rtype, rid, SAVED_AT, title=title, **fields)
        mem.store.write_json(mem.layout.record_path(rtype, rid), record)
    return mem


def evaluate(budget: int | None = None, every: int = 1) -> Result:
    """Build the memory in a temporary folder and pack a block for every ``every``-th task."""
    with tempfile.TemporaryDirectory(prefix="pm-context-hits-") as tmp:
        mem = build_memory(Path(tmp))
        result = Result(budget or int(mem.config["memory"]["contextual"]["injectBudgetTokens"]))
        for case in tasks()[::every]:
            pack = mem.context(case["task"], budget=result.budget)
            kept = {item.id for item in pack.items}
            missing = [rid for rid in case["expect"] if rid not in kept]
            result.tasks += 1
            result.labels += len(case["expect"])
            result.found += len(case["expect"]) - len(missing)
            result.whole += not missing
            if missing:
                result.misses.append((case["task"], missing))
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=int, default=None, help="default: the config's (1500)")
    parser.add_argument("--misses", action="store_true", help="list the tasks that missed")
    args = parser.parse_args()
    result = evaluate(args.budget)
    print("\n".join(result.lines()))
    if args.misses:
        for task, missing in result.misses:
            print(f"  miss: {task!r}: {', '.join(missing)}")


if __name__ == "__main__":
    main()
