"""Contextual commands: search, context, timeline, reindex, stats."""

from __future__ import annotations

import dataclasses
from typing import Any

import click

from planning_memory.cli.base import Context, cli, emit, json_option, pass_ctx

# the sources the search index stores (search.documents.SOURCES; not imported, to keep start-up
# light: tests/test_search.py checks they are the same)
SOURCES = ["record", "entity", "code", "doc", "message", "decision", "session"]


@cli.command()
@click.argument("query")
@click.option(
    "--source",
    "sources",
    multiple=True,
    type=click.Choice(SOURCES),
    metavar="SOURCE",
    help="Only this source (repeatable): record (saved memories: patterns, mistakes, "
    "learnings; there is no 'memory' source), entity (the code map), code, doc (the "
    "repository's files), message, decision, session (what sessions logged).",
)
@click.option(
    "--type",
    "types",
    multiple=True,
    help="Only this type (repeatable): pattern, mistake, decision, file, function, message, ...",
)
@click.option(
    "--scope",
    type=click.Choice(["project", "personal"]),
    default=None,
    help="Only this scope (default: both). Personal records are every project's: those saved "
    "from this project and those of no project first, the others naming their project.",
)
@click.option(
    "--all-projects",
    is_flag=True,
    help="Rank every project's personal records alike, this project's not first (each hit "
    "names its project).",
)
@click.option("--tag", "tags", multiple=True, help="Only records with this tag (repeatable).")
@click.option("-n", "--limit", default=10, show_default=True, type=click.IntRange(1, 200))
@click.option(
    "--threshold",
    default=0.0,
    show_default=True,
    type=click.FloatRange(0, 1),
    help="Drop hits scoring below this fraction of the best hit.",
)
@click.option(
    "--any",
    "match_any",
    is_flag=True,
    help="Match any term (default: all terms first, then any when that finds too little).",
)
@click.option(
    "--semantic/--no-semantic",
    default=None,
    help="Fuse BM25 with the memories nearest in meaning (the local embedding model; default: "
    "on when the index holds vectors). --semantic warns when the model is not installed; "
    "--no-semantic leaves the vectors out.",
)
@json_option
@pass_ctx
def search(
    ctx: Context,
    query: str,
    sources: tuple[str, ...],
    types: tuple[str, ...],
    scope: str | None,
    all_projects: bool,
    tags: tuple[str, ...],
    limit: int,
    threshold: float,
    match_any: bool,
    semantic: bool | None,
    as_json: bool,
) -> None:
    """Search memory, code, docs and sessions (BM25 with recency and usage boosts).

    \b
    Examples:
      pmem search "auth session strategy"
      pmem search fetch timeout --source record --type mistake --json
      pmem search "where are retries configured" --semantic
      pmem search "release checklist" --scope personal --all-projects
    """
    warnings: list[str] = []
    mem = ctx.memory()
    hits = mem.search(
        query,
        sources=sources,
        types=types,
        scope=scope,
        tags=tags,
        limit=limit,
        threshold=threshold,
        match="any" if match_any else "auto",
        semantic=semantic,
        warnings=warnings,
        all_projects=all_projects,
    )
    for warning in warnings:
        click.echo(f"warning: {warning}", err=True)
    named = mem.contextual.projects_named(hits, every=all_projects)
    lines = [
        f"{h.score:5.2f}  {h.type:<10} {h.ref_id or h.key}  {h.title}"
        + (f"  [{named[h.key] or 'no project'}]" if h.key in named else "")
        + f"\n       {h.snippet}"
        for h in hits
    ]
    rows = [{**h.as_dict(), **({"project": named[h.key]} if h.key in named else {})} for h in hits]
    emit(rows, as_json, "\n".join(lines) or "No results.")


