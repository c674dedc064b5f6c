"""The MCP server's tools: what each does with the memory, and how its answer reads.

``MemoryTools`` holds one method per tool (``memory_save``, ``memory_search``, ...,
``entity_area``); each opens the project's memory at call time and answers compact JSON (or
the context text itself). Their parameters are annotated for the SDK, which builds each tool's
input schema from them; a user error becomes a tool error with one line (``guard``). The
server that offers them to a client is ``mcp_server``.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from planning_memory.agents import claude_code
from planning_memory.errors import (
    InputError,
    NotFoundError,
    NotInitializedError,
    PlanningMemoryError,
)
from planning_memory.memory import Memory, inline

MAX_LIST = 40  # items of one list in an entity answer
F = TypeVar("F", bound=Callable[..., Any])

RecordType = Literal[
    "pattern",
    "mistake",
    "bugfix",
    "decision",
    "discovery",
    "architecture",
    "config",
    "preference",
    "learning",
]
Source = Literal["record", "message", "decision", "session", "entity", "code", "doc"]
Scope = Literal["project", "personal"]
Role = Literal["user", "assistant", "system", "tool"]
Id = Annotated[str, Field(min_length=1, max_length=200, description="A memory id from a result.")]
Tag = Annotated[str, Field(min_length=1, max_length=100)]  # a record's tag (the schema's limit)
Channel = Annotated[
    str | None,
    Field(
        min_length=1,
        max_length=200,
        description="Whose sessions. Default: the session the Claude Code hooks keep for "
        "this project when one is active, else the 'mcp' channel's.",
    ),
]
MCP_CHANNEL = "mcp"


# -- helpers ---------------------------------------------------------------------------------------
def compact(value: Any) -> str:
    """Compact JSON for the model: no indentation, UTF-8 kept."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def _trim(value: Any, limit: int = MAX_LIST) -> Any:
    """``value`` with every list cut to ``limit`` items (and a note of how many were left)."""
    if isinstance(value, Mapping):
        return {k: _trim(v, limit) for k, v in value.items()}
    if isinstance(value, list) and len(value) > limit:
        return [*(_trim(v, limit) for v in value[:limit]), f"… {len(value) - limit} more"]
    if isinstance(value, list):
        return [_trim(v, limit) for v in value]
    return value


