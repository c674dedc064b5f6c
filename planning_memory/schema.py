"""JSON Schema (2020-12) loading and validation; the only module that imports jsonschema.

Schemas ship inside the wheel (``planning_memory/schemas``); in a source checkout they are read
from the top-level ``schemas/`` folder. Pure apart from reading those packaged files once.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError, best_match
from referencing import Registry, Resource

from planning_memory.errors import SchemaError

SCHEMA_SUFFIX = ".schema.json"


@dataclass(frozen=True)
class Problem:
    """One schema violation: where (a JSON path like ``$.tags[2]``) and what."""

    json_path: str
    message: str


def schema_dir() -> Path:
    packaged = resources.files("planning_memory") / "schemas"
    if packaged.is_dir():
        return Path(str(packaged))
    return Path(__file__).resolve().parent.parent / "schemas"


@functools.cache
def _schemas() -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = {}
    for path in sorted(schema_dir().glob(f"*{SCHEMA_SUFFIX}")):
        found[path.name[: -len(SCHEMA_SUFFIX)]] = json.loads(path.read_text("utf-8"))
    return found


@functools.cache
def _registry() -> Registry:  # type: ignore[type-arg]
    resources_ = [
        (schema["$id"], Resource.from_contents(schema))
        for schema in _schemas().values()
        if "$id" in schema
    ]
    return Registry().with_resources(resources_)


def names() -> list[str]:
    return sorted(_schemas())


def get(name: str) -> dict[str, Any]:
    try:
        return _schemas()[name]
    except KeyError:
        raise SchemaError(f"no schema named {name!r}; known: {', '.join(names())}") from None


@functools.cache
def validator(name: str) -> Draft202012Validator:
    return Draft202012Validator(get(name), registry=_registry())


MAX_SHOWN = 80  # characters of an offending value quoted in a message


def _problem(error: ValidationError) -> Problem:
    """The error as a Problem; a long offending value (a 60,000-character string) is cut short
    so that the message stays one readable line."""
    message = error.message
    shown = repr(error.instance)
    if len(shown) > MAX_SHOWN and shown in message:
        short = f"{shown[:MAX_SHOWN]}... ({len(shown):,} characters)"
        message = message.replace(shown, short)
    return Problem(error.json_path, message)


def problems(name: str, value: Any) -> list[Problem]:
    """Every violation of schema ``name`` by ``value``, best first."""
    errors = list(validator(name).iter_errors(value))
    if not errors:
        return []
    best = best_match(errors)
    rest = sorted((e for e in errors if e is not best), key=lambda e: e.json_path)
    return [_problem(best), *(_problem(e) for e in rest)]


def check(name: str, value: Any, *, path: str | None = None) -> None:
    """Raise SchemaError with the best violation (its JSON path) if ``value`` is invalid."""
    found = problems(name, value)
    if found:
        raise SchemaError(found[0].message, path=path, json_path=found[0].json_path)
