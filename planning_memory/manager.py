"""The seeds' API names (seed 000's MemoryManager, seed 003's observation), thin aliases.

``Memory`` inherits them, so ``mem.learn_pattern(...)``, ``mem.record_decision(...)`` and the
rest of the seeds' API work as the seeds describe; new code may call the parts directly.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from planning_memory import context as _context
from planning_memory import longterm as _longterm
from planning_memory import search as _search
from planning_memory.errors import InputError

if TYPE_CHECKING:
    from datetime import datetime

    from planning_memory.core import Layout, Record
    from planning_memory.entity import CodeMap, ScanReport
    from planning_memory.longterm import LongTerm, Outcome
    from planning_memory.search import Hit, Index, IndexReport
    from planning_memory.sessions import Sessions
    from planning_memory.store import Store


class MemoryManagerNames:
    """learnPattern, learnFromMistake, recordDecision, recordFileAccess, getSessionContext,
    saveToCheckpoint, restoreFromCheckpoint, getRelevantPatterns, getMistakesToAvoid,
    searchContext, indexContent, getFileInfo, getRelationships, updateFileEntity,
    mapCodebase, getFullContext, prepareAgentContext, processAgentResult, reindexCodebase; and
    seed 003's ``memory_save`` observation (``save_observation``)."""

    if TYPE_CHECKING:  # what they use of ``Memory``
        layout: Layout
        store: Store

        @property
        def config(self) -> dict[str, Any]: ...
        @property
        def sessions(self) -> Sessions: ...
        @property
        def code(self) -> CodeMap: ...
        def now(self) -> datetime: ...
        def index(self) -> Index: ...
        def counts(self) -> dict[str, Any]: ...
        def scan(self) -> ScanReport: ...
        def save(self, title: str, record_type: str = ..., **fields: Any) -> Outcome: ...
        @property
        def longterm(self) -> LongTerm: ...
        def search(
            self,
            query: str,
            *,
            sources: Sequence[str] = ...,
            types: Sequence[str] = ...,
            limit: int = ...,
            threshold: float = ...,
            remember: bool = ...,
        ) -> list[Hit]: ...

    def learn_pattern(
        self,
        name: str | Mapping[str, Any],
        description: str = "",
        example: str = "",
        **fields: Any,
    ) -> Outcome:
        """Seed 000's ``learnPattern``: a similar live pattern is reinforced instead. ``name``
        may be the seed's ``{name, description, example, context}`` (``context``: tags)."""
        if not isinstance(name, str):
            return self.learn_pattern(**seed_object("learn_pattern", name, PATTERN), **fields)
        texts("learn_pattern", name=name, description=description, example=example)
        return self.save(name, "pattern", description=description, example=example, **fields)

    def learn_from_mistake(
        self,
        description: str | Mapping[str, Any],
        correction: str = "",
        severity: str = "medium",
        **fields: Any,
    ) -> Outcome:
        """Seed 000's ``learnFromMistake``: a similar live mistake counts one more occurrence.
        ``description`` may be the seed's ``{description, correction, severity, context}``."""
        if not isinstance(description, str):
            given = seed_object("learn_from_mistake", description, MISTAKE)
            return self.learn_from_mistake(**given, **fields)
        texts("learn_from_mistake", description=description, correction=correction)
        title = " ".join(description.split())[:200] or "Mistake"
        fields |= {"description": description, "correction": correction, "severity": severity}
        return self.save(title, "mistake", **fields)

    def record_decision(
        self,
        question: str | Mapping[str, Any],
        decision: str = "",
        reasoning: str = "",
        alternatives: Sequence[str] = (),
        session_id: str | None = None,
    ) -> dict[str, Any]:
        """Seed 000's ``recordDecision`` in the current session; ``question`` may be the
        seed's ``{question, answer, reasoning, alternatives}``."""
        if not isinstance(question, str):
            given = seed_object("record_decision", question, DECISION)
            return self.record_decision(**given, session_id=session_id)
        texts("record_decision", question=question, decision=decision, reasoning=reasoning)
        return self.sessions.record_decision(
            session_id, question, decision, reasoning=reasoning, alternatives=alternatives
        )

    def record_error(
        self,
        error: str,
        resolution: str | None = None,
        *,
        file: str | None = None,
        tool: str | None = None,
        session_id: str | None = None,
    ) -> dict[str, Any]:
        """Seed 000's errors list: keep an error met in the session, resolved already when
        ``resolution`` is given; ``resolve_error`` resolves it later."""
        return self.sessions.record_error(
            session_id, error, resolution=resolution, file=file, tool=tool
        )

    def resolve_error(
        self, resolution: str, error_id: str | None = None, session_id: str | None = None
    ) -> dict[str, Any]:
        """Mark a session error (default: the newest open one) resolved by ``resolution``."""
        return self.sessions.resolve_error(session_id, resolution, error_id)

    def record_file_access(
        self, path: str, action: str = "read", session_id: str | None = None
    ) -> dict[str, Any]:
        """Seed 000's ``recordFileAccess``: read, created, modified or deleted."""
        return self.sessions.record_file_access(session_id, path, action)

    def get_session_context(self, session_id: str | None = None) -> dict[str, Any]:
        """Seed 000's ``getSessionContext``: window, summary, decisions, files, time."""
        return self.sessions.context(session_id)

    def save_to_checkpoint(self, session_id: str | None = None) -> dict[str, Any]:
        """Seed 000's ``saveToCheckpoint``: the session plus long-term and entity summaries."""
        sid = session_id or self.sessions.current_id(start=False)
        counts = self.counts()
        return {
            "sessionId": sid,
            "shortTerm": self.sessions.snapshot(sid),
            "longTermSummary": counts["long_term"],
            "entitySummary": counts["entity"],
        }

    def restore_from_checkpoint(self, data: dict[str, Any]) -> dict[str, Any]:
        """Seed 000's ``restoreFromCheckpoint``: the session only; long-term and entity memory
        are read from their files."""
        return self.sessions.restore(data.get("sessionId"), data.get("shortTerm", data))

    def get_relevant_patterns(
        self, context: str | list[str] | None = None, limit: int = 10
    ) -> list[Record]:
        """Seed 000's ``getRelevantPatterns``: for a task text or tags (see ``_relevant``)."""
        return self._relevant("pattern", context, limit)

    def get_mistakes_to_avoid(
        self, context: str | list[str] | None = None, limit: int = 10
    ) -> list[Record]:
        """Seed 000's ``getMistakesToAvoid``: for a task text or tags, most severe first."""
        return self._relevant("mistake", context, limit)

    def _relevant(
        self, record_type: str, task: str | Sequence[str] | None = None, limit: int = 10
    ) -> list[Record]:
        """Live records of one type for a task text (searched) or a list of tags (matched);
        without either, pinned, established and most severe first."""
        ranked = self.longterm.ranked(record_type)
        if not task:
            return ranked[:limit]
        if isinstance(task, str):
            by_id = {r["id"]: r for r in ranked}
            hits = self.search(
                task, sources=["record"], types=[record_type], limit=limit, remember=False
            )
            return [by_id[h.ref_id] for h in hits if h.ref_id in by_id][:limit]
        tags = set(task)
        return [r for r in ranked if tags & set(r.get("tags", []))][:limit]

    def search_context(
        self, query: str, limit: int | Mapping[str, Any] = 5, threshold: float = 0.0
    ) -> list[Hit]:
        """Seed 000's ``searchContext``; ``limit`` may be the seed's ``{limit, threshold}``."""
        if isinstance(limit, Mapping):
            return self.search_context(query, **seed_object("search_context", limit, OPTIONS))
        texts("search_context", query=query)
        return self.search(query, limit=limit, threshold=threshold)

    def index_content(self, content: str, metadata: dict[str, Any]) -> str:
        """Seed 000's ``indexContent``: kept as a ``discovery`` learning (a real, versioned
        memory) and indexed."""
        title = str(metadata.get("title") or " ".join(content.split())[:80] or "Note")
        body = {"what": content, "why": "", "where": str(metadata.get("path", "")), "learned": ""}
        kind = str(metadata.get("type", "discovery"))
        outcome = self.save(title, kind, body=body, tags=list(metadata.get("tags", [])))
        return str(outcome.record["id"])

    def get_file_info(self, path: str) -> dict[str, Any] | None:
        """Seed 000's ``getFileInfo``: a file's entity, or None."""
        return self.code.file(path)

    def get_relationships(self, name: str) -> dict[str, Any]:
        """Seed 000's ``getRelationships``: how ``name`` relates to the rest."""
        return self.code.relationships(name)

    def update_file_entity(
        self,
        path: str,
        info: Mapping[str, Any] | None = None,
        *,
        notes: list[str] | None = None,
        purpose: str | None = None,
        modified_by: list[str] | None = None,
    ) -> dict[str, Any]:
        """Seed 000's ``updateFileEntity``: annotations that survive rescans; the entity's
        ``last_modified`` becomes now (or the file's newer mtime). ``info`` may be the seed's
        ``{modifiedBy, purpose, notes}``."""
        if info is not None:
            return self.update_file_entity(path, **seed_object("update_file_entity", info, FILE))
        texts("update_file_entity", path=path)
        return self.code.annotate(
            path, notes=notes, purpose=purpose, modified_by=modified_by, now=self.now()
        )

    def map_codebase(self) -> ScanReport:
        """Seed 000's ``mapCodebase``: the code map brought up to date."""
        return self.scan()

    def process_agent_result(self, agent: str, result: dict[str, Any]) -> dict[str, int]:
        """Seed 000's ``processAgentResult``: files, decisions and fixed errors remembered."""
        return _context.process_agent_result(self, agent, result)

    def get_full_context(self, task: str | dict[str, Any]) -> dict[str, Any]:
        """Seed 000's ``getFullContext``: every section's items as plain data."""
        with self.index() as index:
            return _context.full_context(
                self.layout, self.store, task, now=self.now(), config=self.config, index=index
            )

    def prepare_agent_context(
        self, agent: str, task: str | dict[str, Any], *, budget: int | None = None
    ) -> str:
        """Seed 000's ``prepareAgentContext``: the memory context, then the task."""
        with self.index() as index:
            return _context.prepare_agent_context(
                self.layout,
                self.store,
                agent,
                task,
                now=self.now(),
                budget=budget,
                config=self.config,
                index=index,
            )

    def reindex_codebase(self) -> IndexReport:
        """Seed 000's ``reindexCodebase``: index new and changed code and docs."""
        with self.index() as index:
            return _search.reindex_codebase(index, self.layout, self.config)

    def save_observation(
        self,
        title: str,
        record_type: str = "learning",
        *,
        what: str = "",
        why: str = "",
        where: str = "",
        learned: str = "",
        tags: Sequence[str] = (),
        topic_key: str | None = None,
        pinned: bool = False,
        scope: str | None = None,
        source: str = "api",
        anchors: Sequence[str] = (),
        **typed: str,
    ) -> Outcome:
        """Seed 003's observation (What / Why / Where / Learned); ``typed`` holds a type's own
        fields (``description``, ``example``, ``correction``, ``severity``), filled from the
        body where not given. No ``scope``: the config's ``agents.defaultScope``."""
        fields = _longterm.observation_fields(
            record_type, title, what=what, learned=learned, **typed
        )
        return self.save(
            title,
            record_type,
            body={"what": what, "why": why, "where": where, "learned": learned},
            tags=list(tags),
            topic_key=topic_key,
            pinned=pinned,
            scope=scope,
            source=source,
            anchors=list(anchors),
            **fields,
        )


