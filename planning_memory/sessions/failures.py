"""The session's errors list (seed 000's "Errores encontrados y resueltos").

Each error met in a session is kept with where it happened (a file, a tool) and how it was
resolved: ``resolution`` and ``resolved_at`` stay null until it is. The same error met again
while the last one like it is still open is not added twice. Past ``MAX_ERRORS`` the oldest
fold into the rolling summary's key facts, as decisions do past ``maxDecisions``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from planning_memory.core import new_id, timestamp
from planning_memory.errors import InputError, NotFoundError
from planning_memory.sessions.files import Session, SessionFiles, Settings, check_part, require
from planning_memory.sessions.log import millis, repo_path, text

MAX_ERRORS = 100  # kept per session (the schema's maxItems)
TOOL_CHARS = 200


def error_fact(error: Mapping[str, Any]) -> str:
    """A folded error as a key fact: ``Error: what -> fixed: how`` (or ``(unresolved)``)."""
    where = f" [{error['file']}]" if error.get("file") else ""
    fixed = f" -> fixed: {error['resolution']}" if error.get("resolution") else " (unresolved)"
    return f"Error{where}: {error['error']}{fixed}"


def _newest_like(errors: list[dict[str, Any]], item: Mapping[str, Any]) -> dict[str, Any] | None:
    return next((e for e in reversed(errors) if _same(e, item)), None)


def _same(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    return " ".join(a["error"].split()).lower() == " ".join(b["error"].split()).lower() and (
        a.get("file") == b.get("file")
    )


def new_error(
    files: SessionFiles,
    error: str,
    *,
    now: datetime,
    resolution: str | None = None,
    file: str | None = None,
    tool: str | None = None,
) -> dict[str, Any]:
    """A checked error entry (text redacted, ``file`` made repository-relative)."""
    item: dict[str, Any] = {
        "id": new_id("err", millis(now)),
        "error": text("error", error, empty=False),
        "resolution": None,
        "at": timestamp(now),
        "resolved_at": None,
    }
    if resolution is not None:
        item["resolution"] = text("resolution", resolution, empty=False)
        item["resolved_at"] = item["at"]
    if file:
        item["file"] = repo_path(files.layout, file)
    if tool:
        item["tool"] = text("tool", tool, empty=False)[:TOOL_CHARS]
    check_part("errors", [item])
    return item


def record_error(
    files: SessionFiles, settings: Settings, session_id: str, item: dict[str, Any], *, now: datetime
) -> dict[str, Any]:
    """Add ``item`` (from ``new_error``) to the session's errors; the same error still open
    as the newest of its kind is returned instead (resolved by ``item`` when it carries a
    resolution). Past ``MAX_ERRORS`` the oldest fold into the key facts. The same error
    retried (still open, no resolution given) writes nothing."""
    session = files.load(session_id).value
    known = _newest_like(session.get("errors") or [], item)
    if known is not None and known["resolution"] is None and item["resolution"] is None:
        require(session, ("active",))
        return known

    def add(session: Session) -> dict[str, Any]:
        errors: list[dict[str, Any]] = session.setdefault("errors", [])
        open_ = _newest_like(errors, item)
        if open_ is not None and open_["resolution"] is None:
            if item["resolution"] is not None:
                open_.update(resolution=item["resolution"], resolved_at=item["resolved_at"])
            return open_
        errors.append(item)
        excess = len(errors) - MAX_ERRORS
        if excess > 0:
            folded = [error_fact(e) for e in errors[:excess]]
            del errors[:excess]
            facts = session["rolling_summary"]["key_facts"]
            session["rolling_summary"]["key_facts"] = settings.cap_facts([*facts, *folded])
        return item

    return files.mutate(session_id, add, now=now)[1]


def resolve_error(
    files: SessionFiles,
    session_id: str,
    resolution: str,
    *,
    now: datetime,
    error_id: str | None = None,
) -> dict[str, Any]:
    """Mark the error ``error_id`` (default: the newest open one) resolved by ``resolution``."""
    how = text("resolution", resolution, empty=False)

    def apply(session: Session) -> dict[str, Any]:
        errors = session.get("errors") or []
        if error_id is None:
            found = next((e for e in reversed(errors) if e["resolution"] is None), None)
            if found is None:
                raise InputError(
                    f"session {session['id']} has no open error",
                    record_id=session["id"],
                    hint='`pmem session error "..."` records one',
                )
        else:
            found = next((e for e in errors if e["id"] == error_id), None)
            if found is None:
                raise NotFoundError(
                    f"no error {error_id} in session {session['id']}",
                    record_id=error_id,
                    hint="`pmem session show` lists the session's errors",
                )
        found.update(resolution=how, resolved_at=timestamp(now))
        return dict(found)

    return files.mutate(session_id, apply, now=now)[1]


def resolve_file_errors(
    files: SessionFiles, session_id: str, path: str, resolution: str, *, now: datetime
) -> list[dict[str, Any]]:
    """Mark the open errors about ``path`` resolved (a later change of the file succeeded)."""
    rel = repo_path(files.layout, path)
    return _resolve_where(files, session_id, lambda e: e.get("file") == rel, resolution, now=now)


def resolve_call_errors(
    files: SessionFiles, session_id: str, tool: str, call: str, resolution: str, *, now: datetime
) -> list[dict[str, Any]]:
    """Mark the open errors of the same call resolved: ``tool`` on the same input ``call`` (in
    short, as the error was kept: ``<tool> <call>: <error>``), which now went through."""
    head = _flat(f"{tool} {call}:")

    def same_call(error: Mapping[str, Any]) -> bool:
        return error.get("tool") == tool and _flat(error["error"]).startswith(head)

    return _resolve_where(files, session_id, same_call, resolution, now=now)


def _flat(value: str) -> str:
    return " ".join(value.split())


def _resolve_where(
    files: SessionFiles,
    session_id: str,
    wanted: Callable[[Mapping[str, Any]], bool],
    resolution: str,
    *,
    now: datetime,
) -> list[dict[str, Any]]:
    """Mark the open errors ``wanted`` picks resolved; the session file is rewritten only when
    there is one."""
    errors = files.load(session_id).value.get("errors") or []
    if not any(e["resolution"] is None and wanted(e) for e in errors):
        return []
    how = text("resolution", resolution, empty=False)

    def apply(session: Session) -> list[dict[str, Any]]:
        done = []
        for e in session.get("errors") or []:
            if e["resolution"] is None and wanted(e):
                e.update(resolution=how, resolved_at=timestamp(now))
                done.append(dict(e))
        return done

    return files.mutate(session_id, apply, now=now)[1]
