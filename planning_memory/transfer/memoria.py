"""Reading an agent's ``memoria/`` folder, for ``pmem import --from memoria``.

A simple JSON agent memory: ``memoria/largo_plazo.json`` and ``memoria/sesion_actual.json``.

- Facts (``aprendido``: strings or ``{"fecha", "hecho"}``; or ``hechos``: strings) become
  ``learning`` records tagged ``memoria``, dated by ``fecha`` (else the file's
  ``ultima_actualizacion``, else its modification time).
- The profile objects (``usuario``, ``usuario.preferencias``, ``negocio``, ``preferencias``)
  become preference sections (``user``, ``user_preferences``, ``business``, ``preferences``;
  other objects keep their own name), with snake_case keys.
- The step log (``inicio``, ``objetivo``, ``pasos``: ``{timestamp, accion, resultado}``)
  becomes a paused session on the channel ``memoria``: the goal, the objective as its first
  user message, and the steps (results cut to 200 characters).

Ids are derived from the content (``lrn_s002…``, ``ses_s002…``), so importing the same folder
again adds nothing; a record or session that already exists is never overwritten. Such agents
writes naive local timestamps (``datetime.now().isoformat()``); they are read in the
configured timezone (else the system's).
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from collections.abc import Mapping
from datetime import UTC, datetime, time, tzinfo
from pathlib import Path
from typing import Any

from planning_memory.core import codec, privacy, timestamp
from planning_memory.errors import InputError, SchemaError
from planning_memory.sessions import new_session
from planning_memory.store import read_regular

LONG_TERM_FILE = "largo_plazo.json"
SESSION_FILE = "sesion_actual.json"
CHANNEL = "memoria"
TAG = "memoria"
STEP_CHARS = 200
SECTION_NAMES = {
    "usuario": "user",
    "negocio": "business",
    "preferencias": "preferences",
    "usuario_preferencias": "user_preferences",
}
FACT_KEYS = ("aprendido", "hechos")
SKIP_KEYS = (*FACT_KEYS, "ultima_actualizacion")
_NON_WORD = re.compile(r"[^a-z0-9]+")


# -- small conversions -----------------------------------------------------------------------------
def _digest(*parts: str) -> str:
    return hashlib.sha256("\x00".join(parts).encode("utf-8")).hexdigest()[:24]


def snake_key(key: str) -> str:
    """``Idioma código`` -> ``idioma_codigo`` (ASCII snake_case, at most 64 characters)."""
    ascii_text = unicodedata.normalize("NFKD", key).encode("ascii", "ignore").decode()
    text = _NON_WORD.sub("_", ascii_text.lower()).strip("_")
    if text and not text[0].isalpha():
        text = f"k_{text}"
    return text[:64].rstrip("_")


def _when(value: Any, tz: tzinfo, where: str) -> datetime:
    """A seed 002 date (``2026-03-01``) or naive ISO timestamp, read in ``tz``."""
    if not isinstance(value, str):
        raise SchemaError("expected a date or timestamp string", json_path=where)
    try:
        parsed = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        raise SchemaError(f"not a date or timestamp: {value[:40]!r}", json_path=where) from None
    if len(value.strip()) == 10:  # a date: midnight
        parsed = datetime.combine(parsed.date(), time())
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=tz)


def _text(value: Any) -> str:
    if isinstance(value, str):
        return privacy.truncate_field(value.strip())
    return privacy.truncate_field(json.dumps(value, ensure_ascii=False, sort_keys=True))


def _title(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= 200 else flat[:199] + "…"


# -- long-term facts -------------------------------------------------------------------------------
def _fact(item: Any, default: datetime, tz: tzinfo, where: str) -> tuple[str, datetime] | None:
    if isinstance(item, Mapping):
        text = _text(item.get("hecho", item.get("fact", dict(item))))
        when = _when(item["fecha"], tz, f"{where}.fecha") if item.get("fecha") else default
    else:
        text, when = _text(item), default
    return (text, when) if text else None


def fact_record(text: str, when: datetime) -> dict[str, Any]:
    stamp = timestamp(when)
    return {
        "id": f"lrn_s002{_digest(text)}",
        "type": "learning",
        "title": _title(text),
        "body": {"what": "", "why": "", "where": "", "learned": text},
        "learned": text,
        "original": text,
        "trigger": "[MEMORIZAR]",
        "tags": [TAG],
        "created_at": stamp,
        "updated_at": stamp,
    }


def facts(data: Mapping[str, Any], default: datetime, tz: tzinfo) -> list[dict[str, Any]]:
    """The learning records of the file's fact lists, one per distinct fact."""
    found: dict[str, dict[str, Any]] = {}
    for key in FACT_KEYS:
        items = data.get(key) or []
        if not isinstance(items, list):
            raise SchemaError("expected an array of facts", json_path=f"$.{key}")
        for n, item in enumerate(items):
            fact = _fact(item, default, tz, f"$.{key}[{n}]")
            if fact is not None and fact[0] not in found:
                found[fact[0]] = fact_record(*fact)
    return list(found.values())


# -- preferences -----------------------------------------------------------------------------------
def _value(value: Any) -> Any:
    if value is None or isinstance(value, bool | int | float):
        return value
    if isinstance(value, list):
        return [_text(v) for v in value]
    return _text(value)


