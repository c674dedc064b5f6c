"""The Claude Code hooks and two seed 000 fields: a failed tool call lands in the session's
errors list (PostToolUseFailure), a later change of the file resolves it (PostToolUse), and
the learnings the hooks deliver count as applied once per session. Real ``pmem hook``
processes, payloads from ``tests/fixtures/hooks/``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from planning_memory.memory import Memory

FIXTURES = Path(__file__).parents[1] / "fixtures" / "hooks"


def payload(name: str, cwd: Path, **changes: Any) -> dict[str, Any]:
    text = (FIXTURES / f"{name}.json").read_text("utf-8").replace("{{CWD}}", str(cwd))
    value: dict[str, Any] = json.loads(text)
    value.update(changes)
    return value


def hook(event: str, data: dict[str, Any], cwd: Path) -> dict[str, Any] | None:
    script = Path(sys.executable).parent / "pmem"
    done = subprocess.run(
        [str(script), "hook", "claude-code", event],
        input=json.dumps(data),
        capture_output=True,
        text=True,
        cwd=cwd,
        env=dict(os.environ),
        timeout=60,
    )
    assert done.returncode == 0 and done.stderr == "", done.stderr
    return json.loads(done.stdout) if done.stdout.strip() else None


@pytest.fixture
def repo(empty_repo: Path) -> Path:
    (empty_repo / "src" / "payments").mkdir(parents=True)
    (empty_repo / "src" / "payments" / "webhook.py").write_text("x = 1\n", "utf-8")
    return empty_repo


def _errors(repo: Path) -> list[dict[str, Any]]:
    mem = Memory(repo)
    [info] = mem.sessions.list(channel="claude-code")
    return list(mem.sessions.get(info.id).get("errors") or [])


def test_seed000_errors_from_failed_tool_calls(repo: Path) -> None:
    assert hook("PostToolUseFailure", payload("post_tool_use_failure_bash", repo), repo) is None
    assert hook("post-tool-use-failure", payload("post_tool_use_failure_edit", repo), repo) is None
    bash, edit = _errors(repo)
    assert bash["tool"] == "Bash" and "file" not in bash
    assert bash["error"].startswith("Bash pytest tests/test_webhook.py -q: Exit code 1\nFAILED")
    assert edit["tool"] == "Edit" and edit["file"] == "src/payments/webhook.py"
    assert "String to replace not found" in edit["error"]
    assert bash["resolution"] is None and edit["resolution"] is None
    # the same failure again is the same open error
    hook("PostToolUseFailure", payload("post_tool_use_failure_bash", repo), repo)
    assert len(_errors(repo)) == 2
    # a read of the file resolves nothing; a successful edit of it resolves its error
    hook("PostToolUse", payload("post_tool_use_read", repo), repo)
    assert _errors(repo)[1]["resolution"] is None
    hook("PostToolUse", payload("post_tool_use_edit", repo), repo)
    bash, edit = _errors(repo)
    assert edit["resolution"] == "a later Edit of the file succeeded"
    assert bash["resolution"] is None  # another command's success says nothing of it


def test_seed000_the_same_command_run_through_resolves_its_error(repo: Path) -> None:
    """A Bash command that failed (PostToolUseFailure) and later exits 0 (PostToolUse, which
    Claude Code sends only for a call that went through): its open error is resolved; a
    different command, an interrupted run or one sent to the background resolves nothing."""
    hook("PostToolUseFailure", payload("post_tool_use_failure_bash", repo), repo)
    other = {"command": "pytest tests/test_api.py -q", "description": "Run the API tests"}
    hook("PostToolUse", payload("post_tool_use_bash", repo, tool_input=other), repo)
    interrupted = {"stdout": "", "stderr": "", "interrupted": True}
    hook("PostToolUse", payload("post_tool_use_bash", repo, tool_response=interrupted), repo)
    started = {"stdout": "", "stderr": "", "interrupted": False, "backgroundTaskId": "b1"}
    hook("PostToolUse", payload("post_tool_use_bash", repo, tool_response=started), repo)
    [bash] = _errors(repo)
    assert bash["resolution"] is None
    hook("PostToolUse", payload("post_tool_use_bash", repo), repo)
    [bash] = _errors(repo)
    assert bash["resolution"] == "the same command succeeded later" and bash["resolved_at"]


def test_a_command_run_through_outside_a_session_writes_nothing(repo: Path) -> None:
    hook("PostToolUse", payload("post_tool_use_bash", repo), repo)
    assert Memory(repo).sessions.list(channel="claude-code") == []


def test_seed000_an_interrupt_is_not_an_error(repo: Path) -> None:
    hook("SessionStart", payload("session_start_startup", repo), repo)
    hook("PostToolUseFailure", payload("post_tool_use_failure_bash", repo, is_interrupt=True), repo)
    hook("PostToolUseFailure", payload("post_tool_use_failure_bash", repo, error=""), repo)
    assert _errors(repo) == []


def test_seed000_errors_in_the_claude_code_end_summary(repo: Path) -> None:
    hook("SessionStart", payload("session_start_startup", repo), repo)
    hook("PostToolUseFailure", payload("post_tool_use_failure_edit", repo), repo)
    hook("PostToolUse", payload("post_tool_use_edit", repo), repo)
    hook("PostToolUseFailure", payload("post_tool_use_failure_bash", repo), repo)
    hook("SessionEnd", payload("session_end", repo), repo)
    mem = Memory(repo)
    [info] = mem.sessions.list(channel="claude-code")
    summary = mem.sessions.get(info.id)["end_summary"]
    assert any(a.startswith("Fixed: Edit src/payments/webhook.py") for a in summary["accomplished"])
    assert any(n.startswith("Check the error: Bash pytest") for n in summary["next_steps"])


def test_seed000_learnings_the_hooks_deliver_count_once_per_session(repo: Path) -> None:
    mem = Memory(repo)
    rid = str(
        mem.save(
            "Webhook retries are capped at 5",
            "learning",
            learned="Cap webhook retries at 5 attempts",
            pinned=True,
        ).record["id"]
    )
    stripe = str(
        mem.save(
            "Stripe signatures need the raw body",
            "learning",
            learned="Verify Stripe webhook signatures against the raw request body",
        ).record["id"]
    )
    start = hook("SessionStart", payload("session_start_startup", repo), repo)
    assert start is not None and rid in start["hookSpecificOutput"]["additionalContext"]
    # no session ended yet: the newest memories come too, each counted once
    assert f"{stripe}] (why: recent memory)" in start["hookSpecificOutput"]["additionalContext"]
    assert Memory(repo).get(rid)["applications"] == 1
    assert Memory(repo).get(stripe)["applications"] == 1
    prompt = "How do we verify the Stripe webhook signatures?"
    for _ in range(2):  # the prompt recalls it: counted once in this session
        answer = hook("UserPromptSubmit", payload("user_prompt_submit", repo, prompt=prompt), repo)
        assert answer is not None and stripe in answer["hookSpecificOutput"]["additionalContext"]
    assert Memory(repo).get(stripe)["applications"] == 1
    assert Memory(repo).get(rid)["applications"] == 1
    hook("SessionEnd", payload("session_end", repo), repo)
    nxt = payload("session_start_startup", repo, session_id="0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0")
    hook("SessionStart", nxt, repo)
    assert Memory(repo).get(rid)["applications"] == 2


def test_a_broken_record_a_hook_skips_is_one_warning_line(repo: Path) -> None:
    """As the CLI says it: the file, what is wrong, what to do; not Python's warning format
    with its source line."""
    mem = Memory(repo)
    mem.save("Retry webhooks with backoff", "pattern", description="retry payment webhooks")
    broken = next(mem.layout.long_term.glob("patterns/*.json"))
    broken.write_text("{ not json", "utf-8")
    script = Path(sys.executable).parent / "pmem"
    done = subprocess.run(
        [str(script), "hook", "claude-code", "UserPromptSubmit"],
        input=json.dumps(payload("user_prompt_submit", repo, prompt="fix the webhook retry")),
        capture_output=True,
        text=True,
        cwd=repo,
        env=dict(os.environ),
        timeout=60,
    )
    assert done.returncode == 0
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("pmem hook: warning: .planning/memory/long-term/patterns/")
    assert lines[0].endswith("; skipped") and broken.name in lines[0]
