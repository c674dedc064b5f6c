"""Fact recall of the built-in session summariser on labelled conversations, and its speed.

Run: .venv/bin/python bench/bench_summary_recall.py

The labelled set is ``tests/fixtures/summaries/*.json``: coding-agent conversations in English
and Spanish, each with the facts planted in it (a plain string, or ``re:`` and a regular
expression). A fact is recalled when it occurs in the summary's text, compared case-
insensitively with spacing collapsed (accents count). Three ways of summarising are scored:

- ``rolling``: the whole conversation in one rolling-summary call (what ``drain`` does with a
  backlog: batches of up to 200 messages); the summary text and key facts are scored.
- ``one-by-one``: one call per message, each folding into the previous summary and facts (what
  the watch daemon did when it drained after every message); the same text is scored.
- ``end``: the path of a real session: the messages older than the 15-message window go into
  the rolling summary, then the end summary is written from it and the window; its six
  sections are scored.

Each is printed for ``baseline`` (a frozen copy of the extractive summariser as it was before
the fact-ranking rewrite) and for today's ``ExtractiveSummarizer``, with the facts missed, how
much text is kept (summary and key facts, as a share of the conversations' characters) and,
for scale, the recall of random sentences of the same total size. Then the time per call
(best of several runs) for a 200-message batch of the set's messages and of long ones.
``tests/sessions/test_summarize.py`` loads this file for the same figures and asserts on them.
"""

from __future__ import annotations

import json
import random
import re
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from planning_memory.sessions import summarize
from planning_memory.sessions.summarize import (
    EndRequest,
    EndSummary,
    ExtractiveSummarizer,
    Summarizer,
    Summary,
    SummaryRequest,
)

FIXTURES = REPO / "tests" / "fixtures" / "summaries"
WINDOW = 15  # the default contextWindow
MAX_KEY_FACTS = 200  # Settings.max_key_facts: what the session keeps of the key facts
MODES = ("rolling", "one-by-one", "end")


# -- the labelled set --------------------------------------------------------------------------
@dataclass(frozen=True)
class Case:
    """One labelled conversation: its messages (as a session stores them) and planted facts."""

    id: str
    language: str
    goal: str | None
    facts: tuple[str, ...]
    messages: tuple[dict[str, Any], ...]


def load_cases(folder: Path = FIXTURES) -> list[Case]:
    return [_case(json.loads(p.read_text("utf-8"))) for p in sorted(folder.glob("*.json"))]


def _case(doc: Mapping[str, Any]) -> Case:
    messages = tuple(
        {
            "id": f"msg_{i:04d}",
            "role": m["role"],
            "content": m["content"],
            "at": f"2024-06-12T{9 + i // 60:02d}:{i % 60:02d}:00Z",
            "tool_results": list(m.get("tool_results", [])),
        }
        for i, m in enumerate(doc["messages"])
    )
    return Case(doc["id"], doc["language"], doc.get("goal"), tuple(doc["facts"]), messages)


def normalise(text: str) -> str:
    return " ".join(text.lower().split())


def found(fact: str, text: str) -> bool:
    """Whether ``fact`` (a string, or ``re:`` and a pattern) occurs in normalised ``text``."""
    if fact.startswith("re:"):
        return re.search(fact[3:], text, re.IGNORECASE) is not None
    return normalise(fact) in text


def conversation_text(case: Case) -> str:
    parts = [m["content"] for m in case.messages]
    parts += [t["output"] for m in case.messages for t in m["tool_results"]]
    return normalise("\n".join(parts))


# -- the three ways of summarising -------------------------------------------------------------
def rolling(s: Summarizer, case: Case, batch: int = 200) -> tuple[Summary, list[str]]:
    """The rolling summary and every key fact after folding ``case`` in ``batch``-sized runs."""
    text, facts = "", []
    for start in range(0, len(case.messages), batch):
        request = SummaryRequest(
            case.messages[start : start + batch], text, tuple(facts), case.goal
        )
        result = s.summarize(request)
        text = result.summary
        facts = summarize.unique([*facts, *result.key_facts])[-MAX_KEY_FACTS:]
    return Summary(text, tuple(facts)), facts


