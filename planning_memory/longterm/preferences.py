"""``preferences.json``: the settings a person states, read from what they teach and set by hand.

Seed 000 keeps the user's and project's preferences in sections (code style, architecture,
testing); "prefiero comillas simples" or "always use vitest" should land there, not only in a
learning. ``stated`` reads the settings a taught rule states (English and Spanish):

| says                                             | sets                                  |
| ------------------------------------------------ | ------------------------------------- |
| single / double quotes, comillas simples/dobles  | ``code_style.quotes``                 |
| (no) semicolons, (sin) punto y coma              | ``code_style.semicolons``             |
| indent with 2 spaces / tabs, 4 espacios          | ``code_style.indentation``            |
| lines under 100 characters, 120 columnas         | ``code_style.max_line_length``        |
| a test framework (vitest, jest, pytest ...)      | ``testing.framework``                 |
| 80% coverage, cobertura del 90%                  | ``testing.coverage``                  |
| describe/it                                      | ``testing.style``                     |
| a package manager (pnpm, yarn, uv, poetry ...)   | ``tooling.package_manager``           |
| prefer an architecture pattern (repository ...)  | ``architecture.preferred_patterns``   |
| avoid one (singletons, god objects ...)          | ``architecture.avoid_patterns``       |

A rule that forbids ("never use semicolons", "nunca uses jest") sets the opposite or nothing;
a thing named only as what is avoided ("pnpm, never npm": npm) never becomes the choice.
``apply`` changes keys (``None`` removes one) under the store's lock, validated by the schema.
``read`` is the one reader of the file: everything that shows or renders preferences goes
through it, so a broken file (a FIFO or a folder in its place, a file over ``MAX_BYTES``, broken
JSON, valid JSON of the wrong shape) is the same one-line ``InputError`` everywhere.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any

from planning_memory.core import Layout, codec, schema, timestamp
from planning_memory.errors import InputError, SchemaError
from planning_memory.store import Store

if TYPE_CHECKING:  # the trigger tables load only when an utterance is read
    from planning_memory.longterm.triggers import Trigger

TEST_FRAMEWORKS = (
    "vitest",
    "jest",
    "mocha",
    "jasmine",
    "ava",
    "pytest",
    "unittest",
    "nose2",
    "playwright",
    "cypress",
    "junit",
    "rspec",
    "minitest",
    "phpunit",
)
PACKAGE_MANAGERS = ("pnpm", "yarn", "npm", "bun", "uv", "poetry", "pipenv", "pip", "conda")
ARCHITECTURE = {
    "repository": r"repository\s+pattern|patr[oó]n\s+(?:de\s+)?repositorio",
    "service-layer": r"service[\s-]+layers?|capa\s+de\s+servicios?",
    "dependency-injection": r"dependency[\s-]+injection|inyecci[oó]n\s+de\s+dependencias",
    "singleton-abuse": r"singletons?",
    "god-objects": r"god[\s-]+(?:objects?|class(?:es)?)|objetos?\s+dios",
    "hexagonal": r"hexagonal",
    "mvc": r"\bmvc\b",
    "clean-architecture": r"clean\s+architecture|arquitectura\s+limpia",
    "event-sourcing": r"event[\s-]+sourcing",
    "cqrs": r"\bcqrs\b",
}
MAX_BYTES = 1 << 20  # preferences.json is edited by hand: a bigger one is refused unparsed
# patterns, compiled on first use (by ``re``'s own cache): a save that states nothing pays none
KEY = r"^[a-z][a-z0-9]*(_[a-z0-9]+)*\.[a-z][a-z0-9]*(_[a-z0-9]+)*$"

_QUOTES = (
    r"\b(?P<en>single|double)[\s-]+quot(?:es|ation\s+marks)\b|\bcomillas\s+(?P<es>simples|dobles)\b"
)
_SEMI_OFF = (
    r"\b(?:no|without|omit(?:ting)?|skip)\s+(?:the\s+)?semicolons?\b|\bsin\s+punto\s+y\s+coma\b"
)
_SEMI = r"\bsemicolons?\b|\bpunto\s+y\s+coma\b"
_INDENT = r"\b(?P<n>[1-8])[\s-]+(?:spaces?|espacios?)\b|\b(?P<tabs>tabs|tabuladores|tabulaciones)\b"
_INDENT_WORD = r"\bindent|\bsangr|\bindentaci"
_LINE = (
    r"\b(?P<n>[4-9]\d|1\d\d|2[0-4]\d)\s*(?:chars?|characters?|caracteres|columns?|columnas|cols)\b"
)
_LINE_WORD = r"\bline|\bl[ií]nea"
_COVERAGE = (
    r"(?:\b(?:coverage|cobertura)\D{0,20}?(?P<a>\d{1,3})\s*%)|(?:\b(?P<b>\d{1,3})\s*%\s*(?:test\s+)?"
    r"(?:coverage|(?:de\s+)?cobertura))"
)
_DESCRIBE_IT = r"\bdescribe\s*[/-]\s*it\b|\bdescribe\s+and\s+it\b"
_AVOIDING = r"\b(?:avoid|never|don['’]?t|do\s+not|no|evit\w*|nunca)\b"


def _word(names: tuple[str, ...], text: str) -> list[str]:
    found = re.findall(rf"(?<![\w.-])({'|'.join(names)})(?![\w-])", text, re.IGNORECASE)
    return [name.lower() for name in found]


def _choice(names: tuple[str, ...], found: Trigger, text: str) -> str | None:
    """The one of ``names`` the rule chooses: its ``preferred`` thing, else the only one
    named in a rule that does not forbid."""
    if found.preferred:
        chosen = _word(names, found.preferred)
        if chosen:
            return chosen[0]
    if found.kind == "mistake":
        return None
    named = set(_word(names, text)) - set(_word(names, found.avoided or ""))
    return named.pop() if len(named) == 1 else None


def stated(found: Trigger) -> dict[str, Any]:
    """``{"section.key": value}`` for each setting the taught rule ``found`` states."""
    if found.kind == "praise":
        return {}
    text = found.rule or found.subject
    forbids = found.kind == "mistake"
    out: dict[str, Any] = {}
    if (quotes := re.search(_QUOTES, text, re.I)) is not None and not forbids:
        word = (quotes.group("en") or quotes.group("es")).lower()
        out["code_style.quotes"] = "single" if word in ("single", "simples") else "double"
    if re.search(_SEMI_OFF, text, re.I):
        out["code_style.semicolons"] = forbids  # "never omit semicolons" keeps them
    elif re.search(_SEMI, text, re.I):
        out["code_style.semicolons"] = not forbids
    if (
        re.search(_INDENT_WORD, text, re.I)
        and (indent := re.search(_INDENT, text, re.I)) is not None
        and not forbids
    ):
        out["code_style.indentation"] = "tabs" if indent.group("tabs") else int(indent.group("n"))
    if (
        re.search(_LINE_WORD, text, re.I)
        and (line := re.search(_LINE, text, re.I)) is not None
        and not forbids
    ):
        out["code_style.max_line_length"] = int(line.group("n"))
    if (framework := _choice(TEST_FRAMEWORKS, found, text)) is not None:
        out["testing.framework"] = framework
    if (coverage := re.search(_COVERAGE, text, re.I)) is not None and not forbids:
        value = int(coverage.group("a") or coverage.group("b"))
        if 0 < value <= 100:
            out["testing.coverage"] = value
    if re.search(_DESCRIBE_IT, text, re.I) and not forbids:
        out["testing.style"] = "describe-it"
    if (manager := _choice(PACKAGE_MANAGERS, found, text)) is not None:
        out["tooling.package_manager"] = manager
    for name, pattern in ARCHITECTURE.items():
        hit = re.search(pattern, text, re.IGNORECASE)
        if hit is None:
            continue
        avoided = forbids or re.search(_AVOIDING, text[: hit.start()], re.I) is not None
        out["architecture.avoid_patterns" if avoided else "architecture.preferred_patterns"] = [
            *out.get(
                "architecture.avoid_patterns" if avoided else "architecture.preferred_patterns", []
            ),
            name,
        ]
    return out


def _check_key(key: str) -> tuple[str, str]:
    if not re.match(KEY, key):
        raise InputError(
            f"preference key {key!r} must be section.key in snake_case",
            hint="for example code_style.quotes or testing.framework",
        )
    section, _, name = key.partition(".")
    return section, name


def read(layout: Layout, store: Store) -> dict[str, Any]:
    """``preferences.json`` ({} when there is none). Anything else in its place or in it (a
    FIFO, a folder, a link loop, over ``MAX_BYTES``, not UTF-8 or JSON, JSON that is not an
    object) is an ``InputError`` naming the file; nothing blocks on a FIFO. Its sections are
    checked by ``pmem validate``, and by ``updated`` before a change is written."""
    path = layout.preferences
    if not os.path.lexists(path):
        return {}
    value = codec.loads(store.read_bytes(path, max_bytes=MAX_BYTES), path=store.rel(path))
    if not isinstance(value, dict):
        kind = {list: "an array", str: "a string", bool: "true or false"}.get(type(value))
        raise SchemaError(
            f"is {kind or 'a number or null'}; preferences.json holds one JSON object of sections",
            path=store.rel(path),
            json_path="$",
            hint='for example {"code_style": {"quotes": "single"}}',
        )
    return value


def updated(
    layout: Layout, store: Store, changes: Mapping[str, Any], now: datetime
) -> dict[str, Any] | None:
    """The preferences after ``changes`` (``section.key``: ``None`` removes it; a list adds
    its items to a list already there; an emptied section goes), checked by the schema, or
    None when they change nothing. Writes nothing: a caller that must also write something
    else calls it first, so a broken ``preferences.json`` stops it before any write."""
    parts = {key: _check_key(key) for key in changes}
    current = read(layout, store)
    new = {k: dict(v) if isinstance(v, dict) else v for k, v in current.items()}
    for key, value in changes.items():
        section, name = parts[key]
        values = new.setdefault(section, {})
        if value is None:
            values.pop(name, None)
        elif isinstance(value, list) and isinstance(values.get(name), list):
            values[name] = list(dict.fromkeys([*values[name], *map(str, value)]))
        else:
            values[name] = value
        if not values:
            new.pop(section)
    if new == current:
        return None
    new["updated_at"] = timestamp(now)
    schema.check("preferences", new, path=store.rel(layout.preferences))
    return new


def apply(
    layout: Layout, store: Store, changes: Mapping[str, Any], now: datetime
) -> dict[str, Any]:
    """Set each ``section.key`` of ``changes`` (``updated``) under the store's lock. Returns
    the new preferences."""
    with store.lock():
        new = updated(layout, store, changes, now)
        if new is None:
            return read(layout, store)
        store.write_json(layout.preferences, new)
        return new
