"""Summarisers for sessions: the interface, the built-in extractive one and an external command.

A summariser does two jobs. ``summarize`` folds a run of messages into a session's rolling
summary (seed 001): it gets the previous summary and facts and returns the new summary and the
facts the messages add. ``end_summary`` writes seed 003's end-of-session summary (Goal,
Instructions, Discoveries, Accomplished, Next Steps, Relevant Files).

- ``ExtractiveSummarizer``: built in, offline, deterministic. It keeps decisions, stated facts
  and preferences (phrase rules in English and Spanish) and ``[MEMORIZE: ...]`` facts.
- ``CommandSummarizer``: runs any LLM command line (``llm -m haiku``, ``claude -p``, ...) with
  the prompt on stdin and reads the summary from stdout (JSON, or Markdown/plain text). A
  failing, missing or hanging command (after ``timeout`` seconds its process group is killed)
  raises ``ExternalCommandError``; callers then leave the session unchanged.

This module writes nothing; the session workflow applies the results under the store lock.
"""

from __future__ import annotations

import contextlib
import heapq
import json
import os
import re
import shlex
import signal
import subprocess
from collections.abc import Callable, Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from planning_memory import longterm
from planning_memory.errors import ExternalCommandError

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
_PREFERENCE = re.compile(
    r"\b(i prefer|i'd prefer|i would rather|i'd rather|i like|i want|please always|always use"
    r"|always|never|don't use|do not use|avoid|instead of|prefiero|me gusta|quiero que"
    r"|siempre|nunca|no uses|evita|en vez de|en lugar de)\b",
)
_DECISION = re.compile(
    r"\b(we decided|decided to|decision|let's use|let's go with|we'll use|we will use"
    r"|going with|we chose|chose to|decidimos|hemos decidido|vamos a usar|usaremos|elegimos"
    r"|nos quedamos con)\b",
)
_FACT = re.compile(
    r"\b(my name is|i am|i'm|we are|we use|we're using|our|the project|the server|the app"
    r"|the repo|runs on|is deployed|is hosted|lives in|me llamo|soy|somos|usamos|nuestro"
    r"|nuestra|el proyecto|el servidor|la app|se ejecuta|corre en|está en)\b"
    r"|\b\d{1,3}(\.\d{1,3}){3}\b|\bv?\d+\.\d+(\.\d+)?\b|https?://\S+",
)
_MEMORIZE = re.compile(
    r"\[(?:MEMORIZE|MEMORIZAR)\s*:\s*((?:[^\[\]\n]|\[[^\[\]\n]*\])+?)\s*\]", re.IGNORECASE
)  # the fact may hold one level of brackets, e.g. a ``[REDACTED]`` left by privacy
_REDACTED = re.compile(r"\[REDACTED(?::[^\]]*)?\]")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")


def sentences(text: str) -> list[str]:
    """Non-empty sentences of ``text`` (split at ``.!?`` followed by space, and newlines)."""
    return [s.strip() for s in _SENTENCE_END.split(text) if s.strip()]


def _clip(text: str, limit: int = MAX_FACT_CHARS) -> str:
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
_PUNCT = ".,!?¡¿:;…()-\"'"


def _filler(words: Sequence[str]) -> bool:
    said = [w.strip(_PUNCT).lower() for w in words]
    return all(w in _FILLER for w in said if w)


def _standing(role: object, sentence: str) -> bool:
    low = sentence.lower()
    if _DECISION.search(low):
        return not _filler(sentence.split())
    said = role == "user" and (_PREFERENCE.search(low) or _FACT.search(low))
    return bool(said) and not _filler(sentence.split())


def message_facts(message: Message) -> list[str]:
    """Decisions, stated facts and preferences in one message (the standing-fact rules)."""
    role = message.get("role")
    text = str(message.get("content", ""))
    found = [_clip(f) for f in memorize_markers(text)]
    found += [_clip(s) for s in sentences(_MEMORIZE.sub("", text)) if _standing(role, s)]
    return found


# -- fact density ------------------------------------------------------------------------------
def _words(*phrases: str) -> re.Pattern[str]:
    """A pattern for any of ``phrases`` as whole words, to search in lower-cased text."""
    return re.compile(r"\b(?:" + "|".join(phrases) + r")\b")


