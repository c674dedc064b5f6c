"""Foundation commands: init, validate, show, export, import."""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import click

from planning_memory.cli.base import (
    Context,
    cli,
    emit,
    json_option,
    json_text,
    pass_ctx,
    view_notes,
)
from planning_memory.errors import InputError, PlanningMemoryError
from planning_memory.memory import Memory


@cli.command()
@click.argument("path", required=False, type=click.Path(file_okay=False, path_type=Path))
@json_option
@pass_ctx
def init(ctx: Context, path: Path | None, as_json: bool) -> None:
    """Create an empty memory tree (.planning/) in PATH (default: the folder given with -C,
    else the working directory).

    Refuses to touch an existing tree.

    \b
    Examples:
      pmem init && git add .planning && git commit -m "Add project memory"
      pmem -C ../other-repo init
    """
    root = (path or ctx.root or Path.cwd()).resolve()
    mem = Memory.init(root)
    emit(
        {"created": str(mem.layout.planning)},
        as_json,
        f"Created {mem.layout.planning}\nNext: `pmem show`, or `pmem git install` for git.",
    )


@cli.command()
@click.argument("path", required=False, type=click.Path(exists=True, path_type=Path))
@json_option
@pass_ctx
def validate(ctx: Context, path: Path | None, as_json: bool) -> None:
    """Check every file of a memory tree against its schema.

    PATH may be a repository, a .planning folder (or a copy such as .planning.example/) or a
    single file. Prints each problem as `file: json-path: message`; exits 1 if any.

    \b
    Examples:
      pmem validate
      pmem validate .planning.example
      pmem validate .planning/memory/long-term/patterns/pat_01HV...json
    """
    report = Memory.validate(path or ctx.root or Path.cwd())
    findings, files = report.findings, report.files
    lines = [f.line() for f in findings]
    emit(
        {
            "files": files,
            "ok": not findings,
            "problems": [
                {"path": f.path, "json_path": f.json_path, "message": f.message} for f in findings
            ],
        },
        as_json,
        "\n".join([*lines, f"{files} files checked, {len(findings)} problems"]),
    )
    if findings:
        sys.exit(1)


@cli.command()
@click.argument("item_id", metavar="[ID]", required=False)
@json_option
@pass_ctx
def show(ctx: Context, item_id: str | None, as_json: bool) -> None:
    """Show what is in memory: counts per level, the latest searches (seed 000's
    recentQueries; --json gives all), and the project id (seed 003's <name>-<hash8>) that
    personal-scope saves made here carry. With an ID, that memory, every field (as `pmem
    memory show ID`).

    \b
    Examples:
      pmem show --json | jq .long_term
      pmem show pat_01HMKP5GC0QR5G41H5MY08Y01C
    """
    if item_id is not None:
        show_item(ctx, item_id, as_json)
        return
    counts = ctx.memory().counts()
    lt = counts["long_term"]
    by_type = ", ".join(f"{k} {v}" for k, v in lt["by_type"].items()) or "none"
    text = "\n".join(
        [
            f"Memory at {counts['root']}",
            f"  project      {counts['project']}",
            f"  short-term   {_count(counts['short_term']['sessions'], 'session')}",
            f"  long-term    {lt['records']} records ({by_type}); {lt['pinned']} pinned, "
            f"{lt['established_patterns']} established patterns, {lt['deleted']} deleted; "
            f"{lt['preferences']} preference sections",
            f"  entity       {counts['entity']['files']} entity files",
            "  contextual   index "
            + (
                "present"
                if counts["contextual"]["index_present"]
                else "not built (run `pmem reindex`)"
            ),
            *_recent_lines(counts["contextual"]["recent_queries"]),
        ]
    )
    emit(counts, as_json, text)


def show_item(ctx: Context, item_id: str, as_json: bool) -> None:
    """Any memory by id, one ``field: value`` line each (empty fields left out)."""
    found = ctx.memory().find(item_id)
    lines = []
    for key, value in found.items():
        if value in (None, "", [], {}):
            continue
        shown = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        lines.append(f"{key}: {shown}")
    emit(found, as_json, "\n".join(lines))


def _recent_lines(queries: list[dict[str, Any]], shown: int = 5) -> list[str]:
    if not queries:
        return []
    noun = "search" if len(queries) == 1 else "searches"
    lines = [f"  recent       {len(queries)} {noun}, newest first"]
    for q in queries[:shown]:
        found = ", ".join(q["results"][:3]) or "no results"
        lines.append(f"    {q['at']}  {q['query'][:60]!r} -> {found}")
    return lines


