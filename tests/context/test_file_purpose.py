"""A file's or function's "purpose" in the context is what the code says it is for (a
docstring, a hand-written purpose), never the text the search index holds for it."""

from __future__ import annotations

import json
from pathlib import Path

from planning_memory.memory import Memory


def scanned(repo: Path) -> Memory:
    (repo / "src").mkdir()
    (repo / "src" / "retry.py").write_text(
        "import os\n\ndef retry_backoff(fn, attempts=5):\n"
        "    for i in range(attempts):\n        return fn()\n"
    )
    (repo / "src" / "events.py").write_text(
        'def parse_event(raw):\n    """Turn a Stripe payload into an Event."""\n    return raw\n'
    )
    mem = Memory.init(repo)
    mem.scan()
    return mem


def test_index_text_never_shows_as_a_purpose(tmp_path: Path) -> None:
    mem = scanned(tmp_path)
    task = "retry backoff parse event"
    agent = mem.context(task, budget=2000, fmt="agent").text
    assert "- src/retry.py: retry_backoff(fn, attempts=5)\n" in agent, agent
    assert "- src/events.py: parse_event(raw) — Turn a Stripe payload into an Event." in agent
    assert "fn range" not in agent  # the calls the index holds for retry_backoff
    md = mem.context(task, budget=2000, fmt="md").text
    assert "fn range" not in md and "Turn a Stripe payload into an Event." in md, md
    body = json.loads(mem.context(task, budget=2000, fmt="json").text)["memory_context"]
    purposes = {f["path"]: f["purpose"] for f in body["relevant_files"]}
    assert purposes["src/retry.py"] == "", purposes
    assert purposes["src/events.py"] == "Turn a Stripe payload into an Event."
