"""What every session summariser shares: requests, results, the interface and their limits.

A summariser does two jobs. ``summarize`` folds a run of messages into a session's rolling
summary (seed 001): it gets the previous summary and facts and returns the new summary and the
facts the messages add. ``end_summary`` writes seed 003's end-of-session summary (Goal,
Instructions, Discoveries, Accomplished, Next Steps, Relevant Files). Also here: the sentence
helpers and the standing facts (decisions, stated facts, preferences, ``[MEMORIZE: ...]``) a
message carries. Writes nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from planning_memory import longterm

Message = Mapping[str, Any]

MAX_SUMMARY_CHARS = 4000  # the extractive summary text never grows past this
MAX_FACT_CHARS = 300
MAX_END_ITEMS = 20
MAX_OUTPUT_BYTES = 1_000_000
MAX_PROMPT_MESSAGE_CHARS = 4000

END_SECTIONS = ("goal", "instructions", "discoveries", "accomplished", "next_steps")
SECTION_TITLES = {
    "goal": "Goal",
    "instructions": "Instructions",
    "discoveries": "Discoveries",
    "accomplished": "Accomplished",
    "next_steps": "Next Steps",
    "relevant_files": "Relevant Files",
}


# -- requests and results ----------------------------------------------------------------------
@dataclass(frozen=True)
class SummaryRequest:
    """Messages to fold into a rolling summary, with what the summary already holds."""

    messages: Sequence[Message]
    previous_summary: str = ""
    previous_facts: Sequence[str] = ()
    goal: str | None = None


@dataclass(frozen=True)
class Summary:
    """The new rolling summary text (it replaces the old one) and the facts to add."""

    summary: str
    key_facts: tuple[str, ...] = ()


@dataclass(frozen=True)
class EndRequest:
    """What the end summary is written from: the rolling summary plus everything not in it."""

    goal: str | None
    summary: str
    key_facts: Sequence[str]
    messages: Sequence[Message]
    decisions: Sequence[Mapping[str, Any]] = ()
    files_accessed: Sequence[Mapping[str, Any]] = ()
    steps: Sequence[Mapping[str, Any]] = ()
    current_context: Mapping[str, Any] = field(default_factory=dict)
    errors: Sequence[Mapping[str, Any]] = ()  # met in the session, resolved or not


def error_line(error: Mapping[str, Any]) -> str:
    """An error of the session in one line: ``what [file] -> resolution``, or ``what [file]
    (not marked resolved)``."""
    where = f" [{error['file']}]" if error.get("file") else ""
    how = f" -> {error['resolution']}" if error.get("resolution") else " (not marked resolved)"
    return f"{error['error']}{where}{how}"


@dataclass(frozen=True)
class EndSummary:
    """Seed 003's end-of-session summary."""

    goal: str
    instructions: tuple[str, ...] = ()
    discoveries: tuple[str, ...] = ()
    accomplished: tuple[str, ...] = ()
    next_steps: tuple[str, ...] = ()
    relevant_files: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return {
            "goal": self.goal,
            "instructions": list(self.instructions),
            "discoveries": list(self.discoveries),
            "accomplished": list(self.accomplished),
            "next_steps": list(self.next_steps),
            "relevant_files": list(self.relevant_files),
        }


class Summarizer(Protocol):
    """What the session workflow needs from a summariser."""

    name: str

    def summarize(self, request: SummaryRequest) -> Summary: ...

    def end_summary(self, request: EndRequest) -> EndSummary: ...


# -- extractive rules --------------------------------------------------------------------------
# The standing-fact rules (``message_facts``): what ``inherit`` carries over, and what a
# rolling summary always keeps as a key fact. Like the word lists below, they are searched in
# lower-cased text.
PREFERENCE = re.compile(
    r"\b(i prefer|i'd prefer|i would rather|i'd rather|i like|i want|please always|always use"
    r"|always|never|don't use|do not use|avoid|instead of|prefiero|me gusta|quiero que"
    r"|siempre|nunca|no uses|evita|en vez de|en lugar de)\b",
)
DECISION = re.compile(
    r"\b(we decided|decided to|decision|let's use|let's go with|we'll use|we will use"
    r"|going with|we chose|chose to|decidimos|hemos decidido|vamos a usar|usaremos|elegimos"
    r"|nos quedamos con|opted for|settled on|we'll go with|optamos|nos decantamos)\b"
    # "we'll charge per day instead of per week", "cobramos por hora en vez de por día"
    r"|\b(?:we'll|we will|we're going to|let's|vamos a|cobramos|haremos|usamos)\s+\w+"
    r"[^.?!]{0,80}?\b(?:instead of|rather than|en vez de|en lugar de)\b",
)
FACT = re.compile(
    r"\b(my name is|i am|i'm|we are|we use|we're using|our|the project|the server|the app"
    r"|the repo|runs on|is deployed|is hosted|lives in|me llamo|soy|somos|usamos|nuestro"
    r"|nuestra|el proyecto|el servidor|la app|se ejecuta|corre en|está en)\b"
    r"|\b\d{1,3}(\.\d{1,3}){3}\b|\bv?\d+\.\d+(\.\d+)?\b|https?://\S+",
)
MEMORIZE = re.compile(
    r"\[(?:MEMORIZE|MEMORIZAR)\s*:\s*((?:[^\[\]\n]|\[[^\[\]\n]*\])+?)\s*\]", re.IGNORECASE
)  # the fact may hold one level of brackets, e.g. a ``[REDACTED]`` left by privacy
_REDACTED = re.compile(r"\[REDACTED(?::[^\]]*)?\]")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")


