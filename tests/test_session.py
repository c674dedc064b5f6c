"""Short-term sessions: channels, the window, the summary boundary, archive, checkpoint,
cascade delete, markers, and real parallel writers."""

from __future__ import annotations

import json
import multiprocessing
import shlex
import sys
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from planning_memory.core.layout import Layout
from planning_memory.errors import (
    ConflictError,
    ExternalCommandError,
    InputError,
    NotFoundError,
    SchemaError,
    UnsafePathError,
)
from planning_memory.sessions import conversation as S
from planning_memory.sessions import summarize
from planning_memory.store import Store

T0 = datetime(2024, 1, 20, 15, 0, 0, tzinfo=UTC)
FIXTURES = Path(__file__).parent / "fixtures" / "summarizers"


def cfg(**short: Any) -> dict[str, Any]:
    return {"memory": {"shortTerm": short}}


class Env:
    """A memory tree plus a clock that ticks one minute per call."""

    def __init__(self, root: Path, config: dict[str, Any] | None = None) -> None:
        self.layout = Layout.for_repo(root)
        self.store = Store(self.layout)
        self.config = config or {}
        self.ticks = 0

    def now(self) -> datetime:
        self.ticks += 1
        return T0 + timedelta(minutes=self.ticks)

    def start(self, channel: str = "cli", goal: str | None = "add auth") -> str:
        return str(
            S.start(
                self.layout, self.store, self.config, now=self.now(), channel=channel, goal=goal
            )["id"]
        )

    def log(self, sid: str, content: str, role: str = "user") -> S.Appended:
        return S.append_message(
            self.layout, self.store, self.config, sid, role, content, now=self.now()
        )

    def drain(self, summarizer: summarize.Summarizer | None = None) -> list[S.SummaryOutcome]:
        return S.drain_summary_queue(
            self.layout,
            self.store,
            self.config,
            summarizer or summarize.ExtractiveSummarizer(),
            self.now(),
        )

    def get(self, sid: str) -> dict[str, Any]:
        return S.get(self.layout, self.store, sid)

    def raw(self, sid: str) -> bytes:
        return self.layout.session_path(sid).read_bytes()

    def files(self) -> list[str]:
        base = self.layout.short_term
        return sorted(str(p.relative_to(base)) for p in base.rglob("*") if p.is_file())


class Recorder:
    """A summariser that remembers every batch it was given."""

    name = "recorder"

    def __init__(self) -> None:
        self.batches: list[list[str]] = []

    def summarize(self, request: summarize.SummaryRequest) -> summarize.Summary:
        ids = [m["id"] for m in request.messages]
        self.batches.append(ids)
        return summarize.Summary(f"{request.previous_summary}+{len(ids)}", (f"batch {ids[0]}",))

    def end_summary(self, request: summarize.EndRequest) -> summarize.EndSummary:
        return summarize.EndSummary(goal=f"ended with {len(request.messages)} unsummarised")


@pytest.fixture
def env(tmp_path: Path) -> Env:
    return Env(tmp_path)


# -- start, channels, listing ------------------------------------------------------------------
def test_start_writes_a_valid_session(env: Env) -> None:
    sid = env.start(goal="Quiero agregar auth")
    session = env.get(sid)
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
    assert env.layout.session_path(sid).is_file()


def test_channel_isolation(env: Env) -> None:
    cli_old = env.start("cli")
    discord = env.start("discord:123456789")
    cli_new = env.start("cli")
    env.log(discord, "hola desde discord")
    env.log(cli_new, "hello from the cli")
    current_cli = S.current(env.layout, env.store, "cli")
    current_discord = S.current(env.layout, env.store, "discord:123456789")
    assert current_cli is not None and current_cli["id"] == cli_new
    assert current_discord is not None and current_discord["id"] == discord
    assert [m["content"] for m in current_discord["messages"]] == ["hola desde discord"]
    assert [m["content"] for m in current_cli["messages"]] == ["hello from the cli"]
    assert S.current(env.layout, env.store, "whatsapp:5511999999999") is None
    listed = S.list_sessions(env.layout, env.store, channel="cli")
    assert [r.id for r in listed] == [cli_new, cli_old]
    S.pause(env.layout, env.store, env.config, cli_new, now=env.now())
    current_cli = S.current(env.layout, env.store, "cli")
    assert current_cli is not None and current_cli["id"] == cli_old  # paused is not current