# Specific tokens: numbers and versions, code names (`quoted`, key=value, snake_case,
# camelCase, PascalCase, call(), --flags, kebab-names, dotted.names, letters with digits).
_NUMBER = re.compile(r"(?<![\w#.])[#v]?\d[\w.,:/%-]*(?![\w)])")
_CODE = re.compile(
    r"`[^`\n]+`|\b\w+=[^\s,;)]+|\b[A-Za-z]\w*_\w+\b|\b[a-z]+[A-Z]\w*\b|\b[A-Z][a-z0-9]+[A-Z]\w*\b"
    r"|\b\w+\(\)|(?<![\w-])(?:--[a-z][\w-]*|-[a-zA-Z]\b)|\b[a-z][a-z0-9]*(?:-[A-Za-z0-9]+)+\b"
    r"|\b[a-z][\w-]+\.[a-z]{2,}\b|\b(?=[A-Za-z]*\d)(?=\d*[A-Za-z])[A-Za-z\d]{2,}\b"
)
_FILE = re.compile(
    r"[\w.-]*\w\.(?:py|pyi|ts|tsx|js|jsx|mjs|json|ya?ml|toml|md|rs|go|java|kt|rb|php|cs|cpp|c|h"
    r"|sql|sh|css|scss|html|lock|ini|cfg|env|txt|db|sqlite3?|csv|parquet|xml)",
    re.IGNORECASE,
)
_ERROR_NAME = re.compile(
    r"\b[A-Z]\w*(?:Error|Exception|Required|Expired|BackOff|Killed)\b|\bE\d{4}\b"
)
_NAME = re.compile(r"(?<=[\w,;:()] )[A-ZÁÉÍÓÚÑ][\w.-]*\w")  # a capital inside a sentence
_CHOICE = _words(
    "we decided", "decided", "decision", "let's", "we'll (?:use|go|keep|do)", "going with",
    "go with", "chose", "choose", "opted", "settled on", "switch(?:ed)? to", "instead of",
    "rather than", "agreed", "prefer", "recommend", "propose", "suggest", "plan",
    "i'd (?:go|use|pick|keep)", "i would", "iría", "usaría", "sugiero",
    "decidimos", "decidido", "vamos a", "vamos con", "usaremos", "elegimos", "nos quedamos",
    "mejor", "en vez de", "en lugar de", "optamos", "propongo", "recomiendo", "entonces",
    "de acuerdo", "por ahora",
)  # fmt: skip
_REASON = _words(
    "because", "since", "so", "so that", "due to", "otherwise", "that's why", "which is why",
    "to avoid", "allows?", "causes?", "porque", "ya que", "debido a", "para que", "para no",
    "así que", "por eso", "si no", "así",
)  # fmt: skip
_SETTING = _words(
    "default", "limit", "limits", "timeout", "port", "max", "maximum", "min", "minimum",
    "size", "version", "ttl", "interval", "up to", "at most", "every", "per", "por defecto",
    "límite", "puerto", "máximo", "mínimo", "tamaño", "versión", "cada", "como máximo",
)  # fmt: skip
_NEGATION = re.compile(r"n't\b|\b(?:not|never|no|without|cannot|nunca|jamás|sin|tampoco|ni)\b")
_INSTRUCTION = re.compile(
    r"\b(?:always|never|don't|do not|please|must|should|make sure|need to|needs to|has to"
    r"|have to|i want|we want|i prefer|i'd rather|avoid|siempre|nunca|no toques|no uses"
    r"|no hagas|no guardes|por favor|hay que|tiene que|tienen que|debe|deben|prefiero|quiero"
    r"|asegúrate|evita|ojo|recuerda)\b|" + r"^(?:(?:ok|yes|no|and|also|but|y|pero|sí),? )*"
    r"(?:use|keep|add|put|make|set|move|skip|remove|fix|run|lower|raise|pin|pon|usa|añade"
    r"|haz|quita|llama|deja|cambia|mete)\b",
)
_STATED = _words(
    "we have", "we've got", "is on", "are on", "lives? in", "stored in", "tenemos",
    "se guardan?", "guardamos", "vive en", "the team", "el equipo",
)  # fmt: skip
_ERROR = _words(
    "error", "errors", "exception", "traceback", "fail", "fails", "failed", "failing",
    "failure", r"crash\w*", "broken", "bug", r"leak\w*", "refused", "denied", "timed out",
    r"oom\w*", "unable", "panic", "falla", "fallo", "falló", "errores", "excepción", "roto",
    "rompe", "se cuelga", "colgó", "sin memoria",
)  # fmt: skip
_FIX = _words(
    "fix", "fixed", "fixes", "solved", "resolved", "workaround", "root cause", "the cause",
    "caused by", "turned out", "arreglad[oa]", "arreglo", "arreglamos", "solucionad[oa]",
    "la causa", "se debía", "era por",
)  # fmt: skip
_DONE = re.compile(
    r"^(?:done|added|fixed|implemented|created|changed|removed|updated|wrote|written|pushed"
    r"|installed|moved|renamed|deleted|replaced|switched|migrated|applied|hecho|listo"
    r"|añadid[oa]s?|arreglad[oa]|cread[oa]|instalad[oa]s?|cambiad[oa]|quitad[oa]|escrit[oa])\b"
    r"|\b(?:i've|i have|we've|we have) \w+(?:ed|en|t)\b|\b(?:he|hemos) \w+(?:ado|ido|to|cho)\b"
    r"|\b(?:is|are) (?:installed|in place|fixed|done)\b|\ball \d+ .*\bpass|\bpasan\b",
)
_NEXT = re.compile(
    r"\b(next|todo|to do|still need|remaining|pending|later|tomorrow|then we|follow[- ]up"
    r"|left to do|open items?|falta|faltan|pendiente|siguiente|próximo|después|luego|mañana"
    r"|queda|quedan)\b",
)

