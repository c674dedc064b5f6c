"""The ``pmem`` command line: the group, shared helpers and error translation.

The ``planning_memory.cli`` package is the only place that imports click.

Each command parses its options, calls one ``Memory`` method and formats the result. Errors are
translated once, in ``main``: a ``PlanningMemoryError`` becomes one line on stderr and its exit
code; anything else is a bug and shows a traceback with a request to report it.
"""

from __future__ import annotations

import importlib
import json
import sys
import warnings
from pathlib import Path
from typing import Any

import click

from planning_memory import __version__
from planning_memory.errors import (
    BrokenFileWarning,
    InputError,
    PlanningMemoryError,
    StorageError,
    UnmappedFileWarning,
)
from planning_memory.memory import Memory

EXIT_CODES = """\
Exit codes: 0 ok; 1 problems found (validate, --check); 2 bad usage or config;
3 no memory tree / already initialised; 4 bad input; 5 not found; 6 conflict;
7 memory locked; 8 external command failed; 70 internal error (a bug: please report it);
74 a write the disk refused (full, over quota, read-only): nothing was half-written."""

INTERNAL_ERROR = 70


class Context:
    """Options shared by every command."""

    def __init__(self, root: Path | None) -> None:
        self.root = root

    def memory(self) -> Memory:
        return Memory.open(self.root)


pass_ctx = click.make_pass_decorator(Context)


def json_text(data: Any) -> str:
    """The canonical JSON text of ``data`` (sorted keys, 2-space indent, final newline)."""
    return json.dumps(data, indent=2, ensure_ascii=False, sort_keys=True) + "\n"


def emit(data: Any, as_json: bool, text: str | None = None) -> None:
    """Print ``data`` as JSON, or ``text`` for people."""
    if as_json:
        click.echo(json_text(data), nl=False)
    elif text is not None:
        click.echo(text)


def view_notes(mem: Memory) -> None:
    """After a write (the facade re-renders the stale views): say so if a view was left
    alone because it was edited by hand, and warn of what the write could not finish (a view
    not refreshed: the write itself stands, exit 0)."""
    for path in mem.view_conflicts:
        click.echo(
            f"note: {mem.store.rel(path)} was edited by hand; `pmem sync` imports "
            "the edits and re-renders it",
            err=True,
        )
    for line in mem.warnings:
        click.echo(f"pmem: warning: {line}", err=True)


json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON for machines.")

# each command -> the module of this package that defines it, loaded when the command is used
COMMANDS = {
    **dict.fromkeys(("doctor", "hook", "install", "mcp", "uninstall"), "agents"),
    "learning": "learning",
    "memory": "memories",
    **dict.fromkeys(("context", "reindex", "search", "stats", "timeline"), "contextual"),
    **dict.fromkeys(("export", "import", "init", "show", "validate"), "core"),
    **dict.fromkeys(("entity", "scan"), "entity"),
    **dict.fromkeys(("git", "merge-driver", "resolve", "secrets"), "git"),
    **dict.fromkeys(
        ("forget", "learn", "mistakes", "patterns", "pin", "prefs", "review", "save"), "longterm"
    ),
    "session": "session",
    "ui": "viewer",
    **dict.fromkeys(("render", "sync"), "views"),
    "watch": "watch",
}


class LazyGroup(click.Group):
    """The top-level group: a command's module is imported when that command is asked for,
    so `pmem hook ...` (run by an agent many times a minute) loads the hook and nothing of the
    other commands; listing the commands (`--help`) loads them all."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *COMMANDS})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in COMMANDS:
            importlib.import_module(f"{__package__}.{COMMANDS[cmd_name]}")  # it registers
        return super().get_command(ctx, cmd_name)

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        """A typo gets click's "Did you mean ...?" from every command, not only the ones
        imported so far (each module is imported to tell which are hidden)."""
        try:
            return super().resolve_command(ctx, args)
        except click.exceptions.NoSuchCommand as exc:
            shown = [n for n in self.list_commands(ctx) if not _hidden(self, ctx, n)]
            raise click.exceptions.NoSuchCommand(
                exc.command_name, possibilities=shown, ctx=ctx
            ) from None


def _hidden(group: click.Group, ctx: click.Context, name: str) -> bool:
    command = group.get_command(ctx, name)
    return command is None or command.hidden


@click.group(
    cls=LazyGroup,
    context_settings={
        "help_option_names": ["-h", "--help"],
        "max_content_width": 100,
        "terminal_width": 100,
    },
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

    Every command runs in its own process. Agent hooks are answered by a background
    server that keeps the package imported (PMEM_SERVER=0 turns it off).

    \b
    Examples:
      pmem init                 create .planning/ in this repository
      pmem show                 what is in memory
      pmem validate             check every file against its schema
      pmem export -o mem.json   everything as one JSON document
    """
    ctx.obj = Context(root)


class _BrokenFiles:
    """Prints each broken file a command skipped once, as one line on stderr."""

    def __init__(self) -> None:
        self.seen: set[str] = set()
        self.other = warnings.showwarning

    def show(self, message: Warning | str, category: type[Warning], *args: Any, **kw: Any) -> None:
        if not issubclass(category, BrokenFileWarning):
            self.other(message, category, *args, **kw)
        elif str(message) not in self.seen:
            self.seen.add(str(message))
            unmapped = issubclass(category, UnmappedFileWarning)
            listed = "" if unmapped else " (`pmem validate` lists all)"
            click.echo(f"pmem: warning: {message}; skipped{listed}", err=True)


def main(argv: list[str] | None = None) -> None:
    """Entry point: run the CLI and translate errors once. A broken file a reading command
    skips is one warning line on stderr."""
    with warnings.catch_warnings():
        warnings.simplefilter("always", BrokenFileWarning)
        warnings.showwarning = _BrokenFiles().show
        _run(argv)


def _run(argv: list[str] | None) -> None:
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
        refused = exc.errno in StorageError.ERRNOS
        sys.exit(StorageError.exit_code if refused else InputError.exit_code)
    except Exception:
        import traceback  # only for a bug: a command that works never loads it

        traceback.print_exc()
        click.echo(
            "pmem: internal error: this is a bug; please report it with the trace above.", err=True
        )
        sys.exit(INTERNAL_ERROR)
    sys.exit(0)