@pytest.mark.parametrize("channel", ["", "   ", "x" * 201, "bad\nchannel", 7])
def test_bad_channel(env: Env, channel: Any) -> None:
    with pytest.raises(InputError):
        S.start(env.layout, env.store, env.config, now=T0, channel=channel)


def test_unknown_session(env: Env) -> None:
    with pytest.raises(NotFoundError):
        env.get("ses_NOPE")
    with pytest.raises(NotFoundError):
        env.log("ses_NOPE", "hi")
    with pytest.raises(UnsafePathError):
        env.log("../../etc", "hi")


# -- messages, window, markers -----------------------------------------------------------------
def test_window_is_the_last_n_in_order_and_exact(env: Env) -> None:
    sid = env.start()
    texts = [f"message {i}\n  with  spacing\t{i}" for i in range(40)]
    for i, text in enumerate(texts):
        env.log(sid, text, "user" if i % 2 == 0 else "assistant")
    window = S.window(env.layout, env.store, env.config, sid)
    assert [m["content"] for m in window] == texts[-15:]  # default contextWindow
    assert [m["content"] for m in S.window(env.layout, env.store, env.config, sid, 3)] == texts[-3:]
    assert S.window(env.layout, env.store, env.config, sid, 0) == []
    assert len(S.window(env.layout, env.store, env.config, sid, 1000)) == 40


def test_window_size_from_config(tmp_path: Path) -> None:
    env = Env(tmp_path, cfg(contextWindow=4))
    sid = env.start()
    for i in range(10):
        env.log(sid, f"m{i}")
    assert [m["content"] for m in S.window(env.layout, env.store, env.config, sid)] == [
        "m6",
        "m7",
        "m8",
        "m9",
    ]


def test_append_returns_memorize_markers_from_assistant_output(env: Env) -> None:
    sid = env.start()
    said = env.log(
        sid,
        "Listo. [MEMORIZE: the user deploys on Fridays] y [MEMORIZAR: prefiere reportes cortos]",
        "assistant",
    )
    assert said.memorize == ["the user deploys on Fridays", "prefiere reportes cortos"]
    assert env.log(sid, "[MEMORIZE: not from the user]", "user").memorize == []
    assert said.message["role"] == "assistant"


def test_private_text_never_reaches_the_file(env: Env) -> None:
    sid = env.start()
    said = env.log(
        sid,
        "ok <private>hunter2 canary-7731</private> [MEMORIZE: <private>canary-7731</private>]"
        " [MEMORIZE: the key is <private>canary-7731</private> in the vault]",
        "assistant",
    )
    assert "canary-7731" not in env.raw(sid).decode()
    assert said.memorize == ["the key is [REDACTED] in the vault"]


def test_bad_message_input(env: Env) -> None:
    sid = env.start()
    with pytest.raises(InputError, match="unknown role"):
        env.log(sid, "hi", "robot")
    with pytest.raises(InputError, match="limit"):
        env.log(sid, "x" * 50_001)
    with pytest.raises(InputError):
        S.append_message(
            env.layout,
            env.store,
            env.config,
            sid,
            "tool",
            "ran",
            now=T0,
            tool_results=[{"name": "bash"}],
        )
    said = S.append_message(
        env.layout,
        env.store,
        env.config,
        sid,
        "tool",
        "ran",
        now=T0,
        tool_results=[{"name": "bash", "output": "ok"}],
    )
    assert said.message["tool_results"] == [{"name": "bash", "output": "ok"}]


def test_recording_never_summarises_but_queues(tmp_path: Path) -> None:
    env = Env(tmp_path, cfg(contextWindow=3))
    sid = env.start()
    outcomes = [env.log(sid, f"m{i}").summary_queued for i in range(5)]
    assert outcomes == [False, False, False, True, True]
    session = env.get(sid)
    assert session["rolling_summary"]["message_count"] == 0
    assert S.queued(env.layout, env.store) == [sid]
    assert S.list_sessions(env.layout, env.store)[0].summary_pending


