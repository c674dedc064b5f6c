"""Short-term commands: ``pmem session ...``."""

from __future__ import annotations

import sys
from typing import Any

import click

from planning_memory.cli.base import Context, cli, emit, json_option, pass_ctx
from planning_memory.memory import Memory

channel_option = click.option(
    "--channel",
    default="cli",
    show_default=True,
    help="The connector or agent the session belongs to (cli, claude-code, discord:<id>, ...).",
)
session_option = click.option(
    "--session",
    "session_id",
    default=None,
    help="Session id (default: the channel's active session).",
)


def _mem(ctx: Context, channel: str) -> Memory:
    mem = ctx.memory()
    mem.channel = channel
    return mem


@cli.group()
def session() -> None:
    """Short-term memory: sessions, their messages, decisions, files and summaries.

    Each channel (cli, claude-code, discord:<id>, ...) has its own sessions; commands act on
    the channel's active session unless --session is given.

    \b
    Examples:
      pmem session start --goal "Add login"
      pmem session log "Use NextAuth" --role user
      pmem session decide "Which auth library?" "NextAuth.js" --why "OAuth support"
      pmem session end
    """


@session.command()
@click.option("--goal", default=None, help="What the session is for.")
@click.option("--name", default=None, help="A short name.")
@channel_option
@json_option
@pass_ctx
def start(ctx: Context, goal: str | None, name: str | None, channel: str, as_json: bool) -> None:
    """Start a new session on a channel.

    \b
    Example:
      pmem session start --goal "Implement login" --channel claude-code
    """
    found = _mem(ctx, channel).sessions.start(goal=goal, name=name)
    emit(found, as_json, f"Started {found['id']} on {channel}")


@session.command()
@click.argument("content")
@click.option(
    "--role",
    type=click.Choice(["user", "assistant", "system", "tool"]),
    default="user",
    show_default=True,
)
@session_option
@channel_option
@json_option
@pass_ctx
def log(
    ctx: Context, content: str, role: str, session_id: str | None, channel: str, as_json: bool
) -> None:
    """Record a message. [MEMORIZE: fact] markers in assistant output become learnings.

    \b
    Examples:
      pmem session log "Add a login form" --role user
      pmem session log "Done. [MEMORIZE: forms use react-hook-form]" --role assistant
    """
    done = _mem(ctx, channel).log(content, role=role, session_id=session_id)
    data = {
        "session": done.session_id,
        "message": done.message["id"],
        "memorized": done.memorize,
        "summary_queued": done.summary_queued,
        "gap_days": done.gap_days(),
    }
    text = f"Recorded {done.message['id']} in {done.session_id}"
    if done.memorize:
        text += f"; memorized {len(done.memorize)} fact(s)"
    if data["gap_days"]:
        text += f"; {data['gap_days']} days have passed since the last message"
    emit(data, as_json, text)


@session.command()
@click.argument("question")
@click.argument("decision")
@click.option("--why", "reasoning", default="", help="The reasoning.")
@click.option("--alt", "alternatives", multiple=True, help="An alternative considered.")
@session_option
@channel_option
@json_option
@pass_ctx
def decide(
    ctx: Context,
    question: str,
    decision: str,
    reasoning: str,
    alternatives: tuple[str, ...],
    session_id: str | None,
    channel: str,
    as_json: bool,
) -> None:
    """Record a decision (question, decision, reasoning, alternatives).

    \b
    Example:
      pmem session decide "Auth library?" "NextAuth.js" --why "Next.js" --alt Auth0 --alt Clerk
    """
    found = _mem(ctx, channel).record_decision(
        question, decision, reasoning, alternatives, session_id=session_id
    )
    emit(found, as_json, f"Recorded decision {found['id']}")


