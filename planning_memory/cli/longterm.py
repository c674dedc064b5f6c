"""Long-term commands: save, forget, pin, patterns, mistakes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from planning_memory.cli.base import Context, cli, emit, json_option, pass_ctx, view_notes
from planning_memory.errors import InputError
from planning_memory.memory import Memory

if TYPE_CHECKING:
    from planning_memory.longterm import Lesson

# -- long-term -------------------------------------------------------------------------------
RECORD_TYPES = (
    "pattern",
    "mistake",
    "bugfix",
    "decision",
    "discovery",
    "architecture",
    "config",
    "preference",
    "learning",
)
scope_option = click.option(
    "--scope",
    type=click.Choice(["project", "personal"]),
    default="project",
    show_default=True,
    help="project: this repository's .planning/; personal: your own "
    "store in $XDG_STATE_HOME, never inside a repository.",
)


def outcome_text(summary: dict[str, Any]) -> str:
    text = f"{summary['action']}: {summary['id']} ({summary['type']}) {summary['title']}"
    for note in summary.get("notes", []):
        text += f"\n  {note}"
    for archived in summary.get("archived", []):
        text += (
            f"\n  archived {archived}: over the cap (maxPatterns / maxMistakes), the least used"
            " record neither established nor pinned (a soft delete: its file stays, with"
            " deleted_at)"
        )
    return text


def _scoped(ctx: Context, scope: str) -> Memory:
    return (
        Memory.open(ctx.root).for_scope(scope)
        if scope == "project"
        else (Memory(ctx.root or Path.cwd(), personal=True))
    )


def _saving_to(ctx: Context, scope: str | None) -> tuple[Memory, str]:
    """Where a save goes: ``--scope``, else the config's ``agents.defaultScope``."""
    if scope is None:
        scope = str(Memory.open(ctx.root).settings("agents")["defaultScope"])
    return _scoped(ctx, scope), scope


@cli.command()
@click.argument("title")
@click.option(
    "-t",
    "--type",
    "record_type",
    type=click.Choice(RECORD_TYPES),
    default="learning",
    show_default=True,
    help="Kind of observation.",
)
@click.option("--what", default="", help="What happened or what it is.")
@click.option("--why", default="", help="Why it matters.")
@click.option("--where", default="", help="Where in the code it applies.")
@click.option("--learned", default="", help="What to do next time.")
@click.option("--tag", "tags", multiple=True, help="A tag (repeatable).")
@click.option(
    "--topic",
    "topic_key",
    default=None,
    help="family/kebab-case key: saving the same topic again updates that record.",
)
@click.option("--description", default="", help="pattern/mistake: description.")
@click.option("--example", default="", help="pattern: an example.")
@click.option("--correction", default="", help="mistake: the correction.")
@click.option(
    "--severity",
    type=click.Choice(["low", "medium", "high", "critical"]),
    default="medium",
    show_default=True,
    help="mistake: severity.",
)
@click.option(
    "--anchor",
    "anchors",
    multiple=True,
    help="Code it is about: PATH or "
    "PATH::SYMBOL (repeatable); a later change to that code marks it for review.",
)
@click.option("--pin", "pinned", is_flag=True, help="Pin it: always included in context.")
@click.option(
    "--scope",
    type=click.Choice(["project", "personal"]),
    default=None,
    help="project: this repository's .planning/; personal: your own store in "
    "$XDG_STATE_HOME, never inside a repository. Default: the config's agents.defaultScope "
    "(project).",
)
@json_option
@pass_ctx
def save(
    ctx: Context,
    title: str,
    record_type: str,
    what: str,
    why: str,
    where: str,
    learned: str,
    tags: tuple[str, ...],
    topic_key: str | None,
    description: str,
    example: str,
    correction: str,
    severity: str,
    anchors: tuple[str, ...],
    pinned: bool,
    scope: str | None,
    as_json: bool,
) -> None:
    """Save an observation (seed 003's memory_save) with What / Why / Where / Learned.

    A similar pattern is reinforced and a similar mistake counted again instead of duplicated
    (the output says "merged into ID" and how similar; --json: "merged"); the same --topic in
    the same scope updates the earlier record; the same text again within 15 minutes only
    bumps its duplicate count. Past maxPatterns / maxMistakes a new pattern or mistake
    archives the least used one (the output names it; --json: "archived").

    \b
    Examples:
      pmem save "Use zod for request validation" -t pattern --tag typescript
      pmem save "JWT sessions, not DB sessions" -t decision --why "edge runtime" \\
          --topic auth/session-strategy
      pmem save "Do not use any" -t mistake --correction "use unknown" --severity high
    """
    if not title.strip():
        raise InputError("the title is blank", hint="give the observation a title: pmem save TITLE")
    mem, scope = _saving_to(ctx, scope)
    outcome = mem.save_observation(
        title,
        record_type,
        what=what,
        why=why,
        where=where,
        learned=learned,
        tags=tags,
        topic_key=topic_key,
        pinned=pinned,
        scope=scope,
        source="cli",
        anchors=anchors,
        description=description,
        example=example,
        correction=correction,
        severity=severity,
    )
    view_notes(mem)
    emit(outcome.summary(), as_json, outcome_text(outcome.summary()))