FACT_SCORE = 9  # a sentence worth this much is a key fact
LINE_SCORE = 3  # ... and this much may be a line of the summary text
FILLER_SCORE = -5.0  # small talk
SUMMARY_CHARS_PER_MESSAGE = 20  # the summary text's lines: this much per message covered
LINE_COST = 40  # what a line costs besides its characters, when ranking per character
MAX_FACTS_PER_RUN = 60  # ranked key facts one call may add (standing facts come on top)
NEAR_DUPLICATE = 0.75  # share of words (Jaccard) from which two sentences say the same


def _paths(text: str) -> set[str]:
    """The file paths, URLs and file names in ``text``."""
    found = set()
    for token in text.split():
        token = token.strip(_PUNCT + "`[]{}<>")
        slashes = token.count("/")
        if slashes >= 2 or (slashes == 1 and "." in token) or _FILE.fullmatch(token):
            found.add(token)
    return found


def _has(pattern: re.Pattern[str], text: str) -> float:
    return 1.0 if pattern.search(text) else 0.0


def _signals(text: str, role: str) -> float:
    """The score of ``text`` besides its specific tokens and names: a choice, its reason, a
    setting, a negation, an error, a fix, a next step, something done (minus a question);
    from the user, anything, more for an instruction or a stated fact. Small talk: -5."""
    if _filler(text.split()):
        return FILLER_SCORE
    low = text.lower()
    value = 3 * _has(_CHOICE, low) + 2 * _has(_REASON, low) + _has(_SETTING, low)
    error = _ERROR.search(low) or _ERROR_NAME.search(text)
    value += _has(_NEGATION, low) + 2 * bool(error) + 2 * _has(_FIX, low)
    value += 2 * _has(_NEXT, low) + _has(_DONE, low) - 2 * text.endswith("?")
    if role == "user":
        value += 1 + 3 * _has(_INSTRUCTION, low) + 2 * _has(_FACT, low)
        value += 2 * _has(_STATED, low)
    return value


@dataclass(frozen=True)
class Candidate:
    """A sentence the summariser may keep: its text, who said it (``""``: unknown), where
    (``order``, oldest first), its ``signals`` (see ``_signals``), the specific tokens and
    names it holds (lower case) and its content words. ``standing`` ones are kept whatever
    they score (unless they repeat one kept or a limit binds): the standing-fact rules'
    sentences, ``[MEMORIZE: ...]`` facts, key facts, lines of a summary in another form."""

    text: str
    role: str
    order: int
    signals: float
    specific: frozenset[str] = frozenset()
    names: frozenset[str] = frozenset()
    standing: bool = False
    words: frozenset[str] = field(default=frozenset(), compare=False, repr=False)

    def value(self, covered: AbstractSet[str] = frozenset()) -> float:
        """The score, counting only specifics and names not in ``covered``: 3 for each
        specific token (at most 4) and 1.5 for each name (at most 3) on top of signals."""
        if self.signals <= FILLER_SCORE:
            return self.signals
        fresh = min(4, len(self.specific - covered)), min(3, len(self.names - covered))
        return self.signals + 3 * fresh[0] + 1.5 * fresh[1]

    def line(self) -> str:
        """The candidate as a line of the summary text."""
        return f"- {self.role}: {self.text}" if self.role else f"- {self.text}"


_TOKEN = re.compile(r"\w+")
_CODE_BLOCK = re.compile(r"```.*?(?:```|\Z)", re.DOTALL)
_LIST_MARK = re.compile(r"^(?:[-*+•>]|\d+[.)])\s+")


_STOP_TEXT = """the and for with that this from are was were you not but have has its into our your
can will all any then than when what which there their they them been also just now out about
los las del que con una por para como más pero sus les este esta eso esto hay son está ese
esa muy sin sobre entre cuando donde"""
_STOP_WORDS = frozenset(_STOP_TEXT.split())