@session.command(name="file")
@click.argument("path")
@click.option(
    "--action",
    type=click.Choice(["read", "created", "modified", "deleted"]),
    default="read",
    show_default=True,
)
@session_option
@channel_option
@json_option
@pass_ctx
def file_(
    ctx: Context, path: str, action: str, session_id: str | None, channel: str, as_json: bool
) -> None:
    """Record that a file was read, created, modified or deleted.

    \b
    Example:
      pmem session file src/app/layout.tsx --action modified
    """
    found = _mem(ctx, channel).record_file_access(path, action, session_id=session_id)
    emit(found, as_json, f"Recorded {action} {found['path']}")


@session.command()
@click.argument("action")
@click.argument("result", required=False, default="")
@session_option
@channel_option
@json_option
@pass_ctx
def step(
    ctx: Context, action: str, result: str, session_id: str | None, channel: str, as_json: bool
) -> None:
    """Log a step and its result (kept to 200 characters).

    \b
    Example:
      pmem session step "ran tests" "42 passed"
    """
    found = _mem(ctx, channel).sessions.add_step(session_id, action, result)
    emit(found, as_json, f"Logged step: {found['action']}")


@session.command()
@click.argument("error")
@click.option("--resolved", "resolution", default=None, help="How it was resolved.")
@click.option("--file", "path", default=None, help="The file it is about (repository path).")
@click.option("--tool", default=None, help="The tool or command that failed.")
@session_option
@channel_option
@json_option
@pass_ctx
def error(
    ctx: Context,
    error: str,
    resolution: str | None,
    path: str | None,
    tool: str | None,
    session_id: str | None,
    channel: str,
    as_json: bool,
) -> None:
    """Record an error met in the session, and how it was resolved if it was.

    The same error still open is not recorded twice (with --resolved it is resolved).
    `pmem session resolve` resolves one later.

    \b
    Examples:
      pmem session error "pytest: ImportError in tests/test_auth.py" --tool pytest
      pmem session error "ruff E501 in src/app.py" --file src/app.py --resolved "wrapped it"
    """
    found = _mem(ctx, channel).record_error(
        error, resolution, file=path, tool=tool, session_id=session_id
    )
    state = f"resolved: {found['resolution']}" if found["resolution"] else "open"
    emit(found, as_json, f"Recorded error {found['id']} ({state})")


@session.command()
@click.argument("resolution")
@click.option("--error", "error_id", default=None, help="Error id (default: the newest open).")
@session_option
@channel_option
@json_option
@pass_ctx
def resolve(
    ctx: Context,
    resolution: str,
    error_id: str | None,
    session_id: str | None,
    channel: str,
    as_json: bool,
) -> None:
    """Mark an error of the session resolved, saying how.

    \b
    Examples:
      pmem session resolve "pinned httpx<0.28"
      pmem session resolve "fixed the import" --error err_01HMKP5GC0QR5G41H5MY08Y01C
    """
    found = _mem(ctx, channel).resolve_error(resolution, error_id, session_id=session_id)
    emit(found, as_json, f"Resolved {found['id']}: {found['error'][:200]}")


@session.command(name="context")
@click.option("--task", default=None, help="Active task.")
@click.option("--phase", default=None, help="Active phase (planning, implementation, ...).")
@click.option("--focus", default=None, help="Focus area.")
@session_option
@channel_option
@json_option
@pass_ctx
def context_(
    ctx: Context,
    task: str | None,
    phase: str | None,
    focus: str | None,
    session_id: str | None,
    channel: str,
    as_json: bool,
) -> None:
    """Show the session context, or set the active task / phase / focus area.

    \b
    Examples:
      pmem session context --task "Implement login" --phase implementation
      pmem session context --json
    """
    mem = _mem(ctx, channel)
    changes = {
        k: v
        for k, v in (("active_task", task), ("active_phase", phase), ("focus_area", focus))
        if v is not None
    }
    if changes:
        mem.sessions.set_context(session_id, changes)
    found = mem.get_session_context(session_id)
    emit(found, as_json, _context_text(found))


