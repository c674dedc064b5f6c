"""How sure a learning is (its ``confidence``): how it was stated, raised when said again.

Confidence runs from 0 to 1. A rule the person stated ("I prefer tabs", "prefiero funciones
flecha") or a fact an agent marked ``[MEMORIZE: ...]`` starts higher than a preference guessed
from a correction ("No, use pnpm instead of npm": what to use instead, not a stated taste); a
memory saved by hand or by a tool (``pmem save``, MCP ``memory_save``) without a trigger sits
between. One statement is never certain: each time the same rule is said again
(``duplicate_count``) adds ``STEP``, up to ``HIGHEST``. A confidence given by the caller is
kept. See docs/learning.md.
"""

from __future__ import annotations

import re

STATED = 0.7  # "I prefer X", "prefiero X", a [MEMORIZE] / [MEMORIZAR] fact
SAVED = 0.6  # saved by hand or by a tool, no trigger phrase
GUESSED = 0.5  # a preference read from a correction ("use X instead of Y")
STEP = 0.1  # each time the same rule is said again
HIGHEST = 0.95

_STATED_PHRASE = re.compile(r"\bprefer|\bprefiero|\bgusta\s+m[aá]s|^\[memoriz", re.IGNORECASE)


def initial(trigger: str) -> float:
    """The confidence of a learning first stated with ``trigger`` ("" when none)."""
    if not trigger.strip():
        return SAVED
    return STATED if _STATED_PHRASE.search(trigger.strip()) else GUESSED


def reinforced(confidence: float) -> float:
    """The confidence of a learning said once more."""
    return round(min(HIGHEST, max(confidence, 0.0) + STEP), 2)
