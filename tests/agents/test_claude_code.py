"""Claude Code hooks: hook payloads (``tests/fixtures/hooks/``) run through the real
``pmem hook claude-code <event>`` command."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from planning_memory.memory import Memory

FIXTURES = Path(__file__).parents[1] / "fixtures" / "hooks"
CLAUDE_ID = "9f1c2a4e-5b6d-4c3e-8a1f-0d2e3c4b5a61"


def pmem() -> list[str]:
    script = Path(sys.executable).parent / "pmem"
    return [str(script)] if script.exists() else [sys.executable, "-m", "planning_memory.cli.run"]


def payload(name: str, cwd: Path, **changes: Any) -> dict[str, Any]:
    text = (FIXTURES / f"{name}.json").read_text("utf-8").replace("{{CWD}}", str(cwd))
    value: dict[str, Any] = json.loads(text)
    value.update(changes)
    return value


def hook(
    event: str, data: dict[str, Any] | str, cwd: Path, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    text = data if isinstance(data, str) else json.dumps(data)
    return subprocess.run(
        [*pmem(), "hook", "claude-code", event],
        input=text,
        capture_output=True,
        text=True,
        cwd=cwd,
        env=dict(os.environ),
        timeout=timeout,
    )


def ok(done: subprocess.CompletedProcess[str]) -> dict[str, Any] | None:
    """The hook's JSON output (None if it printed nothing); it must succeed silently."""
    assert done.returncode == 0, done.stderr
    assert done.stderr == "", done.stderr
    return json.loads(done.stdout) if done.stdout.strip() else None


def context_of(output: dict[str, Any] | None, event: str) -> str:
    assert output is not None
    specific = output["hookSpecificOutput"]
    assert specific["hookEventName"] == event
    text: str = specific["additionalContext"]
    return text


def claude_sessions(repo: Path) -> list[dict[str, Any]]:
    mem = Memory(repo)
    return [mem.sessions.get(info.id) for info in mem.sessions.list(channel="claude-code")]