def end(s: Summarizer, case: Case) -> EndSummary:
    """The end summary of a session whose messages older than the window were summarised."""
    older, window = case.messages[:-WINDOW], case.messages[-WINDOW:]
    summary, facts = rolling(s, replace_messages(case, older))
    request = EndRequest(case.goal, summary.summary, tuple(facts), window)
    return s.end_summary(request)


def replace_messages(case: Case, messages: Sequence[dict[str, Any]]) -> Case:
    return Case(case.id, case.language, case.goal, case.facts, tuple(messages))


def kept_share(s: Summarizer, cases: Sequence[Case]) -> float:
    """The rolling summary and key facts, in characters, per character of the messages."""
    kept = sum(_size(*rolling(s, c)) for c in cases)
    return kept / sum(len(m["content"]) for c in cases for m in c.messages)


def _size(summary: Summary, facts: Sequence[str]) -> int:
    return len(summary.summary) + sum(len(f) + 1 for f in facts)


def random_recall(s: Summarizer, cases: Sequence[Case], seeds: int = 5) -> float:
    """The recall of sentences drawn at random, as many characters per conversation as the
    rolling summary and key facts of ``s`` (the mean of ``seeds`` draws)."""
    found_total = 0
    for seed in range(seeds):
        draw = random.Random(seed)
        for case in cases:
            budget = _size(*rolling(s, case))
            pool = [c.text for c in summarize.candidates(case.messages)]
            draw.shuffle(pool)
            text, size = [], 0
            for sentence in pool:
                if size + len(sentence) + 10 <= budget:
                    text.append(sentence)
                    size += len(sentence) + 10
            kept = normalise("\n".join(text))
            found_total += sum(found(f, kept) for f in case.facts)
    return found_total / (seeds * sum(len(c.facts) for c in cases))


def mode_text(s: Summarizer, case: Case, mode: str) -> str:
    if mode == "end":
        result = end(s, case)
        return normalise("\n".join([result.goal, *_flat(result.as_dict().values())]))
    summary, facts = rolling(s, case, batch=1 if mode == "one-by-one" else 200)
    return normalise("\n".join([summary.summary, *facts]))


def _flat(values: Iterable[Any]) -> list[str]:
    return [v for value in values if isinstance(value, list) for v in value]


@dataclass(frozen=True)
class Score:
    case: str
    recalled: int
    total: int
    missed: tuple[str, ...]

    @property
    def recall(self) -> float:
        return self.recalled / self.total if self.total else 1.0


def score(s: Summarizer, cases: Sequence[Case], mode: str) -> list[Score]:
    out = []
    for case in cases:
        text = mode_text(s, case, mode)
        missed = tuple(f for f in case.facts if not found(f, text))
        out.append(Score(case.id, len(case.facts) - len(missed), len(case.facts), missed))
    return out


def overall(scores: Sequence[Score]) -> float:
    total = sum(s.total for s in scores)
    return sum(s.recalled for s in scores) / total if total else 1.0


def report(scores: Sequence[Score], *, show_missed: bool = True) -> str:
    lines = [f"  overall {overall(scores):.3f}"]
    for s in scores:
        lines.append(f"  {s.case:26} {s.recall:.2f} ({s.recalled}/{s.total})")
        if show_missed and s.missed:
            lines.append("      missed: " + ", ".join(s.missed))
    return "\n".join(lines)


# -- timing ------------------------------------------------------------------------------------
def best_ms(run: Callable[[], object], repeat: int = 7) -> float:
    best = float("inf")
    for _ in range(repeat):
        began = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - began)
    return best * 1000


def batch_of(cases: Sequence[Case], n: int = 200, join: int = 1) -> list[dict[str, Any]]:
    """``n`` messages made of ``join`` messages of the labelled set each, renumbered."""
    pool = [m for c in cases for m in c.messages]
    return [
        {
            **pool[i % len(pool)],
            "id": f"msg_{i:05d}",
            "content": " ".join(pool[(i * join + k) % len(pool)]["content"] for k in range(join)),
        }
        for i in range(n)
    ]