def _context_text(found: dict[str, Any]) -> str:
    info = found["session"]
    lines = [f"Session {info['id']} ({info['channel']}, {info['status']})"]
    current = {k: v for k, v in found["current_context"].items() if v}
    if current:
        lines.append("  " + ", ".join(f"{k}: {v}" for k, v in current.items()))
    if found["rolling_summary"]["summary"]:
        lines.append(f"  summary: {found['rolling_summary']['summary']}")
    for message in found["window"]:
        lines.append(f"  [{message['role']}] {message['content'][:200]}")
    lines.append(f"  {found['temporal'].get('text', '')}".rstrip())
    return "\n".join(lines)


@session.command(name="list")
@click.option("--channel", default=None, help="Only this channel.")
@click.option("--status", type=click.Choice(["active", "paused", "ended"]), default=None)
@json_option
@pass_ctx
def list_(ctx: Context, channel: str | None, status: str | None, as_json: bool) -> None:
    """List sessions: id, channel, status, messages, then the name and the goal.

    \b
    Example:
      pmem session list --channel claude-code --status active
    """
    found = [i.as_dict() for i in ctx.memory().sessions.list(channel=channel, status=status)]
    lines = [
        (
            f"{i['id']}  {i['channel']:<14} {i['status']:<7} {i['message_count']:>5} msgs  "
            + "  ".join(filter(None, [i.get("name"), i["goal"] and f"goal: {i['goal']}"]))
        ).rstrip()
        for i in found
    ]
    emit(found, as_json, "\n".join(lines) or "No sessions.")


@session.command()
@click.argument("session_id", required=False)
@click.option("--all", "everything", is_flag=True, help="Include archived messages.")
@channel_option
@json_option
@pass_ctx
def show(
    ctx: Context, session_id: str | None, everything: bool, channel: str, as_json: bool
) -> None:
    """Show a session (default: the channel's active one).

    \b
    Example:
      pmem session show ses_01HMKP5GC0QR5G41H5MY08Y01C --all --json
    """
    mem = _mem(ctx, channel)
    sid = session_id or mem.sessions.current_id(start=False)
    found = dict(mem.sessions.get(sid))
    if everything:
        found["messages"] = mem.sessions.history(sid)
    lines = [f"{found['id']} ({found['channel']}, {found['status']})"]
    lines[0] += f" {found['name']}" if found.get("name") else ""
    lines[0] += f" goal: {found['goal']}" if found.get("goal") else " (no goal set)"
    lines += [f"  {m['at']} [{m['role']}] {m['content'][:200]}" for m in found["messages"]]
    errors = found.get("errors") or []
    lines += ["errors:"] if errors else []
    lines += [
        f"  {e['at']} {e['id']} {e['error'][:200]}"
        + (f" [{e['file']}]" if e.get("file") else "")
        + (f" -> resolved: {e['resolution'][:200]}" if e["resolution"] else " (open)")
        for e in errors
    ]
    emit(found, as_json, "\n".join(lines))


@session.command()
@click.argument("session_ids", nargs=-1)
@json_option
@pass_ctx
def summarize(ctx: Context, session_ids: tuple[str, ...], as_json: bool) -> None:
    """Run the queued background summaries now (the daemon does this by itself).

    Uses the summariser command from the config, or the built-in extractive one. Exits 8 if a
    summariser failed (the session is left unchanged).

    \b
    Example:
      pmem session summarize
    """
    outcomes = ctx.memory().sessions.drain(list(session_ids) or None)
    data = [o.as_dict() for o in outcomes]
    lines = [
        f"{o.session_id}: {o.status}"
        + (f" ({o.summarized} summarised)" if o.summarized else "")
        + (f": {o.error}" if o.error else "")
        for o in outcomes
    ]
    emit(data, as_json, "\n".join(lines) or "Nothing queued.")
    if any(o.status == "failed" for o in outcomes):
        sys.exit(8)


