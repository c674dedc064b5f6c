"""The ``pmem`` command line; the only module that imports click.

Each command parses its options, calls one ``Memory`` method and formats the result. Errors are
translated once, in ``main``: a ``PlanningMemoryError`` becomes one line on stderr and its exit
code; anything else is a bug and shows a traceback with a request to report it.
"""

from __future__ import annotations

import json
import sys
import traceback
from pathlib import Path
from typing import Any

import click

from planning_memory import __version__, codec
from planning_memory.errors import InputError, PlanningMemoryError
from planning_memory.memory import Memory

EXIT_CODES = """\
Exit codes: 0 ok; 1 problems found (validate, --check); 2 bad usage or config;
3 no memory tree / already initialised; 4 bad input; 5 not found; 6 conflict;
7 memory locked; 8 external command failed; 70 internal error (a bug: please report it)."""

INTERNAL_ERROR = 70


class Context:
    """Options shared by every command."""

    def __init__(self, root: Path | None) -> None:
        self.root = root

    def memory(self) -> Memory:
        return Memory.open(self.root)


pass_ctx = click.make_pass_decorator(Context)


def emit(data: Any, as_json: bool, text: str | None = None) -> None:
    """Print ``data`` as JSON, or ``text`` for people."""
    if as_json:
        click.echo(json.dumps(data, indent=2, ensure_ascii=False, sort_keys=True))
    elif text is not None:
        click.echo(text)


json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON for machines.")


@click.group(
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
    epilog=EXIT_CODES,
)
@click.version_option(__version__, prog_name="pmem")
@click.option(
    "-C",
    "--root",
    type=click.Path(file_okay=False, path_type=Path),
    help="Repository to use (default: the one containing the working directory).",
)
@click.pass_context
def cli(ctx: click.Context, root: Path | None) -> None:
    """planning-memory: git-native memory for AI coding agents.

    Memory lives in .planning/ inside your repository: JSON records are the source of truth,
    Markdown views are rendered from them, and everything works offline.

    \b
    Examples:
      pmem init                 create .planning/ in this repository
      pmem show                 what is in memory
      pmem validate             check every file against its schema
      pmem export -o mem.json   everything as one JSON document
    """
    ctx.obj = Context(root)


@cli.command()
@click.argument("path", required=False, type=click.Path(file_okay=False, path_type=Path))
@json_option
def init(path: Path | None, as_json: bool) -> None:
    """Create an empty memory tree (.planning/) in PATH (default: the working directory).

    Refuses to touch an existing tree.

    \b
    Example:
      pmem init && git add .planning && git commit -m "Add project memory"
    """
    root = (path or Path.cwd()).resolve()
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
    from planning_memory import validate as validation

    target = path or ctx.root or Path.cwd()
    if target.is_file():
        findings = validation.validate_file(target)
        files = 1
    else:
        report = validation.validate_tree(validation.layout_for(target))
        findings, files = list(report.findings), report.files
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
@json_option
@pass_ctx
def show(ctx: Context, as_json: bool) -> None:
    """Show what is in memory: counts per level.

    \b
    Example:
      pmem show --json | jq .long_term
    """
    counts = ctx.memory().counts()
    lt = counts["long_term"]
    by_type = ", ".join(f"{k} {v}" for k, v in lt["by_type"].items()) or "none"
    text = "\n".join(
        [
            f"Memory at {counts['root']}",
            f"  short-term   {counts['short_term']['sessions']} sessions",
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
        ]
    )
    emit(counts, as_json, text)


@cli.command()
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write to this file instead of standard output.",
)
@click.option("--seed-format", is_flag=True, help="Use the seed's camelCase field names.")
@click.option("--include-deleted", is_flag=True, help="Include soft-deleted records.")
@pass_ctx
def export(ctx: Context, output: Path | None, seed_format: bool, include_deleted: bool) -> None:
    """Export all memory as one JSON document {shortTerm, longTerm, entityMemory,
    contextualMemory}.

    \b
    Examples:
      pmem export -o memory.json
      pmem export --seed-format > seed-shape.json
    """
    doc = ctx.memory().export(seed=seed_format, include_deleted=include_deleted)
    text = codec.dumps(doc)
    if output is None:
        click.echo(text, nl=False)
    else:
        output.write_text(text, encoding="utf-8")
        click.echo(f"Exported to {output}", err=True)


