"""Timeline: chronological neighbours of a message, a decision or a record."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from planning_memory.core.layout import Layout
from planning_memory.core.model import new_long_term
from planning_memory.errors import NotFoundError
from planning_memory.search.chronology import timeline
from planning_memory.store import Store

T0 = datetime(2026, 1, 10, 12, 0, tzinfo=UTC)


@pytest.fixture
def mem(tmp_path: Path) -> tuple[Layout, Store]:
    layout = Layout.for_repo(tmp_path)
    store = Store(layout)
    for i in range(8):
        rid = f"pat_{i}"
        rec = new_long_term("pattern", rid, T0 + timedelta(minutes=i), title=f"pattern {i}")
        store.write_json(layout.record_path("pattern", rid), rec)
    store.write_json(
        layout.record_path("pattern", "pat_gone"),
        new_long_term("pattern", "pat_gone", T0, title="gone", deleted_at="2026-01-11T00:00:00Z"),
    )
    for sid, count in (("ses_a", 6), ("ses_b", 3)):
        store.write_json(
            layout.session_path(sid),
            {
                "id": sid,
                "messages": [
                    {
                        "id": f"msg_{sid[-1]}{i}",
                        "role": "user",
                        "content": f"{sid} m{i}",
                        "at": f"2026-01-10T10:0{i}:00Z",
                        "tool_results": [],
                    }
                    for i in range(count)
                ],
                "decisions": [
                    {
                        "id": f"dec_{sid[-1]}",
                        "question": "q",
                        "decision": "d",
                        "reasoning": "",
                        "alternatives": [],
                        "decided_at": "2026-01-10T10:02:30Z",
                    }
                ],
            },
        )
    return layout, store


def test_message_neighbours_stay_in_the_session(mem: tuple[Layout, Store]) -> None:
    layout, store = mem
    got = timeline(layout, store, "msg_a3", before=2, after=2)
    assert [e.id for e in got] == ["msg_a2", "dec_a", "msg_a3", "msg_a4", "msg_a5"]
    assert [e.anchor for e in got] == [False, False, True, False, False]
    assert {e.session_id for e in got} == {"ses_a"}


def test_decision_neighbours(mem: tuple[Layout, Store]) -> None:
    layout, store = mem
    got = timeline(layout, store, "dec_b", before=1, after=5)
    assert [e.id for e in got] == ["msg_b2", "dec_b"]


def test_record_neighbours_by_creation_time(mem: tuple[Layout, Store]) -> None:
    layout, store = mem
    got = timeline(layout, store, "pat_4", before=2, after=1)
    assert [e.id for e in got] == ["pat_2", "pat_3", "pat_4", "pat_5"]
    assert [e.id for e in timeline(layout, store, "pat_0", before=3, after=0)] == ["pat_0"]


def test_unknown_and_deleted_ids(mem: tuple[Layout, Store]) -> None:
    layout, store = mem
    for bad in ("pat_nope", "msg_nope", "pat_gone"):
        with pytest.raises(NotFoundError):
            timeline(layout, store, bad)


class _Ticking:
    """A clock one minute later at each call."""

    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> datetime:
        self.now += timedelta(minutes=1)
        return self.now


def test_seed003_timeline_neighbours_within_the_same_session(tmp_path: Path) -> None:
    from planning_memory.memory import Memory

    Memory.init(tmp_path)
    mem = Memory(tmp_path, clock=_Ticking())
    outside = mem.save("Saved from the CLI", "discovery").record["id"]
    sid = str(mem.sessions.start(goal="payments")["id"])
    other = str(mem.sessions.start(channel="claude-code")["id"])
    asked = mem.log("Why do webhooks retry forever?", session_id=sid).message["id"]
    mem.save("Noise from another session", "discovery", source=f"session:{other}")
    error = mem.record_error("pytest: test_retry failed", session_id=sid)["id"]
    saved = mem.save(
        "Webhook retries are capped at 5", "bugfix", source=f"session:{sid}", topic_key="pay/retry"
    ).record["id"]
    decided = mem.record_decision("Retry cap?", "5", session_id=sid)["id"]
    mem.log("Capped at five.", role="assistant", session_id=sid)
    later = mem.save("After the session's work", "discovery").record["id"]

    got = mem.timeline(saved, before=3, after=3)
    assert [e.id for e in got][:5] == [asked, error, saved, decided, got[4].id]
    assert [e.kind for e in got] == ["message", "error", "bugfix", "decision", "message"]
    assert [e.anchor for e in got] == [False, False, True, False, False]
    assert {e.session_id for e in got} == {sid}  # nothing of the other session, nor the CLI's

    around_message = mem.timeline(asked, before=0, after=2)
    assert [e.id for e in around_message] == [asked, error, saved]

    plain = mem.timeline(later, before=10, after=0)  # saved outside a session: by creation time
    assert plain[0].id == outside and plain[-1].id == later and saved in [e.id for e in plain]

    # the topic updated by another session moves the memory into that session's timeline
    moved = mem.save(
        "Retries capped at 3", "bugfix", topic_key="pay/retry", source=f"session:{other}"
    )
    assert moved.record["id"] == saved
    assert {e.session_id for e in mem.timeline(saved)} == {other}