def test_gap_days_on_append(env: Env) -> None:
    sid = env.start()
    S.append_message(env.layout, env.store, env.config, sid, "user", "a", now=T0)
    later = S.append_message(
        env.layout, env.store, env.config, sid, "user", "b", now=T0 + timedelta(hours=25)
    )
    assert later.previous_at == "2024-01-20T15:00:00Z"
    assert later.gap_days() == 1


# -- temporal through the session --------------------------------------------------------------
@pytest.mark.parametrize(("hours", "notice"), [(23, None), (25, 1)])
def test_temporal_gap_23h_vs_25h(tmp_path: Path, hours: int, notice: int | None) -> None:
    env = Env(tmp_path, cfg(timezone="America/Sao_Paulo"))
    sid = env.start()
    S.append_message(env.layout, env.store, env.config, sid, "user", "hola", now=T0)
    ctx = S.temporal_context(
        env.layout, env.store, env.config, sid, now=T0 + timedelta(hours=hours)
    )
    assert ctx.gap_days == notice
    assert ctx.timezone == "America/Sao_Paulo"
    assert ("Notice: 1 day has passed since the last message." in ctx.text()) == bool(notice)


def test_temporal_default_is_the_system_zone(env: Env, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "Asia/Tokyo")
    ctx = S.temporal_context(env.layout, env.store, env.config, None, now=T0)
    assert ctx.timezone == "Asia/Tokyo"
    assert ctx.local_time.hour == 0  # 15:00 UTC is midnight in Tokyo


# -- the summary boundary ----------------------------------------------------------------------
def test_summary_boundary_nothing_twice_nothing_skipped(tmp_path: Path) -> None:
    env = Env(tmp_path, cfg(contextWindow=3, maxConversationLength=1000))
    sid = env.start()
    rec = Recorder()
    ids = [env.log(sid, f"m{i}").message["id"] for i in range(10)]
    assert env.drain(rec)[0].summarized == 7
    rolling = env.get(sid)["rolling_summary"]
    assert rolling["last_summarized_msg_id"] == ids[6]
    assert rolling["message_count"] == 7
    assert S.queued(env.layout, env.store) == []
    # one more message passes the window again: queued at once, summarised only on a drain
    ids += [env.log(sid, "m10").message["id"]]
    assert S.queued(env.layout, env.store) == [sid]
    assert env.get(sid)["rolling_summary"] == rolling
    ids += [env.log(sid, f"m{i}").message["id"] for i in range(11, 16)]
    assert env.drain(rec)[0].summarized == 6
    rolling = env.get(sid)["rolling_summary"]
    assert rolling["last_summarized_msg_id"] == ids[12]
    assert rolling["message_count"] == 13
    assert rec.batches == [ids[:7], ids[7:13]]
    assert rolling["summary"] == "+7+6"
    assert rolling["key_facts"] == [f"batch {ids[0]}", f"batch {ids[7]}"]
    # a drain with nothing due changes nothing
    before = env.raw(sid)
    assert env.drain(rec) == []
    assert (
        S.summarize_session(env.layout, env.store, env.config, rec, sid, now=env.now()).status
        == "nothing"
    )
    assert env.raw(sid) == before


def test_min_batch_waits_for_enough_messages(tmp_path: Path) -> None:
    env = Env(tmp_path, cfg(contextWindow=2))
    sid = env.start()
    for i in range(5):
        env.log(sid, f"m{i}")
    rec = Recorder()
    drain = S.drain_summary_queue
    assert drain(env.layout, env.store, env.config, rec, T0, min_batch=4)[0].status == "waiting"
    assert rec.batches == [] and S.queued(env.layout, env.store) == [sid]
    env.log(sid, "m5")
    assert drain(env.layout, env.store, env.config, rec, T0, min_batch=4)[0].summarized == 4
    assert S.queued(env.layout, env.store) == []


