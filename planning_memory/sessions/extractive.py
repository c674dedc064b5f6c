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
from planning_memory.sessions.signals import (
    CHOICE,
    CODE,
    DONE,
    ERROR,
    ERROR_NAME,
    FILE,
    FILLER_SCORE,
    INSTRUCTION,
    NAME,
    NAME_OPENING,
    NEXT,
    NOT_NAMES,
    NUMBER,
    paths,
    signal_score,
)
from planning_memory.sessions.summary_base import (
    DECISION,
    MAX_END_ITEMS,
    MAX_SUMMARY_CHARS,
    MEMORIZE,
    PREFERENCE,
    EndRequest,
    EndSummary,
    Message,
    Summary,
    SummaryRequest,
    acknowledgement,
    clip,
    error_line,
    memorize_markers,
    relevant_files,
    safe_rel,
    sentences,
    standing,
    unique,
)

FACT_SCORE = 9  # a sentence worth this much is a key fact
LINE_SCORE = 3  # ... and this much may be a line of the summary text
SUMMARY_CHARS_PER_MESSAGE = 20  # the summary text's lines: this much per message covered
LINE_COST = 40  # what a line costs besides its characters, when ranking per character
MAX_FACTS_PER_RUN = 60  # ranked key facts one call may add (standing facts come on top)
NEAR_DUPLICATE = 0.75  # share of words (Jaccard) from which two sentences say the same


@dataclass(frozen=True)
class Candidate:
    """A sentence the summariser may keep: its text, who said it (``""``: unknown), where
    (``order``, oldest first), its ``signals`` (see ``score``), the specific tokens and
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
    found = {*NUMBER.findall(text), *CODE.findall(text), *ERROR_NAME.findall(text)}
    specific = frozenset(t.strip("`").lower() for t in found | paths(text))
    found_names = NAME.findall(text)
    opening = NAME_OPENING.match(text)
    if opening and opening.group(1).lower() not in NOT_NAMES:
        found_names.append(opening.group(1))
    names = frozenset(n.lower() for n in found_names) - specific
    signals = signal_score(text, role) - 2 * (not specific and len(text.split()) < 4)
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
        out += [s.strip()[:200] for s in tail if ERROR_NAME.search(s) or ERROR.search(s.lower())]
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
        said = c.order in self.tail and bool(NEXT.search(c.text.lower()))
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
            p for c in self.pool for p in sorted(paths(c.text))
            if "/" in p and ":" not in p and FILE.fullmatch(p.rsplit("/", 1)[-1])
            and safe_rel(p) and not p.startswith(("~", "."))
        ]  # fmt: skip
        return unique([*accessed, *named])[: max(len(accessed), MAX_END_ITEMS)]


def _is_instruction(c: Candidate) -> bool:
    if c.role == "user":
        return bool(INSTRUCTION.search(c.text.lower()) or PREFERENCE.search(c.text.lower()))
    return c.role == "" and bool(PREFERENCE.search(c.text.lower()))


def _is_done(c: Candidate) -> bool:
    if c.role in ("assistant", "") and DONE.search(c.text.lower()):
        return True
    low = c.text.lower()
    return bool(DECISION.search(low) or (c.value() >= FACT_SCORE and CHOICE.search(low)))


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