def _content_words(text: str) -> frozenset[str]:
    """The words that tell sentences apart: no stop words, nothing under three letters but
    numbers."""
    words = _TOKEN.findall(text.lower())
    return frozenset(w for w in words if (len(w) > 2 or w.isdigit()) and w not in _STOP_WORDS)


def candidate(text: str, role: str, order: int, *, standing: bool = False) -> Candidate:
    """``text`` (clipped) as a candidate said by ``role``."""
    text = _clip(text)
    found = {*_NUMBER.findall(text), *_CODE.findall(text), *_ERROR_NAME.findall(text)}
    specific = frozenset(t.strip("`").lower() for t in found | _paths(text))
    names = frozenset(n.lower() for n in _NAME.findall(text)) - specific
    signals = _signals(text, role) - 2 * (not specific and len(text.split()) < 4)
    return Candidate(text, role, order, signals, specific, names, standing, _content_words(text))


def score(text: str, role: str) -> float:
    """How much a sentence says on its own (see ``Candidate.value``)."""
    return candidate(text, role, 0).value()


def _prose(text: str) -> list[str]:
    """The sentences of ``text`` outside code blocks and markers, list marks dropped."""
    text = _CODE_BLOCK.sub("\n", _MEMORIZE.sub("", text))
    return [_LIST_MARK.sub("", s) for s in sentences(text)]


def _tool_errors(message: Message) -> list[str]:
    """The error lines in the end of a message's tool output (at most two)."""
    out: list[str] = []
    for result in message.get("tool_results") or ():
        tail = str(result.get("output", "")).splitlines()[-40:]
        out += [s.strip()[:200] for s in tail if _ERROR_NAME.search(s) or _ERROR.search(s.lower())]
    return out[:2]


def candidates(messages: Iterable[Message], start: int = 0) -> list[Candidate]:
    """Every sentence of the user and assistant ``messages`` and the error lines of their
    tool output, in conversation order (``order`` from ``start``); ``[MEMORIZE: ...]``
    facts and the standing-fact rules' sentences are standing."""
    out: list[Candidate] = []
    for message in messages:
        role = str(message.get("role", ""))
        if role not in ("user", "assistant"):
            continue
        text = str(message.get("content", ""))
        for fact in memorize_markers(text) if _MEMORIZE.search(text) else ():
            out.append(candidate(fact, role, start + len(out), standing=True))
        for s in _prose(text):
            out.append(candidate(s, role, start + len(out), standing=_standing(role, s)))
        for line in _tool_errors(message):
            out.append(candidate(line, "tool", start + len(out)))
    return out


class NearDuplicates:
    """Sentences kept so far, to tell whether another one repeats one of them: most of the
    same words (or, from four words up, all of them within a longer one) and no number the
    other lacks (a changed setting is news)."""

    def __init__(self) -> None:
        self._sets: list[frozenset[str]] = []
        self._postings: dict[str, list[int]] = {}

    def add(self, words: frozenset[str]) -> None:
        for word in words:
            self._postings.setdefault(word, []).append(len(self._sets))
        self._sets.append(words)

    def repeats(self, words: frozenset[str]) -> bool:
        if not words:
            return True
        shared: dict[int, int] = {}
        for word in words:
            for i in self._postings.get(word, ()):
                shared[i] = shared.get(i, 0) + 1
        numbers = {w for w in words if w[0].isdigit()}
        for i, n in shared.items():
            other = self._sets[i]
            similar = n / (len(words) + len(other) - n) >= NEAR_DUPLICATE
            if (similar or n == len(words) >= 4) and numbers <= other:
                return True
        return False


class Selection:
    """What a summary holds so far: its sentences (to refuse near-repeats) and the specific
    tokens and names they cover (a sentence is worth only what it adds)."""

    def __init__(self, texts: Iterable[str] = ()) -> None:
        self.seen = NearDuplicates()
        self.covered: set[str] = set()
        for text in texts:
            self.keep(candidate(text, "", 0))

    def keep(self, c: Candidate) -> None:
        self.seen.add(c.words)
        self.covered |= c.specific | c.names

    def pick(
        self,
        pool: Iterable[Candidate],
        *,
        limit: int | None = None,
        floor: float = FILLER_SCORE,
        chars: int | None = None,
    ) -> list[Candidate]:
        """Greedily, the candidate worth most for what it adds (per character when
        ``chars`` bounds the lines it may take; on a tie the newest), at least ``floor``,
        repeating nothing kept; at most ``limit`` of them. Oldest first. Standing ones
        need not reach ``floor``; of near-repeats in ``pool``, only the newest runs."""
        items = _newest_of_repeats(pool)

        def rank(c: Candidate, value: float) -> float:
            return value / (len(c.line()) + LINE_COST) if chars is not None else value

        heap = [(-rank(c, c.value(self.covered)), -c.order, i) for i, c in enumerate(items)]
        heapq.heapify(heap)
        chosen: list[Candidate] = []
        size = 0
        while heap and (limit is None or len(chosen) < limit):
            stale, newest, i = heapq.heappop(heap)
            c = items[i]
            value = c.value(self.covered)
            if rank(c, value) < -stale:  # it lost value since it was queued: queue it again
                heapq.heappush(heap, (-rank(c, value), newest, i))
                continue
            cost = len(c.line()) + 1
            too_big = chars is not None and size + cost > chars
            if (value < floor and not c.standing) or too_big or self.seen.repeats(c.words):
                continue
            self.keep(c)
            chosen.append(c)
            size += cost
        return sorted(chosen, key=lambda c: c.order)


