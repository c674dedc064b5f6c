"""The hook commands ``pmem install claude-code`` commits, run the way Claude Code runs them
(``sh -c``, the payload on stdin): silent on a machine without pmem, working from a path with
a space, and what a session teaches reaching the AGENTS.md block (``pmem install codex``) even
when a prompt carries a cut emoji (a lone surrogate) or bytes that are not UTF-8."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from planning_memory.agents.install import run

from .test_mcp_server import pmem_command


def hooks(repo: Path) -> dict[str, str]:
    settings = json.loads((repo / ".claude" / "settings.json").read_text("utf-8"))
    return {
        event: hook["command"]
        for event, groups in settings["hooks"].items()
        for group in groups
        for hook in group["hooks"]
    }


def sh(command: str, payload: bytes, cwd: Path, **env: str) -> subprocess.CompletedProcess[bytes]:
    environ = {**os.environ, "PMEM_SERVER": "0", **env}
    return subprocess.run(
        ["/bin/sh", "-c", command],
        input=payload,
        capture_output=True,
        cwd=cwd,
        env=environ,
        timeout=60,
    )


def pmem_script() -> str:
    found = pmem_command()
    if len(found) != 1:  # pragma: no cover - these tests need the pmem script
        pytest.skip("no pmem script next to the interpreter")
    return found[0]


def test_without_pmem_every_hook_is_silent_and_exits_0(empty_repo: Path, tmp_path: Path) -> None:
    run("claude-code", empty_repo)  # the committed form: plain `pmem`
    empty = tmp_path / "bin"
    empty.mkdir()
    payload = json.dumps({"session_id": "s1", "cwd": str(empty_repo)}).encode()
    commands = hooks(empty_repo)
    assert len(commands) == 7
    for command in commands.values():
        done = sh(command, payload, empty_repo, PATH=str(empty))
        assert (done.returncode, done.stdout, done.stderr) == (0, b"", b""), command


def test_a_pmem_path_with_a_space_runs_every_hook(empty_repo: Path, tmp_path: Path) -> None:
    folder = tmp_path / "my tools"
    folder.mkdir()
    (folder / "pmem").symlink_to(pmem_script())
    run("claude-code", empty_repo, command=str(folder / "pmem"))
    commands = hooks(empty_repo)
    assert all(f"'{folder / 'pmem'}'" in c for c in commands.values())
    payload = {"session_id": "space1", "cwd": str(empty_repo), "source": "startup"}
    done = sh(
        commands["SessionStart"], json.dumps(payload).encode(), empty_repo, PATH="/usr/bin:/bin"
    )
    assert done.returncode == 0 and done.stderr == b"", done.stderr
    answer = json.loads(done.stdout)
    assert answer["hookSpecificOutput"]["hookEventName"] == "SessionStart"


def prompt(repo: Path, command: str, text: Any, raw: bytes | None = None) -> dict[str, Any]:
    payload = raw or json.dumps({"session_id": "teach1", "cwd": str(repo), "prompt": text}).encode()
    done = sh(command, payload, repo)
    assert done.returncode == 0 and done.stderr == b"", done.stderr.decode("utf-8", "replace")
    answer: dict[str, Any] = json.loads(done.stdout)
    return answer


def test_three_taught_rules_reach_the_agents_md_block(empty_repo: Path) -> None:
    script = pmem_script()
    run("claude-code", empty_repo, command=script)
    run("codex", empty_repo, command=script)
    command = hooks(empty_repo)["UserPromptSubmit"]
    # a cut emoji arrives as a lone surrogate escape; the prompt is kept, the half replaced
    cut = b'{"session_id": "teach1", "cwd": "%s", "prompt": "Always use pnpm \\ud83d, never npm"}'
    prompt(empty_repo, command, None, cut % str(empty_repo).encode())
    # bytes that are not UTF-8 are replaced too, never the whole input dropped
    bad = b'{"session_id": "teach1", "cwd": "%s", "prompt": "Never commit .env files \xff\xfe"}'
    prompt(empty_repo, command, None, bad % str(empty_repo).encode())
    said = prompt(empty_repo, command, "Remember: always run the tests before pushing")
    assert "planning-memory:" in said["hookSpecificOutput"]["additionalContext"]

    text = (empty_repo / "AGENTS.md").read_text("utf-8")
    taught = text.split("<!-- planning-memory:start -->")[1].split("## Taught rules")[1]
    assert "pnpm" in taught and ".env" in taught and "tests before pushing" in taught
    assert "\ufffd" in taught  # the replacement character, where the broken bits were
    assert "\\ud83d" not in text