def _lifecycle(name: str, doc: str) -> None:
    @session.command(name=name, help=doc)
    @click.argument("session_id", required=False)
    @channel_option
    @json_option
    @pass_ctx
    def command(ctx: Context, session_id: str | None, channel: str, as_json: bool) -> None:
        mem = _mem(ctx, channel)
        if name == "resume":
            found = mem.sessions.resume(session_id)
        elif name == "pause":
            found = mem.sessions.pause(session_id or mem.sessions.current_id(start=False))
        else:
            found = mem.sessions.end(session_id or mem.sessions.current_id(start=False))
        emit(found, as_json, f"{name}: {found['id']} is now {found['status']}")


_lifecycle(
    "pause",
    "Pause a session (writes a checkpoint when persistOnPause).\n\n\b\n"
    "Example:\n  pmem session pause",
)
_lifecycle(
    "resume",
    "Resume a paused session from its checkpoint (default: the channel's newest paused "
    "one).\n\n\b\nExamples:\n  pmem session resume\n"
    "  pmem session resume ses_01HMKP5GC0QR5G41H5MY08Y01C",
)
_lifecycle(
    "end",
    "End a session and write its summary (Goal, Instructions, Discoveries, "
    "Accomplished, Next Steps, Relevant Files).\n\n\b\nExample:\n  pmem session end",
)


@session.command()
@click.argument("session_id")
@json_option
@pass_ctx
def delete(ctx: Context, session_id: str, as_json: bool) -> None:
    """Delete a session and everything that belongs to it (archive, queued summary).

    \b
    Example:
      pmem session delete ses_01HMKP5GC0QR5G41H5MY08Y01C
    """
    gone = ctx.memory().sessions.delete(session_id)
    emit(
        {"session": gone.session_id, "removed": gone.paths},
        as_json,
        f"Deleted {gone.session_id}: {len(gone.paths)} file(s)",
    )


@session.command()
@click.argument("words", nargs=-1, required=True)
@session_option
@channel_option
@json_option
@pass_ctx
def rename(
    ctx: Context, words: tuple[str, ...], session_id: str | None, channel: str, as_json: bool
) -> None:
    """Name a session (default: the channel's active one); `-` clears the name.

    \b
    Examples:
      pmem session rename payments webhook retries
      pmem session rename "auth spike" --session ses_01HMKP5GC0QR5G41H5MY08Y01C
    """
    name = " ".join(words)
    found = _mem(ctx, channel).sessions.rename(session_id, None if name == "-" else name)
    emit(found, as_json, f"{found['id']} is now named {found['name'] or '(no name)'}")


@session.command()
@click.argument("session_id", required=False)
@click.option("-n", "--limit", default=10, show_default=True, type=click.IntRange(1, 1000))
@click.option("--text", "with_text", is_flag=True, help="Print each injected text in full.")
@json_option
@pass_ctx
def injected(
    ctx: Context, session_id: str | None, limit: int, with_text: bool, as_json: bool
) -> None:
    """What was injected into the agent's context at session starts, newest first: the task
    searched for, the tokens used of the budget, and each item with its reason.

    \b
    Examples:
      pmem session injected
      pmem session injected ses_01HMKP5GC0QR5G41H5MY08Y01C --text
    """
    found = ctx.memory().sessions.injections(session_id, limit)
    lines = []
    for entry in found:
        lines.append(
            f"{entry['at']} {entry['session_id']} {entry['event']}: "
            f"{entry['tokens']}/{entry['budget']} tokens, task: {entry['task'] or '(none)'}"
        )
        lines += [f"  {i['tokens']:>5}  {i['id']}  ({i['reason']})" for i in entry["items"]]
        if with_text:
            lines += ["", entry["text"], ""]
    emit(found, as_json, "\n".join(lines) or "Nothing injected yet.")