@pytest.fixture
def repo(empty_repo: Path) -> Path:
    for rel in ("src/payments/webhook.py", "src/payments/retry.py", "README.md"):
        (empty_repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (empty_repo / rel).write_text("x = 1\n", "utf-8")
    return empty_repo


@pytest.mark.slow
def test_a_whole_claude_code_session(repo: Path) -> None:
    start = context_of(
        ok(hook("SessionStart", payload("session_start_startup", repo), repo)), "SessionStart"
    )
    assert "Temporal context" in start
    [session] = claude_sessions(repo)
    assert session["name"] == f"claude-code {CLAUDE_ID}" and session["status"] == "active"

    said = ok(hook("UserPromptSubmit", payload("user_prompt_submit", repo), repo))
    note = context_of(said, "UserPromptSubmit")
    assert note.startswith("planning-memory: created") and "pnpm" in note
    learned = [r for r in Memory(repo).records() if "pnpm" in r["title"].lower()]
    assert len(learned) == 1 and learned[0]["source"] == f"session:{session['id']}"

    for name in (
        "post_tool_use_read",
        "post_tool_use_edit",
        "post_tool_use_multiedit",
        "post_tool_use_write_create",
        "post_tool_use_write_update",
        "post_tool_use_read_outside",
    ):
        assert ok(hook("PostToolUse", payload(name, repo), repo)) is None
    [session] = claude_sessions(repo)
    assert [(f["path"], f["action"]) for f in session["files_accessed"]] == [
        ("src/payments/webhook.py", "read"),
        ("src/payments/webhook.py", "modified"),
        ("src/payments/retry.py", "modified"),
        ("tests/test_webhook.py", "created"),
        ("README.md", "modified"),
    ]  # /etc/hostname is outside the repository: not recorded
    assert [m["role"] for m in session["messages"]] == ["user"]
    assert "pnpm" in session["messages"][0]["content"]

    assert ok(hook("PreCompact", payload("pre_compact", repo), repo)) is None
    [compacted] = claude_sessions(repo)  # a checkpoint: the summary so far, with its outcome
    assert compacted["status"] == "active"
    assert compacted["end_summary"]["outcome"] in ("confirmed", "failed", "unknown")
    assert "src/payments/webhook.py" in compacted["end_summary"]["relevant_files"]
    after = context_of(
        ok(hook("SessionStart", payload("session_start_compact", repo), repo)), "SessionStart"
    )
    assert "pnpm" in after  # the compacted session's prompt and the learned pattern
    assert len(claude_sessions(repo)) == 1  # compaction keeps the same session
    # what was injected at each start is kept with the session, newest first
    shown = Memory(repo).sessions.injections()
    assert [e["event"] for e in shown] == ["SessionStart", "SessionStart"]
    assert shown[0]["text"] == after and shown[0]["session_id"] == session["id"]
    assert shown[0]["tokens"] <= shown[0]["budget"] and shown[0]["items"]
    assert all(i["reason"] and i["tokens"] > 0 for i in shown[0]["items"])
    assert any(i["id"] == learned[0]["id"] for i in shown[0]["items"])

    assert ok(hook("SessionEnd", payload("session_end", repo), repo)) is None
    [ended] = claude_sessions(repo)
    assert ended["status"] == "ended" and ended["end_summary"] is not None
    assert "outcome" not in ended["end_summary"]  # the end summary replaced the checkpoint
    assert "src/payments/webhook.py" in ended["end_summary"]["relevant_files"]

    nxt = context_of(
        ok(hook("SessionStart", payload("session_start_next", repo), repo)), "SessionStart"
    )
    assert "## Last session" in nxt and "pnpm" in nxt
    assert len(claude_sessions(repo)) == 2
    budget = Memory(repo).config["memory"]["contextual"]["injectBudgetTokens"]
    assert len(nxt) <= budget * 4

    # resuming the ended Claude session starts a fresh one of ours (the old one stays ended)
    ok(hook("SessionStart", payload("session_start_resume", repo), repo))
    assert sorted(s["status"] for s in claude_sessions(repo)) == ["active", "active", "ended"]


def test_event_names_in_kebab_case_and_the_budget(repo: Path) -> None:
    config = json.loads((repo / ".planning/memory-config.json").read_text("utf-8"))
    config["memory"]["contextual"]["injectBudgetTokens"] = 200
    (repo / ".planning/memory-config.json").write_text(json.dumps(config), "utf-8")
    mem = Memory(repo)
    for n in range(30):
        mem.save(f"Payments webhook rule {n}", "pattern", description="retry webhooks " * 20)
    text = context_of(
        ok(hook("session-start", payload("session_start_startup", repo), repo)), "SessionStart"
    )
    assert len(text) <= 200 * 4


def test_private_text_and_secrets_never_reach_disk(repo: Path) -> None:
    ok(hook("UserPromptSubmit", payload("user_prompt_submit_private", repo), repo))
    ok(hook("SessionEnd", payload("session_end", repo), repo))
    [session] = claude_sessions(repo)
    assert "[REDACTED]" in session["messages"][0]["content"]
    for path in (repo / ".planning").rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            assert b"CANARY-7f3e9b" not in data, path
            assert b"sk-ant-api03" not in data, path


@pytest.mark.parametrize(
    ("event", "stdin", "expected"),
    [
        ("SessionStart", "{not json", "not JSON"),
        ("SessionStart", "[1, 2]", "JSON object"),
        ("Notification", "{}", "unknown Claude Code hook event"),
        ("UserPromptSubmit", {"session_id": "x", "prompt": 42}, ""),
    ],
)
def test_bad_input_never_blocks_the_agent(
    repo: Path, event: str, stdin: str | dict[str, Any], expected: str
) -> None:
    data = stdin if isinstance(stdin, str) else {**stdin, "cwd": str(repo)}
    done = hook(event, data, repo)
    assert done.returncode == 0 and done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == (1 if expected else 0)
    assert expected in done.stderr


def test_a_missing_memory_tree_is_one_stderr_line(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    done = hook("SessionStart", payload("session_start_startup", tmp_path), tmp_path)
    assert done.returncode == 0 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "pmem init" in done.stderr
    assert not (tmp_path / ".planning").exists()


def test_parallel_tool_hooks_share_one_session(repo: Path) -> None:
    """Claude runs parallel tool calls' hooks at once; the first one to come starts the
    session (no SessionStart here) and the others use it."""
    names = ["post_tool_use_read", "post_tool_use_edit", "post_tool_use_multiedit"] * 2
    with ThreadPoolExecutor(len(names)) as pool:
        results = list(pool.map(lambda n: hook("PostToolUse", payload(n, repo), repo), names))
    for done in results:
        ok(done)
    [session] = claude_sessions(repo)
    assert len(session["files_accessed"]) == len(names)


def test_the_hook_path_stays_light(repo: Path) -> None:
    """Recording a file access loads neither the MCP SDK nor the index or the scanner."""
    code = (
        "import json, sys\n"
        "from planning_memory.agents import claude_code as hooks\n"
        "done = hooks.run('PostToolUse', sys.stdin.read())\n"
        "assert not done.errors, done.errors\n"
        "heavy = [m for m in ('mcp', 'sqlite3', 'tree_sitter', 'pydantic') if m in sys.modules]\n"
        "print(json.dumps(heavy))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        input=json.dumps(payload("post_tool_use_edit", repo)),
        capture_output=True,
        text=True,
        cwd=repo,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == []


def test_linked_worktrees_and_subfolders_share_the_main_memory(tmp_path: Path) -> None:
    main = tmp_path / "main"
    main.mkdir()

    def git(*args: str, cwd: Path = main) -> None:
        subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)

    git("init", "-q")
    (main / "README.md").write_text("x\n", "utf-8")
    git("add", "README.md")
    git("commit", "-q", "-m", "init")
    Memory.init(main)  # not committed: the worktree has no .planning/ of its own
    git("worktree", "add", "-q", str(tmp_path / "wt"))
    (tmp_path / "wt" / "pkg").mkdir()

    assert Memory.open(tmp_path / "wt" / "pkg").layout.planning == main.resolve() / ".planning"
    assert Memory.open(tmp_path / "wt").layout.planning == main.resolve() / ".planning"
    assert Memory.open(main / ".planning").layout.planning == main.resolve() / ".planning"


# -- what a person taught, at every session start and when a prompt touches it ---------------
def session_hooks(repo: Path, claude_id: str, prompts: list[str]) -> None:
    """One whole Claude session: start, the prompts, end."""
    ok(hook("SessionStart", payload("session_start_startup", repo, session_id=claude_id), repo))
    for prompt in prompts:
        data = payload("user_prompt_submit", repo, session_id=claude_id, prompt=prompt)
        ok(hook("UserPromptSubmit", data, repo))
    ok(hook("SessionEnd", payload("session_end", repo, session_id=claude_id), repo))


def test_what_session_one_taught_is_in_session_three(repo: Path) -> None:
    session_hooks(repo, "claude-one", ["Always use pnpm, never npm", "never commit .env files"])
    session_hooks(repo, "claude-two", ["refactor the webhook handler"])
    start = payload("session_start_startup", repo, session_id="claude-three")
    text = context_of(ok(hook("SessionStart", start, repo)), "SessionStart")
    for needle in ("Always use pnpm, never npm", "never commit .env files"):
        line = next(ln for ln in text.splitlines() if needle in ln)
        assert line.endswith("(why: taught: always included)"), line
    assert text.index("pnpm") < text.index("## Temporal context")
    assert "## Last session" in text and "Goal: refactor the webhook handler" in text

    prompt = payload("user_prompt_submit", repo, session_id="claude-three")
    prompt["prompt"] = "add lodash as a dependency"
    said = context_of(ok(hook("UserPromptSubmit", prompt, repo)), "UserPromptSubmit")
    assert said.startswith("planning-memory: memories relevant to this prompt")
    assert "Always use pnpm, never npm" in said and ".env" not in said
    assert len(said.splitlines()) <= 6
    claude_md = (repo / ".planning" / "CLAUDE.md").read_text("utf-8")
    assert "pnpm" in claude_md and ".env" in claude_md


def test_a_prompt_is_answered_without_building_the_index(repo: Path) -> None:
    Memory(repo).learn_utterance("Always use pnpm, never npm")
    index = repo / ".planning" / "memory" / "contextual" / "index.sqlite3"
    assert not index.exists()
    prompt = payload("user_prompt_submit", repo, prompt="add lodash as a dependency")
    said = context_of(ok(hook("UserPromptSubmit", prompt, repo)), "UserPromptSubmit")
    assert "Always use pnpm, never npm" in said and "taught" in said
    assert not index.exists()
    nothing = payload("user_prompt_submit", repo, prompt="what does this function return")
    assert ok(hook("UserPromptSubmit", nothing, repo)) is None


def test_session_start_says_how_long_ago_the_last_session_ended(repo: Path) -> None:
    from datetime import UTC, datetime, timedelta

    mem = Memory(repo)
    mem.channel = "claude-code"
    sid = mem.sessions.start(goal="Retry failed payment webhooks")["id"]
    mem.log("the retry limit still needs a test", session_id=sid)
    mem.sessions.end(sid)
    path = mem.layout.session_path(sid)
    data = json.loads(path.read_text("utf-8"))
    ended = datetime.now(UTC) - timedelta(days=9, hours=1)
    data["ended_at"] = ended.strftime("%Y-%m-%dT%H:%M:%SZ")
    data["end_summary"]["next_steps"] = ["Add a test for the retry limit"]
    path.write_text(json.dumps(data), "utf-8")
    start = payload("session_start_startup", repo, session_id="claude-later")
    text = context_of(ok(hook("SessionStart", start, repo)), "SessionStart")
    assert "Notice: the last session ended 9 days ago" in text
    assert "- Next step: Add a test for the retry limit" in text
    assert "Goal: Retry failed payment webhooks" in text


def test_session_start_on_a_fresh_clone_indexes_the_code_in_the_background(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No search index yet: the hook answers from the memories it indexes at once, and the
    code is indexed by a background ``pmem reindex --finish``."""
    monkeypatch.setenv("PMEM_BACKGROUND", "1")
    Memory(repo).learn_utterance("Always use pnpm, never npm")  # a taught rule
    (repo / "src/payments/webhook.py").write_text("def refund_wombat():\n    pass\n", "utf-8")
    for derived in (repo / ".planning/memory/contextual").glob("*"):
        if derived.is_file():
            derived.unlink()
    start = context_of(
        ok(hook("SessionStart", payload("session_start_startup", repo), repo)), "SessionStart"
    )
    assert "pnpm" in start

    def pending() -> bool:
        mem = Memory(repo)
        with mem.index(quick=True):
            return mem.contextual.pending

    deadline = time.monotonic() + 180
    while pending():
        assert time.monotonic() < deadline, "the background finish never completed"
        time.sleep(0.2)
    hits = Memory(repo).search("refund_wombat", sources=["code"])
    assert [h.ref_id for h in hits] == ["src/payments/webhook.py"] or hits[0].key.startswith(
        "code:src/payments/webhook.py"
    )


def test_a_prompt_after_days_away_tells_the_agent_how_long(repo: Path) -> None:
    ok(hook("SessionStart", payload("session_start_startup", repo), repo))
    ok(hook("UserPromptSubmit", payload("user_prompt_submit", repo, prompt="hello"), repo))
    [session] = claude_sessions(repo)
    path = repo / ".planning/memory/short-term" / f"session-{session['id']}.json"
    data = json.loads(path.read_text("utf-8"))
    data["messages"][-1]["at"] = "2020-01-01T10:00:00Z"  # the person left years ago
    path.write_text(json.dumps(data), "utf-8")
    said = context_of(
        ok(hook("UserPromptSubmit", payload("user_prompt_submit", repo, prompt="back"), repo)),
        "UserPromptSubmit",
    )
    assert "days have passed since the last message." in said
    assert "Current date & time:" in said
    again = ok(hook("UserPromptSubmit", payload("user_prompt_submit", repo, prompt="hi"), repo))
    assert again is None or "passed since the last message" not in context_of(
        again, "UserPromptSubmit"
    )


@pytest.mark.slow
def test_a_held_lock_costs_one_answer_never_the_hook_timeout(repo: Path) -> None:
    """A long ``pmem scan`` holds the memory lock: the hook gives up after ``LOCK_WAIT``
    seconds, well inside its installed timeout (15 s), with one line and exit 0."""
    ok(hook("SessionStart", payload("session_start_startup", repo), repo))
    with Memory(repo).store.lock():
        done = hook("UserPromptSubmit", payload("user_prompt_submit", repo), repo, timeout=15)
    assert done.returncode == 0 and done.stdout == ""  # no TimeoutExpired: inside the 15 s
    assert done.stderr.count("\n") == 1 and "locked" in done.stderr


def _agents_config(repo: Path, **settings: Any) -> None:
    path = repo / ".planning/memory-config.json"
    config = json.loads(path.read_text("utf-8"))
    config["memory"]["agents"] = settings
    path.write_text(json.dumps(config), "utf-8")


def test_agents_enabled_false_turns_every_hook_off(repo: Path) -> None:
    _agents_config(repo, enabled=False)
    before = sorted(str(p) for p in (repo / ".planning").rglob("*"))
    for name, event in (
        ("session_start_startup", "SessionStart"),
        ("user_prompt_submit", "UserPromptSubmit"),
        ("post_tool_use_edit", "PostToolUse"),
        ("session_end", "SessionEnd"),
    ):
        assert ok(hook(event, payload(name, repo), repo)) is None
    assert sorted(str(p) for p in (repo / ".planning").rglob("*")) == before


def test_auto_summary_false_ends_sessions_without_a_summary(repo: Path) -> None:
    _agents_config(repo, autoSummary=False)
    ok(hook("SessionStart", payload("session_start_startup", repo), repo))
    ok(hook("UserPromptSubmit", payload("user_prompt_submit", repo), repo))
    ok(hook("SessionEnd", payload("session_end", repo), repo))
    [ended] = claude_sessions(repo)
    assert ended["status"] == "ended" and ended["end_summary"] is None


def test_recall_limit_bounds_what_a_prompt_recalls(repo: Path) -> None:
    mem = Memory(repo)
    for n in range(6):  # decisions: never merged by similarity
        mem.save(f"Webhook retry rule {n}", "decision")
    mem.reindex()
    prompt = "fix the webhook retry handling"
    assert Memory(repo).recall(prompt).text.count("Webhook retry rule") >= 3
    _agents_config(repo, recallLimit=2)
    assert Memory(repo).recall(prompt).text.count("Webhook retry rule") == 2
    _agents_config(repo, recallLimit=0)
    assert "Webhook retry rule" not in Memory(repo).recall(prompt).text


def test_default_scope_personal_saves_to_the_personal_store(repo: Path) -> None:
    _agents_config(repo, defaultScope="personal")
    saved = Memory(repo).save("I like short commit messages", "preference")
    assert saved.record["scope"] == "personal"
    assert Memory(repo).records() == []
    assert [r["id"] for r in Memory(repo).personal().records()] == [saved.record["id"]]
    kept = Memory(repo).save("Use zod", "decision", scope="project")
    assert [r["id"] for r in Memory(repo).records()] == [kept.record["id"]]


def test_a_transcript_that_is_a_fifo_never_blocks_the_hook(repo: Path, tmp_path: Path) -> None:
    fifo = tmp_path / "transcript.jsonl"
    os.mkfifo(fifo)
    ok(hook("SessionStart", payload("session_start_startup", repo), repo))
    t0 = time.monotonic()
    stop = {**payload("session_end", repo), "hook_event_name": "Stop", "transcript_path": str(fifo)}
    done = hook("Stop", stop, repo)
    assert time.monotonic() - t0 < 10
    assert done.returncode == 0 and done.stdout == ""
    assert "not a regular file" in done.stderr and done.stderr.count("\n") == 1


def test_an_at_sign_reaches_the_model_as_written_and_stays_inert_in_claude_md(repo: Path) -> None:
    """Claude Code imports ``@path`` from CLAUDE.md, never from a hook's context: the view
    keeps ``＠``, the hooks give back the ``@`` the person wrote."""
    Memory(repo).learn_utterance("Always pin @types/node to version 20")
    start = context_of(
        ok(hook("SessionStart", payload("session_start_startup", repo), repo)), "SessionStart"
    )
    asked = payload("user_prompt_submit", repo, prompt="bump @types/node please")
    said = context_of(ok(hook("UserPromptSubmit", asked, repo)), "UserPromptSubmit")
    for text in (start, said):
        assert "pin @types/node to version 20" in text and "\uff20" not in text, text
    claude_md = (repo / ".planning" / "CLAUDE.md").read_text("utf-8")
    assert "\uff20types/node" in claude_md and "@types/node" not in claude_md
