"""``Sessions``: every session operation, bound to one memory tree, a clock and a channel.

The tree's layout and store, its config (read on first need), a clock and a channel are
held once.

The operations live in the modules named for their job (``log``, ``lifecycle``, ``rolling``,
``briefing``) as functions of the state they need; ``Sessions`` holds that state once and adds
the clock's ``now``. Reading (``get``, ``list``, ``history``, ``queued``...) is ``SessionFiles``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime, timedelta, tzinfo
from functools import cached_property
from typing import Any

from planning_memory import sessions as _sessions  # the summarisers load when used
from planning_memory.core import (
    Layout,
    TemporalContext,
    codec,
    effective_config,
    privacy,
    temporal,
)
from planning_memory.errors import NotFoundError
from planning_memory.sessions import (
    applied,
    briefing,
    decided,
    elsewhere,
    failures,
    goal,
    lifecycle,
    log,
    rolling,
)
from planning_memory.sessions.files import (
    DEFAULT_CHANNEL,
    Session,
    SessionFiles,
    SessionInfo,
    Settings,
    said_something,
)
from planning_memory.sessions.lifecycle import Deleted
from planning_memory.sessions.log import Appended
from planning_memory.sessions.rolling import SummaryOutcome
from planning_memory.sessions.summary_base import Summarizer
from planning_memory.store import Store

Config = Mapping[str, Any] | Callable[[], Mapping[str, Any]] | None


def _utc_now() -> datetime:
    return datetime.now(UTC)


def _same_text(text: str) -> str:
    """What two texts are compared by: the first 2,000 characters, case and spacing ignored."""
    return " ".join(text.split())[:2000].lower()


class Sessions(SessionFiles):
    """The sessions of one memory tree, bound to its config, a clock and a channel.

    ``config`` is the memory config (``None``: the defaults), or a function returning it,
    called on first need; ``clock`` returns aware datetimes; ``channel`` is whose sessions
    ``current`` and ``start`` mean. Reading (``get``, ``list``, ``history``, ``queued``,
    ``chunk_paths``...) comes from ``SessionFiles``.
    """

    # what a prompt asks for (its task part), and the decisions messages state: pure
    task_of = staticmethod(goal.task_of)
    stated_decisions = staticmethod(decided.stated)

    def __init__(
        self,
        layout: Layout,
        store: Store,
        config: Config = None,
        *,
        clock: Callable[[], datetime] = _utc_now,
        channel: str = DEFAULT_CHANNEL,
    ) -> None:
        super().__init__(layout, store)
        self._given = config
        self.clock = clock
        self.channel = channel

    @cached_property
    def config(self) -> dict[str, Any]:
        """The effective config (read on first need)."""
        given = self._given() if callable(self._given) else self._given
        return effective_config(given)

    @cached_property
    def settings(self) -> Settings:
        return Settings.of(self.config)

    @cached_property
    def summarizer(self) -> Summarizer:
        """The config's summariser: its command, else the extractive one."""
        return _sessions.summarizer_from_config(self.config)

    @cached_property
    def extractive(self) -> Summarizer:
        """The built-in summariser (offline, quick), whatever the config names."""
        return _sessions.ExtractiveSummarizer()

    def now(self) -> datetime:
        return self.clock()

    # -- which session -------------------------------------------------------------------------
    def current(self, channel: str | None = None) -> Session | None:
        """The current session of ``channel`` (default: ours): its newest active one."""
        name = lifecycle.check_channel(self.channel if channel is None else channel)
        rows = self.list(channel=name, status="active")
        return self.get(rows[0].id) if rows else None

    def current_id(self, *, start: bool = True, goal: str | None = None) -> str:
        """The id of our channel's current session; one is started if there is none (with
        ``start=False``: NotFoundError)."""
        found = self.current()
        if found is not None:
            return str(found["id"])
        if not start:
            raise NotFoundError(
                f"no active session on channel {self.channel!r}",
                hint="`pmem session start` begins one",
            )
        return str(self.start(goal)["id"])

    def start(
        self, goal: str | None = None, name: str | None = None, *, channel: str | None = None
    ) -> Session:
        """Create a new active session on ``channel`` (default: ours); the others stay."""
        return lifecycle.start(
            self, self.channel if channel is None else channel, now=self.now(), goal=goal, name=name
        )

    def window(self, session_id: str, n: int | None = None) -> list[dict[str, Any]]:
        """The last ``n`` messages (default: ``contextWindow``), in order, verbatim."""
        return super().window(session_id, self.settings.window if n is None else n)

    # -- recording (``session_id=None``: our channel's current session, started if needed) ------
    def _id(self, session_id: str | None, *, start: bool, given: Any = None) -> str:
        """``session_id``, or our channel's current session (started when ``start``).
        ``given``: what the caller is about to write; text UTF-8 cannot hold (an argument
        that was not UTF-8) is refused first, so no session is started for it."""
        if given is not None:
            codec.check_encodable(given)
        return session_id or self.current_id(start=start)

    def append(
        self,
        session_id: str | None,
        role: str,
        content: str,
        *,
        tool_results: Iterable[Mapping[str, Any]] = (),
    ) -> Appended:
        """Record a message; queues a summary once the window is passed, never summarises."""
        tool_results = tuple(tool_results)
        return log.append_message(
            self,
            self.settings,
            self._id(session_id, start=True, given=[role, content, list(tool_results)]),
            role,
            content,
            now=self.now(),
            tool_results=tool_results,
        )

    def record_decision(
        self,
        session_id: str | None,
        question: str,
        decision: str,
        *,
        reasoning: str = "",
        alternatives: Iterable[str] = (),
    ) -> dict[str, Any]:
        alternatives = tuple(alternatives)
        given = [question, decision, reasoning, list(alternatives)]
        return log.record_decision(
            self,
            self.settings,
            self._id(session_id, start=True, given=given),
            question,
            decision,
            now=self.now(),
            reasoning=reasoning,
            alternatives=alternatives,
        )

    def record_file_access(
        self, session_id: str | None, path: str, action: str = "read"
    ) -> dict[str, Any]:
        sid = self._id(session_id, start=True, given=[path, action])
        return log.record_file_access(self, sid, path, action, now=self.now())

    def add_step(self, session_id: str | None, action: str, result: str = "") -> dict[str, Any]:
        sid = self._id(session_id, start=True, given=[action, result])
        return log.add_step(self, sid, action, result, now=self.now())

    def set_context(
        self, session_id: str | None, changes: Mapping[str, str | None]
    ) -> dict[str, Any]:
        sid = self._id(session_id, start=True, given=dict(changes))
        return log.set_context(self, sid, changes, now=self.now())

    def record_error(
        self,
        session_id: str | None,
        error: str,
        *,
        resolution: str | None = None,
        file: str | None = None,
        tool: str | None = None,
    ) -> dict[str, Any]:
        """Keep an error met in the session (resolved already when ``resolution`` is given);
        the same error still open is returned, not added twice."""
        sid = self._id(session_id, start=True, given=[error, resolution, file, tool])
        now = self.now()
        item = failures.new_error(self, error, now=now, resolution=resolution, file=file, tool=tool)
        return failures.record_error(self, self.settings, sid, item, now=now)

    def resolve_error(
        self, session_id: str | None, resolution: str, error_id: str | None = None
    ) -> dict[str, Any]:
        """Mark the error ``error_id`` (default: the newest open one) resolved."""
        sid = self._id(session_id, start=False)
        return failures.resolve_error(self, sid, resolution, now=self.now(), error_id=error_id)

    def resolve_file_errors(
        self, session_id: str, path: str, resolution: str
    ) -> list[dict[str, Any]]:
        """Mark the session's open errors about ``path`` resolved (none: nothing written)."""
        return failures.resolve_file_errors(self, session_id, path, resolution, now=self.now())

    def resolve_call_errors(
        self, session_id: str, tool: str, call: str, resolution: str
    ) -> list[dict[str, Any]]:
        """Mark the session's open errors of ``tool`` on the same input ``call`` resolved (the
        same command, run again, went through); none: nothing written."""
        return failures.resolve_call_errors(
            self, session_id, tool, call, resolution, now=self.now()
        )

    def first_applications(self, session_id: str, ids: Sequence[str]) -> list[str]:
        """Of ``ids`` (memories delivered into the agent's context), those not delivered
        before in the session, now noted in it (``applied``): each counts once per session."""
        return applied.first_deliveries(self, session_id, ids, now=self.now())

    # -- life (``session_id=None``: our channel's current session) --------------------------------
    def rename(self, session_id: str | None, name: str | None) -> Session:
        sid = self._id(session_id, start=False)
        return lifecycle.set_name(self, sid, name, now=self.now())

    def set_goal(self, session_id: str | None, goal: str | None) -> Session:
        sid = self._id(session_id, start=False)
        return lifecycle.set_goal(self, sid, goal, now=self.now())

    def pause(self, session_id: str | None) -> Session:
        sid = self._id(session_id, start=False)
        return lifecycle.pause(self, self.settings, sid, now=self.now())

    def resume(self, session_id: str | None = None) -> Session:
        """Resume a paused session (``None``: our channel's newest paused one)."""
        if session_id is None:
            paused = self.list(channel=self.channel, status="paused")
            if not paused:
                raise NotFoundError(
                    f"no paused session on channel {self.channel!r}",
                    hint="`pmem session list --status paused` lists them on every channel",
                )
            session_id = paused[0].id
        return lifecycle.resume(self, session_id, now=self.now())

    def snapshot(self, session_id: str | None) -> dict[str, Any]:
        """A checkpoint of the session's state, for ``restore``."""
        return lifecycle.snapshot(self.get(self._id(session_id, start=False)), self.now())

    def restore(self, session_id: str | None, data: Mapping[str, Any]) -> Session:
        sid = self._id(session_id, start=False)
        return lifecycle.restore(self, sid, data, now=self.now())

    def end(
        self,
        session_id: str | None,
        summarizer: Summarizer | None = None,
        *,
        summarize: bool = True,
    ) -> Session:
        """End with seed 003's summary (by ``summarizer``, default: the config's; a failing
        command gives way to the built-in one; nothing recorded keeps the summary it had);
        ``summarize=False`` ends it without one."""
        sid = self._id(session_id, start=False)
        chosen = (summarizer or self.summarizer) if summarize else None
        return lifecycle.end(self, sid, chosen, now=self.now())

    def checkpoint(self, session_id: str | None, summarizer: Summarizer | None = None) -> Session:
        """Keep the session's summary so far, with its outcome (confirmed, failed, unknown),
        as a compaction does (seed 003); the session stays open. Default summariser: the
        built-in one (quick and offline)."""
        sid = self._id(session_id, start=False)
        return lifecycle.checkpoint(self, sid, summarizer or self.extractive, now=self.now())

    def inherit(self, session_id: str, source_id: str) -> list[str]:
        """Carry the standing facts of ``source_id`` (an ended session: its decisions, stated
        facts, preferences, memorized facts) into the key facts of ``session_id``."""
        return lifecycle.inherit(self, self.settings, session_id, source_id, now=self.now())

    def delete(self, session_id: str) -> Deleted:
        return lifecycle.delete(self, session_id)

    # -- summaries -----------------------------------------------------------------------------
    def drain(
        self,
        session_ids: Sequence[str] | None = None,
        *,
        summarizer: Summarizer | None = None,
        min_batch: int = 1,
        idle: timedelta | None = None,
    ) -> list[SummaryOutcome]:
        """Summarise the queued sessions (or ``session_ids``); one with fewer than
        ``min_batch`` messages due waits unless idle for ``idle`` (see ``rolling.drain``)."""
        return rolling.drain(
            self,
            self.settings,
            summarizer or self.summarizer,
            now=self.now(),
            session_ids=session_ids,
            min_batch=min_batch,
            idle=idle,
        )

    def summarize(
        self, session_id: str, *, summarizer: Summarizer | None = None, min_batch: int = 1
    ) -> SummaryOutcome:
        return rolling.summarize_session(
            self,
            self.settings,
            summarizer or self.summarizer,
            session_id,
            now=self.now(),
            min_batch=min_batch,
        )

    # -- what an agent is told -----------------------------------------------------------------
    def temporal(self, session_id: str | None = None) -> TemporalContext:
        """Date, time, zone and the gap since the session's last message (call it before
        recording the incoming message)."""
        now = self.now()
        return briefing.temporal_context(self, self._zone(now), session_id, now=now)

    def context(self, session_id: str | None = None) -> dict[str, Any]:
        """What an agent should know about the session (``get_session_context``)."""
        now = self.now()
        sid = self._id(session_id, start=False)
        return briefing.context(self, self.settings, self._zone(now), sid, now=now)

    def record_injection(
        self, session_id: str, event: str, task: str, pack: Mapping[str, Any]
    ) -> dict[str, Any]:
        """Keep what was injected into the agent at ``event`` (``pack``: a context pack's
        ``as_dict()``) in the session, for people to see later (``injections``)."""
        return log.record_injection(self, session_id, event, task, pack, now=self.now())

    def injections(self, session_id: str | None = None, limit: int = 50) -> list[dict[str, Any]]:
        """What was injected at session starts, newest first, each with its ``session_id``:
        of one session, or of every session."""
        ids = [session_id] if session_id else [info.id for info in self.list()]
        found = [
            (str(entry.get("at", "")), place, {"session_id": sid, **entry})
            for sid in ids
            for place, entry in enumerate(self.get(sid).get("injected") or ())
        ]
        # "at" has whole seconds: two starts in one second keep the session's own order
        found.sort(key=lambda e: e[:2], reverse=True)
        return [entry for *_, entry in found[: max(0, limit)]]

    def unfinished(
        self,
        exclude: Sequence[str] = (),
        active_at: Mapping[str, datetime] | None = None,
        among: Sequence[str] | None = None,
    ) -> list[elsewhere.Unfinished]:
        """The other open sessions (crashed, or still running elsewhere) with their goal,
        next step and last activity, the most recent first; ``exclude`` is passed over;
        ``active_at``: last activity known better than the files (a transcript's);
        ``among``: the open sessions' ids, when already listed."""
        return elsewhere.unfinished(
            self,
            self.extractive,
            now=self.now(),
            exclude=exclude,
            active_at=active_at,
            among=among,
        )

    # -- looking up ----------------------------------------------------------------------------
    def last_summarized(
        self, channel: str | None = None, exclude: str | None = None
    ) -> tuple[SessionInfo, dict[str, Any]] | None:
        """The newest ended session of ``channel`` (default: ours) whose end summary says
        something, and that summary; ``exclude`` is passed over."""
        name = self.channel if channel is None else channel
        for info in self.list(channel=name, status="ended"):
            summary = self.get(info.id).get("end_summary")
            if info.id != exclude and said_something(summary):
                return info, dict(summary)  # type: ignore[arg-type]  # said_something checked
        return None

    def find_entry(self, item_id: str, *, first: str | None = None) -> dict[str, Any]:
        """A message (``msg_``) or decision (``dec_``) by id, with its session id; the
        session ``first`` (a hint, e.g. from the search index) is looked in first."""
        kind = "message" if item_id.startswith("msg_") else "decision"
        candidates = [first] if first else []
        candidates += [info.id for info in self.list()]
        for sid in dict.fromkeys(candidates):
            items = self.history(sid) if kind == "message" else self.get(sid)["decisions"]
            found = next((i for i in items if i.get("id") == item_id), None)
            if found is not None:
                return {"session_id": sid, "kind": kind, **found}
        raise NotFoundError(f"no message or decision {item_id}", record_id=item_id)

    def recorded(
        self, session_id: str, role: str, contents: Sequence[str], *, after: int = 0
    ) -> list[bool]:
        """For each of ``contents``, whether a ``role`` message with that text, as recording
        stores it (redacted; compared on its first 2,000 characters, case and spacing
        ignored), is among the conversation's messages after its first ``after``; each
        recorded message answers for one text at most."""
        session = self.load(session_id).value
        live: list[dict[str, Any]] = session["messages"]
        need = len(live) + int(session.get("archived_count", 0)) - after
        recent = live[-need:] if 0 < need <= len(live) else []
        if need > len(live):
            recent = [*self.archived(session, need - len(live)), *live]
        pool = [_same_text(m["content"]) for m in recent if m.get("role") == role]
        found = []
        for content in contents:
            key = _same_text(privacy.redact(content))
            found.append(key in pool)
            if key in pool:
                pool.remove(key)
        return found

    def overview(self, session_id: str) -> dict[str, Any]:
        """A session in brief: its goal, status, counts and summaries."""
        data = self.get(session_id)
        keep = ("id", "channel", "name", "status", "goal", "started_at", "ended_at")
        return {
            **{k: data.get(k) for k in keep},
            "messages": len(data["messages"]) + int(data.get("archived_count", 0)),
            "decisions": len(data["decisions"]),
            "files_accessed": len(data["files_accessed"]),
            "errors": len(data.get("errors") or []),
            "current_context": {k: v for k, v in data["current_context"].items() if v},
            "summary": data["rolling_summary"]["summary"],
            "end_summary": data["end_summary"],
        }

    def _zone(self, now: datetime) -> tzinfo:
        return temporal.timezone_of(self.config, now)