def _newest_of_repeats(pool: Iterable[Candidate]) -> list[Candidate]:
    """``pool`` without the candidates that a newer one in it repeats."""
    newer = NearDuplicates()
    out: list[Candidate] = []
    for c in sorted(pool, key=lambda c: c.order, reverse=True):
        if not newer.repeats(c.words):
            newer.add(c.words)
            out.append(c)
    return out


# -- the extractive summary text ---------------------------------------------------------------
_HEADER = re.compile(r"^Summary of (\d+) messages? \((\S+) to (\S+)\)\.$")
_OPENING = "Opening request: "
_LINE = re.compile(r"^- (user|assistant|tool): (.+)$")


@dataclass(frozen=True)
class SummaryText:
    """The extractive summary text: a header (how many messages, their time span), the
    user's opening request when the session has no goal, then one line per sentence kept,
    ``- <role>: <sentence>``, oldest first."""

    count: int = 0
    first: str = "?"
    last: str = "?"
    opening: str = ""
    lines: tuple[Candidate, ...] = ()

    @classmethod
    def parse(cls, text: str) -> SummaryText:
        """The header and lines of ``text``. Other text (an older or an LLM summary) is taken
        sentence by sentence as standing lines of unknown role, ranked with the rest."""
        count, first, last, opening = 0, "?", "?", ""
        lines: list[Candidate] = []
        for raw in text.splitlines():
            header, line = _HEADER.match(raw), _LINE.match(raw)
            if header:
                count, first, last = int(header.group(1)), header.group(2), header.group(3)
            elif raw.startswith(_OPENING):
                opening = raw.removeprefix(_OPENING)
            elif line:
                lines.append(candidate(line.group(2), line.group(1), len(lines)))
            else:
                lines += [
                    candidate(s, "", len(lines) + i, standing=True)
                    for i, s in enumerate(_prose(raw))
                ]
        return cls(count, first, last, opening, tuple(lines))

    def head(self) -> str:
        head = f"Summary of {self.count} messages ({self.first} to {self.last})."
        return f"{head}\n{_OPENING}{self.opening}" if self.opening else head

    def render(self) -> str:
        return "\n".join([self.head(), *(c.line() for c in self.lines)])


def opening_request(pool: Sequence[Candidate]) -> Candidate | None:
    """The first user sentence that says something (else the first one)."""
    said = [c for c in pool if c.role == "user"]
    return next((c for c in said if c.value() > 0), said[0] if said else None)


# -- the built-in summariser -------------------------------------------------------------------
class ExtractiveSummarizer:
    """Built-in summariser: deterministic, offline, no model. It scores every sentence of the
    batch (user and assistant turns, tool error lines) by what it says; standing facts and
    the sentences worth ``FACT_SCORE`` become key facts, and the best of the rest per
    character, ranked with the lines it had, the summary text (``SUMMARY_CHARS_PER_MESSAGE``
    for each message covered, at most ``MAX_SUMMARY_CHARS``). A sentence is worth what it
    adds to what is kept; near-repeats are dropped; the newest wins a tie."""

    name = "extractive"

    def summarize(self, request: SummaryRequest) -> Summary:
        msgs = list(request.messages)
        if not msgs:
            return Summary(request.previous_summary, ())
        before = SummaryText.parse(request.previous_summary)
        pool = candidates(msgs, start=len(before.lines))
        kept = Selection(request.previous_facts)
        standing = kept.pick([c for c in pool if c.standing])
        rest = [c for c in pool if not c.standing]
        facts = standing + kept.pick(rest, limit=MAX_FACTS_PER_RUN, floor=FACT_SCORE)
        taken = {c.order for c in facts}
        first = before.first if before.count else str(msgs[0].get("at", "?"))
        fresh = [c for c in rest if c.order not in taken]
        opening = before.opening or self._opening(request, before, fresh, kept)
        text = SummaryText(before.count + len(msgs), first, str(msgs[-1].get("at", "?")), opening)
        budget = min(MAX_SUMMARY_CHARS, SUMMARY_CHARS_PER_MESSAGE * text.count)
        room = budget - len(text.head()) - 1
        lines = kept.pick([*before.lines, *fresh], floor=LINE_SCORE, chars=room)
        new_facts = unique(c.text for c in sorted(facts, key=lambda c: c.order))
        return Summary(replace(text, lines=tuple(lines)).render(), tuple(new_facts))

    @staticmethod
    def _opening(
        request: SummaryRequest, before: SummaryText, pool: Sequence[Candidate], kept: Selection
    ) -> str:
        """What the session is about when it has no goal: the user's first sentence that
        says something and is not a key fact, once said (it then counts as kept). Not after
        a summary of another form, which may have left it out."""
        if request.goal or (request.previous_summary and not before.count):
            return ""
        first = opening_request(pool)
        if first is None or first.value() <= 0:
            return ""
        kept.keep(first)
        return _clip(first.text, 200)

    def end_summary(self, request: EndRequest) -> EndSummary:
        return EndSections.of(request).summary()


