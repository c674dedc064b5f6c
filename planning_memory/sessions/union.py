"""Two copies of one session made one: an export imported into a tree that has the session.

``union`` (pure) keeps everything either copy holds: messages, decisions and errors by id,
file accesses, steps and injections by value, each list in time order; the rolling summary
that covers more messages (with its ``last_summarized_msg_id``); the header (status, goal,
context, end summary, checkpoint) of the copy written last. What one copy lacks because it
moved it elsewhere stays there: a message in this tree's archive, a decision or error folded
into the key facts. So importing an older copy changes nothing, a newer one brings what it
adds, and a session never shrinks. ``absorb`` applies it to the session file under the lock;
``whole`` gives a session with its archived messages back in ``messages`` (what an export
writes, so that it carries the whole conversation).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

from planning_memory.core import Layout, codec, schema
from planning_memory.errors import NotFoundError, PlanningMemoryError
from planning_memory.sessions.applied import MAX_APPLIED
from planning_memory.sessions.failures import MAX_ERRORS, error_fact
from planning_memory.sessions.files import Session, SessionFiles, Settings
from planning_memory.sessions.log import MAX_INJECTED, decision_fact
from planning_memory.store import Store

Item = Mapping[str, Any]


def union(mine: Session, theirs: Session, archived: Collection[str] = frozenset()) -> Session:
    """``mine`` (the file here) and ``theirs`` (an imported copy) as one session; ``archived``:
    the ids of the messages this tree moved to its archive. ``mine`` itself when ``theirs``
    adds nothing."""
    if theirs == mine:
        return mine
    newer = theirs if _age(theirs) > _age(mine) else mine
    older = mine if newer is theirs else theirs
    out: Session = {**older, **newer}  # the header of the copy written last
    out["started_at"] = min(mine["started_at"], theirs["started_at"])
    if "archived_count" in out:  # the archive is this tree's: its chunks are here
        out["archived_count"] = int(mine.get("archived_count", 0))
    pair = _Pair(mine, theirs, newer)
    out["messages"] = pair.by_id("messages", "at", lambda m, ours: not ours and m["id"] in archived)
    known = {*archived, *(m["id"] for m in out["messages"])}
    out["rolling_summary"] = pair.summary(known)
    out["decisions"] = pair.by_id("decisions", "decided_at", pair.folded(decision_fact))
    for key in ("files_accessed", "steps"):
        out[key] = _by_value(mine[key], theirs[key])
    if "errors" in out:
        out["errors"] = pair.by_id("errors", "at", pair.folded(error_fact))
        _fold_errors(out)
    if "applied" in out:
        ids = [*(mine.get("applied") or ()), *(theirs.get("applied") or ())]
        out["applied"] = list(dict.fromkeys(ids))[-MAX_APPLIED:]
    if "injected" in out:
        both = _by_value(mine.get("injected") or [], theirs.get("injected") or [])
        out["injected"] = both[-MAX_INJECTED:]
    return mine if out == mine else out


def _age(session: Session) -> tuple[str, int]:
    """How far a copy got: when it was written last, then how many messages it holds."""
    return str(session["updated_at"]), int(session.get("archived_count", 0)) + len(
        session["messages"]
    )


class _Pair:
    """The two copies, and which was written last."""

    def __init__(self, mine: Session, theirs: Session, newer: Session) -> None:
        self.mine, self.theirs, self.newer = mine, theirs, newer

    def by_id(self, key: str, when: str, gone: Callable[[Item, bool], bool]) -> list[Any]:
        """``key``'s items of both copies by id, in time order (then id): of an item both
        have, the newer copy's version; an item only one copy has, unless ``gone(item, ours)``
        says the other copy moved it away (``ours``: the item is ``mine``'s)."""
        ours, other = self.mine.get(key) or [], self.theirs.get(key) or []
        theirs_by_id = {i["id"]: i for i in other}
        pick = self.newer is self.theirs
        kept = [
            theirs_by_id[i["id"]] if pick and i["id"] in theirs_by_id else i
            for i in ours
            if i["id"] in theirs_by_id or not gone(i, True)
        ]
        have = {i["id"] for i in ours}
        extra = [i for i in other if i["id"] not in have and not gone(i, False)]
        return _ordered(kept, extra, when)

    def folded(self, fact: Callable[[Item], str]) -> Callable[[Item, bool], bool]:
        """Whether an item only the older copy has is among the newer copy's key facts: the
        newer copy folded it (past ``maxDecisions``, or past 100 errors)."""
        facts = set(self.newer["rolling_summary"]["key_facts"])
        newer_is_mine = self.newer is self.mine
        return lambda item, ours: ours != newer_is_mine and fact(item) in facts

    def summary(self, known: Collection[str]) -> dict[str, Any]:
        """The rolling summary covering more messages (the newer copy's on a tie), unless
        the message it ends at is in neither copy."""
        ranked = sorted(
            (self.mine, self.theirs),
            key=lambda s: (int(s["rolling_summary"]["message_count"]), s is self.newer),
            reverse=True,
        )
        for copy in ranked:
            last = copy["rolling_summary"]["last_summarized_msg_id"]
            if last is None or last in known:
                return dict(copy["rolling_summary"])
        return dict(self.mine["rolling_summary"])


def _fold_errors(session: Session) -> None:
    """Past ``MAX_ERRORS`` the oldest errors fold into the key facts, as recording does."""
    errors = session["errors"]
    excess = len(errors) - MAX_ERRORS
    if excess > 0:
        rolling = dict(session["rolling_summary"])
        folded = [error_fact(e) for e in errors[:excess]]
        rolling["key_facts"] = Settings().cap_facts([*rolling["key_facts"], *folded])
        session["rolling_summary"] = rolling
        session["errors"] = errors[excess:]


def _by_value(ours: Sequence[Item], other: Sequence[Item]) -> list[Any]:
    """Log entries without ids: each distinct entry as many times as the copy that has it
    more often, in time order."""
    counts: dict[str, int] = {}
    for entry in ours:
        mark = codec.dumps(entry)
        counts[mark] = counts.get(mark, 0) + 1
    extra = []
    for entry in other:
        mark = codec.dumps(entry)
        if counts.get(mark, 0) > 0:
            counts[mark] -= 1
        else:
            extra.append(entry)
    return _ordered(list(ours), extra, "at", by_id=False)


def _ordered(ours: list[Any], extra: list[Any], when: str, *, by_id: bool = True) -> list[Any]:
    """``ours`` as it is when nothing is added; else both sorted by time (then id)."""
    if not extra:
        return ours
    if by_id:
        return sorted([*ours, *extra], key=lambda i: (str(i[when]), str(i["id"])))
    return sorted([*ours, *extra], key=lambda i: str(i.get(when)))


# -- the files ---------------------------------------------------------------------------------
def absorb(layout: Layout, store: Store, session: Session) -> str:
    """Merge ``session`` (schema-checked) into its file under the lock: ``created``,
    ``updated`` or ``unchanged`` (the file's bytes left as they were)."""
    files = SessionFiles(layout, store)
    path = files.path(session["id"])
    with store.lock():
        try:
            loaded = store.load(path)
        except NotFoundError:
            store.write_json(path, session)
            return "created"
        mine = loaded.value
        schema.check("session", mine, path=store.rel(path))
        archived = {m["id"] for m in files.archived(mine)}
        merged = union(mine, session, archived)
        schema.check("session", merged, path=store.rel(path))
        changed = store.write_json(path, merged, expect=loaded.digest)
    return "updated" if changed else "unchanged"


def whole(layout: Layout, store: Store, session: Session) -> Session:
    """``session`` with its archived messages back at the head of ``messages`` (and
    ``archived_count`` 0): the whole conversation in one value. A broken archive chunk is
    told to ``store.skip_broken`` and the session given as it is."""
    count = session.get("archived_count") if isinstance(session, dict) else None
    if not isinstance(count, int) or count <= 0:
        return session
    try:
        archived = SessionFiles(layout, store).archived(session)
    except PlanningMemoryError as exc:
        store.skip_broken(exc)
        return session
    return {**session, "messages": [*archived, *session["messages"]], "archived_count": 0}
