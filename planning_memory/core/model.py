"""Record kinds, defaults and normal forms. Pure: values in, values out; ``now`` is passed in."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from planning_memory.core.layout import LONG_TERM_DIRS

Record = dict[str, Any]

LONG_TERM_TYPES = tuple(LONG_TERM_DIRS)
LEARNING_TYPES = tuple(t for t in LONG_TERM_TYPES if t not in ("pattern", "mistake"))
SEVERITIES = ("low", "medium", "high", "critical")
TAUGHT_TAG = "learned-from-conversation"  # records a person's trigger phrase saved
TAUGHT_TYPES = ("preference",)  # and preferences: what a person taught, not what was inferred
ESTABLISHED_AT = 5  # uses that make a pattern established (seed 000)
ESCALATE_AT = 3  # occurrences that raise a mistake's severity (seed 000)

ID_PREFIX = {t: "lrn" for t in LEARNING_TYPES} | {"pattern": "pat", "mistake": "mis"}
SCHEMA_FOR_TYPE = {t: "learning" for t in LEARNING_TYPES} | {
    "pattern": "pattern",
    "mistake": "mistake",
}

DEFAULT_CONFIG: dict[str, Any] = {
    "version": 1,
    "memory": {
        "shortTerm": {
            "maxConversationLength": 50,
            "maxDecisions": 100,
            "persistOnPause": True,
            "contextWindow": 15,
            "timezone": None,
            "summarizer": {"command": None, "timeoutSeconds": 60},
        },
        "longTerm": {
            "maxPatterns": 200,
            "maxMistakes": 100,
            "autoLearn": True,
            "confirmBeforeLearn": False,
            "decayEnabled": False,
            "similarityThreshold": 0.5,
            "dedupWindowMinutes": 15,
        },
        "entity": {
            "autoScan": True,
            "scanInterval": "on-change",
            "includePatterns": [],
            "excludePatterns": ["node_modules/**", "dist/**", "build/**", ".venv/**"],
            "maxFileBytes": 1048576,
        },
        "contextual": {
            "provider": "local",
            "embeddingModel": None,
            "chunkSize": 500,
            "chunkOverlap": 50,
            "autoReindex": True,
            "injectBudgetTokens": 1500,
            "recentQueries": 20,
        },
        "agents": {
            "enabled": True,
            "recallLimit": 8,
            "autoSummary": True,
            "defaultScope": "project",
        },
        "render": {
            "claudeMdMaxChars": 8000,
            "targets": {"claudeMd": False, "agentsMd": False},
        },
    },
}


def timestamp(now: datetime) -> str:
    """RFC 3339 UTC, second precision: ``2024-01-20T15:00:00Z``."""
    return now.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_timestamp(value: str) -> datetime:
    return datetime.strptime(value, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)


def merge_defaults(defaults: Mapping[str, Any], given: Mapping[str, Any]) -> dict[str, Any]:
    """Deep merge: ``given`` wins; nested objects merge key by key."""
    result = copy.deepcopy(dict(defaults))
    for key, value in given.items():
        if isinstance(value, Mapping) and isinstance(result.get(key), Mapping):
            result[key] = merge_defaults(result[key], value)
        else:
            result[key] = copy.deepcopy(value)
    return result


def effective_config(given: Mapping[str, Any] | None) -> dict[str, Any]:
    return merge_defaults(DEFAULT_CONFIG, given or {})


def new_long_term(
    record_type: str, record_id: str, now: datetime, *, title: str, **fields: Any
) -> Record:
    """A complete long-term record of ``record_type`` with every default filled in."""
    stamp = timestamp(now)
    record: Record = {
        "id": record_id,
        "type": record_type,
        "title": title,
        "body": {"what": "", "why": "", "where": "", "learned": ""},
        "scope": "project",
        "topic_key": None,
        "tags": [],
        "revision_count": 1,
        "duplicate_count": 0,
        "pinned": False,
        "needs_review": False,
        "created_at": stamp,
        "updated_at": stamp,
        "deleted_at": None,
        "source": "api",
        "anchors": [],
    }
    if record_type == "pattern":
        record |= {
            "name": title,
            "description": "",
            "example": "",
            "usage_count": 1,
            "established": False,
        }
    elif record_type == "mistake":
        record |= {
            "description": "",
            "correction": "",
            "severity": "medium",
            "occurrences": 1,
            "last_occurrence": stamp,
        }
    else:
        record |= {
            "trigger": "",
            "original": "",
            "learned": "",
            "confidence": 0.8,
            "applications": 0,
        }
    body = fields.pop("body", None)
    if body:
        record["body"] = {**record["body"], **body}
    record.update(fields)
    return normalize(record)


def normalize(record: Record) -> Record:
    """Sort the arrays whose order carries no meaning; derive ``established``."""
    out = dict(record)
    if "tags" in out:
        out["tags"] = sorted(set(out["tags"]))
    if "anchors" in out:
        out["anchors"] = sorted(
            out["anchors"], key=lambda a: (a.get("path", ""), a.get("symbol") or "")
        )
    if out.get("type") == "pattern" and "usage_count" in out:
        out["established"] = bool(out.get("established")) or out["usage_count"] >= ESTABLISHED_AT
    return out


def is_taught(tags: Iterable[str], record_type: str) -> bool:
    """A person taught it: a trigger phrase saved it ("always use pnpm"), or it is a
    preference. Taught records reach every context block and CLAUDE.md from the first time."""
    return TAUGHT_TAG in tags or record_type in TAUGHT_TYPES


DECISION_TYPES = ("architecture", "decision")  # CLAUDE.md's "decisions" section


def claude_section(record: Mapping[str, Any]) -> str | None:
    """The section of CLAUDE.md that shows ``record``, or None: pinned, then taught, then a
    critical or high mistake, an established pattern, an architecture note or a decision."""
    if record.get("deleted_at") is not None:
        return None
    kind = record.get("type")
    if record.get("pinned"):
        return "pinned"
    if is_taught(record.get("tags") or [], str(kind)):
        return "taught"
    if kind == "mistake" and record.get("severity") in ("critical", "high"):
        return "mistakes"
    if kind == "pattern" and record.get("established"):
        return "patterns"
    if kind in DECISION_TYPES:
        return "decisions"
    return None


def record_digest(record: Mapping[str, Any]) -> str:
    """A record's content digest: 32 hex digits of the sha256 of its canonical compact JSON,
    whatever the formatting of its file (what a view's source hash is built from)."""
    import hashlib

    return hashlib.sha256(compact_json(record)).hexdigest()[:32]


def compact_json(value: Any) -> bytes:
    """``value`` as canonical compact JSON (sorted keys), UTF-8."""
    # compact separators keep json on its C encoder: ~10x faster than the indented canonical form
    text = json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    )
    return text.encode("utf-8", "surrogatepass")


def preference_text(section: Mapping[str, Any]) -> str:
    """One section of ``preferences.json`` as a line: ``quotes: single; semicolons: no``."""
    return "; ".join(f"{key}: {_preference_value(v)}" for key, v in sorted(section.items()))


def _preference_value(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    if isinstance(value, str | int | float):
        return str(value)
    return json.dumps(value, ensure_ascii=False, sort_keys=True)
