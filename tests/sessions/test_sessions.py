"""Short-term sessions: channels, the window, the summary boundary, archive, checkpoint,
cascade delete, markers, and real parallel writers."""

from __future__ import annotations

import json
import multiprocessing
import shlex
import sys
import time
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from planning_memory.core.layout import Layout
from planning_memory.core.schema import check
from planning_memory.errors import (
    ConflictError,
    ExternalCommandError,
    InputError,
    NotFoundError,
    SchemaError,
    UnsafePathError,
)
from planning_memory.sessions import (
    CHECKPOINT_KEYS,
    Appended,
    CommandSummarizer,
    EndRequest,
    EndSummary,
    ExtractiveSummarizer,
    Sessions,
    Summary,
    SummaryOutcome,
    SummaryRequest,
)
from planning_memory.sessions.lifecycle import checkpoint_outcome, end_request
from planning_memory.store import Store

T0 = datetime(2024, 1, 20, 15, 0, 0, tzinfo=UTC)
FIXTURES = Path(__file__).parents[1] / "fixtures" / "summarizers"


class Ticking:
    """A clock that ticks one minute per call."""

    def __init__(self) -> None:
        self.ticks = 0

    def __call__(self) -> datetime:
        self.ticks += 1
        return T0 + timedelta(minutes=self.ticks)


def make(root: Path, config: dict[str, Any] | None = None, **short: Any) -> Sessions:
    """The sessions of a fresh memory tree, with ``memory.shortTerm`` settings and a ticking
    clock (a test pins it with ``ses.clock = lambda: T0``)."""
    layout = Layout.for_repo(root)
    config = config or {"memory": {"shortTerm": short}}
    return Sessions(layout, Store(layout), config, clock=Ticking())


def start(ses: Sessions, channel: str | None = None, goal: str | None = "add auth") -> str:
    return str(ses.start(goal, channel=channel)["id"])


def say(ses: Sessions, sid: str, content: str, role: str = "user") -> Appended:
    return ses.append(sid, role, content)


def raw(ses: Sessions, sid: str) -> bytes:
    return ses.path(sid).read_bytes()


def files(ses: Sessions) -> list[str]:
    base = ses.layout.short_term
    return sorted(str(p.relative_to(base)) for p in base.rglob("*") if p.is_file())


class Recorder:
    """A summariser that remembers every batch it was given."""

    name = "recorder"

    def __init__(self) -> None:
        self.batches: list[list[str]] = []

    def summarize(self, request: SummaryRequest) -> Summary:
        ids = [m["id"] for m in request.messages]
        self.batches.append(ids)
        return Summary(f"{request.previous_summary}+{len(ids)}", (f"batch {ids[0]}",))

    def end_summary(self, request: EndRequest) -> EndSummary:
        return EndSummary(goal=f"ended with {len(request.messages)} unsummarised")


@pytest.fixture
def ses(tmp_path: Path) -> Sessions:
    return make(tmp_path)


# -- start, channels, listing ------------------------------------------------------------------
def test_start_writes_a_valid_session(ses: Sessions) -> None:
    sid = start(ses, goal="Quiero agregar auth")
    session = ses.get(sid)
    assert sid.startswith("ses_")
    assert session["status"] == "active"
    assert session["channel"] == "cli"
    assert session["goal"] == "Quiero agregar auth"
    assert session["rolling_summary"] == {
        "summary": "",
        "key_facts": [],
        "last_summarized_msg_id": None,
        "message_count": 0,
    }
    assert ses.layout.session_path(sid).is_file()


def test_channel_isolation(ses: Sessions) -> None:
    cli_old = start(ses, "cli")
    discord = start(ses, "discord:123456789")
    cli_new = start(ses)  # our channel: cli
    say(ses, discord, "hola desde discord")
    say(ses, cli_new, "hello from the cli")
    current_cli = ses.current()
    current_discord = ses.current("discord:123456789")
    assert current_cli is not None and current_cli["id"] == cli_new
    assert current_discord is not None and current_discord["id"] == discord
    assert [m["content"] for m in current_discord["messages"]] == ["hola desde discord"]
    assert [m["content"] for m in current_cli["messages"]] == ["hello from the cli"]
    assert ses.current("whatsapp:5511999999999") is None
    assert [r.id for r in ses.list(channel="cli")] == [cli_new, cli_old]
    ses.pause(cli_new)
    current_cli = ses.current()
    assert current_cli is not None and current_cli["id"] == cli_old  # paused is not current
    assert ses.current_id(start=False) == cli_old