# -- baseline: the extractive summariser before the fact-ranking rewrite, frozen ---------------
_B_PREFERENCE = re.compile(
    r"\b(i prefer|i'd prefer|i would rather|i'd rather|i like|i want|please always|always use"
    r"|always|never|don't use|do not use|avoid|instead of|prefiero|me gusta|quiero que"
    r"|siempre|nunca|no uses|evita|en vez de|en lugar de)\b",
    re.IGNORECASE,
)
_B_DECISION = re.compile(
    r"\b(we decided|decided to|decision|let's use|let's go with|we'll use|we will use"
    r"|going with|we chose|chose to|decidimos|hemos decidido|vamos a usar|usaremos|elegimos"
    r"|nos quedamos con)\b",
    re.IGNORECASE,
)
_B_FACT = re.compile(
    r"\b(my name is|i am|i'm|we are|we use|we're using|our|the project|the server|the app"
    r"|the repo|runs on|is deployed|is hosted|lives in|me llamo|soy|somos|usamos|nuestro"
    r"|nuestra|el proyecto|el servidor|la app|se ejecuta|corre en|está en)\b"
    r"|\b\d{1,3}(\.\d{1,3}){3}\b|\bv?\d+\.\d+(\.\d+)?\b|https?://\S+",
    re.IGNORECASE,
)
_B_NEXT = re.compile(
    r"\b(next|todo|to do|still need|remaining|pending|later|tomorrow|then we|follow[- ]up"
    r"|falta|pendiente|siguiente|próximo|después|luego|mañana)\b",
    re.IGNORECASE,
)
_B_MEMORIZE = re.compile(
    r"\[(?:MEMORIZE|MEMORIZAR)\s*:\s*((?:[^\[\]\n]|\[[^\[\]\n]*\])+?)\s*\]", re.IGNORECASE
)
_B_SPLIT = re.compile(r"(?<=[.!?])\s+|\n+")


def _b_sentences(text: str) -> list[str]:
    return [s.strip() for s in _B_SPLIT.split(text) if s.strip()]


