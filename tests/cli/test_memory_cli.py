"""``pmem memory list`` / ``pmem memory show``: every type, both scopes, newest first."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner, Result

from planning_memory.cli import cli
from planning_memory.cli.longterm import RECORD_TYPES
from planning_memory.core.model import LONG_TERM_TYPES
from planning_memory.memory import Memory


def invoke(root: Path, *args: str) -> Result:
    return CliRunner().invoke(cli, ["-C", str(root), "memory", *args], catch_exceptions=False)


def test_the_types_are_the_models() -> None:
    assert sorted(RECORD_TYPES) == sorted(LONG_TERM_TYPES)


def test_list_newest_first_every_type_and_scope(empty_repo: Path) -> None:
    mem = Memory(empty_repo)
    first = mem.save("Use zod for validation", "decision").record["id"]
    second = mem.save("Retry webhooks with backoff", "bugfix").record["id"]
    third = mem.for_scope("personal").save("I like short commit messages", "preference")
    shown = json.loads(invoke(empty_repo, "list", "--json").output)
    assert [r["id"] for r in shown] == [third.record["id"], second, first]
    assert [r["scope"] for r in shown] == ["personal", "project", "project"]
    only = json.loads(invoke(empty_repo, "list", "--type", "bugfix", "--json").output)
    assert [r["id"] for r in only] == [second]
    mine = json.loads(invoke(empty_repo, "list", "--scope", "project", "-n", "1", "--json").output)
    assert [r["id"] for r in mine] == [second]
    text = invoke(empty_repo, "list").output
    assert "Retry webhooks with backoff" in text and "bugfix" in text


def test_show_any_id(empty_repo: Path) -> None:
    mem = Memory(empty_repo)
    rid = mem.save("Use zod for validation", "decision").record["id"]
    shown = invoke(empty_repo, "show", rid)
    assert f"id: {rid}" in shown.output and "title: Use zod for validation" in shown.output
    assert json.loads(invoke(empty_repo, "show", rid, "--json").output)["id"] == rid
    sid = mem.sessions.current_id()
    message = mem.log("we picked zod", session_id=sid).message["id"]
    assert json.loads(invoke(empty_repo, "show", message, "--json").output)["session_id"] == sid


def test_pmem_show_with_an_id_shows_that_memory(empty_repo: Path) -> None:
    rid = Memory(empty_repo).save("Use zod for validation", "decision").record["id"]
    for extra in ([], ["--json"]):
        top = CliRunner().invoke(cli, ["-C", str(empty_repo), "show", rid, *extra])
        assert top.exit_code == 0, top.output
        assert top.output == invoke(empty_repo, "show", rid, *extra).output
    assert "Memory at" in CliRunner().invoke(cli, ["-C", str(empty_repo), "show"]).output


def test_applied_is_a_memory_command_and_learning_applied_its_hidden_old_name(
    empty_repo: Path,
) -> None:
    rid = Memory(empty_repo).save("Wrap fetch in try/catch", "learning").record["id"]
    assert json.loads(invoke(empty_repo, "applied", rid, "--json").output)["applications"] == 1
    old = CliRunner().invoke(cli, ["-C", str(empty_repo), "learning", "applied", rid, "--json"])
    assert old.exit_code == 0 and json.loads(old.output)["applications"] == 2
    listed = CliRunner().invoke(cli, ["--help"]).output.split("Commands:")[1]
    names = [line.split()[0] for line in listed.splitlines() if line.startswith("  ")]
    assert "learn" in names and "learning" not in names