# -- the seeds' object arguments ---------------------------------------------------------------
# the keys of each object the seeds pass (seed 000's ``learnPattern({name, ...})``, seed 003's
# observation) -> the keyword each becomes; the first is required. ``None``: said, not kept
# (a decision's pattern fields are ``processAgentResult``'s; ``lastModified`` is set on save).
Keys = dict[str, str | None]
Observed = Mapping[str, Any]  # seed 003's observation as an object (``Memory.save``)
PATTERN: Keys = {"name": "name", "description": "description", "example": "example"}
PATTERN |= {"context": "tags"}
MISTAKE: Keys = {"description": "description", "correction": "correction"}
MISTAKE |= {"severity": "severity", "context": "tags"}
DECISION: Keys = {"question": "question", "answer": "decision", "decision": "decision"}
DECISION |= {"reasoning": "reasoning", "alternatives": "alternatives", "decidedAt": None}
DECISION |= {"isPattern": None, "patternName": None, "implementation": None}
OPTIONS: Keys = {"limit": "limit", "threshold": "threshold"}
FILE: Keys = {"purpose": "purpose", "modifiedBy": "modified_by", "modified_by": "modified_by"}
FILE |= {"notes": "notes", "lastModified": None}
OBSERVATION: Keys = {"title": "title", "type": "record_type", "what": "what", "why": "why"}
OBSERVATION |= {"where": "where", "learned": "learned", "tags": "tags", "topic_key": "topic_key"}
OBSERVATION |= {"pinned": "pinned", "scope": "scope", "source": "source", "anchors": "anchors"}
OBSERVATION |= {k: k for k in ("description", "example", "correction", "severity")}


