"""Export and import of whole trees: sessions merge by id, an import never shrinks a session.

Real files throughout: a tree records through the ``Memory`` API, ``pmem export`` writes the
document, ``pmem import`` (click's runner) reads it back, and the session files are compared
byte for byte.
"""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from click.testing import CliRunner, Result
from clocks import Clock

from planning_memory.cli import cli
from planning_memory.core import codec
from planning_memory.memory import Memory

T0 = datetime(2024, 1, 20, 15, 0, 0, tzinfo=UTC)


def invoke(*args: str | Path) -> Result:
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def tree(root: Path, **short: int) -> Memory:
    """A fresh memory tree with ``memory.shortTerm`` settings and a clock that ticks a second
    per reading."""
    Memory.init(root)
    config_path = root / ".planning" / "memory-config.json"
    config = json.loads(config_path.read_text("utf-8"))
    config["memory"]["shortTerm"].update(short)
    config_path.write_text(json.dumps(config), "utf-8")
    return reopen(root, T0)


def reopen(root: Path, at: datetime) -> Memory:
    return Memory(root, clock=Clock(at, timedelta(seconds=1)))


def export(root: Path, out: Path) -> dict[str, Any]:
    result = invoke("-C", root, "export", "-o", out)
    assert result.exit_code == 0, result.output
    doc: dict[str, Any] = codec.loads(out.read_bytes())
    return doc


def import_(root: Path, doc: Path) -> dict[str, Any]:
    result = invoke("-C", root, "import", doc, "--json")
    assert result.exit_code == 0, result.output
    summary: dict[str, Any] = json.loads(result.output)
    return summary


def work(mem: Memory, sid: str, tag: str, messages: int = 3) -> None:
    """Record ``messages`` messages, a decision, a step, a file access and an error."""
    for n in range(messages):
        mem.sessions.append(sid, "user" if n % 2 == 0 else "assistant", f"{tag} message {n}")
    mem.sessions.record_decision(sid, f"{tag}: which store?", "sqlite", reasoning="local")
    mem.sessions.add_step(sid, f"{tag}: ran the tests", "green")
    mem.sessions.record_file_access(sid, f"src/{tag}.py", "modified")
    mem.sessions.record_error(sid, f"{tag}: import failed", file=f"src/{tag}.py")


def session_file(mem: Memory, sid: str) -> Path:
    return mem.layout.session_path(sid)


def stamp(path: Path) -> tuple[bytes, int]:
    return path.read_bytes(), path.stat().st_mtime_ns


def test_an_older_export_imported_again_loses_nothing_logged_since(tmp_path: Path) -> None:
    """Export, record more (and summarise), import the old export: the session file is not
    touched, so every message, decision, step, file and the newer summary are still there."""
    root = tmp_path / "repo"
    mem = tree(root, contextWindow=2)
    sid = mem.sessions.start("add auth")["id"]
    work(mem, sid, "before")
    old = tmp_path / "old.json"
    export(root, old)

    work(mem, sid, "after", messages=4)
    [outcome] = mem.sessions.drain([sid])
    assert outcome.status == "done" and outcome.summarized > 0
    now = mem.sessions.get(sid)
    assert now["rolling_summary"]["last_summarized_msg_id"] is not None
    before = stamp(session_file(mem, sid))

    summary = import_(root, old)
    assert summary["sessions"] == [sid]
    assert summary["session_outcomes"] == {sid: "unchanged"}
    assert stamp(session_file(mem, sid)) == before
    after = reopen(root, T0 + timedelta(hours=1)).sessions.get(sid)
    assert after == now
    assert len(after["messages"]) == 7 and len(after["decisions"]) == 2
    assert len(after["steps"]) == 2 and len(after["files_accessed"]) == 2
    assert len(after["errors"]) == 2
    assert invoke("validate", root).exit_code == 0


def test_a_newer_export_brings_its_new_messages_into_an_older_tree(tmp_path: Path) -> None:
    root, older = tmp_path / "repo", tmp_path / "older"
    mem = tree(root, contextWindow=2)
    sid = mem.sessions.start("add auth")["id"]
    work(mem, sid, "before")
    shutil.copytree(root, older)  # the older tree: a copy taken now

    work(mem, sid, "after", messages=4)
    mem.sessions.drain([sid])
    mem.sessions.set_context(sid, {"active_task": "write the login form"})
    newer = tmp_path / "newer.json"
    export(root, newer)

    summary = import_(older, newer)
    assert summary["session_outcomes"] == {sid: "updated"}
    here = reopen(older, T0 + timedelta(hours=1)).sessions.get(sid)
    assert here == mem.sessions.get(sid)
    assert here["current_context"]["active_task"] == "write the login form"
    assert here["rolling_summary"]["message_count"] > 0
    assert [m["content"] for m in here["messages"]][-4:] == [f"after message {n}" for n in range(4)]

    path = reopen(older, T0).layout.session_path(sid)
    before = stamp(path)
    assert import_(older, newer)["session_outcomes"] == {sid: "unchanged"}
    assert stamp(path) == before