class EndSections:
    """Seed 003's sections from the key facts, the rolling summary and the messages not in
    it. Each sentence goes to one section, the first that takes it, in this order: next
    steps (from the last ten messages), instructions, accomplished, discoveries."""

    def __init__(self, request: EndRequest, pool: list[Candidate], tail: set[int]) -> None:
        self.request = request
        self.pool = pool
        self.tail = tail  # the orders of the sentences of the last ten messages
        self.kept = Selection()

    @classmethod
    def of(cls, request: EndRequest) -> EndSections:
        facts = [candidate(f, "", i, standing=True) for i, f in enumerate(request.key_facts)]
        lines = SummaryText.parse(request.summary).lines
        known = [*facts, *(replace(c, order=len(facts) + c.order) for c in lines)]
        older = candidates(request.messages[:-10], start=len(known))
        tail = candidates(request.messages[-10:], start=len(known) + len(older))
        return cls(request, [*known, *older, *tail], {c.order for c in tail})

    def summary(self) -> EndSummary:
        next_steps = self._take(self._is_next, MAX_END_ITEMS)
        task = self.request.current_context.get("active_task")
        next_steps += [f"Continue: {task}"] if task else []
        instructions = self._take(_is_instruction, MAX_END_ITEMS)
        done = _recorded(self.request)[-MAX_END_ITEMS:]
        done += self._take(_is_done, MAX_END_ITEMS - len(done))
        return EndSummary(
            goal=self._goal(),
            instructions=tuple(instructions),
            discoveries=tuple(self._discoveries()),
            accomplished=tuple(unique(done)),
            next_steps=tuple(unique(next_steps)[-MAX_END_ITEMS:]),
            relevant_files=tuple(self._files()),
        )

    def _take(
        self, wanted: Callable[[Candidate], bool], limit: int, floor: float = FILLER_SCORE
    ) -> list[str]:
        chosen = self.kept.pick(filter(wanted, self.pool), limit=limit, floor=floor)
        return [c.text for c in chosen]

    def _discoveries(self) -> list[str]:
        """The standing facts left (key facts, ``[MEMORIZE: ...]`` facts), then the best of
        the other sentences, oldest first."""
        standing = self.kept.pick([c for c in self.pool if c.standing], limit=MAX_END_ITEMS)
        rest = [c for c in self.pool if not c.standing]
        more = self.kept.pick(rest, limit=MAX_END_ITEMS - len(standing), floor=LINE_SCORE)
        return [c.text for c in sorted([*standing, *more], key=lambda c: c.order)]

    def _is_next(self, c: Candidate) -> bool:
        return c.order in self.tail and bool(_NEXT.search(c.text.lower()))

    def _goal(self) -> str:
        if self.request.goal:
            return self.request.goal
        opening = SummaryText.parse(self.request.summary).opening
        first = opening_request(self.pool)
        return opening or (_clip(first.text, 200) if first else "")

    def _files(self) -> list[str]:
        """Every file accessed (first access first), then repository files the text names."""
        accessed = _relevant_files(self.request.files_accessed)
        named = [
            p for c in self.pool for p in sorted(_paths(c.text))
            if "/" in p and ":" not in p and _FILE.fullmatch(p.rsplit("/", 1)[-1])
            and _safe_rel(p) and not p.startswith(("~", "."))
        ]  # fmt: skip
        return unique([*accessed, *named])[: max(len(accessed), MAX_END_ITEMS)]


