"""The built-in summariser: extractive, offline, deterministic; it ranks sentences by facts.

Every sentence of a batch is scored by what it holds (numbers, code names, paths, errors,
names, choices, reasons, settings, fixes, next steps, in English and Spanish), counted only
for what is not kept already; the best fill the rolling summary and key facts, and the end
summary's sections. Writes nothing.
"""

from __future__ import annotations

import heapq
import re
from collections.abc import Callable, Iterable, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field, replace

from planning_memory.sessions.goal import task_of
from planning_memory.sessions.summary_base import (
    DECISION,
    FACT,
    MAX_END_ITEMS,
    MAX_SUMMARY_CHARS,
    MEMORIZE,
    PREFERENCE,
    PUNCT,
    EndRequest,
    EndSummary,
    Message,
    Summary,
    SummaryRequest,
    acknowledgement,
    clip,
    error_line,
    filler,
    memorize_markers,
    relevant_files,
    safe_rel,
    sentences,
    standing,
    unique,
)


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
# a name opening a sentence: a capitalised word followed by a verb or "from" ("Marta owns")
_NAME_OPENING = re.compile(
    r"^([A-ZÁÉÍÓÚÑ][a-záéíóúñ]+)(?= (?:from|of|owns?|approved|asked|said|says|wants|will|has"
    r"|is|de|del|dice|quiere|pidió|aprobó|lleva|se encarga)\b)"
)
_NOT_NAME_TEXT = """the this that these those it its we our you your they their he she his her
there here what when where which who why how if then also but and so not no yes ok all any each
every some one none el la los las lo esto eso este esta ese esa ello nosotros ellos ellas usted
aquí allí qué cuando donde cual quien si pero también todo todos cada algún ningún uno"""
_NOT_NAMES = frozenset(_NOT_NAME_TEXT.split())
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
    "se guardan?", "guardamos", "vive en", "the team", "el equipo", "owns?", "in charge of",
    "responsible for", "se encarga de", "es responsable de",
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
        token = token.strip(PUNCT + "`[]{}<>")
        slashes = token.count("/")
        if slashes >= 2 or (slashes == 1 and "." in token) or _FILE.fullmatch(token):
            found.add(token)
    return found


def _has(pattern: re.Pattern[str], text: str) -> float:
    return 1.0 if pattern.search(text) else 0.0


_COUNTER = re.compile(r"\s*(?:\(\s*#?\d+\s*\)|#\d+)\s*$")  # "(12)", "#3" closing a sentence
_AGAIN = re.compile(
    r"^(?:(?:ok(?:ay)?|vale|s[ií]|yes|so|please|por\s+favor)[,.!]?\s+)*(?:please\s+)?"
    r"(?:re-?run|run|try|do|check|test|build|ejecuta|corre|prueba|lanza|repite|haz|mira)\b"
    r"[\w\s,]{0,30}?\b(?:again|once\s+more|otra\s+vez|de\s+nuevo)\b[\w\s,]{0,12}[.!]*$",
    re.IGNORECASE,
)


def routine(text: str) -> bool:
    """Whether a sentence only keeps the conversation going, a counter aside: it takes note
    or asks to go on ("ok keep going (12)", "vale, sigue"), or asks to do the same again
    ("run the tests again please", "prueba otra vez"). Said a hundred times, it says nothing."""
    bare = _COUNTER.sub("", text).strip()
    return acknowledgement(bare) or _AGAIN.match(bare) is not None


def _signals(text: str, role: str) -> float:
    """The score of ``text`` besides its specific tokens and names: a choice, its reason, a
    setting, a negation, an error, a fix, a next step, something done (minus a question);
    from the user, anything, more for an instruction or a stated fact. Small talk and
    ``routine`` sentences: -5."""
    if filler(text.split()) or routine(text):
        return FILLER_SCORE
    low = text.lower()
    value = 3 * _has(_CHOICE, low) + 2 * _has(_REASON, low) + _has(_SETTING, low)
    error = _ERROR.search(low) or _ERROR_NAME.search(text)
    value += _has(_NEGATION, low) + 2 * bool(error) + 2 * _has(_FIX, low)
    value += 2 * _has(_NEXT, low) + _has(_DONE, low) - 2 * text.endswith("?")
    if role == "user":
        value += 1 + 3 * _has(_INSTRUCTION, low) + 2 * _has(FACT, low)
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
    text = clip(text)
    found = {*_NUMBER.findall(text), *_CODE.findall(text), *_ERROR_NAME.findall(text)}
    specific = frozenset(t.strip("`").lower() for t in found | _paths(text))
    found_names = _NAME.findall(text)
    opening = _NAME_OPENING.match(text)
    if opening and opening.group(1).lower() not in _NOT_NAMES:
        found_names.append(opening.group(1))
    names = frozenset(n.lower() for n in found_names) - specific
    signals = _signals(text, role) - 2 * (not specific and len(text.split()) < 4)
    return Candidate(text, role, order, signals, specific, names, standing, _content_words(text))