def test_two_trees_that_both_logged_keep_both_sides(tmp_path: Path) -> None:
    """A session copied to a second tree and continued in both: importing one into the
    other gives every message of both, in time order, each once."""
    root, other = tmp_path / "repo", tmp_path / "other"
    mem = tree(root)
    sid = mem.sessions.start("add auth")["id"]
    work(mem, sid, "shared")
    shutil.copytree(root, other)
    work(mem, sid, "here")
    theirs = reopen(other, T0 + timedelta(minutes=30))
    work(theirs, sid, "there")
    doc = tmp_path / "there.json"
    export(other, doc)

    assert import_(root, doc)["session_outcomes"] == {sid: "updated"}
    merged = reopen(root, T0 + timedelta(hours=1)).sessions.get(sid)
    contents = [m["content"] for m in merged["messages"]]
    assert sorted(contents) == sorted(
        f"{tag} message {n}" for tag in ("shared", "here", "there") for n in range(3)
    )
    assert contents == [m["content"] for m in sorted(merged["messages"], key=lambda m: m["at"])]
    assert len(merged["decisions"]) == 3 and len(merged["errors"]) == 3
    assert len(merged["steps"]) == 3 and len(merged["files_accessed"]) == 3
    assert merged["updated_at"] == theirs.sessions.get(sid)["updated_at"]
    assert invoke("validate", root).exit_code == 0


def test_archived_messages_travel_in_the_export_and_are_not_duplicated(tmp_path: Path) -> None:
    """Past maxConversationLength the summarised messages move to archive chunks; an export
    carries them (the whole conversation), a fresh tree gets them all, and importing the
    export back into its own tree changes nothing (they are in its archive already)."""
    root = tmp_path / "repo"
    mem = tree(root, contextWindow=2, maxConversationLength=4)
    sid = mem.sessions.start("long talk")["id"]
    for n in range(12):
        mem.sessions.append(sid, "user", f"message {n}")
    mem.sessions.drain([sid])
    session = mem.sessions.get(sid)
    assert session["archived_count"] > 0
    history = mem.sessions.history(sid)
    assert len(history) == 12

    out = tmp_path / "export.json"
    doc = export(root, out)
    [exported] = doc["shortTerm"]["sessions"]
    assert exported["messages"] == history and exported["archived_count"] == 0

    before = stamp(session_file(mem, sid))
    assert import_(root, out)["session_outcomes"] == {sid: "unchanged"}
    assert stamp(session_file(mem, sid)) == before

    fresh = tmp_path / "fresh"
    Memory.init(fresh)
    assert import_(fresh, out)["session_outcomes"] == {sid: "created"}
    assert Memory(fresh).sessions.history(sid) == history
    assert invoke("validate", fresh).exit_code == 0


def test_a_decision_folded_since_the_export_is_not_brought_back(tmp_path: Path) -> None:
    """Past maxDecisions the oldest decision folds into the key facts: an older export that
    still lists it does not add it again."""
    root = tmp_path / "repo"
    mem = tree(root, maxDecisions=2)
    sid = mem.sessions.start("decide")["id"]
    for n in range(2):
        mem.sessions.record_decision(sid, f"question {n}", f"answer {n}")
    old = tmp_path / "old.json"
    export(root, old)
    mem.sessions.record_decision(sid, "question 2", "answer 2")
    session = mem.sessions.get(sid)
    assert [d["question"] for d in session["decisions"]] == ["question 1", "question 2"]
    assert "Decision: question 0 -> answer 0" in session["rolling_summary"]["key_facts"]
    before = stamp(session_file(mem, sid))

    assert import_(root, old)["session_outcomes"] == {sid: "unchanged"}
    assert stamp(session_file(mem, sid)) == before


def test_a_re_import_rewrites_no_file(tmp_path: Path) -> None:
    root, target = tmp_path / "repo", tmp_path / "target"
    mem = tree(root)
    sid = mem.sessions.start("add auth")["id"]
    work(mem, sid, "only")
    out = tmp_path / "export.json"
    export(root, out)
    Memory.init(target)
    assert import_(target, out)["session_outcomes"] == {sid: "created"}
    files = sorted(p for p in (target / ".planning").rglob("*") if p.is_file())
    before = {p: stamp(p) for p in files if "contextual" not in p.parts and p.name != ".lock"}

    summary = import_(target, out)
    assert summary["session_outcomes"] == {sid: "unchanged"}
    assert {p: stamp(p) for p in before} == before
    text = invoke("-C", target, "import", out)
    assert "1 session (1 unchanged)" in text.output