def _is_instruction(c: Candidate) -> bool:
    if c.role == "user":
        return bool(_INSTRUCTION.search(c.text.lower()) or _PREFERENCE.search(c.text.lower()))
    return c.role == "" and bool(_PREFERENCE.search(c.text.lower()))


def _is_done(c: Candidate) -> bool:
    if c.role in ("assistant", "") and _DONE.search(c.text.lower()):
        return True
    low = c.text.lower()
    return bool(_DECISION.search(low) or (c.value() >= FACT_SCORE and _CHOICE.search(low)))


def _recorded(request: EndRequest) -> list[str]:
    """The decisions, steps and file changes the session recorded."""
    done = [f"Decided: {d['decision']} ({d['question']})" for d in request.decisions]
    done += [
        f"{s['action']}: {s['result']}" if s.get("result") else s["action"] for s in request.steps
    ]
    done += [
        f"{f['action'].capitalize()} {f['path']}"
        for f in request.files_accessed
        if f.get("action") in ("created", "modified", "deleted")
    ]
    return [_clip(d) for d in done]


def _relevant_files(files: Sequence[Mapping[str, Any]]) -> list[str]:
    return unique(str(f["path"]) for f in files if f.get("path"))


# -- external command --------------------------------------------------------------------------
ROLLING_PROMPT = """\
You are compressing part of a conversation between a user and an AI coding agent so that the
agent remembers it later. Keep decisions taken, facts stated (names, versions, hosts, paths)
and the user's preferences and instructions; drop small talk.
Reply with JSON only, no prose around it:
{"summary": "<the whole conversation so far, previous summary included, in at most 200 words>",
 "key_facts": ["<each NEW fact from these messages, one short sentence each>"]}
"""

END_PROMPT = """\
The work session below has ended. Write its summary for whoever continues it.
Reply with JSON only, no prose around it:
{"goal": "<one sentence>", "instructions": ["<instructions and preferences the user gave>"],
 "discoveries": ["<facts learned>"], "accomplished": ["<what was done>"],
 "next_steps": ["<what is left>"], "relevant_files": ["<repo-relative paths>"]}
"""


def _render_messages(messages: Sequence[Message]) -> str:
    lines = []
    for m in messages:
        content = str(m.get("content", ""))[:MAX_PROMPT_MESSAGE_CHARS]
        lines.append(f"[{m.get('at', '')}] {m.get('role', '?')}: {content}")
    return "\n".join(lines)


def rolling_prompt(request: SummaryRequest) -> str:
    facts = "\n".join(f"- {f}" for f in request.previous_facts)
    return (
        f"{ROLLING_PROMPT}\n<goal>{request.goal or ''}</goal>\n"
        f"<previous_summary>\n{request.previous_summary}\n</previous_summary>\n"
        f"<previous_key_facts>\n{facts}\n</previous_key_facts>\n"
        f"<messages>\n{_render_messages(request.messages)}\n</messages>\n"
    )


def end_prompt(request: EndRequest) -> str:
    def block(tag: str, items: Iterable[str]) -> str:
        return f"<{tag}>\n" + "\n".join(f"- {i}" for i in items) + f"\n</{tag}>\n"

    return (
        f"{END_PROMPT}\n<goal>{request.goal or ''}</goal>\n"
        f"<summary_of_earlier_messages>\n{request.summary}\n</summary_of_earlier_messages>\n"
        + block("key_facts", request.key_facts)
        + block("decisions", (f"{d['question']} -> {d['decision']}" for d in request.decisions))
        + block("steps", (f"{s['action']}: {s['result']}" for s in request.steps))
        + block("files", (f"{f['action']} {f['path']}" for f in request.files_accessed))
        + block("current_context", (f"{k}: {v}" for k, v in request.current_context.items() if v))
        + f"<recent_messages>\n{_render_messages(request.messages)}\n</recent_messages>\n"
    )