def score(text: str, role: str) -> float:
    """How much a sentence says on its own (see ``Candidate.value``)."""
    return candidate(text, role, 0).value()


def _prose(text: str) -> list[str]:
    """The sentences of ``text`` outside code blocks and markers, list marks dropped."""
    text = _CODE_BLOCK.sub("\n", MEMORIZE.sub("", text))
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
        for fact in memorize_markers(text) if MEMORIZE.search(text) else ():
            out.append(candidate(fact, role, start + len(out), standing=True))
        for s in _prose(text):
            out.append(candidate(s, role, start + len(out), standing=standing(role, s)))
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
        noun = "message" if self.count == 1 else "messages"
        head = f"Summary of {self.count} {noun} ({self.first} to {self.last})."
        return f"{head}\n{_OPENING}{self.opening}" if self.opening else head

    def render(self) -> str:
        return "\n".join([self.head(), *(c.line() for c in self.lines)])


def opening_request(pool: Sequence[Candidate]) -> Candidate | None:
    """The first user sentence that states a task (``goal.task_of``: no rule, no
    acknowledgement such as "vale, sigue") and says something, else the first that states a
    task; None when none does."""
    said = [c for c in pool if c.role == "user" and task_of(c.text)]
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
        return clip(first.text, 200)

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
        next_steps += [
            clip(f"Check the error: {error_line(e)}")
            for e in self.request.errors
            if not e.get("resolution")
        ][-MAX_END_ITEMS:]
        instructions = self._take(_is_instruction, MAX_END_ITEMS)
        goal = self._goal()
        done = _recorded(self.request)[-MAX_END_ITEMS:]
        for line in [goal, *done]:  # the goal and a decision recorded are not said again
            self.kept.keep(candidate(line, "", 0))
        done += self._take(_is_done, MAX_END_ITEMS - len(done))
        return EndSummary(
            goal=goal,
            instructions=tuple(instructions),
            discoveries=tuple(self._discoveries()),
            accomplished=tuple(unique(done)),
            next_steps=tuple(unique(next_steps)[-MAX_END_ITEMS:]),
            relevant_files=tuple(self._files()),
        )

    def _take(
        self, wanted: Callable[[Candidate], bool], limit: int, floor: float = FILLER_SCORE + 1
    ) -> list[str]:
        chosen = self.kept.pick(filter(wanted, self.pool), limit=limit, floor=floor)
        return [c.text for c in chosen]

    def _discoveries(self) -> list[str]:
        """The standing facts left (key facts, ``[MEMORIZE: ...]`` facts), then the best of
        the other sentences, oldest first; an acknowledgement ("Entendido, ...") is none."""
        pool = [c for c in self.pool if not acknowledgement(c.text)]
        standing = self.kept.pick([c for c in pool if c.standing], limit=MAX_END_ITEMS)
        rest = [c for c in pool if not c.standing]
        more = self.kept.pick(rest, limit=MAX_END_ITEMS - len(standing), floor=LINE_SCORE)
        return [c.text for c in sorted([*standing, *more], key=lambda c: c.order)]

    def _is_next(self, c: Candidate) -> bool:
        said = c.order in self.tail and bool(_NEXT.search(c.text.lower()))
        return said and not acknowledgement(c.text)

    def _goal(self) -> str:
        if self.request.goal:
            return self.request.goal
        opening = SummaryText.parse(self.request.summary).opening
        first = opening_request(self.pool)
        return opening or (clip(first.text, 200) if first else "")

    def _files(self) -> list[str]:
        """Every file accessed (first access first), then repository files the text names."""
        accessed = relevant_files(self.request.files_accessed)
        named = [
            p for c in self.pool for p in sorted(_paths(c.text))
            if "/" in p and ":" not in p and _FILE.fullmatch(p.rsplit("/", 1)[-1])
            and safe_rel(p) and not p.startswith(("~", "."))
        ]  # fmt: skip
        return unique([*accessed, *named])[: max(len(accessed), MAX_END_ITEMS)]


def _is_instruction(c: Candidate) -> bool:
    if c.role == "user":
        return bool(_INSTRUCTION.search(c.text.lower()) or PREFERENCE.search(c.text.lower()))
    return c.role == "" and bool(PREFERENCE.search(c.text.lower()))


def _is_done(c: Candidate) -> bool:
    if c.role in ("assistant", "") and _DONE.search(c.text.lower()):
        return True
    low = c.text.lower()
    return bool(DECISION.search(low) or (c.value() >= FACT_SCORE and _CHOICE.search(low)))


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
    done += [f"Fixed: {error_line(e)}" for e in request.errors if e.get("resolution")]
    return [clip(d) for d in done]