@cli.command()
@click.argument("folder", metavar="[DIR]", required=False, type=click.Path(path_type=Path))
@click.option(
    "--to",
    "kind",
    type=click.Choice(["json", "memoria"]),
    default="json",
    show_default=True,
    help="json: one JSON document; memoria: an agent's memoria/ folder, DIR (its "
    "largo_plazo.json and sesion_actual.json).",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write to this file instead of standard output.",
)
@click.option("--seed-format", is_flag=True, help="Use the seed's camelCase field names.")
@click.option("--include-deleted", is_flag=True, help="Include soft-deleted records.")
@click.option(
    "--session",
    "session_id",
    default=None,
    help="--to memoria: the session written as sesion_actual.json (default: the newest).",
)
@click.option(
    "--force",
    is_flag=True,
    help="Overwrite the --output file if it exists; --to memoria: replace files that are not "
    "seed-shaped or hold what this memory lacks.",
)
@click.option(
    "--skip-broken",
    is_flag=True,
    help="Leave out record files that are broken (each named on stderr) instead of refusing.",
)
@json_option
@pass_ctx
def export(
    ctx: Context,
    folder: Path | None,
    kind: str,
    output: Path | None,
    seed_format: bool,
    include_deleted: bool,
    session_id: str | None,
    force: bool,
    skip_broken: bool,
    as_json: bool,
) -> None:
    """Export all memory as one JSON document {shortTerm, longTerm, entityMemory,
    contextualMemory}, or back into an agent's memoria/ folder (--to memoria DIR).

    Refuses to export a tree with broken record files (each is named on stderr) unless
    --skip-broken, to overwrite an existing file unless --force, and to write inside .planning/.

    --to memoria writes DIR/memoria/ when DIR holds one, else DIR: largo_plazo.json (the
    preference sections as its profile, every live record as a dated fact under
    "aprendido") and sesion_actual.json (a session's goal and steps). Files are written
    atomically, only when they change; a file that is not seed-shaped, or holds facts or a
    session this memory does not have, is left alone unless --force (import it first).
    `pmem import --from memoria DIR` reads it back and adds nothing already there.

    \b
    Examples:
      pmem export -o memory.json
      pmem export -o memory.json --force
      pmem export --seed-format > seed-shape.json
      pmem export --to memoria ../my-agent
    """
    mem = ctx.memory()
    if kind == "memoria":
        _export_memoria(mem, folder, session_id, force, as_json)
        return
    if folder is not None:
        raise InputError(
            f"unexpected argument {str(folder)!r}",
            hint="a folder goes with --to memoria; a JSON export is written with -o FILE",
        )
    if output is not None:
        _check_output(mem, output, force)
    doc = mem.transfer.export(seed=seed_format, include_deleted=include_deleted)
    if mem.store.broken and not skip_broken:
        raise InputError(
            f"{len(mem.store.broken)} broken memory file(s), named above; nothing exported",
            hint="fix them (`pmem validate`), or leave them out with --skip-broken",
        )
    text = json_text(doc)
    if output is None:
        click.echo(text, nl=False)
        return
    if force:
        output.write_text(text, encoding="utf-8")
    else:
        with open(output, "x", encoding="utf-8") as fh:  # "x": never clobber a file made since
            fh.write(text)
    click.echo(f"Exported to {output}", err=True)


def _export_memoria(
    mem: Memory, folder: Path | None, session_id: str | None, force: bool, as_json: bool
) -> None:
    if folder is None:
        raise InputError("--to memoria needs a folder", hint="pmem export --to memoria DIR")
    _check_inside(mem, folder)
    done = mem.transfer.export_memoria(folder, session_id=session_id, force=force).summary()
    lines = [f"{'Wrote' if f['written'] else 'Unchanged'} {f['path']}" for f in done["files"]]
    lines.append(
        f"{_count(done['facts'], 'fact')}, {_count(len(done['preferences']), 'preference section')}"
        + (
            f", session {done['session']} ({_count(done['steps'], 'step')})"
            if done["session"]
            else ", no session"
        )
    )
    emit(done, as_json, "\n".join(lines))


