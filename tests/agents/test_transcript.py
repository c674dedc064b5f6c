"""Claude Code transcripts: incremental reading (partial lines, a shorter or missing file, a
line too long) and the turns kept from a recorded transcript (tests/fixtures/hooks/)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from planning_memory.agents.transcript import Turn, read_new, tool_summary, turns

FIXTURE = Path(__file__).parents[1] / "fixtures" / "hooks" / "transcript-session.jsonl"
CWD = "/work/app"


def lines() -> list[bytes]:
    return FIXTURE.read_text("utf-8").replace("{{CWD}}", CWD).encode().splitlines(keepends=True)


def test_the_recorded_transcript_as_turns() -> None:
    chunk = read_new(FIXTURE, 0)
    assert chunk.offset == FIXTURE.stat().st_size and not chunk.restarted
    read = turns([json.loads(line) for line in lines()], cwd=CWD)
    assert read.turns == [
        Turn(
            "user",
            "Always use pnpm instead of npm in this repo. Then fix the webhook retry in "
            "src/payments/webhook.py",
        ),
        Turn(
            "assistant",
            "I'll read the webhook handler first.\n\nWe decided to retry failed webhooks 5 times "
            "with exponential backoff. Next: add a test for the retry limit. [MEMORIZE: Payment "
            "webhooks are retried 5 times by src/payments/webhook.py]",
            (
                ("Read", "src/payments/webhook.py"),
                (
                    "TodoWrite",
                    "in_progress: Retry failed webhooks 5 times; pending: Add a test for the "
                    "retry limit",
                ),
                ("Edit", "src/payments/webhook.py"),
                ("Bash", "pnpm test -- tests/test_webhook.py"),
            ),
        ),
        Turn("user", "Also make the backoff base configurable."),
    ]  # no slash-command lines, meta lines, sub-agent lines, thinking, tool results,
    # interruptions or synthetic replies
    assert read.active_task() == "Retry failed webhooks 5 times"
    assert read.last_at == "2026-01-20T10:00:41.517Z"


def test_lines_older_than_since_are_left_out() -> None:
    entries = [json.loads(line) for line in lines()]
    since = datetime(2026, 1, 20, 10, 0, 30, tzinfo=UTC)
    read = turns(entries, since=since)
    assert read.turns == [Turn("user", "Also make the backoff base configurable.")]
    assert read.todos is None and read.active_task() is None
    assert read.last_at == "2026-01-20T10:00:41.517Z"


def test_reading_only_new_complete_lines(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    first, second = lines()[:2]
    path.write_bytes(first + second[:40])  # the second line is still being written
    chunk = read_new(path, 0)
    assert [e["type"] for e in chunk.entries] == ["summary"] and chunk.offset == len(first)
    assert read_new(path, chunk.offset).entries == []
    assert read_new(path, chunk.offset, final=True).entries == []  # not JSON yet: left
    with path.open("ab") as file:
        file.write(second[40:])
    again = read_new(path, chunk.offset)
    assert [e["isMeta"] for e in again.entries] == [True]
    assert again.offset == len(first) + len(second)
    assert read_new(path, again.offset) == type(again)([], again.offset)


def test_a_last_line_without_newline_is_taken_when_final(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    first, second = lines()[:2]
    path.write_bytes(first + second.rstrip(b"\n"))
    assert len(read_new(path, 0).entries) == 1
    final = read_new(path, 0, final=True)
    assert len(final.entries) == 2 and final.offset == path.stat().st_size


def test_missing_shorter_and_garbled_files(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    assert read_new(path, 123) == type(read_new(path, 0))([], 123)  # missing: nothing, kept
    path.write_bytes(b"not json\n[1, 2]\n" + lines()[0])
    assert [e["type"] for e in read_new(path, 0).entries] == ["summary"]
    shorter = read_new(path, 10_000)  # replaced by a shorter file: read from its start
    assert shorter.restarted and shorter.offset == path.stat().st_size
    assert [e["type"] for e in shorter.entries] == ["summary"]


def test_a_line_longer_than_the_limit_is_stepped_over(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    huge = json.dumps({"type": "user", "message": {"content": "x" * 5000}}).encode() + b"\n"
    path.write_bytes(huge + lines()[0])
    skipped = read_new(path, 0, limit=1000)
    assert skipped.entries == [] and skipped.offset == len(huge)
    assert [e["type"] for e in read_new(path, skipped.offset, limit=1000).entries] == ["summary"]


def test_tool_summaries() -> None:
    assert tool_summary({"file_path": "/work/app/src/a.py"}, "/work/app") == "src/a.py"
    assert tool_summary({"file_path": "/etc/hosts"}, "/work/app") == "/etc/hosts"
    assert tool_summary({"url": "https://example.com", "prompt": "x"}) == "https://example.com"
    assert tool_summary({"pattern": "retry\\(", "path": "src"}) == "retry\\("
    assert tool_summary({"title": "Retry", "type": "decision"}) == (
        '{"title":"Retry","type":"decision"}'
    )
    assert len(tool_summary({"command": "echo " + "y" * 500})) == 200
    assert tool_summary(None) == ""
