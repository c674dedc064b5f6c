"""``pmem session``: resume without an id, rename, a session without a goal, the list with
names, and what was injected at session starts."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner, Result

from planning_memory.cli import cli
from planning_memory.memory import Memory


def invoke(root: Path, *args: str) -> Result:
    return CliRunner().invoke(cli, ["-C", str(root), *args], catch_exceptions=False)


def test_resume_without_an_id_takes_the_newest_paused_session(empty_repo: Path) -> None:
    started = json.loads(invoke(empty_repo, "session", "start", "--json").output)
    assert invoke(empty_repo, "session", "pause").exit_code == 0
    done = invoke(empty_repo, "session", "resume", "--json")
    assert done.exit_code == 0, done.output
    assert json.loads(done.output)["id"] == started["id"]
    assert json.loads(done.output)["status"] == "active"
    pmem = Path(sys.executable).parent / "pmem"
    again = subprocess.run(
        [pmem, "-C", empty_repo, "session", "resume"], capture_output=True, text=True, timeout=60
    )
    assert again.returncode == 5 and again.stdout == ""
    assert again.stderr.count("\n") == 1 and "no paused session on channel 'cli'" in again.stderr


def test_rename_and_show_without_a_goal(empty_repo: Path) -> None:
    sid = json.loads(invoke(empty_repo, "session", "start", "--json").output)["id"]
    shown = invoke(empty_repo, "session", "show")
    assert "goal: None" not in shown.output and "(no goal set)" in shown.output
    assert invoke(empty_repo, "session", "rename", "payments", "retries").exit_code == 0
    assert Memory(empty_repo).sessions.get(sid)["name"] == "payments retries"
    assert "payments retries" in invoke(empty_repo, "session", "show").output
    assert invoke(empty_repo, "session", "rename", "-").exit_code == 0
    assert Memory(empty_repo).sessions.get(sid)["name"] is None


def test_injected_lists_what_session_starts_injected(empty_repo: Path) -> None:
    assert invoke(empty_repo, "session", "injected").output.strip() == "Nothing injected yet."
    mem = Memory(empty_repo)
    mem.save("Always use pnpm, never npm", "pattern", pinned=True)
    sid = mem.sessions.current_id()
    pack = mem.context("add lodash", session_id=sid)
    mem.sessions.record_injection(sid, "SessionStart", "add lodash", pack.as_dict())
    shown = invoke(empty_repo, "session", "injected", "--text")
    assert shown.exit_code == 0
    assert (
        f"{sid} SessionStart: {pack.tokens}/{pack.budget} tokens, task: add lodash" in shown.output
    )
    assert "pnpm" in shown.output and pack.text in shown.output
    data = json.loads(invoke(empty_repo, "session", "injected", "--json").output)
    assert [e["session_id"] for e in data] == [sid] and data[0]["text"] == pack.text


def test_list_shows_each_sessions_name_and_goal(empty_repo: Path) -> None:
    invoke(empty_repo, "session", "start", "--name", "auth refactor", "--goal", "move to JWT")
    invoke(empty_repo, "session", "start", "--channel", "other")
    lines = invoke(empty_repo, "session", "list").output.splitlines()
    [named] = [line for line in lines if "auth refactor" in line]
    assert named.endswith("msgs  auth refactor  goal: move to JWT")
    assert all(line == line.rstrip() for line in lines)