@cli.command()
@click.argument("task")
@click.option(
    "-b",
    "--budget",
    type=click.IntRange(100, 20000),
    default=None,
    help="Token budget, 100-20000 (default: the config's injectBudgetTokens, 1500).",
)
@click.option(
    "-f",
    "--format",
    "fmt",
    type=click.Choice(["md", "xml", "json", "agent"]),
    default="md",
    show_default=True,
    help="agent: seed 000's agent prompt, the memory context then the task "
    "(prepare_agent_context), within the budget.",
)
@click.option(
    "--session",
    "session_id",
    default=None,
    help="Session to include; the learnings delivered count as applied, once per session.",
)
@click.option("--agent", default=None, help="The agent the context is for.")
@pass_ctx
def context(
    ctx: Context, task: str, budget: int | None, fmt: str, session_id: str | None, agent: str | None
) -> None:
    """What an agent should know before TASK: patterns to follow, mistakes to avoid, relevant
    files, related content, session and temporal context, within a token budget.

    \b
    Examples:
      pmem context "add password reset to the login form"
      pmem context "fix the flaky auth test" --budget 800 --format xml
      pmem context "add a signup form" --format agent --agent executor
    """
    mem = ctx.memory()
    if fmt == "agent":
        click.echo(mem.prepare_agent_context(agent or "agent", task, budget=budget), nl=False)
        return
    pack = mem.context(task, budget=budget, fmt=fmt, session_id=session_id, agent=agent)
    click.echo(pack.text)


@cli.command()
@click.argument("item_id")
@click.option("--before", default=5, show_default=True, type=click.IntRange(0, 100))
@click.option("--after", default=5, show_default=True, type=click.IntRange(0, 100))
@json_option
@pass_ctx
def timeline(ctx: Context, item_id: str, before: int, after: int, as_json: bool) -> None:
    """The chronological neighbours of a memory, message or decision, in its session.

    A message, a decision or a memory saved in a session (its source is session:<id>) gets
    that session's messages, decisions, errors and saved memories around it; a memory saved
    outside a session gets the memories created just before and after it.

    \b
    Example:
      pmem timeline dec_01HMKP5GC0QR5G41H5MY08Y01C --before 3 --after 3
    """
    entries = ctx.memory().timeline(item_id, before=before, after=after)
    lines = [f"{'>' if e.anchor else ' '} {e.at}  {e.kind:<10} {e.id}  {e.text}" for e in entries]
    emit([e.as_dict() for e in entries], as_json, "\n".join(lines))


@cli.command()
@click.option("--no-code", is_flag=True, help="Index memory only, not the code and docs.")
@click.option(
    "--finish",
    is_flag=True,
    help="Only finish what an agent hook left pending (the code map and the code, indexed "
    "in the background after a hook indexed the memories); resumable.",
)
@json_option
@pass_ctx
def reindex(ctx: Context, no_code: bool, finish: bool, as_json: bool) -> None:
    """Rebuild the search index from the files (it is derived; safe to delete at any time).

    \b
    Examples:
      pmem reindex
      pmem reindex --finish
    """
    if finish:
        done = ctx.memory().contextual.finish_index()
        text = "Index complete." if done else "Another process is finishing the index."
        emit({"finished": done}, as_json, text)
        return
    report = ctx.memory().reindex(code=not no_code)
    data = dataclasses.asdict(report)
    emit(data, as_json, f"Indexed {data['changed']} documents from {data['seen']} sources.")


@cli.command()
@json_option
@pass_ctx
def stats(ctx: Context, as_json: bool) -> None:
    """Counts per level, the index's size and the last scan.

    \b
    Example:
      pmem stats --json
    """
    mem = ctx.memory()
    data: dict[str, Any] = mem.counts()
    data["index"] = mem.contextual.stats()
    data["entity"]["last_scan"] = mem.code.last_written()
    idx = data["index"]
    lines = [
        f"long-term   {data['long_term']['records']} records",
        f"short-term  {data['short_term']['sessions']} sessions",
        f"entity      {data['entity']['files']} entity files; last scan "
        f"{data['entity']['last_scan'] or 'never'}",
        f"index       {idx['documents']} documents, {idx['bytes'] / 1e6:.1f} MB, "
        f"built {idx['built_at']}",
    ]
    lines += [f"  {source:<10} {count}" for source, count in sorted(idx["per_source"].items())]
    emit(data, as_json, "\n".join(lines))