def test_large_backlog_is_summarised_in_batches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(S, "SUMMARY_BATCH", 4)
    env = Env(tmp_path, cfg(contextWindow=2, maxConversationLength=5))
    sid = env.start()
    ids = [env.log(sid, f"m{i}").message["id"] for i in range(13)]
    rec = Recorder()
    outcome = env.drain(rec)[0]
    assert rec.batches == [ids[0:4], ids[4:8], ids[8:11]]
    assert outcome.summarized == 11
    # each batch moves what is summarised while the live list is over the maximum (5)
    assert outcome.archived == 8
    session = env.get(sid)
    assert [m["id"] for m in session["messages"]] == ids[8:]
    assert session["archived_count"] == 8
    assert [p.name for _s, p in S.chunk_paths(env.layout, env.store, sid)] == [
        f"{sid}.00000000.json",
        f"{sid}.00000004.json",
    ]
    assert [m["id"] for m in S.history(env.layout, env.store, sid)] == ids


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
    old_batch = S.SUMMARY_BATCH
    S.SUMMARY_BATCH = batch
    try:
        env = Env(
            tmp_path_factory.mktemp("life"),
            cfg(contextWindow=window, maxConversationLength=max_len),
        )
        sid = env.start()
        rec = Recorder()
        logged: list[str] = []
        for op in ops:
            if op == 0:
                env.drain(rec)
            else:
                logged += [env.log(sid, f"m{len(logged)}").message["id"] for _ in range(op)]
        session = env.get(sid)
        history = [m["id"] for m in S.history(env.layout, env.store, sid)]
        summarised = [i for b in rec.batches for i in b]
        count = session["rolling_summary"]["message_count"]
        assert history == logged  # nothing lost, nothing duplicated, in order
        assert summarised == logged[:count]  # a prefix, each message exactly once
        assert session["rolling_summary"]["last_summarized_msg_id"] == (
            logged[count - 1] if count else None
        )
        assert session["archived_count"] <= count  # only summarised messages are archived
        for n in (1, window, len(logged) + 3):
            got = S.window(env.layout, env.store, env.config, sid, n)
            assert [m["id"] for m in got] == logged[-n:]
        if rec.batches and ops[-1] == 0 and window <= max_len:
            assert len(session["messages"]) <= max(max_len, window)
    finally:
        S.SUMMARY_BATCH = old_batch


def test_max_conversation_length_moves_summarised_messages_to_the_archive(tmp_path: Path) -> None:
    env = Env(tmp_path, cfg(contextWindow=5, maxConversationLength=20))
    sid = env.start()
    ids = [env.log(sid, f"m{i}").message["id"] for i in range(25)]
    # not summarised yet: nothing may move, even past the maximum
    assert len(env.get(sid)["messages"]) == 25
    outcome = env.drain()[0]
    assert (outcome.summarized, outcome.archived) == (20, 20)
    session = env.get(sid)
    assert [m["id"] for m in session["messages"]] == ids[20:]
    chunk = json.loads(S.chunk_path(env.layout, sid, 0).read_text())
    assert [m["id"] for m in chunk["messages"]] == ids[:20]
    assert [m["id"] for m in S.history(env.layout, env.store, sid)] == ids
    assert [m["id"] for m in S.window(env.layout, env.store, env.config, sid, 7)] == ids[-7:]
    assert S.list_sessions(env.layout, env.store)[0].message_count == 25


def test_leftover_chunk_from_an_interrupted_move_is_ignored(tmp_path: Path) -> None:
    env = Env(tmp_path, cfg(contextWindow=2, maxConversationLength=3))
    sid = env.start()
    ids = [env.log(sid, f"m{i}").message["id"] for i in range(4)]
    # a crash after writing the chunk but before the session: the chunk is ahead of the count
    env.store.write_json(
        S.chunk_path(env.layout, sid, 0),
        {"session_id": sid, "start": 0, "messages": env.get(sid)["messages"][:2]},
    )
    assert [m["id"] for m in S.history(env.layout, env.store, sid)] == ids
    env.drain()
    assert [m["id"] for m in S.history(env.layout, env.store, sid)] == ids
    assert env.get(sid)["archived_count"] == 2