def _b_clip(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _b_facts(message: Mapping[str, Any]) -> list[str]:
    role, text = message.get("role"), str(message.get("content", ""))
    out = [_b_clip(f) for f in summarize.memorize_markers(text)]
    for sentence in _b_sentences(_B_MEMORIZE.sub("", text)):
        if _B_DECISION.search(sentence) or (
            role == "user" and (_B_PREFERENCE.search(sentence) or _B_FACT.search(sentence))
        ):
            out.append(_b_clip(sentence))
    return out


def _b_tail(text: str, limit: int) -> str:
    kept: list[str] = []
    size = 0
    for line in reversed(text.splitlines()):
        if size + len(line) + 1 > limit:
            break
        kept.append(line)
        size += len(line) + 1
    return "\n".join(reversed(kept))


def _b_cap(items: Iterable[str]) -> tuple[str, ...]:
    return tuple(summarize.unique(_b_clip(i) for i in items)[-20:])


class Baseline:
    """The extractive summariser as it was: rule-matched user sentences and decisions, and
    one summary line per run with the gist of its first eight user messages."""

    name = "baseline"

    def summarize(self, request: SummaryRequest) -> Summary:
        msgs = list(request.messages)
        if not msgs:
            return Summary(request.previous_summary, ())
        gists = (_b_sentences(str(m.get("content", ""))) for m in msgs if m["role"] == "user")
        asked = summarize.unique(_b_clip(g[0], 120) for g in gists if g)
        line = (
            f"{len(msgs)} messages from {msgs[0].get('at', '?')} to {msgs[-1].get('at', '?')}"
            f" ({sum(1 for m in msgs if m.get('role') == 'user')} from the user)."
        )
        if asked:
            line += " User: " + " | ".join(asked[:8])
        text = f"{request.previous_summary}\n{line}" if request.previous_summary else line
        known = {normalise(f) for f in request.previous_facts}
        new = [
            f
            for f in summarize.unique(f for m in msgs for f in _b_facts(m))
            if normalise(f) not in known
        ]
        return Summary(_b_tail(text, 4000), tuple(new))

    def end_summary(self, request: EndRequest) -> EndSummary:
        msgs = list(request.messages)
        said = [s for m in msgs if m["role"] == "user" for s in _b_sentences(m["content"])]
        facts = [*request.key_facts, *(f for m in msgs for f in _b_facts(m))]
        instructions = [f for f in facts if _B_PREFERENCE.search(f)]
        discoveries = [f for f in facts if f not in instructions and not _B_DECISION.search(f)]
        tail = [s for m in msgs[-10:] for s in _b_sentences(str(m.get("content", "")))]
        task = request.current_context.get("active_task")
        return EndSummary(
            goal=request.goal or (_b_clip(said[0], 200) if said else ""),
            instructions=_b_cap(instructions),
            discoveries=_b_cap(discoveries),
            accomplished=_b_cap(f for f in facts if _B_DECISION.search(f)),
            next_steps=_b_cap(
                [*(s for s in tail if _B_NEXT.search(s))] + ([f"Continue: {task}"] if task else [])
            ),
            relevant_files=(),
        )


# -- facts among filler ------------------------------------------------------------------------
FILLER = (
    ("user", "ok, run the tests again please"),
    ("assistant", "Running the tests again now."),
    ("user", "continue"),
    ("assistant", "Still looking into it, one moment."),
    ("user", "ok keep going"),
    ("assistant", "Let me check that again."),
    ("user", "vale, sigue"),
    ("assistant", "Working on it, running them once more."),
)
PLANTED = (  # (who says it, the sentence, what must survive of it)
    ("assistant", "We'll use Postgres 16 instead of MySQL because we need JSONB indexes.",
     "postgres 16"),
    ("user", "The webhook secret lives in config/stripe.toml.", "config/stripe.toml"),
    ("assistant", "TypeError: cannot read property 'id' of undefined in src/cart/merge.ts.",
     "src/cart/merge.ts"),
    ("user", "Set the retry limit to 7 attempts with a 250 ms backoff.", "250 ms"),
    ("user", "Marta from the billing team owns the invoices service.", "marta"),
    ("assistant", "The root cause was a race in flush_queue() when two workers share a lock.",
     "flush_queue()"),
    ("user", "Decidimos usar pnpm 9 porque npm rompe los workspaces.", "pnpm 9"),
    ("user", "Port 8443 is reserved for the admin API.", "8443"),
    ("assistant", "The migration 0042_add_refunds.sql failed with a duplicate key error.",
     "0042_add_refunds.sql"),
    ("user", "The rate limit is 120 requests per minute per API key.", "120 requests"),
    ("assistant", "Fixed by pinning urllib3 to 1.26.18.", "1.26.18"),
    ("assistant", "Next: wire the refund webhook into src/payments/refunds.py.",
     "src/payments/refunds.py"),
    ("user", "Javier approved switching the queue to Redis Streams.", "redis streams"),
    ("user", "El timeout del worker es de 45 segundos.", "45 segundos"),
    ("assistant", "ConnectionResetError appears when the proxy idles for 60 s.",
     "connectionreseterror"),
    ("assistant", "We chose Argon2id over bcrypt since it resists GPU attacks.", "argon2id"),
    ("user", "The feature flag is called checkout_v2_enabled.", "checkout_v2_enabled"),
    ("user", "Cache TTL stays at 300 seconds.", "300 seconds"),
    ("assistant", "The staging database is db-staging-3.internal.", "db-staging-3.internal"),
    ("user", "Don't touch legacy/billing_old.py, it is frozen until March.",
     "legacy/billing_old.py"),
    ("user", "Coverage must stay above 85%.", "85%"),
)  # fmt: skip
FILLER_MESSAGES = 100
DAEMON_BATCH = 10  # what the watch daemon folds at a time


def filler_case() -> Case:
    """``FILLER_MESSAGES`` near-identical filler messages with the ``PLANTED`` facts spread
    among them, one fact after every few filler messages."""
    said: list[tuple[str, str]] = [("user", "Let's get the refunds feature through CI.")]
    every = FILLER_MESSAGES // len(PLANTED)
    for n in range(FILLER_MESSAGES):
        role, text = FILLER[n % len(FILLER)]
        said.append((role, text if n % 3 else f"{text} ({n})"))
        if n % every == every - 1 and n // every < len(PLANTED):
            role, text, _ = PLANTED[n // every]
            said.append((role, text))
    messages = [{"role": r, "content": t} for r, t in said]
    facts = [fact for _, _, fact in PLANTED]
    return _case({"id": "filler", "language": "en", "messages": messages, "facts": facts})


def filler_lines(texts: Iterable[str]) -> int:
    """How many of ``texts`` (summary lines, key facts, end-summary items) only say again a
    filler message."""
    fill = {normalise(re.sub(r"\W+", " ", t)) for _, t in FILLER}
    count = 0
    for text in texts:
        for part in re.split(r"\n| - |; ", text):
            words = normalise(re.sub(r"\(\d+\)|\b(?:user|assistant)\b|\W+", " ", part))
            count += bool(words) and any(
                words == f or (f in words and len(words) < len(f) + 12) for f in fill
            )
    return count


def filler_scores(s: Summarizer) -> list[tuple[str, int, int, int]]:
    """For each way of summarising ``filler_case``: its label, the facts recalled, the
    facts planted and the filler lines kept."""
    case = filler_case()
    out = []
    for label, batch in (("rolling, batches of 10", DAEMON_BATCH), ("rolling, one batch", 200)):
        summary, facts = rolling(s, case, batch=batch)
        text = normalise("\n".join([summary.summary, *facts]))
        got = sum(found(f, text) for f in case.facts)
        out.append((label, got, len(case.facts), filler_lines([summary.summary, *facts])))
    older, window = case.messages[:-WINDOW], case.messages[-WINDOW:]
    summary, facts = rolling(s, replace_messages(case, older), batch=DAEMON_BATCH)
    result = s.end_summary(EndRequest(case.goal, summary.summary, tuple(facts), window))
    items = [result.goal, *_flat(result.as_dict().values())]
    got = sum(found(f, normalise("\n".join(items))) for f in case.facts)
    out.append(("end summary", got, len(case.facts), filler_lines(items)))
    return out


def filler_report(s: Summarizer) -> str:
    return "\n".join(
        f"  {label:24} facts {got}/{total}  filler lines {junk}"
        for label, got, total, junk in filler_scores(s)
    )


# -- main --------------------------------------------------------------------------------------
def main() -> None:
    cases = load_cases()
    messages = sum(len(c.messages) for c in cases)
    facts = sum(len(c.facts) for c in cases)
    print(f"{len(cases)} conversations, {messages} messages, {facts} planted facts")
    for summarizer in (Baseline(), ExtractiveSummarizer()):
        for mode in MODES:
            print(f"\n{summarizer.name} / {mode}")
            print(report(score(summarizer, cases, mode)))
        share = kept_share(summarizer, cases)
        print(f"\n{summarizer.name}: the rolling summary and key facts are {share:.0%} of the")
        print(
            "  conversations' characters; random sentences of that size recall "
            f"{random_recall(summarizer, cases):.3f}"
        )
    print(f"\n{len(PLANTED)} facts among {FILLER_MESSAGES} near-identical filler messages")
    for summarizer in (Baseline(), ExtractiveSummarizer()):
        print(f"{summarizer.name}")
        print(filler_report(summarizer))
    print("\ntiming (best of 7, ms)")
    for label, join in (("200 messages of the set", 1), ("200 messages of ~1,500 chars", 20)):
        big = batch_of(cases, join=join)
        for s in (Baseline(), ExtractiveSummarizer()):
            ms = best_ms(lambda s=s, b=big: s.summarize(SummaryRequest(b)))  # type: ignore[misc]
            end_ms = best_ms(lambda s=s, b=big: s.end_summary(EndRequest(None, "", (), b)))  # type: ignore[misc]
            print(f"  {label:29} {s.name:10} summarize {ms:6.1f}  end_summary {end_ms:6.1f}")


if __name__ == "__main__":
    main()
