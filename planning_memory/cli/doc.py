"""Generate the CLI reference (docs/cli.md) from the commands' own ``--help``.

Run ``python -m planning_memory.cli.doc > docs/cli.md``; a test checks the file is current.
"""

from __future__ import annotations

from typing import Any

import click

from planning_memory.cli import cli

_SETTINGS: dict[str, Any] = {
    "terminal_width": 100,
    "max_content_width": 100,
    "help_option_names": ["-h", "--help"],
}


def _walk(group: click.Group, prefix: list[str]) -> list[tuple[list[str], click.Command]]:
    found: list[tuple[list[str], click.Command]] = []
    ctx = click.Context(group, info_name=" ".join(prefix))
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        if command is None or command.hidden:
            continue
        found.append(([*prefix, name], command))
        if isinstance(command, click.Group):
            found += _walk(command, [*prefix, name])
    return found


def _help(path: list[str], command: click.Command, parent: click.Context | None) -> str:
    ctx = click.Context(command, info_name=path[-1], parent=parent, **_SETTINGS)
    return command.get_help(ctx)


def reference() -> str:
    """The whole reference as Markdown."""
    root = click.Context(cli, info_name="pmem", **_SETTINGS)
    parts = [
        "# CLI reference",
        "",
        "Generated from `--help` by `python -m planning_memory.cli.doc`; do not edit by hand.",
        "",
        "## pmem",
        "",
        "```",
        cli.get_help(root),
        "```",
    ]
    for path, command in _walk(cli, ["pmem"]):
        parent = click.Context(cli, info_name=" ".join(path[:-1]))
        parts += ["", f"## {' '.join(path)}", "", "```", _help(path, command, parent), "```"]
    return "\n".join(parts) + "\n"


if __name__ == "__main__":
    click.echo(reference(), nl=False)
