"""Writing an agent's ``memoria/`` folder back, for ``pmem export --to memoria``.

The inverse of ``memoria`` (which reads the folder for ``pmem import --from memoria``):

- ``largo_plazo.json``: the profile (preference sections back under ``usuario``,
  ``usuario.preferencias``, ``negocio`` and ``preferencias``; other sections by their own
  name), the facts (``aprendido``: every live long-term record, oldest first, each text once,
  as ``{"fecha": "YYYY-MM-DD", "hecho": ...}``) and ``ultima_actualizacion`` (the newest
  change among them).
- ``sesion_actual.json``: one session's step log: ``inicio``, ``objetivo`` and ``pasos``
  (``{timestamp, accion, resultado}``).

Dates and times are local (the configured timezone) and naive, as such an agent writes them,
so importing the folder again reads the same facts. A file is written atomically and only
when its bytes change. A file that is there already is replaced only when it is seed-shaped
and holds nothing this memory does not know (its facts, its session); otherwise nothing is
written unless ``force``. Text is redacted again on the way out.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, tzinfo
from pathlib import Path
from typing import Any, TypeGuard

from planning_memory.core import LEARNING_TYPES, Record, codec, parse_timestamp, privacy
from planning_memory.errors import InputError
from planning_memory.store import read_regular, write_outside
from planning_memory.transfer import memoria
from planning_memory.transfer.shapes import ImportResult

FOLDER = "memoria"
PROFILE = {"user": "usuario", "business": "negocio", "preferences": "preferencias"}
NESTED = {"user_preferences": ("usuario", "preferencias")}


@dataclass
class Exported:
    """What ``pmem export --to memoria`` wrote (``written`` False: the bytes were equal)."""

    folder: str
    files: dict[str, bool] = field(default_factory=dict)  # path -> written
    facts: int = 0
    sections: list[str] = field(default_factory=list)
    session: str | None = None
    steps: int = 0

    def summary(self) -> dict[str, Any]:
        return {
            "folder": self.folder,
            "files": [{"path": p, "written": w} for p, w in self.files.items()],
            "facts": self.facts,
            "preferences": self.sections,
            "session": self.session,
            "steps": self.steps,
        }


# -- values ------------------------------------------------------------------------------------
def local(stamp: str, tz: tzinfo) -> datetime:
    """A stored ``...Z`` timestamp as a naive local time (the seed's ``datetime.now()``)."""
    return parse_timestamp(stamp).astimezone(tz).replace(tzinfo=None)


def fact_text(record: Mapping[str, Any]) -> str:
    """A record as one fact: a learning's lesson (else its title), a pattern's name and
    description, a mistake's description and correction."""
    title = str(record.get("title") or "")
    if record.get("type") in LEARNING_TYPES:
        body = record.get("body") or {}
        return str(record.get("learned") or body.get("learned") or title).strip()
    extra = record.get("description") if record.get("type") == "pattern" else None
    extra = record.get("correction") if record.get("type") == "mistake" else extra
    return f"{title}: {extra}" if extra and extra != title else title


def facts(records: Sequence[Record], tz: tzinfo) -> list[dict[str, str]]:
    """``aprendido``: the live records' facts, oldest first, each text once."""
    live = sorted(
        (r for r in records if not r.get("deleted_at")), key=lambda r: (r["created_at"], r["id"])
    )
    found: dict[str, dict[str, str]] = {}
    for record in live:
        text = fact_text(record)
        if text and text not in found:
            day = local(record["created_at"], tz).strftime("%Y-%m-%d")
            found[text] = {"fecha": day, "hecho": text}
    return list(found.values())


def profile(preferences: Mapping[str, Any]) -> dict[str, Any]:
    """The preference sections as the seed's profile objects."""
    out: dict[str, Any] = {"usuario": {}, "negocio": {}, "preferencias": {}}  # the seed's order
    for name, section in sorted(preferences.items()):
        if name == "updated_at" or not isinstance(section, Mapping) or not section:
            continue
        if name in NESTED:
            outer, inner = NESTED[name]
            out.setdefault(outer, {})[inner] = dict(section)
        else:
            out.setdefault(PROFILE.get(name, name), {}).update(section)
    return {name: section for name, section in out.items() if section}


def long_term_doc(
    records: Sequence[Record], preferences: Mapping[str, Any], tz: tzinfo
) -> dict[str, Any]:
    """The ``largo_plazo.json`` document."""
    live = [r for r in records if not r.get("deleted_at")]
    stamps = [str(r["updated_at"]) for r in live]
    if isinstance(preferences.get("updated_at"), str):
        stamps.append(preferences["updated_at"])
    newest = local(max(stamps), tz).isoformat() if stamps else None
    doc = {**profile(preferences), "aprendido": facts(records, tz)}
    return {**doc, "ultima_actualizacion": newest}


def session_doc(session: Mapping[str, Any], tz: tzinfo) -> dict[str, Any]:
    """The ``sesion_actual.json`` document of one session."""
    steps = [
        {
            "timestamp": local(s["at"], tz).isoformat(),
            "accion": s.get("action", ""),
            "resultado": s.get("result", ""),
        }
        for s in session.get("steps") or []
    ]
    start = local(session["started_at"], tz).isoformat()
    return {"inicio": start, "objetivo": session.get("goal") or "", "pasos": steps}


# -- what is already there -----------------------------------------------------------------------
def _existing(path: Path) -> Any:
    """An existing file's JSON value; None when it is not a regular file or not JSON."""
    try:
        data = read_regular(path)
        return None if data is None else codec.loads(data, path=str(path))
    except InputError:
        return None


def _seed_long_term(data: Any) -> TypeGuard[Mapping[str, Any]]:
    if not isinstance(data, Mapping):
        return False
    for key, value in data.items():
        if key in memoria.FACT_KEYS and not isinstance(value, list):
            return False
        if key == "ultima_actualizacion" and not isinstance(value, str | None):
            return False
        if key not in memoria.SKIP_KEYS and not isinstance(value, Mapping):
            return False
    return True


def _seed_session(data: Any) -> TypeGuard[Mapping[str, Any]]:
    return (
        isinstance(data, Mapping)
        and isinstance(data.get("inicio"), str)
        and isinstance(data.get("pasos", []), list)
    )


def known_facts(records: Sequence[Record]) -> set[str]:
    """Every text this memory holds as a fact, forgotten ones too."""
    known = set()
    for record in records:
        known.add(fact_text(record))
        known.update(str(record.get(k) or "").strip() for k in ("learned", "original", "title"))
    return known - {""}


def unknown_facts(data: Mapping[str, Any], known: set[str], tz: tzinfo) -> list[str] | None:
    """The facts of an existing ``largo_plazo.json`` that this memory does not hold (None:
    its facts are not the seed's shape)."""
    when = datetime(2000, 1, 1, tzinfo=tz)  # only a default date; the texts are what counts
    try:
        texts = [r["learned"] for r in memoria.facts(data, when, tz)]
    except InputError:
        return None
    return [t for t in texts if privacy.redact(t) not in known]


def check_target(
    path: Path, seed_shaped: bool, unknown: list[str] | None, *, force: bool, what: str
) -> None:
    """Refuse (an ``InputError``) to replace ``path`` when it is not seed-shaped or holds what
    this memory lacks, unless ``force``."""
    if force:
        return
    if not seed_shaped:
        raise InputError(
            f"is not a seed-shaped {path.name}; nothing exported",
            path=str(path),
            hint="export to another folder, or overwrite it with --force",
        )
    if unknown:
        raise InputError(
            f"holds {what} this memory does not have ({unknown[0][:60]!r}"
            + (f" and {len(unknown) - 1} more" if len(unknown) > 1 else "")
            + "); nothing exported",
            path=str(path),
            hint="import it first (pmem import --from memoria DIR), or overwrite with --force",
        )


# -- the folder ----------------------------------------------------------------------------------
def target_folder(folder: Path) -> Path:
    """Where the files go: ``folder/memoria`` when there is one, else ``folder``."""
    if folder.exists() and not folder.is_dir():
        raise InputError("is not a folder; nothing exported", path=str(folder))
    return folder / FOLDER if (folder / FOLDER).is_dir() else folder


def _text(doc: Mapping[str, Any]) -> bytes:
    clean = privacy.redact_value(dict(doc))
    return (json.dumps(clean, ensure_ascii=False, indent=2) + "\n").encode("utf-8")


def write_memoria(
    folder: Path,
    records: Sequence[Record],
    preferences: Mapping[str, Any],
    session: Mapping[str, Any] | None,
    *,
    known_sessions: set[tuple[str, str]],
    tz: tzinfo,
    force: bool = False,
) -> Exported:
    """Write ``largo_plazo.json`` (and, given a ``session``, ``sesion_actual.json``) into
    ``folder`` (its ``memoria/`` when it has one). ``records`` are every record, forgotten
    ones too (what the memory knows); ``known_sessions`` the (start, goal) of its sessions.
    Both files are checked before either is written."""
    base = target_folder(folder)
    long_path, log_path = base / memoria.LONG_TERM_FILE, base / memoria.SESSION_FILE
    long_doc = long_term_doc(records, preferences, tz)
    planned = {long_path: _text(long_doc)}
    if long_path.exists():
        old = _existing(long_path)
        lacking = unknown_facts(old, known_facts(records), tz) if _seed_long_term(old) else None
        check_target(long_path, lacking is not None, lacking, force=force, what="facts")
    if session is not None:
        planned[log_path] = _text(session_doc(session, tz))
        if log_path.exists():
            old_log = _existing(log_path)
            shaped = _seed_session(old_log)
            lacking = None
            if shaped and _started(old_log, tz) not in known_sessions:
                lacking = [f"the session started {old_log['inicio']}"]
            check_target(log_path, shaped, lacking, force=force, what="a session log")
    done = Exported(str(base), facts=len(long_doc["aprendido"]))
    done.sections = sorted(k for k in preferences if k != "updated_at")
    if session is not None:
        done.session, done.steps = str(session["id"]), len(session.get("steps") or [])
    for path, data in planned.items():
        done.files[str(path)] = write_outside(path, data)
    return done


def _started(log: Mapping[str, Any], tz: tzinfo) -> tuple[str, str]:
    """A session log's (start, goal), as ``known_sessions`` holds them; ("", "") if unreadable."""
    try:
        made = memoria.session_from(log, tz)
    except InputError:
        return ("", "")
    return (str(made["started_at"]), str(made.get("goal") or ""))


# -- importing an export again ---------------------------------------------------------------
def drop_known(
    result: ImportResult, records: Sequence[Record], known_sessions: set[tuple[str, str]]
) -> None:
    """Leave out of a ``memoria/`` import the facts this memory already holds under another id
    (records ``pmem export --to memoria`` wrote out) and the session it already has (the same
    start and goal), listing them in ``already_present``: an export imported back adds
    nothing."""
    known = known_facts(records)
    plan = result.plan
    dropped = [r["id"] for r in plan.records if str(r.get("learned") or "") in known]
    plan.records = [r for r in plan.records if r["id"] not in dropped]
    result.created = [i for i in result.created if i not in dropped]
    same = [s for s in plan.sessions if (s["started_at"], s.get("goal") or "") in known_sessions]
    plan.sessions = [s for s in plan.sessions if s not in same]
    result.already_present += dropped + [s["id"] for s in same]
