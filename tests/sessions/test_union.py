"""Two copies of one session made one (``sessions.union``): properties over random histories.

A history is a run of recordings (messages, decisions, steps, file accesses, errors, a
resolution) on one session, each a second after the one before. An earlier copy is the state
after some of them; two copies diverge when each continues a common prefix on its own.
"""

from __future__ import annotations

import copy
from datetime import UTC, datetime, timedelta
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from planning_memory.core import schema, timestamp
from planning_memory.sessions import new_session
from planning_memory.sessions.union import union

T0 = datetime(2024, 1, 20, 15, 0, 0, tzinfo=UTC)
KINDS = ("message", "decision", "step", "file", "error", "resolve")


class History:
    """Recordings applied to a session value as the sessions part would write them."""

    def __init__(self, tag: str, session: dict[str, Any] | None = None, tick: int = 0) -> None:
        self.tag = tag
        self.session = session or new_session("ses_0ABC", "cli", "goal", None, T0)
        self.tick = tick

    def fork(self, tag: str) -> History:
        return History(tag, copy.deepcopy(self.session), self.tick)

    def record(self, kind: str) -> None:
        self.tick += 1
        at = timestamp(T0 + timedelta(seconds=self.tick))
        s, n = self.session, f"{self.tag}{self.tick:05d}"
        if kind == "message":
            s["messages"].append(
                {"id": f"msg_{n}", "role": "user", "content": n, "at": at, "tool_results": []}
            )
        elif kind == "decision":
            s["decisions"].append(
                {
                    "id": f"dec_{n}",
                    "question": f"q {n}",
                    "decision": "d",
                    "reasoning": "",
                    "alternatives": [],
                    "decided_at": at,
                }
            )
        elif kind == "step":
            s["steps"].append({"action": f"step {n}", "result": "", "at": at})
        elif kind == "file":
            s["files_accessed"].append({"path": f"src/{n}.py", "action": "read", "at": at})
        elif kind == "error":
            s["errors"].append(
                {"id": f"err_{n}", "error": n, "resolution": None, "at": at, "resolved_at": None}
            )
        else:
            open_ = [e for e in s["errors"] if e["resolution"] is None]
            if not open_:
                return
            open_[0].update(resolution="fixed", resolved_at=at)
        s["updated_at"] = at


runs = st.lists(st.sampled_from(KINDS), max_size=25)


def ids(session: dict[str, Any], key: str) -> set[str]:
    return {item["id"] for item in session[key]}


def entries(session: dict[str, Any], key: str) -> list[str]:
    return sorted(str(sorted(e.items())) for e in session[key])


@given(runs, runs)
def test_an_earlier_copy_adds_nothing_and_a_later_one_is_taken_whole(
    first: list[str], then: list[str]
) -> None:
    history = History("a")
    for kind in first:
        history.record(kind)
    earlier = copy.deepcopy(history.session)
    for kind in then:
        history.record(kind)
    later = history.session
    assert union(later, earlier) is later  # an older import: nothing changes
    assert union(earlier, later) == later  # a newer import: everything it adds
    assert union(later, later) is later


@given(runs, runs, runs)
def test_diverged_copies_keep_everything_of_both(
    shared: list[str], ours: list[str], theirs: list[str]
) -> None:
    common = History("a")
    for kind in shared:
        common.record(kind)
    mine, other = common.fork("b"), common.fork("c")
    for kind in ours:
        mine.record(kind)
    for kind in theirs:
        other.record(kind)
    merged = union(mine.session, other.session)
    schema.check("session", merged)
    for key in ("messages", "decisions", "errors"):
        assert ids(merged, key) == ids(mine.session, key) | ids(other.session, key)
        times = [(i.get("at") or i.get("decided_at"), i["id"]) for i in merged[key]]
        assert times == sorted(times)
    for key in ("steps", "files_accessed"):
        assert set(entries(merged, key)) == set(entries(mine.session, key)) | set(
            entries(other.session, key)
        )
    assert merged["updated_at"] == max(mine.session["updated_at"], other.session["updated_at"])
    assert union(merged, mine.session) is merged and union(merged, other.session) is merged


def test_the_summary_covering_more_messages_wins_with_its_boundary() -> None:
    history = History("a")
    for _ in range(6):
        history.record("message")
    earlier = copy.deepcopy(history.session)
    rolling = history.session["rolling_summary"]
    rolling.update(
        summary="the first four",
        key_facts=["fact"],
        last_summarized_msg_id=history.session["messages"][3]["id"],
        message_count=4,
    )
    later = history.session
    assert union(earlier, later)["rolling_summary"] == rolling
    assert union(later, earlier)["rolling_summary"] == rolling


def test_a_message_in_this_trees_archive_is_not_brought_back() -> None:
    history = History("a")
    for _ in range(5):
        history.record("message")
    exported = copy.deepcopy(history.session)  # whole: archive inlined, archived_count 0
    here = history.session
    moved = here["messages"][:3]
    here["messages"] = here["messages"][3:]
    here["archived_count"] = 3
    assert union(here, exported, {m["id"] for m in moved}) is here


def test_a_resolution_made_later_elsewhere_is_taken() -> None:
    history = History("a")
    history.record("error")
    open_copy = copy.deepcopy(history.session)
    history.record("resolve")
    merged = union(open_copy, history.session)
    assert merged["errors"][0]["resolution"] == "fixed"
    assert union(history.session, open_copy) is history.session