def seed_object(method: str, given: object, keys: Keys) -> dict[str, Any]:
    """``given``, one of the seeds' objects, as ``method``'s keyword arguments (``keys``: see
    ``PATTERN``); anything else, a key it does not have or no first key, one ``InputError``."""
    first = next(iter(keys))
    shown = {target: key for key, target in reversed(keys.items()) if target is not None}
    names = ", ".join(k for k in keys if k in shown.values())
    if not isinstance(given, Mapping):
        kind = type(given).__name__
        raise InputError(f"{method}: {first} must be text or an object of {names}; got {kind}")
    unknown = [str(k) for k in given if k not in keys]
    if unknown:
        raise InputError(f"{method}: unknown key {unknown[0]!r}; expected {names}")
    if first not in given:
        raise InputError(f"{method}: the object needs its {first!r}")
    found = {}
    for key, value in given.items():
        if (target := keys[key]) is not None:
            found[target] = value
    return found


def texts(method: str, **values: object) -> None:
    """One ``InputError`` for the first of ``values`` that is not text."""
    for name, value in values.items():
        if not isinstance(value, str):
            raise InputError(f"{method}: {name} must be text, got {type(value).__name__}")


def observation(title: object, record_type: object, fields: dict[str, Any]) -> dict[str, Any]:
    """``Memory.save``'s arguments as ``save_observation``'s: seed 003's observation given as
    an object (``{title, type, what, why, where, learned, ...}``), else one ``InputError``."""
    if isinstance(title, str):
        raise InputError(f"save: the type must be text, got {type(record_type).__name__}")
    given = seed_object("save", title, OBSERVATION)
    texts("save", **{k: v for k, v in given.items() if k in ("title", "record_type")})
    return {"record_type": record_type, **fields, **given}
