"""The closed loop under Claude Code: what the user and the model say in one session reaches
the next ones. Three Claude Code sessions play through the real hook command (``pmem hook
claude-code EVENT``, a process per event, the payload on stdin, as Claude Code runs them)
while the "model" writes its transcript in Claude Code's JSONL format; the second session
crashes (no SessionEnd, its last line half written). What the third session's SessionStart
injects is checked."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from planning_memory.memory import Memory

SESSION_IDS = (
    "5d0c6a4e-1f2b-4c3d-8e9f-0a1b2c3d4e5f",
    "6e1d7b5f-2a3c-4d4e-9f0a-1b2c3d4e5f60",
    "7f2e8c6a-3b4d-4e5f-8a1b-2c3d4e5f6071",
)


def pmem() -> list[str]:
    script = Path(sys.executable).parent / "pmem"
    return [str(script)] if script.exists() else [sys.executable, "-m", "planning_memory.cli.run"]


class ClaudeCode:
    """One Claude Code session: it runs our hooks and writes its transcript as it goes."""

    ids = itertools.count(1)

    def __init__(self, repo: Path, home: Path, session_id: str) -> None:
        self.repo = repo
        self.session_id = session_id
        project = home / ".claude" / "projects" / str(repo).replace("/", "-")
        project.mkdir(parents=True, exist_ok=True)
        self.transcript = project / f"{session_id}.jsonl"
        self.parent: str | None = None

    # -- hooks -----------------------------------------------------------------------------------
    def hook(self, event: str, **fields: Any) -> dict[str, Any] | None:
        payload = {
            "session_id": self.session_id,
            "transcript_path": str(self.transcript),
            "cwd": str(self.repo),
            "permission_mode": "default",
            "hook_event_name": event,
            **fields,
        }
        done = subprocess.run(
            [*pmem(), "hook", "claude-code", event],
            input=json.dumps(payload),
            capture_output=True,
            text=True,
            cwd=self.repo,
            env=dict(os.environ),
            timeout=60,
        )
        assert done.returncode == 0 and done.stderr == "", done.stderr
        return json.loads(done.stdout) if done.stdout.strip() else None

    def start(self, source: str = "startup") -> str:
        output = self.hook("SessionStart", source=source, model="claude-sonnet-4-5")
        assert output is not None
        text: str = output["hookSpecificOutput"]["additionalContext"]
        return text

    def stop(self) -> None:
        assert self.hook("Stop", stop_hook_active=False) is None

    def end(self, reason: str = "prompt_input_exit") -> None:
        assert self.hook("SessionEnd", reason=reason) is None

    # -- the conversation ------------------------------------------------------------------------
    def prompt(self, text: str) -> None:
        self.hook("UserPromptSubmit", prompt=text)
        self.line("user", {"role": "user", "content": text})

    def say(self, text: str) -> None:
        self.assistant({"type": "text", "text": text})

    def tool(self, name: str, given: dict[str, Any], result: Any = "ok") -> None:
        tool_id = f"toolu_01{next(self.ids):022d}"
        self.assistant({"type": "tool_use", "id": tool_id, "name": name, "input": given})
        block = {"tool_use_id": tool_id, "type": "tool_result", "content": "done"}
        self.line("user", {"role": "user", "content": [block]}, toolUseResult=result)
        if name in ("Read", "Edit", "Write"):
            fields = {"tool_name": name, "tool_input": given, "tool_use_id": tool_id}
            self.hook("PostToolUse", **fields, tool_response=result)

    def assistant(self, block: dict[str, Any]) -> None:
        message = {
            "id": f"msg_01{next(self.ids):022d}",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-5-20250929",
            "content": [block],
            "stop_reason": "tool_use" if block["type"] == "tool_use" else "end_turn",
            "usage": {"input_tokens": 3, "output_tokens": 120},
        }
        self.line("assistant", message, requestId=f"req_011CU{next(self.ids):012d}")

    def line(self, kind: str, message: dict[str, Any], **extra: Any) -> None:
        uuid = f"0b9a{next(self.ids):04d}-1c2d-4e3f-8a9b-{next(self.ids):012d}"
        entry = {
            "parentUuid": self.parent,
            "isSidechain": False,
            "userType": "external",
            "cwd": str(self.repo),
            "sessionId": self.session_id,
            "version": "2.0.31",
            "gitBranch": "main",
            "type": kind,
            "message": message,
            "uuid": uuid,
            "timestamp": datetime.now(UTC)
            .isoformat(timespec="milliseconds")
            .replace("+00:00", "Z"),
            **extra,
        }
        with self.transcript.open("a", encoding="utf-8") as file:
            file.write(json.dumps(entry, ensure_ascii=False) + "\n")
        self.parent = uuid


def backdate(repo: Path, claude: ClaudeCode, hours: float) -> None:
    """As if the terminal of ``claude`` was closed ``hours`` ago."""
    mem = Memory(repo)
    [info] = [i for i in mem.sessions.list() if i.name == f"claude-code {claude.session_id}"]
    data = mem.sessions.get(info.id)
    then = datetime.now(UTC) - timedelta(hours=hours)
    data["updated_at"] = then.strftime("%Y-%m-%dT%H:%M:%SZ")
    mem.store.write_json(mem.sessions.path(info.id), data)
    os.utime(claude.transcript, (then.timestamp(), then.timestamp()))


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
