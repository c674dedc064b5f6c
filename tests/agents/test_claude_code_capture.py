"""Claude Code hooks and the transcript: Stop, PreCompact and SessionEnd log what the
transcript gained (only the new bytes), sessions left open are closed when a new Claude
session starts, and an empty session never hides the last real summary. The handlers run in
process with a clock the test moves; tests/agents/test_closed_loop.py runs the real command."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from clocks import Clock

from planning_memory.agents import claude_code as hooks
from planning_memory.memory import Memory

FIXTURES = Path(__file__).parents[1] / "fixtures" / "hooks"
CLAUDE_ID = "9f1c2a4e-5b6d-4c3e-8a1f-0d2e3c4b5a61"
OTHER_ID = "3b7e0c9d-1a2f-4e5d-9c8b-7a6f5e4d3c2b"
T0 = datetime(2026, 1, 20, 9, 59, tzinfo=UTC)  # the fixture transcript starts at 10:00


@pytest.fixture
def clock() -> Clock:
    return Clock(T0)


@pytest.fixture
def repo(empty_repo: Path) -> Path:
    (empty_repo / "src" / "payments").mkdir(parents=True)
    (empty_repo / "src" / "payments" / "webhook.py").write_text("x = 1\n", "utf-8")
    return empty_repo


def transcript_lines(repo: Path) -> list[bytes]:
    text = (FIXTURES / "transcript-session.jsonl").read_text("utf-8")
    return text.replace("{{CWD}}", str(repo)).encode().splitlines(keepends=True)


def payload(name: str, repo: Path, transcript: Path, **changes: Any) -> dict[str, Any]:
    text = (FIXTURES / f"{name}.json").read_text("utf-8").replace("{{CWD}}", str(repo))
    value: dict[str, Any] = json.loads(text)
    return {**value, "transcript_path": str(transcript), **changes}


def run(repo: Path, clock: Clock, event: str, data: dict[str, Any]) -> dict[str, Any] | None:
    mem = Memory(repo, clock=clock, channel=hooks.CHANNEL)
    name = hooks.event_name(event)
    assert name is not None
    return hooks.HANDLERS[name](mem, data)


def sessions(repo: Path) -> list[dict[str, Any]]:
    mem = Memory(repo)
    return [mem.sessions.get(i.id) for i in mem.sessions.list(channel=hooks.CHANNEL)]


def the_session(repo: Path) -> dict[str, Any]:
    [session] = sessions(repo)
    return session


def state(repo: Path, claude_id: str = CLAUDE_ID) -> dict[str, Any]:
    path = repo / ".planning/memory/short-term/claude-code" / f"{claude_id}.json"
    value: dict[str, Any] = json.loads(path.read_text("utf-8"))
    return value


def test_stop_logs_replies_tool_calls_and_unlogged_prompts_once(
    repo: Path, clock: Clock, tmp_path: Path
) -> None:
    transcript = tmp_path / "claude" / f"{CLAUDE_ID}.jsonl"
    transcript.parent.mkdir()
    lines = transcript_lines(repo)
    run(repo, clock, "SessionStart", payload("session_start_startup", repo, transcript))
    clock.now += timedelta(minutes=1)
    run(repo, clock, "UserPromptSubmit", payload("user_prompt_submit", repo, transcript))
    transcript.write_bytes(b"".join(lines[:-3]))  # up to the reply, before the next prompt
    assert run(repo, clock, "Stop", payload("pre_compact", repo, transcript)) is None
    session = the_session(repo)
    assert [m["role"] for m in session["messages"]] == ["user", "assistant"]  # prompt once
    reply = session["messages"][1]
    assert reply["content"].startswith("I'll read the webhook handler first.")
    assert [t["name"] for t in reply["tool_results"]] == ["Read", "TodoWrite", "Edit", "Bash"]
    assert reply["tool_results"][3]["output"] == "pnpm test -- tests/test_webhook.py"
    assert session["current_context"]["active_task"] == "Retry failed webhooks 5 times"
    memorized = [r for r in Memory(repo).records("learning") if r["trigger"] == "[MEMORIZE]"]
    assert [r["learned"] for r in memorized] == [
        "Payment webhooks are retried 5 times by src/payments/webhook.py"
    ]
    assert memorized[0]["source"] == f"session:{session['id']}"
    kept = state(repo)
    assert kept["offset"] == len(b"".join(lines[:-3])) and kept["session_id"] == session["id"]
    assert kept["transcript_path"] == str(transcript) and kept["seen"] == 2

    before = transcript.read_bytes()
    run(repo, clock, "Stop", payload("pre_compact", repo, transcript))  # nothing new
    assert len(the_session(repo)["messages"]) == 2 and transcript.read_bytes() == before

    transcript.write_bytes(b"".join(lines))  # a prompt the hook missed, then noise
    run(repo, clock, "Stop", payload("pre_compact", repo, transcript))
    messages = the_session(repo)["messages"]
    assert [(m["role"], m["content"]) for m in messages[2:]] == [
        ("user", "Also make the backoff base configurable.")
    ]
    assert state(repo)["offset"] == transcript.stat().st_size


def test_a_line_being_written_waits_and_a_new_file_is_read_from_the_last_line(
    repo: Path, clock: Clock, tmp_path: Path
) -> None:
    transcript = tmp_path / "t.jsonl"
    lines = transcript_lines(repo)
    run(repo, clock, "SessionStart", payload("session_start_startup", repo, transcript))
    reply_end = next(i for i, line in enumerate(lines) if b"[MEMORIZE" in line)
    transcript.write_bytes(b"".join(lines[:reply_end]) + lines[reply_end][:50])
    run(repo, clock, "Stop", payload("pre_compact", repo, transcript))
    [prompt, partial] = the_session(repo)["messages"]
    assert prompt["role"] == "user" and "MEMORIZE" not in partial["content"]
    with transcript.open("ab") as file:
        file.write(lines[reply_end][50:])
    run(repo, clock, "Stop", payload("pre_compact", repo, transcript))
    assert "[MEMORIZE:" in the_session(repo)["messages"][-1]["content"]

    # Claude writes to another file that repeats the conversation: only what is newer is read
    rotated = tmp_path / "rotated.jsonl"
    rotated.write_bytes(b"".join(lines))
    run(repo, clock, "Stop", payload("pre_compact", repo, rotated))
    added = the_session(repo)["messages"][3:]
    assert [m["content"] for m in added] == ["Also make the backoff base configurable."]
    # a missing transcript is nothing to read, not an error
    run(repo, clock, "Stop", payload("pre_compact", repo, tmp_path / "gone.jsonl"))
    assert len(the_session(repo)["messages"]) == 4


def test_session_end_logs_the_last_lines_then_summarises_them(
    repo: Path, clock: Clock, tmp_path: Path
) -> None:
    transcript = tmp_path / "t.jsonl"
    run(repo, clock, "SessionStart", payload("session_start_startup", repo, transcript))
    transcript.write_bytes(b"".join(transcript_lines(repo)).rstrip(b"\n"))  # no final newline
    run(repo, clock, "SessionEnd", payload("session_end", repo, transcript))
    ended = the_session(repo)
    assert ended["status"] == "ended"
    assert ended["messages"][-1]["content"] == "Also make the backoff base configurable."
    summary = ended["end_summary"]
    assert "Next: add a test for the retry limit." in summary["next_steps"]
    assert "Continue: Retry failed webhooks 5 times" in summary["next_steps"]
    assert any("retry failed webhooks 5 times" in a for a in summary["accomplished"])
    assert any("retried 5 times" in d for d in summary["discoveries"])


def test_pre_compact_summarises_the_replies_too(repo: Path, clock: Clock, tmp_path: Path) -> None:
    config = json.loads((repo / ".planning/memory-config.json").read_text("utf-8"))
    config["memory"]["shortTerm"]["contextWindow"] = 1
    (repo / ".planning/memory-config.json").write_text(json.dumps(config), "utf-8")
    transcript = tmp_path / "t.jsonl"
    run(repo, clock, "SessionStart", payload("session_start_startup", repo, transcript))
    transcript.write_bytes(b"".join(transcript_lines(repo)))
    run(repo, clock, "PreCompact", payload("pre_compact", repo, transcript))
    rolling = the_session(repo)["rolling_summary"]
    assert rolling["message_count"] == 2  # the prompt and the reply; the window keeps one
    assert any("retry failed webhooks 5 times" in f for f in rolling["key_facts"])


def test_sessions_left_open_are_closed_when_a_new_claude_session_starts(
    repo: Path, clock: Clock, tmp_path: Path
) -> None:
    crashed = tmp_path / "crashed.jsonl"
    run(repo, clock, "SessionStart", payload("session_start_startup", repo, crashed))
    crashed.write_bytes(b"".join(transcript_lines(repo)))  # never captured: no Stop, no end
    past = (T0 + timedelta(minutes=1)).timestamp()
    os.utime(crashed, (past, past))
    clock.now = T0 + timedelta(minutes=2)  # another terminal starts: the first is not idle
    talk = payload("user_prompt_submit", repo, tmp_path / "parallel.jsonl", session_id=OTHER_ID)
    run(repo, clock, "UserPromptSubmit", talk)
    assert [s["status"] for s in sessions(repo)] == ["active", "active"]
    clock.now = T0 + timedelta(minutes=29)
    run(repo, clock, "UserPromptSubmit", talk)  # the other terminal is in use

    clock.now = T0 + timedelta(minutes=30)  # the first one crashed 29 minutes ago
    third = "0c4d6e8f-2b3a-4c5d-8e9f-1a2b3c4d5e6f"
    start = payload("session_start_next", repo, tmp_path / "new.jsonl", session_id=third)
    text = run(repo, clock, "SessionStart", start)
    by_name = {s["name"]: s for s in sessions(repo)}
    closed = by_name[f"claude-code {CLAUDE_ID}"]
    assert closed["status"] == "ended"  # with its transcript captured and summarised
    assert "Next: add a test for the retry limit." in closed["end_summary"]["next_steps"]
    assert by_name[f"claude-code {OTHER_ID}"]["status"] == "active"  # a minute ago: live
    assert by_name[f"claude-code {third}"]["status"] == "active"
    assert text is not None
    context = text["hookSpecificOutput"]["additionalContext"]
    assert "Next: add a test for the retry limit." in context  # the new session knows


def test_an_empty_session_never_hides_the_last_summary(
    repo: Path, clock: Clock, tmp_path: Path
) -> None:
    transcript = tmp_path / "t.jsonl"
    run(repo, clock, "SessionStart", payload("session_start_startup", repo, transcript))
    transcript.write_bytes(b"".join(transcript_lines(repo)))
    run(repo, clock, "SessionEnd", payload("session_end", repo, transcript, reason="clear"))
    cleared = payload("session_start_next", repo, tmp_path / "new.jsonl")
    cleared_end = payload("session_end", repo, tmp_path / "new.jsonl", session_id=OTHER_ID)
    run(repo, clock, "SessionStart", {**cleared, "source": "clear"})
    run(repo, clock, "SessionEnd", cleared_end)
    empty = next(s for s in sessions(repo) if s["name"].endswith(OTHER_ID))
    assert empty["status"] == "ended" and empty["end_summary"] is None
    last = hooks.last_ended_summary(Memory(repo, channel=hooks.CHANNEL))
    assert last is not None
    assert "Next: add a test for the retry limit." in last["next_steps"]
    # the next session inherits the standing facts of the real one, not of the empty one
    third = payload("session_start_next", repo, tmp_path / "3.jsonl", session_id="c0ffee-3")
    run(repo, clock, "SessionStart", third)
    new = next(s for s in sessions(repo) if s["name"].endswith("c0ffee-3"))
    assert new["rolling_summary"]["key_facts"] == [
        "Earlier session: Always use pnpm instead of npm in this repo.",
        "Earlier session: Payment webhooks are retried 5 times by src/payments/webhook.py",
        "Earlier session: We decided to retry failed webhooks 5 times with exponential backoff.",
    ]


def test_after_the_session_ended_lines_are_passed_over_and_resume_continues(
    repo: Path, clock: Clock, tmp_path: Path
) -> None:
    """The model ended the session through MCP: the rest of its reply is not logged (nor
    a session started for it); a resumed Claude session starts a new one of ours that
    continues from where the transcript was read."""
    transcript = tmp_path / "t.jsonl"
    lines = transcript_lines(repo)
    run(repo, clock, "SessionStart", payload("session_start_startup", repo, transcript))
    transcript.write_bytes(b"".join(lines[:6]))
    mem = Memory(repo, clock=clock, channel=hooks.CHANNEL)
    sid = hooks.live_session(mem)
    assert sid is not None
    hooks.capture_session(mem, sid)
    mem.sessions.end(sid)
    transcript.write_bytes(b"".join(lines[:-3]))
    run(repo, clock, "Stop", payload("pre_compact", repo, transcript))
    assert len(sessions(repo)) == 1 and len(the_session(repo)["messages"]) == 1
    assert state(repo)["offset"] == len(b"".join(lines[:-3]))
    assert hooks.live_session(Memory(repo, clock=clock)) is None

    transcript.write_bytes(b"".join(lines))
    run(repo, clock, "SessionStart", payload("session_start_resume", repo, transcript))
    run(repo, clock, "Stop", payload("pre_compact", repo, transcript))
    resumed = next(s for s in sessions(repo) if s["status"] == "active")
    assert [m["content"] for m in resumed["messages"]] == [
        "Also make the backoff base configurable."
    ]


def test_the_stop_hook_stays_light(repo: Path, tmp_path: Path) -> None:
    """Stop runs after every reply: it loads neither the MCP SDK, nor the index, nor the
    scanner, nor the schema checker."""
    transcript = tmp_path / "t.jsonl"
    lines = [line for line in transcript_lines(repo) if b"MEMORIZE" not in line]
    hooks.ensure_session(Memory(repo, channel=hooks.CHANNEL), {"session_id": CLAUDE_ID})
    now = datetime.now(UTC)
    stamped = [json.loads(line) for line in lines]
    for n, entry in enumerate(stamped):
        if "timestamp" in entry:
            entry["timestamp"] = (now + timedelta(seconds=n)).isoformat()
    transcript.write_text("".join(json.dumps(e) + "\n" for e in stamped), "utf-8")
    code = (
        "import json, sys\n"
        "from planning_memory.agents import claude_code as hooks\n"
        "done = hooks.run('Stop', sys.stdin.read())\n"
        "assert not done.errors, done.errors\n"
        "heavy = ('mcp', 'sqlite3', 'tree_sitter', 'pydantic', 'jsonschema')\n"
        "print(json.dumps([m for m in heavy if m in sys.modules]))\n"
    )
    data = payload("pre_compact", repo, transcript, hook_event_name="Stop", stop_hook_active=False)
    done = subprocess.run(
        [sys.executable, "-c", code],
        input=json.dumps(data),
        capture_output=True,
        text=True,
        cwd=repo,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == []
    assert [m["role"] for m in the_session(repo)["messages"]] == ["user", "assistant", "user"]