def guard(fn: F) -> F:
    """Turn user errors into tool errors with one line (``isError`` results); an ``@`` of
    memory text stays as written in the answer (``claude_code.at_as_written``)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            answer = fn(*args, **kwargs)
        except PlanningMemoryError as exc:
            raise ToolError(exc.one_line()) from exc
        except OSError as exc:
            where = f"{exc.filename}: " if exc.filename else ""
            raise ToolError(f"{where}{exc.strerror or exc}") from exc
        # an answer is no instruction file: "@types/node" as written, not its inert "＠"
        return claude_code.at_as_written(answer) if isinstance(answer, str) else answer

    return wrapper  # type: ignore[return-value]


def _outcome(mem: Memory, summary: Mapping[str, Any]) -> str:
    keep = ("action", "id", "type", "title", "project", "notes", "archived")
    return compact({k: summary[k] for k in keep if summary.get(k) not in (None, [], "")})


def _hit_row(hit: Any, project: str | None = None) -> dict[str, Any]:
    row: dict[str, Any] = {
        "id": hit.ref_id or hit.key,
        "type": hit.type,
        "title": inline(hit.title or "", 1000),  # inert (its @ as written: guard)
        "score": round(hit.score, 3),
        "snippet": inline(hit.snippet or "", 4000),
    }
    if hit.source != "record":
        row["source"] = hit.source
    for key, value in (("path", hit.path), ("session", hit.session_id), ("pinned", hit.pinned)):
        if value:
            row[key] = value
    if hit.scope != "project":
        row["scope"] = hit.scope
    if project is not None:
        row["project"] = project or None  # null: a personal record of no project
    return row


def _scoped(mem: Memory, item_id: str) -> Memory:
    """The memory (project, else personal) that holds the record ``item_id``."""
    try:
        mem.get(item_id)
        return mem
    except NotFoundError:
        personal = mem.personal()
        if personal.layout.memory.is_dir():
            try:
                personal.get(item_id)
                return personal
            except NotFoundError:
                pass
        raise


# -- the tools -------------------------------------------------------------------------------------
class MemoryTools:
    """The tool functions; each opens the project's memory at call time: ``root`` (``-C``),
    else the working directory's project, else the first of the client's roots that holds
    one (``Server.call_tool`` asks the client before each call while the working directory
    is in no project)."""

    def __init__(self, root: Path | None = None) -> None:
        self.root = root
        self.from_roots: Path | None = None
        self.looked: str | None = None  # where the last look beyond the working directory went

    def project(self) -> Path | None:
        """The folder the memory is opened from (None: the working directory)."""
        return self.root or self.from_roots

    def memory(self, channel: str | None = None) -> Memory:
        try:
            mem = Memory.open(self.project())
        except NotInitializedError as exc:
            if self.root is None and self.looked is not None:
                exc.message = f"{exc.message}; {self.looked}"
                exc.hint = (
                    "open the project folder in the client, pass `-C DIR` before `mcp` in "
                    "the server's arguments, or run `pmem init` in the repository root"
                )
            raise
        if channel is not None:
            mem.channel = channel
        return mem

    @guard
    def memory_save(
        self,
        title: Annotated[str, Field(min_length=1, max_length=200, description="Short title.")],
        type: Annotated[RecordType, Field(description="Kind of observation.")] = "learning",
        what: Annotated[str, Field(description="What happened or what it is.")] = "",
        why: Annotated[str, Field(description="Why it matters.")] = "",
        where: Annotated[str, Field(description="Where in the code it applies (paths).")] = "",
        learned: Annotated[str, Field(description="What to do next time.")] = "",
        tags: Annotated[list[str], Field(description="Tags, e.g. ['auth', 'typescript'].")] = [],  # noqa: B006
        topic_key: Annotated[
            str | None,
            Field(
                pattern=r"^[a-z0-9]+(-[a-z0-9]+)*/[a-z0-9]+(-[a-z0-9]+)*$",
                description="family/kebab-case key (e.g. 'auth/session-strategy'); saving the "
                "same key again updates that memory instead of adding a new one.",
            ),
        ] = None,
        scope: Annotated[
            Scope | None,
            Field(
                description="'project' (this repo, shared via git) or 'personal'; default: "
                "the config's agents.defaultScope ('project')."
            ),
        ] = None,
        pinned: Annotated[bool, Field(description="Always include it in context.")] = False,
        correction: Annotated[str, Field(description="mistake: what to do instead.")] = "",
        severity: Annotated[
            Literal["low", "medium", "high", "critical"], Field(description="mistake: severity.")
        ] = "medium",
        example: Annotated[str, Field(description="pattern: a short code example.")] = "",
    ) -> str:
        """Save an observation to the project's memory (or update it: same topic_key, or a
        similar pattern/mistake, reinforces the existing one instead of duplicating it).

        Call it when you made a decision, fixed a bug, discovered how something works, found a
        convention (type 'pattern') or a mistake to avoid (type 'mistake'), or learned a
        preference or configuration fact the next session should know. Returns one line of
        JSON: action (created, upserted, reinforced, escalated, duplicate), id, type, title,
        and for a personal one the project it was saved from."""
        mem = self.memory()
        outcome = mem.save_observation(
            title,
            type,
            what=what,
            why=why,
            where=where,
            learned=learned,
            tags=tags,
            topic_key=topic_key,
            pinned=pinned,
            scope=scope,
            source=self.saved_in(mem),
            example=example,
            correction=correction,
            severity=severity,
        )
        project = outcome.record.get("project")  # a personal record's project
        return _outcome(mem, {**outcome.summary(), "project": project})

    @guard
    def memory_search(
        self,
        query: Annotated[str, Field(min_length=1, max_length=2000, description="Words to find.")],
        match: Annotated[
            Literal["auto", "all", "any"],
            Field(
                description="'auto' (default): every word (AND), widened to any word (OR) "
                "when that finds fewer than limit; 'all': AND only; 'any': OR."
            ),
        ] = "auto",
        types: Annotated[
            list[RecordType], Field(max_length=9, description="Only these record types.")
        ] = [],  # noqa: B006
        sources: Annotated[
            list[Source],
            Field(
                max_length=7,
                description="Only these sources (default: all; 'record' = saved memories).",
            ),
        ] = [],  # noqa: B006
        scope: Annotated[
            Scope | None,
            Field(description="Only this scope (default: both the project's and yours)."),
        ] = None,
        tags: Annotated[
            list[Tag], Field(max_length=20, description="Only records with all these tags.")
        ] = [],  # noqa: B006
        limit: Annotated[int, Field(ge=1, le=50, description="Most results.")] = 10,
        threshold: Annotated[
            float, Field(ge=0.0, le=1.0, description="Drop results scoring below (best = 1).")
        ] = 0.0,
        all_projects: Annotated[
            bool,
            Field(
                description="Rank your personal memories of every project alike (by default "
                "those saved from this one, and of none, come first); each record names its "
                "project."
            ),
        ] = False,
    ) -> str:
        """Search memory: the project's saved memories and your personal ones, session
        messages and decisions, the code map, code and docs. Returns compact rows, best first:
        id, type, title, score (best = 1), snippet, plus source/path/session/scope when useful.
        Pinned memories are always appended. Use memory_get with an id for the full record,
        memory_timeline for what happened around it."""
        warnings: list[str] = []
        mem = self.memory()
        hits = mem.search(
            query,
            sources=tuple(sources),
            types=tuple(types),
            scope=scope,
            tags=tags,
            limit=limit,
            threshold=threshold,
            match=match,
            warnings=warnings,
            all_projects=all_projects,
        )
        named = mem.contextual.projects_named(hits, every=all_projects)
        rows = [_hit_row(h, named.get(h.key)) for h in hits]
        found: dict[str, Any] = {"results": rows, "project": mem.project_id}
        if warnings:
            found["warnings"] = warnings
        return compact(found)

    @guard
    def memory_stats(self) -> str:
        """What is in memory (seed 000's `/elsabro:memory show`): counts per level (sessions,
        records by type, code-map files, whether the search index exists) and recent_queries,
        the latest searches newest first ({query, results, at}). Returns one JSON object."""
        return compact(_trim(self.memory().counts()))

    @guard
    def memory_get(self, id: Id) -> str:
        """The full memory for an id from memory_search or memory_context: a saved record
        (pat_, mis_, lrn_), a session message (msg_) or decision (dec_), or a session (ses_:
        its goal, status and summaries). Returns one JSON object."""
        return compact(self.memory().find(id))

    @guard
    def memory_context(
        self,
        task: Annotated[str, Field(max_length=5000, description="What you are about to do.")] = "",
        budget: Annotated[
            int | None,
            Field(
                ge=100,
                le=20000,
                description="Token budget (default: the project's injectBudgetTokens, 1500).",
            ),
        ] = None,
        format: Annotated[
            Literal["md", "xml", "json", "agent"],
            Field(
                description="Markdown, XML-style tags, JSON, or agent (the layout of an agent "
                "prompt: the memory context sections, for the task to follow)."
            ),
        ] = "md",
        files: Annotated[
            list[Annotated[str, Field(min_length=1, max_length=1000)]],
            Field(max_length=50, description="Files the task touches (repository paths)."),
        ] = [],  # noqa: B006
        tags: Annotated[list[Tag], Field(max_length=20, description="Topics of the task.")] = [],  # noqa: B006
        session_id: Annotated[
            str | None,
            Field(
                pattern=r"^ses_[0-9A-Za-z]{1,64}$",
                description="Session to include (default: the newest open one).",
            ),
        ] = None,
    ) -> str:
        """What to know before a task, within a token budget. Always: the rules people taught
        (trigger phrases, preferences), pinned memories, high-severity mistakes, the
        preferences, and when the last session ended with its open next steps; then what the
        task matches: patterns to follow, mistakes to avoid, relevant files, related memories,
        the session's recent context, and the date. Each item says why it is included. Call
        it at the start of a task (with no task it gives the always-included part)."""
        request = {"description": task, "files": files, "context": tags}
        pack = self.memory().context(request, budget=budget, fmt=format, session_id=session_id)
        return pack.text or "No memory context: memory is empty or nothing fits the budget."

    @guard
    def memory_timeline(
        self,
        id: Id,
        before: Annotated[int, Field(ge=0, le=50, description="Entries before it.")] = 5,
        after: Annotated[int, Field(ge=0, le=50, description="Entries after it.")] = 5,
    ) -> str:
        """What happened around a memory in its session, oldest first: the session's messages,
        decisions, errors and the memories it saved; a record saved outside a session gets the
        records created just before and after it. The entry asked about has "anchor": true."""
        entries = self.memory().timeline(id, before=before, after=after)
        rows = []
        for entry in entries:
            row = {k: v for k, v in entry.as_dict().items() if v not in ("", False)}
            rows.append(row)
        return compact({"timeline": rows})

    @guard
    def memory_pin(
        self,
        id: Id,
        pinned: Annotated[bool, Field(description="true to pin, false to unpin.")] = True,
    ) -> str:
        """Pin a saved memory so it is always included in context (or unpin it)."""
        mem = _scoped(self.memory(), id)
        return _outcome(mem, mem.pin(id, pinned).summary())

    @guard
    def memory_forget(
        self,
        id: Id,
        hard: Annotated[
            bool, Field(description="true deletes the file for good; default hides it.")
        ] = False,
    ) -> str:
        """Forget a saved memory that is wrong or obsolete: a soft delete (kept in history,
        hidden from search and context) unless hard is true."""
        mem = _scoped(self.memory(), id)
        return _outcome(mem, mem.forget(id, hard=hard).summary())

    def saved_in(self, mem: Memory) -> str:
        """A save's ``source``: ``session:<id>`` of the session this chat is in (the Claude
        Code hooks' active one, else the ``mcp`` channel's), so the session's page lists what
        was saved in it; ``mcp`` when there is none."""
        sid = claude_code.live_session(mem)
        if sid is None:
            current = mem.sessions.current(MCP_CHANNEL)
            sid = str(current["id"]) if current is not None else None
        return f"session:{sid}" if sid else "mcp"

    def session_memory(self, channel: str | None) -> tuple[Memory, str | None]:
        """The memory on ``channel`` and, with no channel given, the Claude Code hooks'
        active session to join (None: there is none, the ``mcp`` channel is used)."""
        mem = self.memory(channel or MCP_CHANNEL)
        if channel is None:
            joined = claude_code.live_session(mem)
            if joined is not None:
                mem.channel = claude_code.CHANNEL
                return mem, joined
        return mem, None

    @guard
    def session_start(
        self,
        goal: Annotated[str | None, Field(max_length=5000, description="What it is for.")] = None,
        name: Annotated[
            str | None, Field(max_length=200, description="A short name (new sessions only).")
        ] = None,
        channel: Channel = None,
    ) -> str:
        """Say what this working session is for. When Claude Code's hooks already keep a
        session for this project (they log the prompts, replies and files), this joins it
        and sets its goal ("joined": true); otherwise it starts a session on the channel
        ('mcp' by default). Returns the session id; session_log and session_end act on it."""
        mem, joined = self.session_memory(channel)
        if joined is not None:
            found = mem.sessions.set_goal(joined, goal) if goal else mem.sessions.get(joined)
        else:
            found = mem.sessions.start(goal=goal, name=name)
        keep = ("id", "channel", "status", "goal", "started_at")
        return compact({**{k: found[k] for k in keep}, "joined": joined is not None})

    @guard
    def session_log(
        self,
        content: Annotated[str, Field(min_length=1, description="The message text.")],
        role: Annotated[Role, Field(description="Who said it.")] = "assistant",
        session_id: Annotated[
            str | None, Field(description="Default: the current session (see channel).")
        ] = None,
        channel: Channel = None,
    ) -> str:
        """Add a note to the current session (the Claude Code hooks' session when one is
        active, which already records prompts and replies; else the channel's, started if
        none). In assistant messages, [MEMORIZE: fact] saves the fact as a long-term
        learning. Returns the message id and how many facts were memorized."""
        mem, joined = self.session_memory(channel)
        done = mem.log(content, role=role, session_id=session_id or joined)
        return compact(
            {
                "id": done.message["id"],
                "session_id": done.session_id,
                "memorized": len(done.memorize),
                "summary_queued": done.summary_queued,
            }
        )

    @guard
    def session_error(
        self,
        error: Annotated[
            str | None,
            Field(
                min_length=1,
                max_length=5000,
                description="The error met (a failing command, a wrong assumption). Omit it "
                "to resolve one kept earlier.",
            ),
        ] = None,
        resolution: Annotated[
            str | None, Field(min_length=1, max_length=5000, description="How it was fixed.")
        ] = None,
        error_id: Annotated[
            str | None,
            Field(description="The error to resolve (default: the newest one still open)."),
        ] = None,
        file: Annotated[
            str | None, Field(max_length=1000, description="The file it was about.")
        ] = None,
        session_id: Annotated[
            str | None, Field(description="Default: the current session (see channel).")
        ] = None,
        channel: Channel = None,
    ) -> str:
        """Keep an error met in the current session, and how it was fixed: the session's
        summary lists the errors found and resolved, and the next session starts with them.
        With error (and resolution when it is already fixed) it keeps a new one; with only
        resolution it resolves the newest open error, or error_id. The same error still open
        is not kept twice. Returns the error and its session id."""
        mem, joined = self.session_memory(channel)
        sid = session_id or joined
        if error is not None and error_id is None:
            found = mem.record_error(error, resolution, file=file, session_id=sid)
        elif error is None and resolution is not None and file is None:
            found = mem.resolve_error(resolution, error_id, session_id=sid)
        else:
            raise InputError(
                "give error (with resolution when it is fixed) to keep an error, or resolution "
                "(with error_id, or none for the newest open one) to resolve one"
            )
        return compact({**found, "session_id": sid or mem.sessions.current_id(start=False)})

    @guard
    def session_end(
        self,
        session_id: Annotated[
            str | None, Field(description="Default: the current session (see channel).")
        ] = None,
        channel: Channel = None,
    ) -> str:
        """End the current session (the Claude Code hooks' session when one is active; what
        Claude Code recorded so far is included) and write its summary: Goal, Instructions,
        Discoveries, Accomplished, Next Steps, Relevant Files. The next session starts with
        it. Later work goes to a new session."""
        mem, joined = self.session_memory(channel)
        sid = session_id or joined or mem.sessions.current_id(start=False)
        claude_code.capture_session(mem, sid)
        ended = mem.sessions.end(sid)
        return compact(
            {"id": ended["id"], "status": ended["status"], **(ended["end_summary"] or {})}
        )

    @guard
    def entity_file(
        self, path: Annotated[str, Field(min_length=1, description="Repository path.")]
    ) -> str:
        """The code map's entry for a file: language, purpose, imports, exports, functions,
        size, complexity, notes, last_modified. Needs `pmem scan` (or the watch daemon) to
        have run."""
        found = self.memory().get_file_info(path)
        if found is None:
            raise NotFoundError(
                f"no file entity for {path}", hint="not scanned yet? run `pmem scan`"
            )
        return compact(_trim(found))

    @guard
    def entity_function(
        self,
        name: Annotated[str, Field(min_length=1, description="Name, Class.method, or path::name.")],
    ) -> str:
        """Where a function or method is defined, its signature, summary, calls and callers
        (several files may define one name)."""
        found = self.memory().code.functions(name)
        if not found:
            raise NotFoundError(f"no function named {name!r}", hint="try memory_search")
        return compact({"definitions": _trim(found)})

    @guard
    def entity_area(
        self,
        name: Annotated[
            str,
            Field(
                min_length=1,
                description="A feature area (e.g. 'authentication'), a file path, a "
                "component or a function.",
            ),
        ],
    ) -> str:
        """How part of the code relates to the rest: a feature area's files, entry point and
        dependencies, or a file's / component's / function's imports, users and areas."""
        return compact(_trim(self.memory().get_relationships(name)))

    def all(self) -> list[Callable[..., str]]:
        return [
            self.memory_save,
            self.memory_search,
            self.memory_stats,
            self.memory_get,
            self.memory_context,
            self.memory_timeline,
            self.memory_pin,
            self.memory_forget,
            self.session_start,
            self.session_log,
            self.session_error,
            self.session_end,
            self.entity_file,
            self.entity_function,
            self.entity_area,
        ]
