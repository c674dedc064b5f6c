"""Daemon commands: ``pmem watch`` (foreground) and ``pmem watch start | stop | status``."""

from __future__ import annotations

import logging
import shutil
import sys
import time
from typing import Any

import click

import planning_memory.watch as daemon
from planning_memory.cli.base import Context, cli, emit, json_option, pass_ctx


class StatusLine:
    """One line, redrawn in place with ``\\r`` (only on a terminal), at most twice a second."""

    def __init__(self) -> None:
        self._last = ""
        self._at = 0.0

    def __call__(self, info: dict[str, Any]) -> None:
        now = time.monotonic()
        text = status_line(info, time.time())
        if (text == self._last and now - self._at < 1.0) or now - self._at < 0.5:
            return
        width = shutil.get_terminal_size((100, 20)).columns - 1
        sys.stdout.write("\r" + text[:width].ljust(min(width, len(self._last))))
        sys.stdout.flush()
        self._last, self._at = text, now


def status_line(info: dict[str, Any], now: float) -> str:
    uptime = int(now - float(info.get("started_epoch", now)))
    error = info.get("last_error")
    parts = [
        f"pmem watch [{info.get('observer') or '-'}]",
        str(info.get("state", "?")),
        f"up {uptime // 3600}:{uptime // 60 % 60:02d}:{uptime % 60:02d}",
        f"queue {info.get('queue', 0)}",
        f"batches {info.get('batches', 0)}",
        f"last event {info.get('last_event_at') or '-'}",
        f"last error {error['reaction'] + ': ' + error['message'] if error else '-'}",
    ]
    return " | ".join(parts)


def status_text(info: dict[str, Any]) -> str:
    if not info["running"]:
        text = "not running"
        if info.get("last_error"):
            text += f"\nlast error: {info['last_error']['message']}"
        return text
    error = info.get("last_error")
    lines = [
        f"running, pid {info['pid']}, up {info.get('uptime_s', 0):g} s, "
        f"{info.get('state', '?')}"
        + (f" for {info['busy_s']:g} s" if info.get("busy_s") is not None else "")
        + f" ({info.get('observer') or '?'})",
        f"last event: {info.get('last_event_at') or '-'}",
        f"queue: {info.get('queue', 0)} paths; batches: {info.get('batches', 0)} "
        f"({info.get('full_reconciles', 0)} full reconciles)",
        f"last error: {error['reaction'] + ': ' + error['message'] if error else '-'}",
        f"code map: {info.get('files_with_errors', 0)} files with errors"
        + "".join(f"\n  {p}" for p in info.get("error_files", [])),
        "reactions: " + ", ".join(f"{k} {v}" for k, v in sorted(info.get("reactions", {}).items())),
        f"scan interval: {info.get('scan_interval') or 'on-change'}"
        + (
            f"; {info['rescans']} warm rescans, last {info['last_rescan_at']}"
            if info.get("rescans")
            else ""
        ),
        f"log: {info['log']}",
    ]
    lines += [f"warning: {w}" for w in info.get("warnings", [])]
    return "\n".join(lines)


@cli.group(invoke_without_command=True)
@click.option("--polling", is_flag=True, help="Poll the file system instead of inotify.")
@pass_ctx
@click.pass_context
def watch(click_ctx: click.Context, ctx: Context, polling: bool) -> None:
    """Keep memory current while you work: a daemon that watches the repository.

    A saved source file updates the entity JSON (and flags memories anchored to changed
    code); memory JSON changed by `git pull` re-renders the Markdown views; a hand edit of
    patterns.md / mistakes.md is imported; queued session summaries are written; the search
    index follows. A branch switch is reconciled once, in full. One daemon per repository.
    The config's entity.scanInterval: "on-change" (the default), a duration such as "5m"
    (also a warm rescan that often, for changes whose events never came, as on a network
    file system) or "manual" (the daemon never scans; `pmem scan` does).

    Without a subcommand it runs in the foreground until Ctrl-C, with a live status line on
    a terminal (log lines otherwise).

    \b
    Examples:
      pmem watch                 run here, Ctrl-C to stop
      pmem watch start           run in the background
      pmem watch status --json   what it is doing
      pmem watch stop
    """
    if click_ctx.invoked_subcommand is not None:
        return
    memory = ctx.memory()
    tty = sys.stdout.isatty()
    logging.basicConfig(
        level=logging.WARNING if tty else logging.INFO,
        stream=sys.stderr,
        format="%(asctime)s %(message)s",
    )
    daemon.run_foreground(memory, on_status=StatusLine() if tty else None, polling=polling)
    if tty:
        click.echo()


@watch.command("start")
@click.option("--polling", is_flag=True, help="Poll the file system instead of inotify.")
@json_option
@pass_ctx
def watch_start(ctx: Context, polling: bool, as_json: bool) -> None:
    """Start the daemon in the background (refused if one already runs here).

    \b
    Example:
      pmem watch start && pmem watch status
    """
    info = daemon.start(ctx.memory(), polling=polling)
    text = f"started: pid {info.get('pid')}, log in {info['log']}"
    if info.get("note"):
        text += f" ({info['note']})"
    emit(info, as_json, text)


@watch.command("stop")
@json_option
@pass_ctx
def watch_stop(ctx: Context, as_json: bool) -> None:
    """Stop the background daemon; it finishes the batch in progress first.

    \b
    Example:
      pmem watch stop
    """
    info = daemon.stop(ctx.memory())
    if not info["stopped"]:
        text = "not running"
    else:
        text = f"stopped pid {info['pid']}" + (" (killed)" if info.get("killed") else "")
    emit(info, as_json, text)


@watch.command("status")
@json_option
@pass_ctx
def watch_status(ctx: Context, as_json: bool) -> None:
    """Is the daemon running: pid, uptime, last event, queue length, last error, reactions.

    \b
    Example:
      pmem watch status --json
    """
    info = daemon.status(ctx.memory())
    emit(info, as_json, status_text(info))
