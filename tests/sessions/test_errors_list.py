"""Seed 000's short-term errors list ("Errores encontrados y resueltos"): errors met in a
session and how each was resolved, through the API, in summaries, checkpoints and export."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from clocks import Clock

from planning_memory.core.schema import check
from planning_memory.errors import InputError, NotFoundError, SchemaError
from planning_memory.memory import Memory
from planning_memory.sessions.failures import MAX_ERRORS

T0 = datetime(2024, 1, 20, 15, 0, 0, tzinfo=UTC)


@pytest.fixture
def mem(tmp_path: Path) -> Memory:
    Memory.init(tmp_path)
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "auth.py").write_text("x = 1\n", "utf-8")
    return Memory(tmp_path, clock=Clock(T0, tick=timedelta(seconds=1)))


def _on_disk(mem: Memory, session_id: str) -> dict[str, object]:
    value: dict[str, object] = json.loads(mem.layout.session_path(session_id).read_text("utf-8"))
    return value


def test_seed000_short_term_errors_list(mem: Memory) -> None:
    first = mem.record_error("pytest: ImportError in tests/test_auth.py", tool="pytest")
    fixed = mem.record_error(
        "ruff E501 line too long",
        "wrapped the line",
        file=str(mem.layout.repo_root / "src/auth.py"),
    )
    sid = mem.sessions.current_id(start=False)
    errors = _on_disk(mem, sid)["errors"]
    assert errors == [first, fixed]
    assert first["id"].startswith("err_") and first["resolution"] is None
    assert first["resolved_at"] is None and first["tool"] == "pytest"
    assert fixed["file"] == "src/auth.py"  # repository-relative, as every session path
    assert fixed["resolution"] == "wrapped the line" and fixed["resolved_at"] == fixed["at"]
    done = mem.resolve_error("added the missing __init__.py")
    assert done["id"] == first["id"] and done["resolution"] == "added the missing __init__.py"
    assert done["resolved_at"] > first["at"]
    check("session", _on_disk(mem, sid))
    assert [e["resolution"] for e in mem.get_session_context()["errors"]] == [
        "added the missing __init__.py",
        "wrapped the line",
    ]
    assert mem.sessions.overview(sid)["errors"] == 2


def test_seed000_the_same_open_error_is_kept_once(mem: Memory) -> None:
    one = mem.record_error("mypy: Missing return statement", file="src/auth.py")
    again = mem.record_error("MYPY:  missing return statement", file="src/auth.py")
    assert again["id"] == one["id"]
    closed = mem.record_error("mypy: missing return statement", "returned None", file="src/auth.py")
    assert closed["id"] == one["id"] and closed["resolution"] == "returned None"
    later = mem.record_error("mypy: missing return statement", file="src/auth.py")
    assert later["id"] != one["id"]  # met again after it was resolved: a new entry
    assert len(mem.sessions.get(mem.sessions.current_id())["errors"]) == 2


def test_seed000_resolving_names_what_is_wrong(mem: Memory) -> None:
    with pytest.raises(InputError, match="no open error"):
        mem.resolve_error("nothing to resolve", session_id=mem.sessions.current_id())
    mem.record_error("boom")
    with pytest.raises(NotFoundError, match="no error err_nope"):
        mem.resolve_error("x", "err_nope")
    with pytest.raises(InputError, match="error is empty"):
        mem.record_error("   ")
    with pytest.raises(InputError, match="outside the repository"):
        mem.record_error("x", file="/etc/passwd")


def test_seed000_errors_text_is_redacted(mem: Memory) -> None:
    found = mem.record_error("auth failed with <private>hunter2</private>", "rotated it")
    assert "hunter2" not in json.dumps(_on_disk(mem, mem.sessions.current_id()))
    assert "[REDACTED]" in found["error"]


def test_seed000_errors_list_is_bounded_like_decisions(mem: Memory) -> None:
    for n in range(MAX_ERRORS + 3):
        mem.record_error(f"error number {n}", None if n % 2 else f"fix {n}")
    session = mem.sessions.get(mem.sessions.current_id())
    assert len(session["errors"]) == MAX_ERRORS
    assert session["errors"][0]["error"] == "error number 3"
    facts = session["rolling_summary"]["key_facts"]
    assert facts == [
        "Error: error number 0 -> fixed: fix 0",
        "Error: error number 1 (unresolved)",
        "Error: error number 2 -> fixed: fix 2",
    ]


def test_seed000_old_session_files_without_errors_stay_valid(mem: Memory) -> None:
    sid = str(mem.sessions.start(goal="before the errors list")["id"])
    path = mem.layout.session_path(sid)
    value = json.loads(path.read_text("utf-8"))
    del value["errors"]
    path.write_text(json.dumps(value), "utf-8")
    assert "errors" not in mem.sessions.get(sid)  # valid as it is
    mem.log("hello", session_id=sid)
    mem.record_error("first error", session_id=sid)
    assert [e["error"] for e in mem.sessions.get(sid)["errors"]] == ["first error"]
    value["errors"] = [{"id": "err_1", "error": "x", "at": "2024-01-20T15:00:00Z"}]
    with pytest.raises(SchemaError):
        check("session", value)  # resolution and resolved_at are required


def test_seed000_errors_in_the_end_summary(mem: Memory) -> None:
    mem.log("Fix the login tests", role="user")
    mem.record_error("pytest: test_login failed", "the fixture used a stale token")
    mem.record_error("ruff: unused import in src/auth.py", file="src/auth.py")
    summary = mem.sessions.end(None)["end_summary"]
    assert (
        "Fixed: pytest: test_login failed -> the fixture used a stale token"
        in (summary["accomplished"])
    )
    assert (
        "Check the error: ruff: unused import in src/auth.py [src/auth.py] (not marked resolved)"
        in summary["next_steps"]
    )


def test_seed000_a_session_with_only_errors_gets_a_summary(mem: Memory) -> None:
    mem.record_error("npm ERR! peer dependency conflict", "used --legacy-peer-deps")
    summary = mem.sessions.end(None)["end_summary"]
    assert summary is not None and summary["accomplished"]


def test_seed000_errors_survive_pause_and_resume(mem: Memory) -> None:
    mem.record_error("flaky test", "retried with a fixed seed")
    sid = mem.sessions.current_id()
    assert mem.sessions.pause(sid)["checkpoint"]["errors"][0]["error"] == "flaky test"
    assert mem.sessions.resume(sid)["errors"][0]["resolution"] == "retried with a fixed seed"
    snapshot = mem.save_to_checkpoint()
    del snapshot["shortTerm"]["errors"]  # a checkpoint written before the errors list
    mem.restore_from_checkpoint(snapshot)
    assert mem.sessions.get(sid)["errors"][0]["error"] == "flaky test"


def test_seed000_process_agent_result_errors_fixed_reach_the_session(mem: Memory) -> None:
    done = mem.process_agent_result(
        "executor",
        {"errorsFixed": [{"original": "fetch without error handling", "fix": "try/catch"}]},
    )
    assert done["mistakes"] == 1
    [error] = mem.sessions.get(mem.sessions.current_id())["errors"]
    assert error["error"] == "fetch without error handling"
    assert error["resolution"] == "try/catch" and error["tool"] == "executor"


def test_seed000_errors_in_seed_format_export_and_import(mem: Memory, tmp_path: Path) -> None:
    mem.record_error("webpack: module not found", "added the alias", file="src/auth.py")
    sid = mem.sessions.current_id()
    doc = mem.transfer.export(seed=True)
    [exported] = doc["shortTerm"]["sessions"]
    assert exported["errors"][0]["resolvedAt"] == exported["errors"][0]["at"]
    mem.sessions.delete(sid)
    result = mem.transfer.apply(mem.transfer.plan(doc))
    assert result.plan.sessions[0]["id"] == sid
    [error] = mem.sessions.get(sid)["errors"]
    assert (error["error"], error["resolution"], error["file"]) == (
        "webpack: module not found",
        "added the alias",
        "src/auth.py",
    )
