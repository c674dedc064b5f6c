"""The summary queue's batching: a drain with ``min_batch`` waits for enough messages unless
the session is idle, so that the summariser sees whole stretches of talk; nothing is lost."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from clocks import Clock

from planning_memory.core.layout import Layout
from planning_memory.sessions import Sessions, rolling
from planning_memory.store import Store

T0 = datetime(2024, 1, 20, 15, 0, 0, tzinfo=UTC)
IDLE = timedelta(minutes=5)


def make(root: Path) -> tuple[Sessions, Clock]:
    layout = Layout.for_repo(root)
    clock = Clock(T0)
    config = {"memory": {"shortTerm": {"contextWindow": 3}}}
    return Sessions(layout, Store(layout), config, clock=clock), clock


def drain(ses: Sessions, clock: Clock) -> list[rolling.SummaryOutcome]:
    """What a daemon would run: wait for 10 messages, or 5 minutes of quiet."""
    return rolling.drain(ses, ses.settings, ses.extractive, now=clock.now, min_batch=10, idle=IDLE)


def say(ses: Sessions, clock: Clock, sid: str, n: int) -> None:
    for i in range(n):
        clock.now += timedelta(seconds=20)
        ses.append(sid, "user" if i % 2 else "assistant", f"Set port {8000 + i} for worker_{i}.")


def test_a_busy_session_waits_for_a_batch(tmp_path: Path) -> None:
    ses, clock = make(tmp_path)
    sid = str(ses.start("ship it")["id"])
    say(ses, clock, sid, 8)  # 5 messages older than the window of 3
    before = ses.get(sid)
    [outcome] = drain(ses, clock)
    assert (outcome.status, outcome.summarized) == ("waiting", 0)
    assert ses.get(sid) == before and ses.queued() == [sid]
    say(ses, clock, sid, 5)  # 10 due: one batch of 10
    [outcome] = drain(ses, clock)
    assert (outcome.status, outcome.summarized) == ("done", 10)
    assert ses.get(sid)["rolling_summary"]["message_count"] == 10
    assert ses.queued() == []


def test_an_idle_session_is_summarised_with_what_it_has(tmp_path: Path) -> None:
    ses, clock = make(tmp_path)
    sid = str(ses.start("ship it")["id"])
    say(ses, clock, sid, 6)
    clock.now += IDLE - timedelta(seconds=1)
    assert drain(ses, clock)[0].status == "waiting"
    clock.now += timedelta(seconds=1)  # quiet for exactly IDLE
    [outcome] = drain(ses, clock)
    assert (outcome.status, outcome.summarized) == ("done", 3)


def test_waiting_loses_nothing(tmp_path: Path) -> None:
    ses, clock = make(tmp_path)
    sid = str(ses.start("ship it")["id"])
    say(ses, clock, sid, 8)
    drain(ses, clock)
    assert len(ses.history(sid)) == 8
    ended = ses.end(sid)  # the end summary reads the messages not yet summarised
    assert any("port 8000" in d for d in ended["end_summary"]["discoveries"])


def test_without_idle_min_batch_waits_as_before(tmp_path: Path) -> None:
    ses, clock = make(tmp_path)
    sid = str(ses.start("ship it")["id"])
    say(ses, clock, sid, 6)
    clock.now += timedelta(days=1)
    outcome = rolling.drain(ses, ses.settings, ses.extractive, now=clock.now, min_batch=10)
    assert outcome[0].status == "waiting"
