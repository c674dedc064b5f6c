"""Entity commands: scan and the code-map look-ups."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path
from typing import Any

import click

from planning_memory.cli.base import Context, cli, emit, json_option, pass_ctx
from planning_memory.errors import NotFoundError
from planning_memory.memory import Memory


@cli.command()
@click.argument("paths", nargs=-1)
@click.option("--full", is_flag=True, help="Re-parse every file, ignoring content hashes.")
@json_option
@pass_ctx
def scan(ctx: Context, paths: tuple[str, ...], full: bool, as_json: bool) -> None:
    """Map the codebase (entity memory): files, functions, components and feature areas.

    Incremental by content hash: a rescan with nothing changed writes nothing. PATHS limits
    the scan to those repository paths (deleted ones are removed from the map); a PATH that is
    neither in the repository nor in the map is an error (exit 5).

    \b
    Examples:
      pmem scan
      pmem scan src/components/Auth/LoginForm.tsx
    """
    mem = ctx.memory()
    for path in paths:
        if _unknown(mem, path):
            raise NotFoundError(
                "no such file or folder in the repository or the code map",
                path=path,
                hint="PATHS are relative to the repository's root",
            )
    bar: Any = None

    def progress(done: int, total: int) -> None:
        nonlocal bar
        if as_json or not sys.stderr.isatty() or total < 200:
            return
        if bar is None:
            bar = click.progressbar(length=total, label="scanning", file=sys.stderr)
            bar.__enter__()
        bar.update(done - bar.pos)

    report = mem.scan(paths=list(paths) or None, full=full, progress=progress)
    if bar is not None:
        bar.__exit__(None, None, None)
    data = dataclasses.asdict(report)
    data.pop("phases", None)
    text = (
        f"{report.files_seen} files: {report.parsed} parsed, {report.unchanged} unchanged, "
        f"{report.removed} removed; skipped {report.skipped_binary} binary, "
        f"{report.skipped_large} large, {report.skipped_ignored} ignored; "
        f"{report.errors} with errors; {report.shards_written} shards written "
        f"in {report.seconds:.2f} s"
    )
    text += "".join(f"\n  {p}" for p in report.error_paths[:20])
    if report.errors > 20:
        text += f"\n  ... and {report.errors - 20} more"
    emit(data, as_json, text)


def _unknown(mem: Memory, path: str) -> bool:
    """Whether ``path`` is neither on disk nor in the code map (a deleted file the map
    still holds is known: scanning it removes it)."""
    root = mem.layout.repo_root
    given = Path(path)
    if (root / given).exists() or not (root / given).resolve().is_relative_to(root.resolve()):
        return False  # there, or outside the repository (which the scan says)
    if mem.code.file(path) is not None:
        return False
    folder = (root / given).resolve().relative_to(root.resolve()).as_posix()
    return not any(f == folder or f.startswith(folder + "/") for f in mem.code.folders())


@cli.group()
def entity() -> None:
    """Look up the code map: a file, a function, a component or a feature area.

    \b
    Examples:
      pmem entity file src/components/Auth/LoginForm.tsx
      pmem entity function validateCredentials
      pmem entity area authentication
    """


def _show(found: Any, what: str, as_json: bool) -> None:
    if not found:
        raise NotFoundError(f"no {what} in the code map", hint="`pmem scan` maps the code")
    emit(found, as_json, _text(found))


def _text(found: Any) -> str:
    import json

    return json.dumps(found, indent=2, ensure_ascii=False, sort_keys=True)


@entity.command(name="file")
@click.argument("path")
@json_option
@pass_ctx
def file_(ctx: Context, path: str, as_json: bool) -> None:
    """A file's entity: purpose, imports, exports, complexity, notes.

    \b
    Example:
      pmem entity file src/lib/auth/validators.ts
    """
    _show(ctx.memory().get_file_info(path), f"file {path!r}", as_json)


@entity.command()
@click.argument("name")
@json_option
@pass_ctx
def function(ctx: Context, name: str, as_json: bool) -> None:
    """Functions or methods named NAME (or Class.method): signature, calls, called_by.

    \b
    Example:
      pmem entity function validateCredentials
    """
    _show(ctx.memory().code.functions(name), f"function {name!r}", as_json)


@entity.command()
@click.argument("name")
@json_option
@pass_ctx
def component(ctx: Context, name: str, as_json: bool) -> None:
    """A UI component: props, state, hooks, rendered children.

    \b
    Example:
      pmem entity component LoginForm
    """
    _show(ctx.memory().code.components(name), f"component {name!r}", as_json)


@entity.command()
@click.argument("name")
@json_option
@pass_ctx
def area(ctx: Context, name: str, as_json: bool) -> None:
    """A feature area (relationships.json): entry, components, services, files.

    \b
    Example:
      pmem entity area authentication
    """
    _show(ctx.memory().code.area(name), f"area {name!r}", as_json)


@entity.command()
@click.argument("name")
@json_option
@pass_ctx
def relationships(ctx: Context, name: str, as_json: bool) -> None:
    """How NAME (a file, function, component or area) relates to the rest.

    \b
    Example:
      pmem entity relationships LoginForm
    """
    _show(ctx.memory().get_relationships(name), f"entity {name!r}", as_json)


@entity.command()
@click.argument("path")
@click.option("--note", "notes", multiple=True, help="A note to add (repeatable).")
@click.option("--purpose", default=None, help="A hand-written purpose (kept over rescans).")
@json_option
@pass_ctx
def annotate(
    ctx: Context, path: str, notes: tuple[str, ...], purpose: str | None, as_json: bool
) -> None:
    """Annotate a file's entity; annotations survive rescans.

    \b
    Example:
      pmem entity annotate src/components/Auth/LoginForm.tsx --note "Uses react-hook-form"
    """
    found = ctx.memory().update_file_entity(
        path, notes=list(notes) or None, purpose=purpose, modified_by=["human"]
    )
    emit(found, as_json, f"Annotated {path}")