def sentences(text: str) -> list[str]:
    """Non-empty sentences of ``text`` (split at ``.!?`` followed by space, and newlines)."""
    return [s.strip() for s in _SENTENCE_END.split(text) if s.strip()]


def clip(text: str, limit: int = MAX_FACT_CHARS) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def unique(items: Iterable[str]) -> list[str]:
    """``items`` without repeats (case- and space-insensitive), first occurrence kept."""
    seen: set[str] = set()
    out: list[str] = []
    for item in items:
        key = " ".join(item.lower().split())
        if key and key not in seen:
            seen.add(key)
            out.append(item)
    return out


def memorize_markers(text: str) -> list[str]:
    """The facts of ``[MEMORIZE: ...]`` / ``[MEMORIZAR: ...]`` markers in ``text`` (a fact
    that is nothing but redacted text is dropped)."""
    found = longterm.extract_memorize_markers(text)
    return [f for f in found if _REDACTED.sub("", f).strip(" \t.,;:-")]


_FILLER_WORDS = """ok okay sure thanks thank you great nice good cool fine yes yeah yep no hi hey
hello morning perfect got it noted welcome you're lol ugh wow hmm fair right exactly go ahead
that's all for today vale gracias genial bien perfecto de nada hola buenas sí si dale listo
claro entendido acuerdo a ti me gusta adelante por hoy hasta mañana muy"""
_FILLER = frozenset(_FILLER_WORDS.split())  # a sentence of these words only is small talk
PUNCT = ".,!?¡¿:;…()-\"'"


def filler(words: Sequence[str]) -> bool:
    said = [w.strip(PUNCT).lower() for w in words]
    return all(w in _FILLER for w in said if w)


# "Understood", "entendido": nothing but taking note, whatever follows
_NOTED = (
    r"entendido|entiendo|comprendido|understood|got\s+it|noted|anotado|will\s+do"
    r"|sounds\s+good|i\s+understand|i\s+see|roger|copy\s+that"
)
# "ok", "vale", "perfecto": taking note when nothing follows but a go-on or a promise
_AGREED = (
    r"ok(?:ay)?|vale|sure|claro|perfect[oa]?|s[ií]|yes|yeah|yep|right|alright|all\s+right"
    r"|genial|great|good|bien|muy\s+bien|listo|cool|nice|gracias|thanks|thank\s+you|venga"
    r"|bueno|excelente|excellent|de\s+acuerdo|of\s+course|por\s+supuesto|fine|no\s+problem"
    r"|please|por\s+favor"
)
_PROMISE = (
    r"I['’]ll|I\s+will|I['’]m\s+going\s+to|let\s+me|voy\s+a|usaré|haré|lo\s+hago|me\s+pongo"
    r"|procedo|sigo|contin[uú]o|empiezo"
)
_GO_ON = (
    r"continue|contin[uú]a|continuemos|go\s+on|go\s+ahead|keep\s+going|carry\s+on|proceed"
    r"|procede|do\s+it|let['’]?s\s+(?:continue|go|proceed)|sigue|seguimos|sigamos|adelante"
    r"|dale|hazlo|vamos|next"
)
# what a go-on may name: "con el paso 2", "with step 3", "to the next one"
_STEP = (
    r"(?:(?:con|with|to|on|al|a|en)\s+)?(?:(?:el|la|lo|the|a|un)\s+)?"
    r"(?:(?:next|siguiente|pr[oó]ximo|following)\s*)?"
    r"(?:(?:paso|step|fase|phase|punto|item|one|uno|it|that|this|eso|esto)\b\s*[\w.-]{0,4})?"
)
_ACKNOWLEDGED = re.compile(
    rf"(?i)^[\W_]*(?:(?:{_NOTED})\b"
    rf"|(?:(?:{_AGREED})\b[\W_]*)+(?:$|(?:{_PROMISE})\b)"
    rf"|(?:(?:{_AGREED})\b[\W_]*)*(?:(?:{_GO_ON})\b[\s,:]*)+{_STEP}[\W_]*"
    rf"(?:(?:please|por\s+favor)[\W_]*)?$)"
)


def acknowledgement(sentence: str) -> bool:
    """Whether ``sentence`` only takes note or asks to go on ("Entendido, usaré pnpm",
    "Understood.", "Vale, sigue con el paso 2", "ok continue", "sí", "perfecto"): never a
    discovery, a goal or a decision."""
    return _ACKNOWLEDGED.match(sentence.strip()) is not None


def standing(role: object, sentence: str) -> bool:
    low = sentence.lower()
    if DECISION.search(low):
        return not filler(sentence.split())
    said = role == "user" and (PREFERENCE.search(low) or FACT.search(low))
    return bool(said) and not filler(sentence.split())


def message_facts(message: Message) -> list[str]:
    """Decisions, stated facts and preferences in one message (the standing-fact rules)."""
    role = message.get("role")
    text = str(message.get("content", ""))
    found = [clip(f) for f in memorize_markers(text)]
    found += [clip(s) for s in sentences(MEMORIZE.sub("", text)) if standing(role, s)]
    return found


def relevant_files(files: Sequence[Mapping[str, Any]]) -> list[str]:
    return unique(str(f["path"]) for f in files if f.get("path"))


def safe_rel(path: str) -> bool:
    parts = path.replace("\\", "/").split("/")
    return bool(path) and not path.startswith("/") and ".." not in parts and "\x00" not in path
