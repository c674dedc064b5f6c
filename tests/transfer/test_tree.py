"""Export and import of whole trees: sessions, long-term records and preferences merge by
id, so that an import never shrinks a session nor loses what a record learned since.

Real files throughout: a tree records through the ``Memory`` API, ``pmem export`` writes the
document, ``pmem import`` (click's runner) reads it back, and the files are compared byte for
byte (and by mtime).
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


def export(root: Path, out: Path, *options: str) -> dict[str, Any]:
    result = invoke("-C", root, "export", "-o", out, *options)
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


# -- long-term records and preferences ---------------------------------------------------------
PATTERN = "Always wrap fetch calls in try-catch with a timeout"
MISTAKE = "Used 'any' in TypeScript function signatures"


def learn(mem: Memory) -> dict[str, str]:
    """A pattern, a mistake, a decision with a topic and a discovery, and two preferences;
    the records' ids by type."""
    ids = {
        "pattern": mem.learn_pattern("Error handling", PATTERN),
        "mistake": mem.learn_from_mistake(MISTAKE, "Use specific types", severity="medium"),
        "decision": mem.save(
            "Chose NextAuth.js",
            record_type="decision",
            topic_key="auth/library",
            tags=["auth"],
            body={"what": "NextAuth.js for auth"},
        ),
        "discovery": mem.save("The CI cache is per branch", record_type="discovery"),
    }
    mem.set_preferences({"code_style.quotes": "single", "testing.framework": "vitest"})
    return {kind: outcome.record["id"] for kind, outcome in ids.items()}


def learn_more(root: Path, ids: dict[str, str], at: datetime) -> Memory:
    """From ``at`` on, an hour between steps: three more uses of the pattern, then its first
    text again (a duplicate), and a pin; the mistake twice more (escalated); the decision
    revised with a new tag; the discovery soft-deleted; a preference changed, one added."""
    clock = Clock(at)
    mem = Memory(root, clock=clock)
    for _ in range(3):
        clock.advance(hours=1)
        again = mem.learn_pattern("Error handling", "always wrap fetch calls in a try/catch")
        assert again.action == "reinforced"
    first = mem.learn_pattern("Error handling", PATTERN)
    assert first.action == "duplicate"
    mem.pin(ids["pattern"])
    for _ in range(2):
        clock.advance(hours=1)
        mem.learn_from_mistake(MISTAKE, "Use specific types")
    clock.advance(hours=1)
    revised = mem.save(
        "Chose NextAuth.js",
        record_type="decision",
        topic_key="auth/library",
        tags=["auth", "security"],
        body={"what": "NextAuth.js for auth, with the Prisma adapter"},
    )
    assert revised.action == "upserted"
    clock.advance(hours=1)
    mem.forget(ids["discovery"])
    mem.set_preferences({"code_style.quotes": "double", "tooling.package_manager": "pnpm"})
    check_learned_more(mem, ids)
    return mem


def long_term_files(root: Path) -> dict[Path, tuple[bytes, int]]:
    planning = root / ".planning"
    files = [*(planning / "memory" / "long-term").rglob("*.json")]
    return {p: stamp(p) for p in sorted(files)}


def check_learned_more(mem: Memory, ids: dict[str, str]) -> None:
    pattern = mem.get(ids["pattern"])
    assert (pattern["usage_count"], pattern["duplicate_count"], pattern["pinned"]) == (4, 1, True)
    mistake = mem.get(ids["mistake"])
    assert (mistake["occurrences"], mistake["severity"]) == (3, "high")
    decision = mem.get(ids["decision"])
    assert decision["revision_count"] == 2 and decision["tags"] == ["auth", "security"]
    assert "Prisma" in decision["body"]["what"]
    assert mem.get(ids["discovery"])["deleted_at"] is not None
    prefs = mem.preferences()
    assert prefs["code_style"]["quotes"] == "double"
    assert prefs["testing"]["framework"] == "vitest"
    assert prefs["tooling"]["package_manager"] == "pnpm"


