"""Foundation commands: init, validate, show, export, import."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from planning_memory.cli.base import Context, cli, emit, json_option, pass_ctx, refresh
from planning_memory.core import codec
from planning_memory.errors import InputError, PlanningMemoryError
from planning_memory.memory import Memory


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
@click.argument("file", type=click.Path(path_type=Path))  # _read_input reports a folder
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
    try:
        result = mem.plan_import(data, name_hint=file.name)
        if not dry_run:
            mem.apply_import(result)
            refresh(mem)
    except PlanningMemoryError as exc:  # name the file the bad item came from
        exc.path = exc.path or str(file)
        raise
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