def test_failing_summariser_leaves_the_session_unchanged(tmp_path: Path) -> None:
    env = Env(tmp_path, cfg(contextWindow=2))
    sid = env.start()
    for i in range(6):
        env.log(sid, f"m{i}")
    before = env.raw(sid)
    failing = summarize.CommandSummarizer(shlex.quote(str(FIXTURES / "fail.sh")), timeout=10)
    [outcome] = env.drain(failing)
    assert outcome.status == "failed"
    assert outcome.error is not None and "exited with status 3" in outcome.error
    assert env.raw(sid) == before
    entry = json.loads(S.queue_path(env.layout, sid).read_text())
    assert entry["attempts"] == 1
    assert "model not available" in entry["last_error"]
    hanging = summarize.CommandSummarizer(shlex.quote(str(FIXTURES / "hang.sh")), timeout=0.3)
    [outcome] = env.drain(hanging)
    assert outcome.status == "failed" and "timed out" in str(outcome.error)
    assert env.raw(sid) == before
    # a working command then does the job
    good = f"{shlex.quote(sys.executable)} {shlex.quote(str(FIXTURES / 'good.py'))}"
    [outcome] = env.drain(summarize.CommandSummarizer(good, timeout=30))
    assert outcome.status == "done" and outcome.summarized == 4
    assert env.get(sid)["rolling_summary"]["summary"] == "LLM summary of 4 messages"
    assert S.queued(env.layout, env.store) == []


def test_paused_sessions_are_not_summarised_until_resumed(tmp_path: Path) -> None:
    env = Env(tmp_path, cfg(contextWindow=2))
    sid = env.start()
    for i in range(5):
        env.log(sid, f"m{i}")
    S.pause(env.layout, env.store, env.config, sid, now=env.now())
    assert env.drain()[0].status == "skipped"
    assert S.queued(env.layout, env.store) == [sid]
    S.resume(env.layout, env.store, env.config, sid, now=env.now())
    assert env.drain()[0].summarized == 3


def test_hand_edit_that_loses_the_boundary_is_reported(tmp_path: Path) -> None:
    env = Env(tmp_path, cfg(contextWindow=2, maxConversationLength=100))
    sid = env.start()
    for i in range(6):
        env.log(sid, f"m{i}")
    env.drain()
    session = env.get(sid)
    session["messages"] = session["messages"][4:]  # someone removed the summarised ones
    env.store.write_json(env.layout.session_path(sid), session)
    env.log(sid, "m6")
    env.log(sid, "m7")
    with pytest.raises(ConflictError, match="not in the session"):
        env.drain()


# -- decisions, files, steps, context ----------------------------------------------------------
def test_decisions_past_the_maximum_fold_into_key_facts(tmp_path: Path) -> None:
    env = Env(tmp_path, cfg(maxDecisions=2))
    sid = env.start()
    for i in range(4):
        S.record_decision(
            env.layout,
            env.store,
            env.config,
            sid,
            f"q{i}?",
            f"d{i}",
            reasoning="because" if i == 0 else "",
            alternatives=["a", "b"],
            now=env.now(),
        )
    session = env.get(sid)
    assert [d["decision"] for d in session["decisions"]] == ["d2", "d3"]
    assert session["rolling_summary"]["key_facts"] == [
        "Decision: q0? -> d0 (because)",
        "Decision: q1? -> d1",
    ]
    assert session["decisions"][0]["alternatives"] == ["a", "b"]
    assert session["decisions"][0]["id"].startswith("dec_")