def test_a_listing_reads_again_only_the_session_files_that_changed(
    ses: Sessions, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A listing keeps each session's row while its file's stamp (change time and size,
    ``core.stamps``) holds: a file written since, by this package or by hand, is read again;
    the others are not read."""
    first, second = start(ses), start(ses, goal="second")
    time.sleep(0.15)  # past the stamps' racy window: the rows can be kept
    assert [(r.id, r.status) for r in ses.list()] == [(second, "active"), (first, "active")]
    reads: list[str] = []
    read_json = ses.store.read_json

    def counted(path: Path) -> Any:
        reads.append(path.name)
        return read_json(path)

    monkeypatch.setattr(ses.store, "read_json", counted)
    assert [r.id for r in ses.list(status="active")] == [second, first] and reads == []
    ses.end(first, Recorder())
    reads.clear()
    rows = {r.id: (r.status, r.summary_pending) for r in ses.list()}
    assert rows == {first: ("ended", False), second: ("active", False)}
    assert reads == [ses.path(first).name]
    text = raw(ses, second).decode().replace('"goal": "second"', '"goal": "changed by hand"')
    ses.path(second).write_text(text, "utf-8")
    assert [r.goal for r in ses.list(status="active")] == ["changed by hand"]


def test_current_id_starts_a_session_only_when_asked(ses: Sessions) -> None:
    with pytest.raises(NotFoundError, match="no active session on channel 'cli'"):
        ses.current_id(start=False)
    sid = ses.current_id(goal="fix the build")
    assert ses.get(sid)["goal"] == "fix the build"
    assert ses.current_id() == sid


@pytest.mark.parametrize("channel", ["", "   ", "x" * 201, "bad\nchannel", 7])
def test_bad_channel(ses: Sessions, channel: Any) -> None:
    with pytest.raises(InputError):
        ses.start(channel=channel)


def test_unknown_session(ses: Sessions) -> None:
    with pytest.raises(NotFoundError):
        ses.get("ses_NOPE")
    with pytest.raises(NotFoundError):
        say(ses, "ses_NOPE", "hi")
    with pytest.raises(UnsafePathError):
        say(ses, "../../etc", "hi")


def test_config_is_read_on_first_need(tmp_path: Path) -> None:
    reads: list[int] = []

    def config() -> dict[str, Any]:
        reads.append(1)
        return {"memory": {"shortTerm": {"contextWindow": 2}}}

    layout = Layout.for_repo(tmp_path)
    ses = Sessions(layout, Store(layout), config, clock=Ticking())
    sid = start(ses)
    assert ses.list()[0].id == sid and reads == []  # starting and listing need no config
    for i in range(3):
        say(ses, sid, f"m{i}")
    assert [m["content"] for m in ses.window(sid)] == ["m1", "m2"] and reads == [1]


# -- messages, window, markers -----------------------------------------------------------------
def test_window_is_the_last_n_in_order_and_exact(ses: Sessions) -> None:
    sid = start(ses)
    texts = [f"message {i}\n  with  spacing\t{i}" for i in range(40)]
    for i, text in enumerate(texts):
        say(ses, sid, text, "user" if i % 2 == 0 else "assistant")
    assert [m["content"] for m in ses.window(sid)] == texts[-15:]  # default contextWindow
    assert [m["content"] for m in ses.window(sid, 3)] == texts[-3:]
    assert ses.window(sid, 0) == []
    assert len(ses.window(sid, 1000)) == 40


def test_window_size_from_config(tmp_path: Path) -> None:
    ses = make(tmp_path, contextWindow=4)
    sid = start(ses)
    for i in range(10):
        say(ses, sid, f"m{i}")
    assert [m["content"] for m in ses.window(sid)] == ["m6", "m7", "m8", "m9"]


def test_append_returns_memorize_markers_from_assistant_output(ses: Sessions) -> None:
    sid = start(ses)
    said = say(
        ses,
        sid,
        "Listo. [MEMORIZE: the user deploys on Fridays] y [MEMORIZAR: prefiere reportes cortos]",
        "assistant",
    )
    assert said.memorize == ["the user deploys on Fridays", "prefiere reportes cortos"]
    assert say(ses, sid, "[MEMORIZE: not from the user]", "user").memorize == []
    assert said.message["role"] == "assistant"


def test_private_text_never_reaches_the_file(ses: Sessions) -> None:
    sid = start(ses)
    said = say(
        ses,
        sid,
        "ok <private>hunter2 canary-7731</private> [MEMORIZE: <private>canary-7731</private>]"
        " [MEMORIZE: the key is <private>canary-7731</private> in the vault]",
        "assistant",
    )
    assert "canary-7731" not in raw(ses, sid).decode()
    assert said.memorize == ["the key is [REDACTED] in the vault"]


def test_bad_message_input(ses: Sessions) -> None:
    sid = start(ses)
    with pytest.raises(InputError, match="unknown role"):
        say(ses, sid, "hi", "robot")
    with pytest.raises(InputError, match="limit"):
        say(ses, sid, "x" * 50_001)
    with pytest.raises(InputError):
        ses.append(sid, "tool", "ran", tool_results=[{"name": "bash"}])
    said = ses.append(sid, "tool", "ran", tool_results=[{"name": "bash", "output": "ok"}])
    assert said.message["tool_results"] == [{"name": "bash", "output": "ok"}]


def test_recording_never_summarises_but_queues(tmp_path: Path) -> None:
    ses = make(tmp_path, contextWindow=3)
    sid = start(ses)
    outcomes = [say(ses, sid, f"m{i}").summary_queued for i in range(5)]
    assert outcomes == [False, False, False, True, True]
    assert ses.get(sid)["rolling_summary"]["message_count"] == 0
    assert ses.queued() == [sid]
    assert ses.list()[0].summary_pending


def test_gap_days_on_append(ses: Sessions) -> None:
    sid = start(ses)
    ses.clock = lambda: T0
    say(ses, sid, "a")
    ses.clock = lambda: T0 + timedelta(hours=25)
    later = say(ses, sid, "b")
    assert later.previous_at == "2024-01-20T15:00:00Z"
    assert later.gap_days() == 1


# -- temporal through the session --------------------------------------------------------------
@pytest.mark.parametrize(("hours", "notice"), [(23, None), (25, 1)])
def test_temporal_gap_23h_vs_25h(tmp_path: Path, hours: int, notice: int | None) -> None:
    ses = make(tmp_path, timezone="America/Sao_Paulo")
    sid = start(ses)
    ses.clock = lambda: T0
    say(ses, sid, "hola")
    ses.clock = lambda: T0 + timedelta(hours=hours)
    ctx = ses.temporal(sid)
    assert ctx.gap_days == notice
    assert ctx.timezone == "America/Sao_Paulo"
    assert ("Notice: 1 day has passed since the last message." in ctx.text()) == bool(notice)


def test_temporal_default_is_the_system_zone(
    ses: Sessions, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TZ", "Asia/Tokyo")
    ses.clock = lambda: T0
    ctx = ses.temporal()
    assert ctx.timezone == "Asia/Tokyo"
    assert ctx.local_time.hour == 0  # 15:00 UTC is midnight in Tokyo


# -- the summary boundary ----------------------------------------------------------------------
def test_summary_boundary_nothing_twice_nothing_skipped(tmp_path: Path) -> None:
    ses = make(tmp_path, contextWindow=3, maxConversationLength=1000)
    sid = start(ses)
    rec = Recorder()
    ids = [say(ses, sid, f"m{i}").message["id"] for i in range(10)]
    assert ses.drain(summarizer=rec)[0].summarized == 7
    rolling = ses.get(sid)["rolling_summary"]
    assert rolling["last_summarized_msg_id"] == ids[6]
    assert rolling["message_count"] == 7
    assert ses.queued() == []
    # one more message passes the window again: queued at once, summarised only on a drain
    ids += [say(ses, sid, "m10").message["id"]]
    assert ses.queued() == [sid]
    assert ses.get(sid)["rolling_summary"] == rolling
    ids += [say(ses, sid, f"m{i}").message["id"] for i in range(11, 16)]
    assert ses.drain(summarizer=rec)[0].summarized == 6
    rolling = ses.get(sid)["rolling_summary"]
    assert rolling["last_summarized_msg_id"] == ids[12]
    assert rolling["message_count"] == 13
    assert rec.batches == [ids[:7], ids[7:13]]
    assert rolling["summary"] == "+7+6"
    assert rolling["key_facts"] == [f"batch {ids[0]}", f"batch {ids[7]}"]
    # a drain with nothing due changes nothing
    before = raw(ses, sid)
    assert ses.drain(summarizer=rec) == []
    assert ses.summarize(sid, summarizer=rec).status == "nothing"
    assert raw(ses, sid) == before


def test_min_batch_waits_for_enough_messages(tmp_path: Path) -> None:
    ses = make(tmp_path, contextWindow=2)
    sid = start(ses)
    for i in range(5):
        say(ses, sid, f"m{i}")
    rec = Recorder()
    assert ses.drain(summarizer=rec, min_batch=4)[0].status == "waiting"
    assert rec.batches == [] and ses.queued() == [sid]
    say(ses, sid, "m5")
    assert ses.drain(summarizer=rec, min_batch=4)[0].summarized == 4
    assert ses.queued() == []


def test_large_backlog_is_summarised_in_batches(tmp_path: Path) -> None:
    ses = make(tmp_path, contextWindow=2, maxConversationLength=5)
    ses.settings = replace(ses.settings, summary_batch=4)
    sid = start(ses)
    ids = [say(ses, sid, f"m{i}").message["id"] for i in range(13)]
    rec = Recorder()
    outcome = ses.drain(summarizer=rec)[0]
    assert rec.batches == [ids[0:4], ids[4:8], ids[8:11]]
    assert outcome.summarized == 11
    # each batch moves what is summarised while the live list is over the maximum (5)
    assert outcome.archived == 8
    session = ses.get(sid)
    assert [m["id"] for m in session["messages"]] == ids[8:]
    assert session["archived_count"] == 8
    assert [p.name for _s, p in ses.chunk_paths(sid)] == [
        f"{sid}.00000000.json",
        f"{sid}.00000004.json",
    ]
    assert [m["id"] for m in ses.history(sid)] == ids


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    window=st.integers(1, 6),
    max_len=st.integers(1, 12),
    batch=st.integers(1, 7),
    ops=st.lists(st.one_of(st.integers(1, 9), st.just(0)), min_size=1, max_size=12),
)
def test_random_lives_keep_every_invariant(
    tmp_path_factory: pytest.TempPathFactory,
    window: int,
    max_len: int,
    batch: int,
    ops: Sequence[int],
) -> None:
    ses = make(tmp_path_factory.mktemp("life"), contextWindow=window, maxConversationLength=max_len)
    ses.settings = replace(ses.settings, summary_batch=batch)
    sid = start(ses)
    rec = Recorder()
    logged: list[str] = []
    for op in ops:
        if op == 0:
            ses.drain(summarizer=rec)
        else:
            logged += [say(ses, sid, f"m{len(logged)}").message["id"] for _ in range(op)]
    session = ses.get(sid)
    history = [m["id"] for m in ses.history(sid)]
    summarised = [i for b in rec.batches for i in b]
    count = session["rolling_summary"]["message_count"]
    assert history == logged  # nothing lost, nothing duplicated, in order
    assert summarised == logged[:count]  # a prefix, each message exactly once
    assert session["rolling_summary"]["last_summarized_msg_id"] == (
        logged[count - 1] if count else None
    )
    assert session["archived_count"] <= count  # only summarised messages are archived
    for n in (1, window, len(logged) + 3):
        assert [m["id"] for m in ses.window(sid, n)] == logged[-n:]
    if rec.batches and ops[-1] == 0 and window <= max_len:
        assert len(session["messages"]) <= max(max_len, window)


def test_max_conversation_length_moves_summarised_messages_to_the_archive(tmp_path: Path) -> None:
    ses = make(tmp_path, contextWindow=5, maxConversationLength=20)
    sid = start(ses)
    ids = [say(ses, sid, f"m{i}").message["id"] for i in range(25)]
    # not summarised yet: nothing may move, even past the maximum
    assert len(ses.get(sid)["messages"]) == 25
    outcome = ses.drain()[0]
    assert (outcome.summarized, outcome.archived) == (20, 20)
    session = ses.get(sid)
    assert [m["id"] for m in session["messages"]] == ids[20:]
    chunk = json.loads(ses.chunk_path(sid, 0).read_text())
    assert [m["id"] for m in chunk["messages"]] == ids[:20]
    assert [m["id"] for m in ses.history(sid)] == ids
    assert [m["id"] for m in ses.window(sid, 7)] == ids[-7:]
    assert ses.list()[0].message_count == 25


def test_leftover_chunk_from_an_interrupted_move_is_ignored(tmp_path: Path) -> None:
    ses = make(tmp_path, contextWindow=2, maxConversationLength=3)
    sid = start(ses)
    ids = [say(ses, sid, f"m{i}").message["id"] for i in range(4)]
    # a crash after writing the chunk but before the session: the chunk is ahead of the count
    ses.store.write_json(
        ses.chunk_path(sid, 0),
        {"session_id": sid, "start": 0, "messages": ses.get(sid)["messages"][:2]},
    )
    assert [m["id"] for m in ses.history(sid)] == ids
    ses.drain()
    assert [m["id"] for m in ses.history(sid)] == ids
    assert ses.get(sid)["archived_count"] == 2


def test_failing_summariser_leaves_the_session_unchanged(tmp_path: Path) -> None:
    ses = make(tmp_path, contextWindow=2)
    sid = start(ses)
    for i in range(6):
        say(ses, sid, f"m{i}")
    before = raw(ses, sid)
    failing = CommandSummarizer(shlex.quote(str(FIXTURES / "fail.sh")), timeout=10)
    [outcome] = ses.drain(summarizer=failing)
    assert outcome.status == "failed"
    assert outcome.error is not None and "exited with status 3" in outcome.error
    assert raw(ses, sid) == before
    entry = json.loads(ses.queue_path(sid).read_text())
    assert entry["attempts"] == 1
    assert "model not available" in entry["last_error"]
    hanging = CommandSummarizer(shlex.quote(str(FIXTURES / "hang.sh")), timeout=0.3)
    [outcome] = ses.drain(summarizer=hanging)
    assert outcome.status == "failed" and "timed out" in str(outcome.error)
    assert raw(ses, sid) == before
    # a working command then does the job
    good = f"{shlex.quote(sys.executable)} {shlex.quote(str(FIXTURES / 'good.py'))}"
    [outcome] = ses.drain(summarizer=CommandSummarizer(good, timeout=30))
    assert outcome.status == "done" and outcome.summarized == 4
    assert ses.get(sid)["rolling_summary"]["summary"] == "LLM summary of 4 messages"
    assert ses.queued() == []


def test_the_configured_command_is_the_default_summariser(tmp_path: Path) -> None:
    good = f"{shlex.quote(sys.executable)} {shlex.quote(str(FIXTURES / 'good.py'))}"
    short = {"contextWindow": 2, "summarizer": {"command": good, "timeoutSeconds": 30}}
    ses = make(tmp_path, {"memory": {"shortTerm": short}})
    assert isinstance(ses.summarizer, CommandSummarizer)
    sid = start(ses)
    for i in range(6):
        say(ses, sid, f"m{i}")
    assert ses.drain()[0].summarized == 4
    assert ses.get(sid)["rolling_summary"]["summary"] == "LLM summary of 4 messages"


def test_paused_sessions_are_not_summarised_until_resumed(tmp_path: Path) -> None:
    ses = make(tmp_path, contextWindow=2)
    sid = start(ses)
    for i in range(5):
        say(ses, sid, f"m{i}")
    ses.pause(sid)
    assert ses.drain()[0].status == "skipped"
    assert ses.queued() == [sid]
    ses.resume(sid)
    assert ses.drain()[0].summarized == 3


def test_hand_edit_that_loses_the_boundary_is_reported(tmp_path: Path) -> None:
    ses = make(tmp_path, contextWindow=2, maxConversationLength=100)
    sid = start(ses)
    for i in range(6):
        say(ses, sid, f"m{i}")
    ses.drain()
    session = ses.get(sid)
    session["messages"] = session["messages"][4:]  # someone removed the summarised ones
    ses.store.write_json(ses.path(sid), session)
    say(ses, sid, "m6")
    say(ses, sid, "m7")
    with pytest.raises(ConflictError, match="not in the session"):
        ses.drain()


# -- decisions, files, steps, context ----------------------------------------------------------
def test_decisions_past_the_maximum_fold_into_key_facts(tmp_path: Path) -> None:
    ses = make(tmp_path, maxDecisions=2)
    sid = start(ses)
    for i in range(4):
        ses.record_decision(
            sid,
            f"q{i}?",
            f"d{i}",
            reasoning="because" if i == 0 else "",
            alternatives=["a", "b"],
        )
    session = ses.get(sid)
    assert [d["decision"] for d in session["decisions"]] == ["d2", "d3"]
    assert session["rolling_summary"]["key_facts"] == [
        "Decision: q0? -> d0 (because)",
        "Decision: q1? -> d1",
    ]
    assert session["decisions"][0]["alternatives"] == ["a", "b"]
    assert session["decisions"][0]["id"].startswith("dec_")


def test_key_facts_keep_the_newest(tmp_path: Path) -> None:
    ses = make(tmp_path, maxDecisions=1, contextWindow=1)
    ses.settings = replace(ses.settings, max_key_facts=3)
    sid = start(ses)
    for i in range(5):
        ses.record_decision(sid, f"q{i}", f"d{i}")
    assert ses.get(sid)["rolling_summary"]["key_facts"] == [
        "Decision: q1 -> d1",
        "Decision: q2 -> d2",
        "Decision: q3 -> d3",
    ]
    say(ses, sid, "The server runs on 10.0.0.1.")
    say(ses, sid, "ok")
    ses.drain()
    assert ses.get(sid)["rolling_summary"]["key_facts"] == [
        "Decision: q2 -> d2",
        "Decision: q3 -> d3",
        "The server runs on 10.0.0.1.",
    ]


def test_file_access(ses: Sessions) -> None:
    sid = start(ses)
    ses.clock = lambda: T0
    root = ses.layout.repo_root
    rec = ses.record_file_access(sid, "src/app/layout.tsx")
    assert rec == {"path": "src/app/layout.tsx", "action": "read", "at": "2024-01-20T15:00:00Z"}
    absolute = str(root / "src" / "./auth" / "route.ts")
    assert ses.record_file_access(sid, absolute, "created")["path"] == "src/auth/route.ts"
    with pytest.raises(UnsafePathError):
        ses.record_file_access(sid, "../x")
    with pytest.raises(UnsafePathError):
        ses.record_file_access(sid, "/etc/passwd")
    with pytest.raises(InputError, match="unknown file action"):
        ses.record_file_access(sid, "a.py", "renamed")
    assert [f["path"] for f in ses.get(sid)["files_accessed"]] == [
        "src/app/layout.tsx",
        "src/auth/route.ts",
    ]


def test_steps_keep_at_most_200_characters(ses: Sessions) -> None:
    sid = start(ses)
    short = ses.add_step(sid, "read config", "ok")
    long = ses.add_step(sid, "ran tests", "y" * 1000)
    exact = ses.add_step(sid, "ran lint", "z" * 200)
    assert short["result"] == "ok"
    assert len(long["result"]) == 200 and long["result"].endswith("…")
    assert exact["result"] == "z" * 200
    assert len(ses.get(sid)["steps"]) == 3


def test_current_context_and_rename(ses: Sessions) -> None:
    sid = start(ses)
    got = ses.set_context(
        sid, {"active_task": "Implementar login", "active_phase": "implementation"}
    )
    assert got == {
        "active_task": "Implementar login",
        "active_phase": "implementation",
        "focus_area": None,
    }
    got = ses.set_context(sid, {"active_phase": None})
    assert got["active_phase"] is None and got["active_task"] == "Implementar login"
    with pytest.raises(InputError, match="unknown context"):
        ses.set_context(sid, {"mood": "x"})
    ses.rename(sid, "auth work")
    assert ses.get(sid)["name"] == "auth work"
    assert ses.list()[0].name == "auth work"


def test_context_for_agents(tmp_path: Path) -> None:
    ses = make(tmp_path, contextWindow=2)
    sid = start(ses)
    for text in ["The server runs on 10.0.0.5.", "ok", "fine", "now what"]:
        say(ses, sid, text)
    ses.drain()
    ctx = ses.context(sid)
    assert [m["content"] for m in ctx["window"]] == ["fine", "now what"]
    assert "The server runs on 10.0.0.5." in ctx["conversation_context"]
    assert ctx["session"]["id"] == sid
    assert ctx["not_yet_summarized"] == 0
    assert "Current date & time" in ctx["temporal"]["text"]


# -- pause, resume, checkpoint -----------------------------------------------------------------
def busy_session(ses: Sessions) -> str:
    sid = start(ses)
    for i in range(5):
        say(ses, sid, f"m{i}")
    ses.record_decision(sid, "q?", "d")
    ses.record_file_access(sid, "a.py", "modified")
    ses.add_step(sid, "step", "done")
    ses.set_context(sid, {"focus_area": "auth"})
    return sid


def state(session: dict[str, Any]) -> dict[str, Any]:
    return {k: session[k] for k in CHECKPOINT_KEYS}


def test_checkpoint_restore_equality(ses: Sessions) -> None:
    sid = busy_session(ses)
    before = state(ses.get(sid))
    paused = ses.pause(sid)
    assert paused["status"] == "paused"
    assert state(paused["checkpoint"]) == before
    with pytest.raises(InputError, match="paused"):
        say(ses, sid, "while paused")
    # the live state is damaged while paused (a hand edit, a bad merge)
    damaged = ses.get(sid)
    damaged["messages"] = damaged["messages"][:1]
    damaged["current_context"]["focus_area"] = "something else"
    damaged["decisions"] = []
    ses.store.write_json(ses.path(sid), damaged)
    resumed = ses.resume(sid)
    assert state(resumed) == before
    assert resumed["status"] == "active" and resumed["checkpoint"] is None
    assert state(ses.get(sid)) == before


def test_without_persist_on_pause_no_checkpoint(tmp_path: Path) -> None:
    ses = make(tmp_path, persistOnPause=False)
    sid = busy_session(ses)
    before = state(ses.get(sid))
    assert ses.pause(sid)["checkpoint"] is None
    assert state(ses.resume(sid)) == before


def test_snapshot_and_restore(ses: Sessions) -> None:
    sid = busy_session(ses)
    saved = ses.snapshot(sid)
    say(ses, sid, "after the snapshot")
    ses.restore(sid, saved)
    assert state(ses.get(sid)) == {k: saved[k] for k in CHECKPOINT_KEYS}
    with pytest.raises(InputError, match="checkpoint needs"):
        ses.restore(sid, {"goal": "x"})
    bad = dict(saved, messages=[{"id": "nope"}])
    with pytest.raises(SchemaError):
        ses.restore(sid, bad)
    stale = dict(saved, archived_count=3)
    with pytest.raises(ConflictError, match="archive"):
        ses.restore(sid, stale)


# -- end ---------------------------------------------------------------------------------------
def test_end_writes_the_seed_003_summary(ses: Sessions) -> None:
    sid = busy_session(ses)
    say(ses, sid, "I prefer small commits. Next we need to add tests.")
    ended = ses.end(sid)  # the default config's summariser: the extractive one
    assert ended["status"] == "ended"
    assert ended["ended_at"] is not None
    summary = ended["end_summary"]
    assert summary["goal"] == "add auth"
    assert "I prefer small commits." in summary["instructions"]
    assert "Next we need to add tests." in summary["next_steps"]
    assert "Decided: d (q?)" in summary["accomplished"]
    assert summary["relevant_files"] == ["a.py"]
    assert ses.get(sid) == ended
    with pytest.raises(InputError, match="ended"):
        say(ses, sid, "too late")
    with pytest.raises(InputError, match="ended"):
        ses.end(sid)


@pytest.mark.parametrize(
    ("script", "timeout", "why"),
    [
        ("fail.sh", 10, "exited with status 3: error: model not available"),
        ("hang.sh", 0.5, "timed out"),
    ],
)
def test_a_failing_summariser_command_gives_way_to_the_built_in_one(
    ses: Sessions, script: str, timeout: float, why: str
) -> None:
    sid = busy_session(ses)
    say(ses, sid, "Next we need to add tests.")
    failing = CommandSummarizer(shlex.quote(str(FIXTURES / script)), timeout=timeout)
    ended = ses.end(sid, failing)
    assert ended["status"] == "ended"
    assert ended["end_summary"] == ses.extractive.end_summary(end_request(ended)).as_dict()
    assert "Next we need to add tests." in ended["end_summary"]["next_steps"]
    warning = ended["messages"][-1]
    assert warning["role"] == "system" and why in warning["content"]
    assert warning["content"].startswith("End summary written by the built-in summariser")
    assert ses.get(sid) == ended


def test_the_built_in_summariser_failing_is_not_hidden(ses: Sessions) -> None:
    class Broken(ExtractiveSummarizer):
        def end_summary(self, request: EndRequest) -> EndSummary:
            raise ExternalCommandError("broken")

    sid = busy_session(ses)
    before = raw(ses, sid)
    with pytest.raises(ExternalCommandError):
        ses.end(sid, Broken())
    assert raw(ses, sid) == before


def test_ending_a_session_with_nothing_recorded_writes_no_summary(ses: Sessions) -> None:
    """A /clear with no activity: no empty summary to stand in for the last real one, and
    no summariser call."""
    sid = start(ses)
    failing = CommandSummarizer(shlex.quote(str(FIXTURES / "fail.sh")), timeout=10)
    ended = ses.end(sid, failing)
    assert ended["status"] == "ended" and ended["end_summary"] is None
    assert ended["messages"] == []


def test_an_empty_end_summary_keeps_the_one_the_session_had(ses: Sessions) -> None:
    class Empty(Recorder):
        def end_summary(self, request: EndRequest) -> EndSummary:
            return EndSummary(goal="")

    sid = start(ses, goal=None)
    say(ses, sid, "m")
    kept = {
        "goal": "imported",
        "instructions": [],
        "discoveries": [],
        "accomplished": ["x"],
        "next_steps": [],
        "relevant_files": [],
    }
    data = ses.get(sid)
    data["end_summary"] = kept
    ses.store.write_json(ses.path(sid), data)
    assert ses.end(sid, Empty())["end_summary"] == kept


def test_a_new_session_inherits_the_standing_facts_of_an_ended_one(tmp_path: Path) -> None:
    ses = make(tmp_path, contextWindow=2)
    first = start(ses)
    say(ses, first, "My name is Ana. I prefer small commits.")
    say(ses, first, "Done. [MEMORIZE: the API runs on port 8080]", role="assistant")
    say(ses, first, "We decided to use JWT sessions.", role="assistant")
    ses.drain()  # the first two become key facts; the third is not summarised yet
    ses.record_decision(first, "Which ORM?", "Drizzle", reasoning="edge runtime")
    ses.end(first)
    second = start(ses, goal="next")
    facts = ses.inherit(second, first)
    assert facts == [
        "Earlier session: My name is Ana.",
        "Earlier session: I prefer small commits.",
        "Earlier session: the API runs on port 8080",
        "Earlier session: We decided to use JWT sessions.",
        "Earlier session: Decision: Which ORM? -> Drizzle (edge runtime)",
    ]
    assert ses.get(second)["rolling_summary"]["key_facts"] == facts
    say(ses, second, "Next we add the login form.")
    ended = ses.end(second)  # what it inherited is not what it did
    assert not any("Earlier session" in str(v) for v in ended["end_summary"].values())
    third = start(ses)  # a chain: the marker is not doubled, the newest are kept
    assert ses.inherit(third, second) == facts
    assert ses.inherit(start(ses), start(ses)) == []


def test_set_goal(ses: Sessions) -> None:
    sid = start(ses, goal=None)
    assert ses.set_goal(sid, "Ship <private>x</private> rotation")["goal"] == (
        "Ship [REDACTED] rotation"
    )
    assert ses.set_goal(None, None)["goal"] is None
    ses.end(sid)
    with pytest.raises(InputError, match="ended"):
        ses.set_goal(sid, "late")


def test_recorded_compares_as_stored_from_a_position(tmp_path: Path) -> None:
    ses = make(tmp_path, contextWindow=2, maxConversationLength=3)
    sid = start(ses)
    say(ses, sid, "token sk-ant-api03-" + "a" * 40 + " please")
    for i in range(6):
        say(ses, sid, f"m{i}")
    ses.drain()  # the first messages move to the archive
    assert ses.get(sid)["archived_count"] > 0
    secret = "TOKEN   sk-ant-api03-" + "a" * 40 + " please"
    assert ses.recorded(sid, "user", [secret, "m5", "M5", "never said"]) == [
        True,
        True,
        False,  # one recorded message answers for one text
        False,
    ]
    assert ses.recorded(sid, "assistant", ["m5"]) == [False]
    assert ses.recorded(sid, "user", [secret, "m5"], after=6) == [False, True]
    assert ses.recorded(sid, "user", ["m5"], after=99) == [False]


def test_end_only_gets_messages_not_in_the_rolling_summary(tmp_path: Path) -> None:
    ses = make(tmp_path, contextWindow=2)
    sid = start(ses)
    for i in range(7):
        say(ses, sid, f"m{i}")
    ses.drain()
    ended = ses.end(sid, Recorder())
    assert ended["end_summary"]["goal"] == "ended with 2 unsummarised"


# -- delete ------------------------------------------------------------------------------------
def test_delete_cascades(tmp_path: Path) -> None:
    ses = make(tmp_path, contextWindow=2, maxConversationLength=3)
    keep = start(ses, "discord:1")
    say(ses, keep, "stay")
    sid = start(ses)
    ids = [say(ses, sid, f"m{i}").message["id"] for i in range(8)]
    ses.drain()
    say(ses, sid, "m8")
    say(ses, sid, "m9")  # queued again
    ids += [m["id"] for m in ses.get(sid)["messages"][-2:]]
    assert any(sid in f for f in files(ses) if f.startswith("archive/"))
    assert ses.queue_path(sid).exists()
    before_keep = raw(ses, keep)
    deleted = ses.delete(sid)
    assert not [f for f in files(ses) if sid in f]
    assert sorted(deleted.message_ids) == sorted(ids)
    assert any("archive/" in p for p in deleted.paths)
    assert any("queue/" in p for p in deleted.paths)
    assert raw(ses, keep) == before_keep
    assert [r.id for r in ses.list()] == [keep]
    with pytest.raises(NotFoundError):
        ses.delete(sid)
    with pytest.raises(NotFoundError):
        ses.get(sid)


def test_drain_drops_the_marker_of_a_deleted_session(ses: Sessions) -> None:
    ses.store.write_json(ses.queue_path("ses_GONE"), {"session_id": "ses_GONE"})
    assert ses.drain() == [SummaryOutcome("ses_GONE", "gone")]
    assert ses.queued() == []


# -- real parallel writers ---------------------------------------------------------------------
def _sessions(root: str, config: dict[str, Any]) -> Sessions:
    layout = Layout.for_repo(Path(root))
    # this test is about lost writes, not lock fairness
    return Sessions(layout, Store(layout, lock_timeout=300), config)


def _writer(root: str, config: dict[str, Any], sid: str, worker: int, count: int, go: Any) -> None:
    ses = _sessions(root, config)
    go.wait()
    for i in range(count):
        ses.append(sid, "user", f"w{worker}-{i}")


def _drainer(root: str, config: dict[str, Any], go: Any, stop: Any) -> None:
    ses = _sessions(root, config)
    go.wait()
    while not stop.is_set():
        ses.drain()


def _run_writers(
    root: Path, sid: str, workers: int, count: int, config: dict[str, Any] | None
) -> None:
    ctx = multiprocessing.get_context("fork" if sys.platform == "linux" else "spawn")
    go, stop = ctx.Event(), ctx.Event()
    procs = [
        ctx.Process(target=_writer, args=(str(root), config or {}, sid, w, count, go))
        for w in range(workers)
    ]
    drainer = ctx.Process(target=_drainer, args=(str(root), config, go, stop)) if config else None
    for p in [*procs, *([drainer] if drainer else [])]:
        p.start()
    go.set()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    if drainer:
        stop.set()
        drainer.join(60)
        assert drainer.exitcode == 0


def _check_all_logged(ses: Sessions, sid: str, workers: int, count: int) -> list[dict[str, Any]]:
    history = ses.history(sid)
    contents = [m["content"] for m in history]
    assert len(contents) == workers * count
    assert len({m["id"] for m in history}) == workers * count
    for w in range(workers):  # each writer's messages in its own order
        mine = [c for c in contents if c.startswith(f"w{w}-")]
        assert mine == [f"w{w}-{i}" for i in range(count)]
    return history


@pytest.mark.slow
def test_ten_processes_logging_100_messages_each_lose_none(ses: Sessions) -> None:
    sid = start(ses)
    _run_writers(ses.layout.repo_root, sid, 10, 100, None)
    _check_all_logged(ses, sid, 10, 100)
    assert not list(ses.layout.short_term.rglob("*.pm-tmp"))


def test_parallel_writers_with_a_concurrent_summariser(tmp_path: Path) -> None:
    config = {"memory": {"shortTerm": {"contextWindow": 5, "maxConversationLength": 20}}}
    ses = make(tmp_path, config)
    sid = start(ses)
    _run_writers(tmp_path, sid, 4, 50, config)
    history = _check_all_logged(ses, sid, 4, 50)
    ses.drain()
    session = ses.get(sid)
    rolling = session["rolling_summary"]
    assert rolling["message_count"] == 200 - 5
    assert rolling["last_summarized_msg_id"] == history[-6]["id"]
    assert len(session["messages"]) <= 20


def test_injections_keep_the_newest_ten_redacted_and_valid(ses: Sessions) -> None:
    sid = start(ses, goal="pay")
    pack = {
        "budget": 500,
        "tokens": 12,
        "text": "use pnpm; key AKIAIOSFODNN7EXAMPLE",
        "items": [{"section": "patterns", "id": "pat_1", "reason": "taught", "text": "x" * 9}],
    }
    for n in range(12):
        ses.record_injection(sid, "SessionStart", f"task {n}", pack)
    kept = ses.get(sid)["injected"]
    assert [e["task"] for e in kept] == [f"task {n}" for n in range(2, 12)]
    assert "AKIAIOSFODNN7EXAMPLE" not in kept[-1]["text"]
    assert kept[-1]["items"] == [
        {"section": "patterns", "id": "pat_1", "reason": "taught", "tokens": 3}
    ]
    check("session", ses.get(sid))
    newest = ses.injections(limit=3)
    assert [e["task"] for e in newest] == ["task 11", "task 10", "task 9"]
    assert {e["session_id"] for e in newest} == {sid}
    assert ses.injections(start(ses, goal="other")) == []


def test_injections_in_one_second_come_newest_first(ses: Sessions) -> None:
    sid = start(ses, goal="pay")
    ses.clock = lambda: T0  # a start and a compaction's start in the same second
    for event in ("startup", "compact"):
        ses.record_injection(sid, "SessionStart", event, {"budget": 9, "tokens": 1, "items": []})
    assert [e["task"] for e in ses.injections()] == ["compact", "startup"]


@pytest.mark.parametrize(
    ("said", "outcome"),
    [
        (["fix the login test", "Ran pytest: 12 passed"], "confirmed"),
        (["fix the login test", "Traceback (most recent call last): KeyError"], "failed"),
        (["Ran it: 3 errors", "Fixed it, all tests pass now and it works"], "confirmed"),
        (["El build falló otra vez"], "failed"),
        (["42 passed, 0 failed"], "unknown"),
        (["let us look at the webhook"], "unknown"),
    ],
)
def test_a_checkpoint_outcome_is_what_the_newest_clear_message_says(
    said: list[str], outcome: str
) -> None:
    messages = [{"content": text, "tool_results": []} for text in said]
    assert checkpoint_outcome(messages) == outcome


def test_a_checkpoint_keeps_the_summary_so_far_and_the_end_replaces_it(ses: Sessions) -> None:
    sid = start(ses, goal="fix the webhook retries")
    assert ses.checkpoint(sid)["end_summary"] is None  # nothing recorded: nothing kept
    say(ses, sid, "retry the webhook with backoff in src/payments/retry.py")
    ses.record_file_access(sid, "src/payments/retry.py", "modified")
    say(ses, sid, "Done: the retry works, 12 passed", "assistant")
    kept = ses.checkpoint(sid)
    assert kept["status"] == "active"
    assert kept["end_summary"]["outcome"] == "confirmed"
    assert "src/payments/retry.py" in kept["end_summary"]["relevant_files"]
    check("session", ses.get(sid))
    ended = ses.end(sid, ses.extractive)
    assert ended["status"] == "ended" and "outcome" not in ended["end_summary"]
