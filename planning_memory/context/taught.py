"""What a person taught: which memories count, and the preferences as context items.

A record counts as *taught* when a person said it: a trigger phrase ("always use pnpm", "never
commit .env files", "no, do it like this", "prefiero X") saved it, which tags it
``learned-from-conversation`` (``longterm/lessons.py``), or it is a ``preference``. Taught
records and the sections of ``preferences.json`` go into every context block, above what
search infers. ``views/claude.py`` applies the same rule to CLAUDE.md (through ``core.is_taught``).

Pure: values in, values out.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from planning_memory.context.items import Item, cap
from planning_memory.core import is_taught as taught
from planning_memory.core import preference_text
from planning_memory.search import Doc

MAX_TAUGHT = 50  # taught records considered (the most recently updated)
PREFERENCE_CHARS = 300  # one preferences section's text
PREFERENCE_SECTIONS = 12  # sections of preferences.json shown
# seed 002's profile first (who the user is and what they want), then the rest by name
PREFERENCE_ORDER = ("user_preferences", "preferences", "user", "code_style", "business")


def is_taught(doc: Doc) -> bool:
    """A person taught it (``core.is_taught``)."""
    return taught(doc.tags, doc.type)


def preference_items(preferences: Mapping[str, Any], tier: int, start: float = 0) -> list[Item]:
    """One item per section of ``preferences.json`` (``code_style: quotes: single; ...``)."""
    names = [n for n, v in preferences.items() if isinstance(v, Mapping) and v]
    names.sort(key=lambda n: (n not in PREFERENCE_ORDER, _rank(n), n))
    items = []
    for n, name in enumerate(names[:PREFERENCE_SECTIONS]):
        section = preferences[name]
        values = preference_text(section)
        text = f"{name.replace('_', ' ')}: {cap(values, PREFERENCE_CHARS)}"
        data = {"section": name, "values": dict(section)}
        ident, why = f"preferences.{name}", "preferences.json"
        items.append(Item("preferences", ident, text, why, tier, start + n, "", data, True))
    return items


def _rank(name: str) -> int:
    return PREFERENCE_ORDER.index(name) if name in PREFERENCE_ORDER else len(PREFERENCE_ORDER)
