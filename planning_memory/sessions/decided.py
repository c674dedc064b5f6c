"""The decisions a conversation states, each with the question it answers (pure).

"We'll use JWT instead of DB sessions", "decidimos usar Postgres": a sentence of a user or
assistant message is a decision when the standing-fact rule for decisions finds it
(``summary_base.DECISION``, by which summaries keep decisions as key facts) and it is no
question and no acknowledgement ("Entendido, usaremos pnpm" restates what the person said).
The question it answers is the question the other side asked just before (its last sentence
that ends in "?"), else, for the assistant, the task of the prompt it was answering (not the
rules it taught: ``goal.task_of``), else ``STATED``. Its
reasoning is what follows "because", "since", "so that", "porque", "ya que"... in the
sentence, else a next sentence of the same message that opens with one; its alternatives are
what it chose against ("instead of per week", "en vez de Redis").
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from planning_memory.sessions.goal import task_of
from planning_memory.sessions.summary_base import (
    DECISION,
    MEMORIZE,
    Message,
    acknowledgement,
    clip,
    filler,
    sentences,
)

STATED = "Decided in the conversation"
QUESTION_CHARS = 200
REASON_CHARS = 300
_REASON = re.compile(
    r"(?:,\s*|\s+|^)(?:because|since|so that|given that|porque|ya que|pues|para que|dado que)"
    r"\s+(?P<why>[^.?!]{3,})",
    re.IGNORECASE,
)
_AGAINST = re.compile(
    r"\b(?:instead of|rather than|en vez de|en lugar de)\s+(?P<what>[^,.;?!]+?)"
    r"(?=\s*(?:,|\.|;|!|\?|$|\bbecause\b|\bsince\b|\bporque\b|\bya que\b))",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Stated:
    """A decision said in a message: ``decision`` (the sentence), the ``question`` it
    answers, its ``reasoning`` ("" when none is said) and the ``alternatives`` it was chosen
    against."""

    question: str
    decision: str
    reasoning: str = ""
    alternatives: tuple[str, ...] = ()


def stated(messages: Sequence[Message], start: int = 0) -> list[Stated]:
    """The decisions said in ``messages[start:]``, oldest first, each said once (the messages
    before ``start`` only give questions)."""
    found: dict[str, Stated] = {}
    for index in range(start, len(messages)):
        message = messages[index]
        role = message.get("role")
        if role not in ("user", "assistant"):
            continue
        said = _sentences(message)
        for n, sentence in enumerate(said):
            low = sentence.lower()
            if DECISION.search(low) and not _idle(sentence):
                question = _question(messages, index, str(role))
                why = _reasoning(sentence, said[n + 1] if n + 1 < len(said) else "")
                against = tuple(clip(m.group("what"), 120) for m in _AGAINST.finditer(sentence))
                stated_one = Stated(question, clip(sentence), why, against)
                found.setdefault(" ".join(low.split()), stated_one)
    return list(found.values())


def _reasoning(sentence: str, after: str) -> str:
    """Why, as the sentence says it ("..., because librarians asked for it"), else as the
    next sentence does when it opens with a reason ("Because ...", "Porque ...")."""
    found = _REASON.search(sentence) or _REASON.match(after)
    return clip(found.group("why").strip(), REASON_CHARS) if found else ""


def _sentences(message: Message) -> list[str]:
    text = MEMORIZE.sub("", str(message.get("content") or ""))
    return [s.lstrip("-*•> ").strip() for s in sentences(text)]


def _idle(sentence: str) -> bool:
    """A question, an acknowledgement or small talk: no decision, whatever its words."""
    text = sentence.strip()
    asked = text.endswith("?") or text.startswith("¿")
    return asked or acknowledgement(text) or filler(text.split())


def _question(messages: Sequence[Message], index: int, role: str) -> str:
    """The question the other side asked last before ``messages[index]``; else, for the
    assistant, the task of the prompt it answered (``goal.task_of``: not the rules it
    taught), else that prompt's first sentence; else ``STATED``."""
    other = "assistant" if role == "user" else "user"
    earlier = next((m for m in reversed(messages[:index]) if m.get("role") == other), None)
    said = _sentences(earlier) if earlier is not None else []
    asked = [s for s in said if s.endswith("?")]
    if asked:
        return clip(asked[-1], QUESTION_CHARS)
    if role != "assistant" or not said or earlier is None:
        return STATED
    task = task_of(MEMORIZE.sub("", str(earlier.get("content") or "")))
    return clip(task or said[0], QUESTION_CHARS)
