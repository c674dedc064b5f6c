"""The decisions a conversation states, each with the question it answers (pure).

"We'll use JWT instead of DB sessions", "decidimos usar Postgres": a sentence of a user or
assistant message is a decision when the standing-fact rule for decisions finds it
(``summary_base.DECISION``, by which summaries keep decisions as key facts) and it is no
question and no acknowledgement ("Entendido, usaremos pnpm" restates what the person said).
The question it answers is the question the other side asked just before (its last sentence
that ends in "?"), else, for the assistant, the prompt it was answering, else ``STATED``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

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


@dataclass(frozen=True)
class Stated:
    """A decision said in a message: ``decision`` (the sentence) and the ``question`` it
    answers."""

    question: str
    decision: str


def stated(messages: Sequence[Message], start: int = 0) -> list[Stated]:
    """The decisions said in ``messages[start:]``, oldest first, each said once (the messages
    before ``start`` only give questions)."""
    found: dict[str, Stated] = {}
    for index in range(start, len(messages)):
        message = messages[index]
        role = message.get("role")
        if role not in ("user", "assistant"):
            continue
        for sentence in _sentences(message):
            low = sentence.lower()
            if DECISION.search(low) and not _idle(sentence):
                question = _question(messages, index, str(role))
                found.setdefault(" ".join(low.split()), Stated(question, clip(sentence)))
    return list(found.values())


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
    assistant, the first sentence of the prompt it answered; else ``STATED``."""
    other = "assistant" if role == "user" else "user"
    earlier = next((m for m in reversed(messages[:index]) if m.get("role") == other), None)
    said = _sentences(earlier) if earlier is not None else []
    asked = [s for s in said if s.endswith("?")]
    if asked:
        return clip(asked[-1], QUESTION_CHARS)
    return clip(said[0], QUESTION_CHARS) if role == "assistant" and said else STATED
