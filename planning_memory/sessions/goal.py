"""What a session is about: the task a prompt states, without the rules it teaches (pure).

"Always use pnpm. Let's build the login page" states the task "Let's build the login page";
"Always use pnpm." alone, "Vale, sigue con el paso 2", "ok continue", "sí" and "perfecto"
state none. A rule is what the learning triggers find (``longterm.triggers.detect_all``:
rules, corrections, praise); what is left of its sentence ("Also,", "Refactor it and") keeps
only its words that say something.
"""

from __future__ import annotations

import re

from planning_memory.longterm import detect_all
from planning_memory.sessions.summary_base import acknowledgement, clip, filler, sentences

GOAL_CHARS = 300
# words that only join a rule to its prompt: "Also, never use sleep()", "Y nunca uses any"
_JOINER_WORDS = """and but so then also please just remember note y pero entonces luego también
tambien además ademas recuerda ojo bueno"""
_JOINERS = frozenset(_JOINER_WORDS.split())
_EDGE = re.compile(r"^[\W_]+|[\s,;:—–-]+$")


def task_of(prompt: str) -> str:
    """The task ``prompt`` states (its sentences that are no rule, acknowledgement or small
    talk, joined), or "" when it states none."""
    text = " ".join(prompt.split())
    for found in detect_all(prompt):
        rule = " ".join(found.rule.split())
        text = text.replace(rule, "\n", 1) if rule else text
    kept = [_trimmed(s) for line in text.split("\n") for s in sentences(line)]
    return clip(" ".join(s for s in kept if s), GOAL_CHARS)


def _trimmed(sentence: str) -> str:
    """``sentence`` without joining words at its ends; "" when nothing else is left, or when
    it only acknowledges or makes small talk."""
    words = sentence.split()
    while words and _bare(words[-1]) in _JOINERS:
        words.pop()
    while words and _bare(words[0]) in _JOINERS:
        words.pop(0)
    kept = _EDGE.sub("", " ".join(words)) if words else ""
    if not kept or filler(words) or acknowledgement(kept):
        return ""
    return " ".join(words)


def _bare(word: str) -> str:
    return word.strip(".,;:!?¡¿—–-()\"'").lower()