@cli.command(name="import")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--dry-run", is_flag=True, help="Check and report; write nothing.")
@json_option
@pass_ctx
def import_(ctx: Context, file: Path, dry_run: bool, as_json: bool) -> None:
    """Import memory from FILE, merging by id. Everything is validated before anything is
    written.

    Accepts `pmem export` output, the seed's combined {"longTerm": ...} shape, and the
    single-file shapes (patterns.json / mistakes.json / learnings.json as arrays,
    preferences.json as an object), with sequential ids such as pat_001.

    \b
    Examples:
      pmem import memory.json --dry-run
      pmem import old/.planning/memory/long-term/patterns.json
    """
    mem = ctx.memory()
    data = _read_input(file)
    result = mem.plan_import(data, name_hint=file.name)
    if not dry_run:
        mem.apply_import(result)
    summary = result.summary()
    verb = "Would import" if dry_run else "Imported"
    emit(
        summary,
        as_json,
        f"{verb}: {summary['created']} new, {summary['updated']} updated, "
        f"{summary['unchanged']} unchanged records"
        + (", preferences" if summary["preferences"] else "")
        + (f", {summary['sessions']} sessions" if summary["sessions"] else ""),
    )


def _read_input(file: Path) -> Any:
    """Read and decode a user-supplied JSON file, or one clear error."""
    if file.is_dir():
        raise InputError("is a directory, expected a JSON file", path=str(file))
    if not file.exists():
        raise InputError("no such file", path=str(file))
    size = file.stat().st_size
    if size > codec.MAX_BYTES:
        raise InputError(
            f"file is {size:,} bytes, over the {codec.MAX_BYTES:,}-byte limit", path=str(file)
        )
    return codec.loads(file.read_bytes(), path=str(file))


def main(argv: list[str] | None = None) -> None:
    """Entry point: run the CLI and translate errors once."""
    try:
        cli.main(args=argv, prog_name="pmem", standalone_mode=False)
    except PlanningMemoryError as exc:
        click.echo(f"pmem: error: {exc.one_line()}", err=True)
        sys.exit(exc.exit_code)
    except click.exceptions.Abort:
        click.echo("pmem: aborted", err=True)
        sys.exit(130)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        sys.exit(130)
    except OSError as exc:  # the file system said no: permissions, a full disk, ...
        where = f"{exc.filename}: " if exc.filename else ""
        click.echo(f"pmem: error: {where}{exc.strerror or exc}", err=True)
        sys.exit(InputError.exit_code)
    except Exception:
        traceback.print_exc()
        click.echo(
            "pmem: internal error: this is a bug; please report it with the trace above.", err=True
        )
        sys.exit(INTERNAL_ERROR)
    sys.exit(0)


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
        text += f"\n  archived {archived} (over the cap: least used, not established/pinned)"
    return text


def _scoped(ctx: Context, scope: str) -> Memory:
    return (
        Memory.open(ctx.root).for_scope(scope)
        if scope == "project"
        else (Memory(Path.cwd(), personal=True))
    )


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
@click.option("--pin", "pinned", is_flag=True, help="Pin it: always included in context.")
@scope_option
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
    pinned: bool,
    scope: str,
    as_json: bool,
) -> None:
    """Save an observation (seed 003's memory_save) with What / Why / Where / Learned.

    A similar pattern is reinforced and a similar mistake counted again instead of duplicated;
    the same --topic in the same scope updates the earlier record; the same text again within
    15 minutes only bumps its duplicate count.

    \b
    Examples:
      pmem save "Use zod for request validation" -t pattern --tag typescript
      pmem save "JWT sessions, not DB sessions" -t decision --why "edge runtime" \\
          --topic auth/session-strategy
      pmem save "Do not use any" -t mistake --correction "use unknown" --severity high
    """
    fields: dict[str, Any] = {
        "body": {"what": what, "why": why, "where": where, "learned": learned},
        "tags": list(tags),
        "topic_key": topic_key,
        "pinned": pinned,
        "scope": scope,
        "source": "cli",
    }
    if record_type == "pattern":
        fields |= {"description": description or what, "example": example}
    elif record_type == "mistake":
        fields |= {
            "description": description or what or title,
            "correction": correction,
            "severity": severity,
        }
    elif learned:
        fields["learned"] = learned
    outcome = _scoped(ctx, scope).save(record_type, title, **fields)
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
    outcome = _scoped(ctx, scope).forget(record_id, hard=hard)
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
    outcome = _scoped(ctx, scope).pin(record_id, pinned=not off)
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