@cli.command()
@click.argument("record_id")
@click.option("--hard", is_flag=True, help="Remove the file instead of a soft delete.")
@scope_option
@json_option
@pass_ctx
def forget(ctx: Context, record_id: str, hard: bool, scope: str, as_json: bool) -> None:
    """Forget a record: soft delete (kept, hidden) unless --hard.

    \b
    Examples:
      pmem forget pat_01HMKP5GC0QR5G41H5MY08Y01C
      pmem forget mis_01HMKP5GC0QR5G41H5MY08Y01C --hard
    """
    mem = _scoped(ctx, scope)
    outcome = mem.forget(record_id, hard=hard)
    view_notes(mem)
    emit(outcome.summary(), as_json, outcome_text(outcome.summary()))


@cli.command()
@click.argument("record_id")
@click.option("--off", is_flag=True, help="Unpin instead.")
@scope_option
@json_option
@pass_ctx
def pin(ctx: Context, record_id: str, off: bool, scope: str, as_json: bool) -> None:
    """Pin a record (always included in context), or unpin it with --off.

    \b
    Example:
      pmem pin pat_01HMKP5GC0QR5G41H5MY08Y01C
    """
    mem = _scoped(ctx, scope)
    outcome = mem.pin(record_id, pinned=not off)
    view_notes(mem)
    emit(outcome.summary(), as_json, outcome_text(outcome.summary()))


def _list_records(mem: Memory, record_type: str, deleted: bool) -> list[dict[str, Any]]:
    found = mem.records(record_type, deleted=deleted)
    if record_type == "pattern":
        found.sort(key=lambda r: (not r["established"], -r["usage_count"], r["id"]))
    else:
        order = {"critical": 0, "high": 1, "medium": 2, "low": 3}
        found.sort(key=lambda r: (order[r["severity"]], -r["occurrences"], r["id"]))
    return found


@cli.command()
@click.option("--deleted", is_flag=True, help="Include soft-deleted records.")
@scope_option
@json_option
@pass_ctx
def patterns(ctx: Context, deleted: bool, scope: str, as_json: bool) -> None:
    """List learned patterns, established first.

    \b
    Example:
      pmem patterns --json
    """
    found = _list_records(_scoped(ctx, scope), "pattern", deleted)
    lines = [
        f"{'*' if r['established'] else ' '} {r['id']}  {r['name']}  "
        f"(used {r['usage_count']}x{', pinned' if r['pinned'] else ''})"
        for r in found
    ]
    emit(found, as_json, "\n".join(lines) or "No patterns yet.")


@cli.command()
@click.option("--deleted", is_flag=True, help="Include soft-deleted records.")
@scope_option
@json_option
@pass_ctx
def mistakes(ctx: Context, deleted: bool, scope: str, as_json: bool) -> None:
    """List mistakes to avoid, most severe first.

    \b
    Example:
      pmem mistakes --json
    """
    found = _list_records(_scoped(ctx, scope), "mistake", deleted)
    lines = [
        f"[{r['severity']}] {r['id']}  {r['description']}"
        + (f" -> {r['correction']}" if r["correction"] else "")
        + f"  ({r['occurrences']}x)"
        for r in found
    ]
    emit(found, as_json, "\n".join(lines) or "No mistakes recorded.")


@cli.command(name="learn")
@click.argument("utterance")
@json_option
@pass_ctx
def learn_(ctx: Context, utterance: str, as_json: bool) -> None:
    """Learn from what someone said: trigger phrases become a pattern, mistake or preference.

    English: "always use X", "in this project we use", "the convention is", "never use",
    "avoid", "that's wrong", "I prefer", "use X instead of Y"; Spanish: "siempre usa",
    "en este proyecto usamos", "la convención es", "nunca uses", "evita", "eso está mal",
    "prefiero", "usa X en vez de Y". Every rule said is learned, one line each ("Always use
    pnpm. Never commit .env files." teaches two). Praise ("perfect", "muy bien") reinforces
    the latest pattern. With no trigger, or a correction that names nothing ("No, así no"),
    nothing is saved. autoLearn off: only a suggestion; confirmBeforeLearn on: the item waits
    in `pmem review`. Saved where the config's agents.defaultScope says (project).

    \b
    Examples:
      pmem learn "always use pnpm, never npm"
      pmem learn "usa zod en vez de yup"
    """
    mem = ctx.memory()
    lesson = mem.learn_utterance(utterance)
    view_notes(mem)
    emit(lesson.summary(), as_json, "\n".join(_lesson_line(each) for each in lesson.each()))