def test_key_facts_keep_the_newest(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(S, "MAX_KEY_FACTS", 3)
    env = Env(tmp_path, cfg(maxDecisions=1, contextWindow=1))
    sid = env.start()
    for i in range(5):
        S.record_decision(env.layout, env.store, env.config, sid, f"q{i}", f"d{i}", now=T0)
    assert env.get(sid)["rolling_summary"]["key_facts"] == [
        "Decision: q1 -> d1",
        "Decision: q2 -> d2",
        "Decision: q3 -> d3",
    ]
    env.log(sid, "The server runs on 10.0.0.1.")
    env.log(sid, "ok")
    env.drain()
    assert env.get(sid)["rolling_summary"]["key_facts"] == [
        "Decision: q2 -> d2",
        "Decision: q3 -> d3",
        "The server runs on 10.0.0.1.",
    ]


def test_file_access(env: Env) -> None:
    sid = env.start()
    root = env.layout.repo_root
    rec = S.record_file_access(
        env.layout, env.store, env.config, sid, "src/app/layout.tsx", "read", now=T0
    )
    assert rec == {"path": "src/app/layout.tsx", "action": "read", "at": "2024-01-20T15:00:00Z"}
    absolute = str(root / "src" / "./auth" / "route.ts")
    rec = S.record_file_access(env.layout, env.store, env.config, sid, absolute, "created", now=T0)
    assert rec["path"] == "src/auth/route.ts"
    with pytest.raises(UnsafePathError):
        S.record_file_access(env.layout, env.store, env.config, sid, "../x", "read", now=T0)
    with pytest.raises(UnsafePathError):
        S.record_file_access(env.layout, env.store, env.config, sid, "/etc/passwd", "read", now=T0)
    with pytest.raises(InputError, match="unknown file action"):
        S.record_file_access(env.layout, env.store, env.config, sid, "a.py", "renamed", now=T0)
    assert [f["path"] for f in env.get(sid)["files_accessed"]] == [
        "src/app/layout.tsx",
        "src/auth/route.ts",
    ]


def test_steps_keep_at_most_200_characters(env: Env) -> None:
    sid = env.start()
    short = S.add_step(env.layout, env.store, env.config, sid, "read config", "ok", now=T0)
    long = S.add_step(env.layout, env.store, env.config, sid, "ran tests", "y" * 1000, now=T0)
    exact = S.add_step(env.layout, env.store, env.config, sid, "ran lint", "z" * 200, now=T0)
    assert short["result"] == "ok"
    assert len(long["result"]) == 200 and long["result"].endswith("…")
    assert exact["result"] == "z" * 200
    assert len(env.get(sid)["steps"]) == 3


def test_current_context_and_rename(env: Env) -> None:
    sid = env.start()
    got = S.set_context(
        env.layout,
        env.store,
        env.config,
        sid,
        {"active_task": "Implementar login", "active_phase": "implementation"},
        now=T0,
    )
    assert got == {
        "active_task": "Implementar login",
        "active_phase": "implementation",
        "focus_area": None,
    }
    got = S.set_context(env.layout, env.store, env.config, sid, {"active_phase": None}, now=T0)
    assert got["active_phase"] is None and got["active_task"] == "Implementar login"
    with pytest.raises(InputError, match="unknown context"):
        S.set_context(env.layout, env.store, env.config, sid, {"mood": "x"}, now=T0)
    S.rename(env.layout, env.store, env.config, sid, "auth work", now=T0)
    assert env.get(sid)["name"] == "auth work"
    assert S.list_sessions(env.layout, env.store)[0].name == "auth work"


def test_context_for_agents(tmp_path: Path) -> None:
    env = Env(tmp_path, cfg(contextWindow=2))
    sid = env.start()
    for text in ["The server runs on 10.0.0.5.", "ok", "fine", "now what"]:
        env.log(sid, text)
    env.drain()
    ctx = S.context(env.layout, env.store, env.config, sid, now=env.now())
    assert [m["content"] for m in ctx["window"]] == ["fine", "now what"]
    assert "The server runs on 10.0.0.5." in ctx["conversation_context"]
    assert ctx["session"]["id"] == sid
    assert ctx["not_yet_summarized"] == 0
    assert "Current date & time" in ctx["temporal"]["text"]


# -- pause, resume, checkpoint -----------------------------------------------------------------
def busy_session(env: Env) -> str:
    sid = env.start()
    for i in range(5):
        env.log(sid, f"m{i}")
    S.record_decision(env.layout, env.store, env.config, sid, "q?", "d", now=env.now())
    S.record_file_access(env.layout, env.store, env.config, sid, "a.py", "modified", now=env.now())
    S.add_step(env.layout, env.store, env.config, sid, "step", "done", now=env.now())
    S.set_context(env.layout, env.store, env.config, sid, {"focus_area": "auth"}, now=env.now())
    return sid


def state(session: dict[str, Any]) -> dict[str, Any]:
    return {k: session[k] for k in S.CHECKPOINT_KEYS}


def test_checkpoint_restore_equality(env: Env) -> None:
    sid = busy_session(env)
    before = state(env.get(sid))
    paused = S.pause(env.layout, env.store, env.config, sid, now=env.now())
    assert paused["status"] == "paused"
    assert state(paused["checkpoint"]) == before
    with pytest.raises(InputError, match="paused"):
        env.log(sid, "while paused")
    # the live state is damaged while paused (a hand edit, a bad merge)
    damaged = env.get(sid)
    damaged["messages"] = damaged["messages"][:1]
    damaged["current_context"]["focus_area"] = "something else"
    damaged["decisions"] = []
    env.store.write_json(env.layout.session_path(sid), damaged)
    resumed = S.resume(env.layout, env.store, env.config, sid, now=env.now())
    assert state(resumed) == before
    assert resumed["status"] == "active" and resumed["checkpoint"] is None
    assert state(env.get(sid)) == before


def test_without_persist_on_pause_no_checkpoint(tmp_path: Path) -> None:
    env = Env(tmp_path, cfg(persistOnPause=False))
    sid = busy_session(env)
    before = state(env.get(sid))
    assert S.pause(env.layout, env.store, env.config, sid, now=env.now())["checkpoint"] is None
    assert state(S.resume(env.layout, env.store, env.config, sid, now=env.now())) == before


def test_snapshot_and_restore(env: Env) -> None:
    sid = busy_session(env)
    saved = S.snapshot(env.get(sid), env.now())
    env.log(sid, "after the snapshot")
    S.restore(env.layout, env.store, env.config, sid, saved, now=env.now())
    assert state(env.get(sid)) == {k: saved[k] for k in S.CHECKPOINT_KEYS}
    with pytest.raises(InputError, match="checkpoint needs"):
        S.restore(env.layout, env.store, env.config, sid, {"goal": "x"}, now=env.now())
    bad = dict(saved, messages=[{"id": "nope"}])
    with pytest.raises(SchemaError):
        S.restore(env.layout, env.store, env.config, sid, bad, now=env.now())
    stale = dict(saved, archived_count=3)
    with pytest.raises(ConflictError, match="archive"):
        S.restore(env.layout, env.store, env.config, sid, stale, now=env.now())


# -- end ---------------------------------------------------------------------------------------
def test_end_writes_the_seed_003_summary(env: Env) -> None:
    sid = busy_session(env)
    env.log(sid, "I prefer small commits. Next we need to add tests.")
    ended = S.end(
        env.layout, env.store, env.config, sid, summarize.ExtractiveSummarizer(), now=env.now()
    )
    assert ended["status"] == "ended"
    assert ended["ended_at"] is not None
    summary = ended["end_summary"]
    assert summary["goal"] == "add auth"
    assert "I prefer small commits." in summary["instructions"]
    assert "Next we need to add tests." in summary["next_steps"]
    assert "Decided: d (q?)" in summary["accomplished"]
    assert summary["relevant_files"] == ["a.py"]
    assert env.get(sid) == ended
    with pytest.raises(InputError, match="ended"):
        env.log(sid, "too late")
    with pytest.raises(InputError, match="ended"):
        S.end(env.layout, env.store, env.config, sid, summarize.ExtractiveSummarizer(), now=T0)


def test_end_with_a_failing_summariser_changes_nothing(env: Env) -> None:
    sid = busy_session(env)
    before = env.raw(sid)
    failing = summarize.CommandSummarizer(shlex.quote(str(FIXTURES / "fail.sh")), timeout=10)
    with pytest.raises(ExternalCommandError):
        S.end(env.layout, env.store, env.config, sid, failing, now=env.now())
    assert env.raw(sid) == before
    assert env.get(sid)["status"] == "active"


def test_end_only_gets_messages_not_in_the_rolling_summary(tmp_path: Path) -> None:
    env = Env(tmp_path, cfg(contextWindow=2))
    sid = env.start()
    for i in range(7):
        env.log(sid, f"m{i}")
    env.drain()
    ended = S.end(env.layout, env.store, env.config, sid, Recorder(), now=env.now())
    assert ended["end_summary"]["goal"] == "ended with 2 unsummarised"


# -- delete ------------------------------------------------------------------------------------
def test_delete_cascades(tmp_path: Path) -> None:
    env = Env(tmp_path, cfg(contextWindow=2, maxConversationLength=3))
    keep = env.start("discord:1")
    env.log(keep, "stay")
    sid = env.start()
    ids = [env.log(sid, f"m{i}").message["id"] for i in range(8)]
    env.drain()
    env.log(sid, "m8")
    env.log(sid, "m9")  # queued again
    ids += [m["id"] for m in env.get(sid)["messages"][-2:]]
    assert any(sid in f for f in env.files() if f.startswith("archive/"))
    assert S.queue_path(env.layout, sid).exists()
    before_keep = env.raw(keep)
    deleted = S.delete(env.layout, env.store, sid)
    assert not [f for f in env.files() if sid in f]
    assert sorted(deleted.message_ids) == sorted(ids)
    assert any("archive/" in p for p in deleted.paths)
    assert any("queue/" in p for p in deleted.paths)
    assert env.raw(keep) == before_keep
    assert [r.id for r in S.list_sessions(env.layout, env.store)] == [keep]
    with pytest.raises(NotFoundError):
        S.delete(env.layout, env.store, sid)
    with pytest.raises(NotFoundError):
        env.get(sid)


def test_drain_drops_the_marker_of_a_deleted_session(env: Env) -> None:
    env.store.write_json(S.queue_path(env.layout, "ses_GONE"), {"session_id": "ses_GONE"})
    assert env.drain()[0].status == "gone"
    assert S.queued(env.layout, env.store) == []


# -- real parallel writers ---------------------------------------------------------------------
def _writer(root: str, config: dict[str, Any], sid: str, worker: int, count: int, go: Any) -> None:
    layout = Layout.for_repo(Path(root))
    store = Store(layout, lock_timeout=300)  # this test is about lost writes, not lock fairness
    go.wait()
    for i in range(count):
        now = datetime.now(UTC)
        S.append_message(layout, store, config, sid, "user", f"w{worker}-{i}", now=now)


def _drainer(root: str, config: dict[str, Any], go: Any, stop: Any) -> None:
    layout = Layout.for_repo(Path(root))
    store = Store(layout, lock_timeout=300)
    go.wait()
    while not stop.is_set():
        S.drain_summary_queue(
            layout, store, config, summarize.ExtractiveSummarizer(), datetime.now(UTC)
        )


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


def _check_all_logged(env: Env, sid: str, workers: int, count: int) -> list[dict[str, Any]]:
    history = S.history(env.layout, env.store, sid)
    contents = [m["content"] for m in history]
    assert len(contents) == workers * count
    assert len({m["id"] for m in history}) == workers * count
    for w in range(workers):  # each writer's messages in its own order
        mine = [c for c in contents if c.startswith(f"w{w}-")]
        assert mine == [f"w{w}-{i}" for i in range(count)]
    return history


def test_ten_processes_logging_100_messages_each_lose_none(env: Env) -> None:
    sid = env.start()
    _run_writers(env.layout.repo_root, sid, 10, 100, None)
    _check_all_logged(env, sid, 10, 100)
    assert not list(env.layout.short_term.rglob("*.pm-tmp"))


def test_parallel_writers_with_a_concurrent_summariser(tmp_path: Path) -> None:
    config = cfg(contextWindow=5, maxConversationLength=20)
    env = Env(tmp_path, config)
    sid = env.start()
    _run_writers(tmp_path, sid, 4, 50, config)
    history = _check_all_logged(env, sid, 4, 50)
    env.drain()
    session = env.get(sid)
    rolling = session["rolling_summary"]
    assert rolling["message_count"] == 200 - 5
    assert rolling["last_summarized_msg_id"] == history[-6]["id"]
    assert len(session["messages"]) <= 20