class CommandSummarizer:
    """Runs ``command`` (a command line, split like a shell would, never run by a shell)."""

    name = "command"

    def __init__(self, command: str | Sequence[str], timeout: float = 60.0) -> None:
        self.argv = shlex.split(command) if isinstance(command, str) else list(command)
        if not self.argv:
            raise ExternalCommandError("the summariser command is empty")
        self.timeout = timeout

    def summarize(self, request: SummaryRequest) -> Summary:
        return parse_rolling(self.run(rolling_prompt(request)))

    def end_summary(self, request: EndRequest) -> EndSummary:
        result = parse_end(self.run(end_prompt(request)))
        if not result.relevant_files:
            result = replace(result, relevant_files=tuple(_relevant_files(request.files_accessed)))
        if not result.goal and request.goal:
            result = replace(result, goal=request.goal)
        return result

    def run(self, prompt: str) -> str:
        """The command's stdout for ``prompt`` on stdin; ExternalCommandError on any failure."""
        try:
            proc = subprocess.Popen(
                self.argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,  # its own process group, so a timeout kills it all
            )
        except OSError as exc:
            raise self._error(f"could not start: {exc.strerror or exc}") from None
        try:
            out, err = proc.communicate(prompt.encode("utf-8"), timeout=self.timeout)
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            raise self._error(f"timed out after {self.timeout:g} s and was stopped") from None
        if proc.returncode != 0:
            last = err.decode("utf-8", "replace").strip().splitlines()
            why = f": {last[-1][:300]}" if last else ""
            raise self._error(f"exited with status {proc.returncode}{why}")
        text = out[:MAX_OUTPUT_BYTES].decode("utf-8", "replace").strip()
        if not text:
            raise self._error("printed nothing")
        return text

    def _error(self, what: str) -> ExternalCommandError:
        return ExternalCommandError(
            f"summariser command {shlex.join(self.argv)!r} {what}",
            hint="the session was left unchanged; fix memory.shortTerm.summarizer.command "
            "or unset it to use the built-in summariser",
        )


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.communicate(timeout=5)


# -- parsing command output --------------------------------------------------------------------
_FENCE = re.compile(r"```(?:json)?\s*\n(.*?)\n```", re.DOTALL)


def _json_object(text: str) -> dict[str, Any] | None:
    """The JSON object in ``text`` (bare, fenced, or the outermost ``{...}``), else None."""
    fenced = _FENCE.search(text)
    candidates = [fenced.group(1)] if fenced else []
    start, end = text.find("{"), text.rfind("}")
    if start != -1 and end > start:
        candidates.append(text[start : end + 1])
    for candidate in candidates:
        try:
            value = json.loads(candidate)
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    return None


def _strings(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        return ()
    return tuple(
        _clip(str(v), 2000) for v in value if isinstance(v, (str, int, float)) and str(v).strip()
    )


def parse_rolling(text: str) -> Summary:
    """A rolling summary from command output: JSON ``{summary, key_facts}`` or plain text."""
    obj = _json_object(text)
    if obj is not None and isinstance(obj.get("summary"), str):
        return Summary(obj["summary"].strip(), _strings(obj.get("key_facts")))
    return Summary(text, ())


_HEADING = re.compile(r"^\s*(?:#{1,6}\s*|\*\*)?([A-Za-z][A-Za-z ]+?)(?:\*\*)?\s*:?\s*$")
_BULLET = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")


def _markdown_sections(text: str) -> dict[str, list[str]]:
    """``{section key: lines}`` for headings named like seed 003's sections."""
    keys = {title.lower(): key for key, title in SECTION_TITLES.items()}
    sections: dict[str, list[str]] = {}
    current: str | None = None
    for line in text.splitlines():
        heading = _HEADING.match(line)
        if heading and heading.group(1).strip().lower() in keys:
            current = keys[heading.group(1).strip().lower()]
            sections.setdefault(current, [])
        elif current is not None and line.strip():
            sections[current].append(_BULLET.sub("", line).strip())
    return sections


def parse_end(text: str) -> EndSummary:
    """An end summary from command output: JSON with the six keys, or Markdown sections."""
    obj = _json_object(text)
    if obj is None or not any(k in obj for k in SECTION_TITLES):
        obj = _markdown_sections(text)
        if not obj:
            raise ExternalCommandError(
                "summariser output has none of the sections " + ", ".join(SECTION_TITLES.values()),
                hint="the session was left unchanged; the command must print JSON or Markdown "
                "with those headings",
            )
        obj = {k: (" ".join(v) if k == "goal" else v) for k, v in obj.items()}
    goal = obj.get("goal")
    return EndSummary(
        goal=_clip(goal, 2000) if isinstance(goal, str) else "",
        instructions=_strings(obj.get("instructions")),
        discoveries=_strings(obj.get("discoveries")),
        accomplished=_strings(obj.get("accomplished")),
        next_steps=_strings(obj.get("next_steps")),
        relevant_files=tuple(p for p in _strings(obj.get("relevant_files")) if _safe_rel(p)),
    )


def _safe_rel(path: str) -> bool:
    parts = path.replace("\\", "/").split("/")
    return bool(path) and not path.startswith("/") and ".." not in parts and "\x00" not in path


def from_config(config: Mapping[str, Any]) -> Summarizer:
    """The summariser an effective config names: its command, else the extractive one."""
    spec = config["memory"]["shortTerm"].get("summarizer") or {}
    command = spec.get("command")
    if command:
        return CommandSummarizer(command, float(spec.get("timeoutSeconds") or 60))
    return ExtractiveSummarizer()