def test_an_older_export_imported_again_loses_nothing_learned_since(tmp_path: Path) -> None:
    """Export, then reinforce, escalate, revise, pin, soft-delete and change preferences;
    importing the old export keeps all of it and rewrites no file."""
    root = tmp_path / "repo"
    ids = learn(tree(root))
    old = tmp_path / "old.json"
    export(root, old)
    learn_more(root, ids, T0 + timedelta(days=1))
    before = long_term_files(root)

    summary = import_(root, old)
    check_learned_more(reopen(root, T0 + timedelta(days=2)), ids)
    assert long_term_files(root) == before
    assert summary["record_outcomes"] == dict.fromkeys(ids.values(), "unchanged")
    assert (summary["created"], summary["updated"], summary["unchanged"]) == (0, 0, 4)
    assert invoke("validate", root).exit_code == 0


def test_a_newer_export_brings_what_the_other_copy_learned(tmp_path: Path) -> None:
    """A copy of the tree goes on learning; its export imported into the older tree brings
    the higher counts, the escalation, the revision with its new tag, the pin, the deletion
    and the preferences: the records become the copy's. What the older tree set meanwhile
    (a preference) stays. Importing it again is a no-op."""
    root, older = tmp_path / "repo", tmp_path / "older"
    ids = learn(tree(root))
    shutil.copytree(root, older)
    reopen(older, T0 + timedelta(hours=12)).set_preferences({"testing.coverage": 80})
    ahead = learn_more(root, ids, T0 + timedelta(days=1))
    newer = tmp_path / "newer.json"
    export(root, newer, "--include-deleted")

    summary = import_(older, newer)
    here = reopen(older, T0 + timedelta(days=2))
    check_learned_more(here, ids)
    for record_id in ids.values():
        assert here.get(record_id) == ahead.get(record_id)
    theirs = ahead.preferences()
    assert here.preferences() == {**theirs, "testing": {**theirs["testing"], "coverage": 80}}
    assert summary["record_outcomes"] == dict.fromkeys(ids.values(), "updated")
    assert summary["preferences_outcome"] == "updated"

    before = long_term_files(older)
    again = import_(older, newer)
    assert again["record_outcomes"] == dict.fromkeys(ids.values(), "unchanged")
    assert again["preferences_outcome"] == "unchanged"
    assert long_term_files(older) == before
    text = invoke("-C", older, "import", newer)
    assert "0 new, 0 updated, 4 unchanged records" in text.output


def test_a_soft_deleted_record_stays_deleted_and_a_later_restore_wins(tmp_path: Path) -> None:
    """An export from before a delete does not bring the record back; an export of the
    deletion does not undo a restore made after it."""
    root = tmp_path / "repo"
    mem = tree(root)
    record_id = mem.save("The CI cache is per branch", record_type="discovery").record["id"]
    live = tmp_path / "live.json"
    export(root, live)
    clock = Clock(T0 + timedelta(days=1))
    mem = Memory(root, clock=clock)
    mem.forget(record_id)
    gone = tmp_path / "gone.json"
    export(root, gone, "--include-deleted")
    deleted = mem.get(record_id)

    summary = import_(root, live)
    assert reopen(root, T0).get(record_id) == deleted
    assert summary["record_outcomes"] == {record_id: "unchanged"}

    clock.advance(hours=1)
    mem.restore(record_id)
    restored = stamp(mem.layout.record_path("discovery", record_id))
    summary = import_(root, gone)
    assert reopen(root, T0).get(record_id)["deleted_at"] is None
    assert stamp(mem.layout.record_path("discovery", record_id)) == restored
    assert summary["record_outcomes"] == {record_id: "unchanged"}


def test_preferences_set_since_an_export_survive_its_import(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    mem = tree(root)
    mem.set_preferences({"code_style.quotes": "single", "code_style.indentation": 2})
    old = tmp_path / "old.json"
    export(root, old)
    mem = Memory(root, clock=Clock(T0 + timedelta(days=1)))
    mem.set_preferences({"code_style.semicolons": False, "code_style.quotes": "double"})
    path = mem.layout.preferences
    before = stamp(path)

    summary = import_(root, old)
    assert stamp(path) == before
    assert mem.preferences()["code_style"] == {
        "indentation": 2,
        "quotes": "double",
        "semicolons": False,
    }
    assert summary["preferences_outcome"] == "unchanged"
