"""The closed loop under Claude Code: what the user and the model say in one session reaches
the next ones. Three Claude Code sessions play through the real hook command (``pmem hook
claude-code EVENT``, a process per event, the payload on stdin, as Claude Code runs them)
while the "model" writes its transcript in Claude Code's JSONL format; the second session
crashes (no SessionEnd, its last line half written). What the third session's SessionStart
injects is checked."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from claude_sessions import ClaudeCode, backdate

from planning_memory.memory import Memory

pytestmark = pytest.mark.slow  # real processes, long: `make test-slow`

SESSION_IDS = (
    "5d0c6a4e-1f2b-4c3d-8e9f-0a1b2c3d4e5f",
    "6e1d7b5f-2a3c-4d4e-9f0a-1b2c3d4e5f60",
    "7f2e8c6a-3b4d-4e5f-8a1b-2c3d4e5f6071",
)


def test_three_claude_code_sessions_close_the_loop(empty_repo: Path, tmp_path: Path) -> None:
    repo = empty_repo
    (repo / "src" / "auth").mkdir(parents=True)
    (repo / "src" / "auth" / "session.ts").write_text("export const session = {};\n", "utf-8")
    home = Path(os.environ["HOME"])

    def src(rel: str) -> str:
        return str(repo / rel)

    # -- session 1: a decision, a fact to memorize, a next step; it ends normally ----------------
    one = ClaudeCode(repo, home, SESSION_IDS[0])
    one.start()
    one.prompt(
        "Should the auth module keep sessions in JWTs or in the database? "
        "We deploy on the edge runtime."
    )
    one.say("Let me look at how auth is wired today.")
    one.tool("Read", {"file_path": src("src/auth/session.ts")}, {"type": "text"})
    one.say(
        "We decided to use stateless JWT sessions signed with jose, because the edge runtime "
        "cannot reach the database. [MEMORIZE: The edge runtime cannot reach Postgres, so "
        "auth state travels in the JWT]"
    )
    one.stop()
    one.prompt("Good, implement it.")
    (repo / "src" / "auth" / "jwt.ts").write_text("export function sign() {}\n", "utf-8")
    one.tool("Write", {"file_path": src("src/auth/jwt.ts"), "content": "..."}, {"type": "create"})
    one.say(
        "Implemented signing and verification in src/auth/jwt.ts. "
        "Next: add refresh-token rotation to the JWT sessions."
    )
    one.stop()
    one.end()

    # -- session 2 starts knowing session 1, works, and crashes ----------------------------------
    two = ClaudeCode(repo, home, SESSION_IDS[1])
    second_start = two.start()
    assert "## Last session" in second_start
    assert "Next: add refresh-token rotation to the JWT sessions." in second_start
    two.prompt("Add refresh-token rotation to the JWT sessions, as planned.")
    todos = [
        {"content": "Add refresh-token rotation", "status": "in_progress", "activeForm": "x"},
        {"content": "Write tests for the refresh flow", "status": "pending", "activeForm": "y"},
    ]
    two.tool("TodoWrite", {"todos": todos})
    two.tool("Edit", {"file_path": src("src/auth/jwt.ts"), "old_string": "a", "new_string": "b"})
    two.say(
        "Rotation is in place: every refresh issues a new token and revokes the old one. "
        "Still need to test the JWT refresh flow on the edge runtime."
    )
    two.stop()
    two.say("Running the suite once more")  # the reply is cut short: no Stop, no SessionEnd
    with two.transcript.open("a", encoding="utf-8") as file:
        file.write('{"parentUuid":"x","type":"assistant","message":{"role":"assis')
    backdate(repo, two, hours=1)

    # -- session 3: what does it start with? ------------------------------------------------------
    three = ClaudeCode(repo, home, SESSION_IDS[2])
    context = three.start()

    last = context.split("## Last session", 1)[1]
    assert "Still need to test the JWT refresh flow on the edge runtime." in last
    assert "Continue: Add refresh-token rotation" in last  # its to-do in progress
    assert "We decided to use stateless JWT sessions signed with jose" in context  # session 1
    assert "The edge runtime cannot reach Postgres, so auth state travels in the JWT" in context

    mem = Memory(repo)
    ended = {i.name: mem.sessions.get(i.id) for i in mem.sessions.list(status="ended")}
    crashed = ended[f"claude-code {SESSION_IDS[1]}"]  # closed and summarised at session 3
    assert [m["role"] for m in crashed["messages"]] == ["user", "assistant", "assistant"]
    assert crashed["messages"][-1]["content"] == "Running the suite once more"
    assert crashed["end_summary"]["relevant_files"] == ["src/auth/jwt.ts"]
    first = ended[f"claude-code {SESSION_IDS[0]}"]
    assert [m["role"] for m in first["messages"]] == ["user", "assistant"] * 2
    assert [t["name"] for t in first["messages"][1]["tool_results"]] == ["Read"]
    assert [r["learned"] for r in mem.records("learning")] == [
        "The edge runtime cannot reach Postgres, so auth state travels in the JWT"
    ]