def _sections(name: str, value: Mapping[str, Any], out: dict[str, dict[str, Any]]) -> None:
    section = out.setdefault(SECTION_NAMES.get(name, name), {})
    for key, item in value.items():
        snake = snake_key(str(key))
        if not snake:
            continue
        if isinstance(item, Mapping):
            _sections(snake_key(f"{name}_{snake}"), item, out)
        else:
            section[snake] = _value(item)


def preferences(data: Mapping[str, Any], when: datetime) -> dict[str, Any] | None:
    """Preference sections from the file's profile objects (None when there are none)."""
    out: dict[str, dict[str, Any]] = {}
    for key, value in data.items():
        if key not in SKIP_KEYS and isinstance(value, Mapping) and snake_key(key):
            _sections(snake_key(key), value, out)
    sections = {k: v for k, v in out.items() if v}
    return {**sections, "updated_at": timestamp(when)} if sections else None


# -- the session -----------------------------------------------------------------------------------
def _step(item: Any, tz: tzinfo, where: str) -> dict[str, Any]:
    if not isinstance(item, Mapping):
        raise SchemaError("each step must be an object", json_path=where)
    result = _text(item.get("resultado") or "")
    if len(result) > STEP_CHARS:
        result = result[: STEP_CHARS - 1] + "…"
    return {
        "action": _title(_text(item.get("accion") or "")) or "(sin acción)",
        "result": result,
        "at": timestamp(_when(item.get("timestamp"), tz, f"{where}.timestamp")),
    }


def session_from(data: Mapping[str, Any], tz: tzinfo, channel: str = CHANNEL) -> dict[str, Any]:
    """A paused session holding the log's goal and steps."""
    started = _when(data.get("inicio"), tz, "$.inicio")
    goal = _text(data.get("objetivo") or "") or None
    steps_in = data.get("pasos") or []
    if not isinstance(steps_in, list):
        raise SchemaError("expected an array of steps", json_path="$.pasos")
    steps = [_step(s, tz, f"$.pasos[{n}]") for n, s in enumerate(steps_in)]
    sid = f"ses_s002{_digest(timestamp(started), goal or '')}"
    record = new_session(sid, channel, goal, "memoria/sesion_actual.json", started)
    record.update(status="paused", steps=steps)
    if goal:
        record["messages"] = [
            {
                "id": f"msg_s002{_digest(sid)}",
                "role": "user",
                "content": goal,
                "at": timestamp(started),
                "tool_results": [],
            }
        ]
    record["updated_at"] = max([timestamp(started), *(s["at"] for s in steps)])
    return record


# -- the document and the folder -------------------------------------------------------------------
def document(
    long_term: Any,
    session_log: Any,
    *,
    tz: tzinfo,
    default_when: datetime,
    channel: str = CHANNEL,
) -> dict[str, Any]:
    """The ``pmem import`` document for the folder's two files (either may be None)."""
    doc: dict[str, Any] = {"longTerm": {"learnings": []}}
    if long_term is not None:
        if not isinstance(long_term, Mapping):
            raise InputError("expected a JSON object", path=LONG_TERM_FILE, json_path="$")
        stamp = long_term.get("ultima_actualizacion")
        when = _when(stamp, tz, "$.ultima_actualizacion") if stamp else default_when
        doc["longTerm"]["learnings"] = facts(long_term, when, tz)
        prefs = preferences(long_term, when)
        if prefs is not None:
            doc["longTerm"]["preferences"] = prefs
    if session_log is not None:
        if not isinstance(session_log, Mapping):
            raise InputError("expected a JSON object", path=SESSION_FILE, json_path="$")
        doc["shortTerm"] = {"sessions": [session_from(session_log, tz, channel)]}
    return doc


def find_files(folder: Path) -> tuple[Path | None, Path | None]:
    """``largo_plazo.json`` and ``sesion_actual.json`` in ``folder`` or ``folder/memoria``."""
    for base in (folder / "memoria", folder):
        long_term, log = base / LONG_TERM_FILE, base / SESSION_FILE
        if long_term.is_file() or log.is_file():
            return (long_term if long_term.is_file() else None, log if log.is_file() else None)
    return None, None


def _load(path: Path | None) -> Any:
    data = read_regular(path) if path is not None else None  # bounded; never a FIFO
    return None if data is None else codec.loads(data, path=str(path))


def read_memoria(
    folder: Path, *, tz: tzinfo, channel: str = CHANNEL
) -> tuple[dict[str, Any], list[str]]:
    """The ``pmem import`` document for the memory files in ``folder`` (the agent folder or
    its ``memoria/``), and the files read."""
    long_term_path, log_path = find_files(folder)
    if long_term_path is None and log_path is None:
        raise InputError(
            f"no {LONG_TERM_FILE} or {SESSION_FILE} here or in memoria/",
            path=str(folder),
            hint="give the agent folder (the one holding memoria/)",
        )
    found = [p for p in (long_term_path, log_path) if p is not None]
    mtime = max(p.stat().st_mtime for p in found)
    doc = document(
        _load(long_term_path),
        _load(log_path),
        tz=tz,
        default_when=datetime.fromtimestamp(int(mtime), UTC),
        channel=channel,
    )
    return doc, [str(p) for p in found]