def _check_inside(mem: Memory, output: Path) -> None:
    if output.resolve().is_relative_to(mem.layout.planning.resolve()):
        raise InputError(
            "export never writes inside the memory tree",
            path=str(output),
            hint="write the export somewhere outside .planning/",
        )


def _check_output(mem: Memory, output: Path, force: bool) -> None:
    _check_inside(mem, output)
    if output.exists() and not output.is_file():
        raise InputError("is not a regular file; nothing exported", path=str(output))
    if output.exists() and not force:
        raise InputError(
            "file exists; nothing exported",
            path=str(output),
            hint="choose another name, or overwrite it with --force",
        )


@cli.command(name="import")
@click.argument("source", metavar="PATH", type=click.Path(path_type=Path))
@click.option(
    "--from",
    "kind",
    type=click.Choice(["json", "memoria"]),
    default=None,
    help="What PATH holds: a JSON file (default for a file) or an agent's memoria/ folder "
    "(default for a folder).",
)
@click.option(
    "--channel",
    default="memoria",
    show_default=True,
    help="Channel of the session imported from a memoria/ folder.",
)
@click.option("--dry-run", is_flag=True, help="Check and report; write nothing.")
@json_option
@pass_ctx
def import_(
    ctx: Context, source: Path, kind: str | None, channel: str, dry_run: bool, as_json: bool
) -> None:
    """Import memory from PATH, merging by id. Everything is validated before anything is
    written.

    A record, session or preferences.json already here is merged with the imported copy,
    never replaced. A record keeps the larger of each counter (usage_count, occurrences,
    revision_count, duplicate_count, applications), the higher severity and the tags of both,
    and takes its other fields from the copy changed last; a deletion stands unless the
    record was changed after it. Preferences keep the keys of both (the newer value where
    they differ). A session keeps every message, decision, error, step and file access of
    both, and the summary that covers more messages. Importing an older export loses nothing
    recorded since; importing the same file again rewrites no file. --json tells each
    record's and session's outcome: created, updated or unchanged.

    A JSON file may be `pmem export` output, the combined {"longTerm": ...} shape, or a
    single-file shape (patterns.json / mistakes.json / learnings.json as arrays,
    preferences.json as an object), with sequential ids such as pat_001.

    A memoria/ folder (a simple JSON agent memory: memoria/largo_plazo.json and
    memoria/sesion_actual.json) gives learnings from its facts, preference sections from its
    profile and a paused session from its step log. Importing it again adds nothing, and
    nothing already there is overwritten.

    \b
    Examples:
      pmem import memory.json --dry-run
      pmem import old/.planning/memory/long-term/patterns.json
      pmem import --from memoria ../my-agent
    """
    mem = ctx.memory()
    if kind == "memoria" or (kind is None and source.is_dir()):
        try:
            result = mem.transfer.import_memoria(source, channel=channel, dry_run=dry_run)
        except InputError as exc:
            if kind is None and exc.message.startswith("no largo_plazo.json"):
                raise InputError(
                    "is a directory, expected a JSON file",
                    path=str(source),
                    hint="or an agent folder holding memoria/largo_plazo.json",
                ) from None
            raise
    else:
        try:
            result = mem.transfer.plan(source)
            if not dry_run:
                mem.transfer.apply(result)
        except PlanningMemoryError as exc:  # name the file the bad item came from
            exc.path = exc.path or str(source)
            raise
    view_notes(mem)
    emit(result.summary(), as_json, _import_text(result.summary(), dry_run))


def _import_text(summary: dict[str, Any], dry_run: bool) -> str:
    verb = "Would import" if dry_run else "Imported"
    parts = [
        f"{verb}: {summary['created']} new, {summary['updated']} updated, "
        f"{summary['unchanged']} unchanged records"
    ]
    if summary["preferences"]:
        parts.append(f"preferences ({', '.join(summary['preferences'])})")
    if summary["sessions"]:
        outcomes = Counter(summary["session_outcomes"].values())
        said = ", ".join(f"{n} {what}" for what, n in sorted(outcomes.items()))
        parts.append(_count(len(summary["sessions"]), "session") + (f" ({said})" if said else ""))
    if summary["already_present"]:
        parts.append(f"already present: {len(summary['already_present'])}")
    return "\n".join([", ".join(parts), *(f"note: {n}" for n in summary.get("notes", ()))])


def _count(n: int, noun: str) -> str:
    """``1 session``, ``2 sessions``."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"