def _lesson_line(lesson: Lesson) -> str:
    found = lesson.trigger
    if found is None:
        return "No learning trigger found; nothing saved."
    said = f"{found.kind} ({found.phrase!r})"
    if found.bare:
        return f"{said}: a correction that names nothing; nothing saved."
    if lesson.outcome is None:
        return f"{said}: nothing to reinforce yet."
    return f"{said} -> " + outcome_text(lesson.outcome.summary())


@cli.command()
@click.option("--accept", "accept_ids", multiple=True, help="Accept this queued item (repeat).")
@click.option("--reject", "reject_ids", multiple=True, help="Reject this queued item (repeat).")
@click.option("--accept-all", is_flag=True, help="Accept everything waiting.")
@json_option
@pass_ctx
def review(
    ctx: Context,
    accept_ids: tuple[str, ...],
    reject_ids: tuple[str, ...],
    accept_all: bool,
    as_json: bool,
) -> None:
    """List, accept or reject learned items waiting for review (confirmBeforeLearn).

    \b
    Examples:
      pmem review
      pmem review --accept pat_01HMKP5GC0QR5G41H5MY08Y01C --reject mis_01HMKP6...
      pmem review --accept-all
    """
    mem = ctx.memory()
    if accept_all:
        accept_ids = tuple(i["record"]["id"] for i in mem.longterm.review_queue())
    done = [mem.review_accept(i).summary() for i in accept_ids]
    rejected = [mem.longterm.reject(i)["record"]["id"] for i in reject_ids]
    if done:
        view_notes(mem)
    if accept_ids or reject_ids:
        lines = [outcome_text(d) for d in done] + [f"rejected {i}" for i in rejected]
        emit({"accepted": done, "rejected": rejected}, as_json, "\n".join(lines))
        return
    queue = mem.longterm.review_queue()
    lines = [
        f"{i['record']['id']}  {i['record']['type']:<10} {i['record']['title']}  "
        f"(from: {i['utterance'][:60]})"
        for i in queue
    ]
    emit(queue, as_json, "\n".join(lines) or "Nothing waiting for review.")


def _value(text: str) -> Any:
    """A preference value from the command line: JSON when it parses (2, true, null,
    ["a", "b"]), else the text itself."""
    try:
        return json.loads(text)
    except ValueError:
        return text


@cli.group(invoke_without_command=True)
@json_option
@click.pass_context
def prefs(click_ctx: click.Context, as_json: bool) -> None:
    """Show or change preferences.json (code style, testing, architecture, tooling ...).

    Taught rules fill it too: "prefiero comillas simples" sets code_style.quotes.

    \b
    Examples:
      pmem prefs
      pmem prefs set code_style.quotes single
      pmem prefs set testing.coverage 80
      pmem prefs set architecture.avoid_patterns '["god-objects"]'
      pmem prefs unset testing.style
    """
    if click_ctx.invoked_subcommand is None:
        found = click_ctx.ensure_object(Context).memory().preferences()
        lines = [
            f"{section}.{key} = {json.dumps(value, ensure_ascii=False)}"
            for section, values in sorted(found.items())
            if isinstance(values, dict)
            for key, value in sorted(values.items())
        ]
        emit(found, as_json, "\n".join(lines) or "No preferences yet.")


@prefs.command(name="set")
@click.argument("key")
@click.argument("value")
@json_option
@pass_ctx
def prefs_set(ctx: Context, key: str, value: str, as_json: bool) -> None:
    """Set KEY (section.key, snake_case) to VALUE (JSON when it parses, else text; a list
    adds to the list there).

    \b
    Examples:
      pmem prefs set code_style.quotes single
      pmem prefs set architecture.avoid_patterns '["god-objects"]'
    """
    found = ctx.memory().set_preferences({key: _value(value)})
    emit(found, as_json, f"{key} = {json.dumps(_value(value), ensure_ascii=False)}")


@prefs.command(name="unset")
@click.argument("keys", nargs=-1, required=True)
@json_option
@pass_ctx
def prefs_unset(ctx: Context, keys: tuple[str, ...], as_json: bool) -> None:
    """Remove preferences (section.key); a section left empty goes.

    \b
    Example:
      pmem prefs unset testing.style code_style.quotes
    """
    found = ctx.memory().set_preferences(dict.fromkeys(keys))
    emit(found, as_json, f"removed {', '.join(keys)}")
