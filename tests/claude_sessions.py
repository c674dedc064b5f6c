"""Claude Code as our hooks meet it: one session runs ``pmem hook claude-code EVENT`` (a process
per event, the payload on stdin, as Claude Code runs them) and writes its transcript in Claude
Code's JSONL format as it goes (prompts, replies, tool calls and results, a compaction)."""

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

    def compact(self, summary: str = "The conversation so far, in short.") -> str:
        """Claude Code's auto-compaction: PreCompact, the boundary and summary lines it
        writes, then SessionStart with source ``compact``; returns what that start injects."""
        assert self.hook("PreCompact", trigger="auto", custom_instructions="") is None
        self.line("system", {"role": "system", "content": ""}, subtype="compact_boundary")
        said = f"This session is being continued from a previous conversation. {summary}"
        self.line("user", {"role": "user", "content": said}, isCompactSummary=True)
        return self.start("compact")

    # -- the conversation ------------------------------------------------------------------------
    def prompt(self, text: str) -> dict[str, Any] | None:
        """Submit a prompt; what the hook answered (None: nothing)."""
        answered = self.hook("UserPromptSubmit", prompt=text)
        self.line("user", {"role": "user", "content": text})
        return answered

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
