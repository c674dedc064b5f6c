"""Learning triggers: which utterances teach a pattern, a mistake, a preference or praise (pure).

Seed 000's ``LEARNING_TRIGGERS`` (Spanish) and their English counterparts, classified in the
seed's order: pattern, then mistake, then preference, then praise; the first kind that matches
anywhere in the utterance wins, and within a kind the earliest match. ``docs/learning.md`` lists
every phrase and the rules that keep ordinary sentences out:

- code, quotes and injected text are not speech: fenced blocks, inline code, lines that look
  like code, quoted words and what an agent injects into a turn (``<system-reminder>``,
  ``<command-name>``, ``<local-command-stdout>``, the local-command caveat) are masked;
- a question (a sentence ending in ``?`` or opening with ``¿``) teaches nothing, nor does a
  statement that the next sentence doubts ("Always use yarn. Still true?");
- directive phrases (``always``/``never``/``don't``/``avoid``/``siempre``/``nunca``/``evita``,
  ``prefer X``, ``use X instead of Y``) count only at the start of a clause and, for
  ``always``/``never``, before a known imperative verb: "Always use pnpm" teaches, "I always
  forget", "it never works" and "to avoid the race" do not;
- praise counts only as the opening of the utterance ("Great!", "Perfecto, gracias"); a bare
  "Mejor así." / "Better this way." names nothing, so it is praise too.

``Trigger.rule`` is what gets learned: the trigger's sentence from the trigger on, as written,
so a rule inside a task prompt ("Add lodash. Always use pnpm.") does not carry the task.
``detect_all`` finds every rule of an utterance, one per sentence; a sentence that joins two
rules with "and" / "but" / ";" / "y" / "pero" ("Always use pnpm and never commit .env files")
holds two, each part a rule on its own ("Always use pnpm, never npm" stays one). A trigger
that names nothing ("No, así no", "that's wrong") is ``bare``: a correction with no content.

``extract_memorize_markers`` reads seed 002's ``[MEMORIZE: fact]`` / ``[MEMORIZAR: hecho]``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

import planning_memory.longterm.speech as speech

TriggerKind = Literal["pattern", "mistake", "preference", "praise"]
Language = Literal["en", "es"]
KINDS: tuple[TriggerKind, ...] = ("pattern", "mistake", "preference", "praise")


@dataclass(frozen=True, slots=True)
class Trigger:
    """A learning trigger found in an utterance.

    ``phrase`` is the trigger text as written ("always use", "nunca uses", "I prefer");
    ``subject`` is the rest of the sentence, keeping the verb of an adverb directive
    ("always use pnpm" -> "use pnpm"); ``preferred`` / ``avoided`` name the things chosen and
    rejected ("use X instead of Y", "never use Z") when the utterance says so; ``rule`` is the
    sentence from the trigger on, as written ("Always use pnpm, never npm.").
    """

    kind: TriggerKind
    phrase: str
    subject: str
    language: Language
    preferred: str | None = None
    avoided: str | None = None
    rule: str = ""

    @property
    def bare(self) -> bool:
        """A correction or directive that names nothing ("No, así no", "that's wrong",
        "evita"): there is nothing in it to learn."""
        return self.kind != "praise" and not self.subject


@dataclass(frozen=True, slots=True)
class _Sentence:
    start: int
    end: int
    clauses: tuple[int, ...]  # where its clauses begin, and again after each lead-in word


@dataclass(frozen=True, slots=True)
class _Rule:
    kind: TriggerKind
    language: Language
    regex: re.Pattern[str]
    clause_start: bool  # the phrase must open a clause


_VERBS_EN = (
    "use|do|run|write|add|put|keep|check|call|return|wrap|validate|test|name|make|import"
    "|include|handle|follow|commit|create|set|pass|log|type|declare|define|document|sort"
    "|format|lint|rebase|squash|push|pull|merge|deploy|store|save|read|close|catch|throw"
    "|raise|await|mock|pin|update|review|ask|prefix|escape|sanitize|hash|encrypt|hardcode"
    "|mutate|modify|edit|delete|remove|touch|skip|ignore|leave|expose|trust|assume|swallow"
    "|block|print|install|upgrade|bump|rely|go|place|split|extract|reuse|cache|retry"
    "|specify|annotate|quote|indent|comment|explain|clean|release|lock|guard|verify|compare"
    "|sign|tag|build|generate|fetch|query|paginate|limit|prefer|start|end|open|send|pin"
)
_VERBS_ES = (
    "usa|haz|prefiero|utiliza|pon|escribe|añade|agrega|ejecuta|corre|valida|comprueba"
    "|verifica|revisa|documenta|incluye|llama|importa|devuelve|maneja|crea|nombra|define"
    "|declara|sigue|mantén|manten|lanza|captura|prueba|ordena|separa|guarda|registra|respeta"
    "|cierra|pasa|tipa|formatea|comenta|explica|actualiza|elimina|borra|usamos|utilizamos"
    "|hacemos|escribimos|ponemos"
)
_NEG_VERBS_ES = (
    "uses|hagas|utilices|pongas|escribas|añadas|agregues|ejecutes|corras|llames|importes"
    "|devuelvas|dejes|subas|mezcles|modifiques|toques|borres|elimines|guardes|expongas"
    "|ignores|asumas|mutes|hardcodees|comitees|metas|confíes|confies|olvides|captures"
    "|lances|silencies|hagamos|usemos"
)
_GERUNDS_EN = (
    "using|doing|writing|adding|putting|calling|committing|pushing|logging|printing|hardcoding"
    "|mutating|importing|creating|returning|running|ignoring|skipping|swallowing|catching"
    "|throwing|mocking|editing|modifying|touching|deleting|removing|exposing|leaving|making"
    "|passing|installing|generating|sending|storing|saving|wrapping|nesting|disabling"
)
_INFINITIVES_ES = (
    "usar|utilizar|hacer|poner|escribir|añadir|agregar|llamar|meter|subir|mezclar|tocar"
    "|modificar|borrar|ignorar|hardcodear|commitear|importar|crear|devolver|lanzar|capturar"
    "|silenciar|imprimir|loguear|guardar|exponer|desactivar"
)
_MODAL = r"(?:(?:you|we)\s+(?:should|must|need\s+to|have\s+to)\s+|we\s+)?"
_EN_ALWAYS = rf"(?P<head>{_MODAL}always\s+(?P<verb>(?:{_VERBS_EN})))\b"
_EN_NEVER = rf"(?P<head>{_MODAL}never(?:\s*,?\s*ever)?[\s,]+(?P<verb>(?:{_VERBS_EN})))\b"
_EN_DONT = rf"(?P<head>(?:we\s+)?(?:don['’]?t|do\s+not)(?:\s+ever)?\s+(?P<verb>(?:{_VERBS_EN})))\b"
_FROM_NOW_EN = r"from\s+now\s+on|going\s+forward|from\s+here\s+on(?:\s+out)?|henceforth"
_FROM_NOW_ES = r"de\s+ahora\s+en\s+adelante|a\s+partir\s+de\s+ahora|de\s+aqu[ií]\s+en\s+adelante"
_CONTRAST = r"(?:instead\s+of|rather\s+than|in\s+place\s+of|en\s+vez\s+de|en\s+lugar\s+de)"
_NOT = r",?\s+(?:and\s+|but\s+|y\s+|pero\s+)?(?:not|never|no|nunca)(?!\s+(?:matter|importa))"
_UNTIL_CONTRAST = rf".{{0,200}}?(?:\s{_CONTRAST}|{_NOT})\s"

# (kind, language, clause_start, regex); the seed's order: pattern, mistake, preference.
_TABLE: tuple[tuple[TriggerKind, Language, bool, str], ...] = (
    ("pattern", "en", True, _EN_ALWAYS),
    (
        "pattern",
        "en",
        False,
        r"(?P<head>(?:in|for)\s+this\s+(?:project|repo|repository|codebase|team|app)\s*,?"
        r"\s+we)\s+(?P<verb>use|prefer|do|write|follow|keep|run|always)\b",
    ),
    ("pattern", "en", True, r"(?P<head>we\s+(?:usually\s+|generally\s+)?prefer)\b"),
    ("pattern", "en", False, r"(?P<head>(?:the|our)\s+convention\s+(?:here\s+)?is(?:\s+to)?)\b"),
    ("pattern", "en", True, r"(?P<head>better\s+this\s+way|this\s+way\s+is\s+better)\b"),
    (
        "pattern",
        "en",
        True,
        rf"(?P<head>(?:{_FROM_NOW_EN})[\s,:]*(?:please\s+)?)(?P<verb>(?:{_VERBS_EN}))\b",
    ),
    ("pattern", "es", True, rf"(?P<head>siempre\s+(?P<verb>(?:{_VERBS_ES})))\b"),
    (
        "pattern",
        "es",
        False,
        r"(?P<head>en\s+este\s+(?:proyecto|repo|repositorio|equipo|c[oó]digo)\s*,?)"
        r"\s+(?P<verb>usamos|preferimos|utilizamos|hacemos|seguimos|escribimos)\b",
    ),
    ("pattern", "es", False, r"(?P<head>la\s+convenci[oó]n\s+(?:aqu[ií]\s+)?es)\b"),
    ("pattern", "es", True, r"(?P<head>(?:es\s+)?mejor\s+as[ií])(?!\w)"),
    ("pattern", "es", True, r"(?P<head>preferimos)\b"),
    (
        "pattern",
        "es",
        True,
        rf"(?P<head>(?:{_FROM_NOW_ES})[\s,:]*(?:por\s+favor\s+)?)(?P<verb>(?:{_VERBS_ES}))\b",
    ),
    ("mistake", "en", True, _EN_NEVER),
    ("mistake", "en", True, _EN_DONT),
    ("mistake", "en", True, r"(?P<head>(?:we\s+)?avoid)\b"),
    ("mistake", "en", True, rf"(?P<head>(?:stop|quit)\s+(?P<verb>(?:{_GERUNDS_EN})))\b"),
    (
        "mistake",
        "en",
        False,
        r"(?P<head>(?:that['’]?s|that\s+is|this\s+is)\s+(?:wrong|incorrect|not\s+right))\b",
    ),
    (
        "mistake",
        "en",
        True,
        r"(?P<head>no\s*,?\s+(?:do\s+it\s+(?:like\s+(?:this|that|so)|this\s+way|that\s+way)"
        r"|not\s+like\s+(?:this|that)))(?!\w)",
    ),
    ("mistake", "es", True, r"(?P<head>no\s*,?\s+hazlo(?:\s+as[ií])?)(?!\w)"),
    ("mistake", "es", True, r"(?P<head>as[ií]\s+no)(?!\w)"),
    ("mistake", "es", False, r"(?P<head>(?:eso|esto)\s+est[aá]\s+mal)(?!\w)"),
    ("mistake", "es", True, r"(?P<head>est[aá]\s+mal)(?!\w)"),
    ("mistake", "es", True, rf"(?P<head>nunca\s+(?P<verb>(?:{_NEG_VERBS_ES})))(?!\w)"),
    ("mistake", "es", True, rf"(?P<head>no\s+(?P<verb>(?:{_NEG_VERBS_ES})))(?!\w)"),
    ("mistake", "es", True, r"(?P<head>evit(?:a|ad|emos|amos|en))(?!\w)"),
    (
        "mistake",
        "es",
        True,
        rf"(?P<head>dej(?:a|ad|en)\s+de\s+(?P<verb>(?:{_INFINITIVES_ES})))(?!\w)",
    ),
    (
        "preference",
        "en",
        False,
        r"(?P<head>\bI\s*(?:would\s+|['’]d\s+)?(?:really\s+|always\s+|usually\s+|much\s+"
        r"|rather\s+)?prefer)\b",
    ),
    (
        "preference",
        "en",
        False,
        r"(?P<head>\bI\s+(?:really\s+)?like)\s+\S.{0,200}?\s(?:better|more)\b",
    ),
    ("preference", "en", True, r"(?P<verb>use|utilize)\s+\S" + _UNTIL_CONTRAST),
    ("preference", "en", True, r"(?P<head>prefer)\b"),
    ("preference", "es", False, r"(?P<head>(?:\byo\s+)?prefiero)(?!\w)"),
    ("preference", "es", False, r"(?P<head>me\s+gusta\s+m[aá]s)(?!\w)"),
    ("preference", "es", True, r"(?P<verb>usa|utiliza|usad|usen)\s+\S" + _UNTIL_CONTRAST),
)
# Tried after every kind above: a reminder states a fact worth keeping ("Remember: ...").
_WEAK: tuple[tuple[TriggerKind, Language, bool, str], ...] = (
    (
        "pattern",
        "en",
        True,
        r"(?P<head>remember\s*[:,—–-]|keep\s+in\s+mind(?:\s*:|\s+that))\s*(?=\w)",
    ),
    (
        "pattern",
        "es",
        True,
        r"(?P<head>recuerda(?:\s*[:,—–-]|\s+que)|ten\s+en\s+cuenta\s+que)\s*(?=\w)",
    ),
)

_LEAD = re.compile(
    r"(?:and|but|so|then|also|please|ok|okay|just|remember(?:\s+to)?|note|y|pero|entonces"
    rf"|{_FROM_NOW_EN}|in\s+the\s+future|{_FROM_NOW_ES}|en\s+adelante|make\s+sure(?:\s+to)?"
    r"|be\s+sure\s+to|keep\s+in\s+mind(?:\s+that)?|luego|también|tambien|por\s+favor"
    r"|recuerda(?:\s+que)?|ten\s+en\s+cuenta\s+que|ojo|vale|bueno|además|ademas)"
    r"\b[\s,:—–-]*",
    re.IGNORECASE,
)
# a scope opening the sentence before the directive, kept with the rule: "When writing tests,
# always use vitest", "For migrations always use prisma migrate", "En los tests, nunca uses any"
_SCOPE = re.compile(
    r"(?P<scope>(?:when(?:ever)?|while|for|in|inside|within|cuando|para|en|dentro\s+de)"
    r"\s+(?!(?:this|that|now|the\s+future|adelante)\b)[^\s,.;:!?][^,.;:!?]{0,59}?)\s*,?\s+"
    r"(?=(?:(?:you|we)\s+(?:should|must)\s+)?(?:always|never|don['’]?t|do\s+not|avoid|siempre"
    r"|nunca|no\s|evit))",
    re.IGNORECASE,
)
_BULLET = re.compile(r"[ \t¡\-*•]*")
_CLAUSE_BREAK = re.compile(r"[,:;(—–]\s*|\s[-–]\s+|\s(?:and|but|then)\s+", re.IGNORECASE)
# where a sentence may hold a second rule: "Always use pnpm and never commit .env files"
_JOIN = re.compile(r"\s*;\s*|,?\s+(?:and|but|y|pero)\s+", re.IGNORECASE)
# "y" / "pero" join two orders only after one ("Arregla el bug y usa zod en vez de yup"); after
# a subject they describe ("El build compila y siempre usa la caché").
_CLAUSE_BREAK_ES = re.compile(r"\s(?:y|pero|luego)\s+", re.IGNORECASE)
_ORDER_ES = re.compile(
    rf"(?:{_VERBS_ES}|arregla|corrige|cambia|mueve|refactoriza|implementa|quita|renombra|sube"
    r"|migra|limpia|busca|lee|instala|configura|prepara|genera|termina|mejora|optimiza)\b",
    re.IGNORECASE,
)
_PRAISE_WORK = re.compile(
    r"^[\W_]*(?:(?:oh|ok|okay|wow|yes|yeah|yep|s[ií]|vale|thanks|thank\s+you|gracias)\b"
    r"[\s,!.]*)?"
    r"(?P<head>(?:great|nice|good|excellent|awesome)\s+(?:work|job)|excelente\s+trabajo"
    r"|buen\s+trabajo|bien\s+hecho|well\s+done)(?!\w)",
    re.IGNORECASE,
)
_PRAISE_WORD = re.compile(
    r"^[\W_]*(?:(?:oh|ok|okay|wow|yes|yeah|yep|s[ií]|vale|thanks|thank\s+you|gracias)\b"
    r"[\s,!.]*)?"
    r"(?P<head>great|perfect|exactly|excellent|awesome|that['’]?s\s+it|perfecto|perfecta"
    r"|excelente|muy\s+bien|genial|exacto|eso\s+es|as[ií]\s+s[ií]|(?:es\s+)?mejor\s+as[ií]"
    r"|better\s+this\s+way|this\s+way\s+is\s+better)"
    r"(?=\s*(?:[!.,;:)]|$|thanks\b|thank\s+you\b|gracias\b))",
    re.IGNORECASE,
)
_SPANISH_PRAISE = re.compile(
    r"(?i)(?:perfect[oa]|excelente|muy|genial|exacto|eso|buen|bien|es|mejor|as[ií])\b"
)
_APPROVAL = re.compile(r"(?i)(?:es\s+)?mejor\s+as[ií]|better\s+this\s+way|this\s+way\s+is")
_NEGATED = re.compile(
    r"(?i)\b(?:don['’]?t|do\s+not|doesn['’]?t|not)\s+(?:think|believe|say|mean)\b"
    r"|\bno\s+(?:creo|digo)\b|(?:^|\s)no\s+$|\bnot\s+sure\b"
)
_CONTRAST_USE = (
    r"\s+(?:instead\s+of|rather\s+than|in\s+place\s+of|en\s+vez\s+de|en\s+lugar\s+de)\s+"
    r"|\s*[,;]?\s+(?:and\s+not|but\s+not|not|never|y\s+no|no|nunca)\s+"
)
_SPLIT_USE = re.compile(_CONTRAST_USE, re.IGNORECASE)
_SPLIT_PREFER = re.compile(
    _CONTRAST_USE + r"|\s+(?:over|than|to|antes\s+que|que|a)\s+", re.IGNORECASE
)
_CUT = re.compile(
    r"\s*[,;]|\s+(?:for|when|in|on|to|because|so|since|unless|if|from|para|cuando|en|porque"
    r"|si|desde|whenever)\s|\s+(?:and|but|y|pero)\s+(?:use|usa|utiliza)\s|\s+(?:better|more|m[aá]s)$",
    re.IGNORECASE,
)
_AVOID_HEAD = re.compile(r"(?i)(?:we\s+)?avoid|evit")
_USE_VERB = re.compile(
    r"(?i)^(?:use|using|utilize|usa|usar|usamos|uses|usad|usen|utiliza|utilizar|utilizamos"
    r"|utilices)\s+"
)
_PREFER_VERB = re.compile(r"(?i)^(?:prefer|prefiero|preferimos)\s+")
_THEN_USE = re.compile(
    r"(?i)(?:[,;]|\s[-–—]|\s(?=and\s|y\s))\s*(?:and\s+|y\s+)?(?:but\s+|pero\s+)?"
    r"(?:use|prefer|usa|utiliza)\s+(?P<x>.+?)"
    r"(?:\s+(?:instead|en\s+su\s+lugar))?\s*$"
)
_ARTICLE = re.compile(r"(?i)^(?:the|a|an|el|la|los|las|un|una|unos|unas)\s+")
_MAX_FACT_SPAN = 2000
_MEMORIZE = re.compile(r"\[\s*(?:memorize|memorise|memorizar)\s*:", re.IGNORECASE)


def _compiled(table: tuple[tuple[TriggerKind, Language, bool, str], ...]) -> tuple[_Rule, ...]:
    return tuple(
        _Rule(k, lang, re.compile(rx, re.IGNORECASE), start) for k, lang, start, rx in table
    )


# The seed's order: patterns, then mistakes, then preferences; reminders last.
_TIERS = (
    *(_compiled(tuple(row for row in _TABLE if row[0] == kind)) for kind in KINDS[:3]),
    _compiled(_WEAK),
)


def detect(utterance: str) -> Trigger | None:
    """The learning trigger in ``utterance`` (the first of the seed's kinds found), or None
    when it teaches nothing."""
    text = speech.mask(utterance)
    parts = _parts_of(text)
    for rules in _TIERS:
        found = _first(rules, utterance, text, parts)
        if found is not None:
            return found
    return _praise(utterance, text)


def detect_all(utterance: str) -> list[Trigger]:
    """Every rule ``utterance`` states, in order: one per sentence, or per part of a sentence
    that joins rules ("Always use pnpm and never commit .env files"), a repeat left out;
    praise only when it states no rule; [] when it teaches nothing."""
    text = speech.mask(utterance)
    found: dict[str, Trigger] = {}
    for part in _parts_of(text):
        hit = next(filter(None, (_first(r, utterance, text, [part]) for r in _TIERS)), None)
        if hit is not None:
            found.setdefault(_clean(hit.rule).casefold(), hit)
    if found:
        return list(found.values())
    praise = _praise(utterance, text)
    return [praise] if praise is not None else []


def _sentence(text: str, start: int, end: int) -> _Sentence:
    return _Sentence(start, end, tuple(dict.fromkeys(_clause_starts(text, start, end))))


def _parts_of(text: str) -> list[_Sentence]:
    """The statements of the masked ``text``, each cut into its rules' parts (``_parts``)."""
    return [part for start, end in speech.statements(text) for part in _parts(text, start, end)]


def _parts(text: str, start: int, end: int) -> list[_Sentence]:
    """The sentence cut before "and" / "but" / ";" / "y" / "pero" where what follows opens a
    rule on its own and what comes before holds one ("Always use pnpm and never commit .env
    files"); otherwise whole ("Always use pnpm and not npm", "Fix the bug and always run
    the tests")."""
    parts: list[_Sentence] = []
    begin = start
    for join in _JOIN.finditer(text, start, end):
        if join.start() <= begin or not _opens_rule(text, join.end(), end):
            continue
        before = _sentence(text, begin, join.start())
        if any(_first(rules, text, text, [before]) for rules in _TIERS):
            parts.append(before)
            begin = join.end()
    return [*parts, _sentence(text, begin, end)]


def _opens_rule(text: str, pos: int, end: int) -> bool:
    """Whether a trigger phrase opens the clause at ``pos`` (after its lead-in words)."""
    return any(
        rule.regex.match(text, opening, end) is not None
        for opening in _openings(text, pos, end)
        for rules in _TIERS
        for rule in rules
    )


def extract_memorize_markers(text: str) -> list[str]:
    """The facts of ``[MEMORIZE: ...]`` / ``[MEMORIZAR: ...]`` markers, in order, without
    repeats, whitespace collapsed. Case does not matter; brackets nested inside a fact are
    kept; a fact may span lines but not a blank line; a marker left open runs to the end of
    its line."""
    facts: list[str] = []
    for marker in _MEMORIZE.finditer(text):
        fact = " ".join(_bracketed(text, marker.end()).split())
        if fact and fact not in facts:
            facts.append(fact)
    return facts


def _bracketed(text: str, start: int) -> str:
    """The text up to the ``]`` that closes the marker, within its paragraph and 2,000
    characters; a marker never closed there runs to the end of its line."""
    paragraph = text.find("\n\n", start)
    limit = min(len(text), start + _MAX_FACT_SPAN, paragraph if paragraph != -1 else len(text))
    depth = 1
    for pos in range(start, limit):
        if text[pos] == "[":
            depth += 1
        elif text[pos] == "]":
            depth -= 1
            if depth == 0:
                return text[start:pos]
    line_end = text.find("\n", start)
    return text[start : line_end if line_end != -1 else len(text)]


def _clause_starts(text: str, start: int, end: int) -> Iterator[int]:
    """Where clauses of the sentence begin, and again after each lead-in word ("and",
    "please", "from now on", "y"): a rule may open with a lead-in or follow it."""
    breaks = [start] + [m.end() for m in _CLAUSE_BREAK.finditer(text, start, end)]
    if _ORDER_ES.match(text, _skip_bullet(text, start, end), end):
        breaks += [m.end() for m in _CLAUSE_BREAK_ES.finditer(text, start, end)]
    for pos in breaks:
        yield from _openings(text, pos, end)


def _openings(text: str, pos: int, end: int) -> Iterator[int]:
    """Where a clause that begins at ``pos`` may open a rule: there (past a bullet), after
    each lead-in word, after a scope ("when writing tests,")."""
    pos = _skip_bullet(text, pos, end)
    yield pos
    while (lead := _LEAD.match(text, pos, end)) is not None and lead.end() > pos:
        pos = lead.end()
        yield pos
    if (scope := _SCOPE.match(text, pos, end)) is not None:
        yield scope.end()


def _skip_bullet(text: str, pos: int, end: int) -> int:
    match = _BULLET.match(text, pos, end)
    return match.end() if match else pos


def _first(
    rules: tuple[_Rule, ...], original: str, text: str, sentences: list[_Sentence]
) -> Trigger | None:
    """The first trigger of ``rules``, earliest sentence first; a bare "Mejor así." is left
    to praise."""
    for sentence in sentences:
        for rule in rules:
            match = _search(rule, text, sentence)
            if match is None:
                continue
            found = _build(rule, match, sentence, original)
            if found.subject or not _APPROVAL.match(found.phrase):
                return found
    return None


def _search(rule: _Rule, text: str, sentence: _Sentence) -> re.Match[str] | None:
    if rule.clause_start:
        for pos in sentence.clauses:
            match = rule.regex.match(text, pos, sentence.end)
            if match is not None:
                return match
        return None
    match = rule.regex.search(text, sentence.start, sentence.end)
    if match is None or _NEGATED.search(text, sentence.start, match.start()):
        return None
    return match


def _build(rule: _Rule, match: re.Match[str], sentence: _Sentence, original: str) -> Trigger:
    phrase = " ".join(original[match.start() : match.end()].split()).strip(" ,")
    if match.groupdict().get("verb") is not None:
        subject_start = match.start("verb")
    else:
        subject_start = match.end("head")
    end = sentence.end
    subject = _clean(original[subject_start:end])
    negated = rule.kind == "mistake" and match.groupdict().get("verb") is not None
    preferred, avoided = _choices(rule.kind, phrase, subject, negated)
    start = match.start()
    scope = _scope_before(original, sentence, start)
    if scope is not None and subject:
        subject = f"{' '.join(original[scope[0] : scope[1]].split())}, {subject}"
        start = scope[0]
    rule_text = " ".join(original[start:end].split())
    return Trigger(rule.kind, phrase, subject, rule.language, preferred, avoided, rule_text)


def _scope_before(original: str, sentence: _Sentence, start: int) -> tuple[int, int] | None:
    """The span of the scope ("when writing tests") that opens a clause right before the
    directive at ``start``, if any."""
    for pos in sentence.clauses:
        if pos >= start:
            break
        found = _SCOPE.match(original, pos, sentence.end)
        if found is not None and found.end() == start:
            return found.start("scope"), found.end("scope")
    return None


def _praise(original: str, text: str) -> Trigger | None:
    first = next(iter(speech.sentences(text)), None)
    if first is None or speech.is_question(text, *first):
        return None
    match = _PRAISE_WORK.match(text) or _PRAISE_WORD.match(text)
    if match is None:
        return None
    head = original[match.start("head") : match.end("head")]
    language: Language = "es" if _SPANISH_PRAISE.match(head) else "en"
    subject = _clean(original[match.end("head") : first[1]])
    said = " ".join(original[match.start("head") : first[1]].split())
    return Trigger("praise", head, subject, language, rule=said)


def _clean(text: str) -> str:
    text = " ".join(text.split())
    text = text.lstrip(" ,:;-—–")
    return text.rstrip(" .!?;:,").strip()


def _choices(
    kind: TriggerKind, phrase: str, subject: str, negated: bool
) -> tuple[str | None, str | None]:
    """``(preferred, avoided)`` read from a trigger: the object of "use" (avoided after "never"
    or "don't"), of "avoid", or of "prefer", and the other side of "instead of" / "over"."""
    if kind == "mistake" and _AVOID_HEAD.match(phrase):
        first, _ = _split(_SPLIT_USE, subject)
        return _then_use(subject), _thing(re.sub(r"(?i)^(?:using|usar)\s+", "", first))
    use = _USE_VERB.match(subject)
    prefer = _PREFER_VERB.match(subject)
    if use is not None:
        body = subject[use.end() :]
        first, second = _split(_SPLIT_USE, body)
        if negated:
            return _then_use(body), _thing(first)
        return _thing(first), _thing(second)
    if kind == "preference" or prefer is not None or "prefer" in phrase.lower():
        body = subject[prefer.end() :] if prefer else subject
        first, second = _split(_SPLIT_PREFER, body)
        return _thing(first), _thing(second)
    return None, None


def _split(splitter: re.Pattern[str], body: str) -> tuple[str, str | None]:
    match = splitter.search(body)
    if match is None:
        return body, None
    return body[: match.start()], body[match.end() :]


def _then_use(body: str) -> str | None:
    later = _THEN_USE.search(body)
    return _thing(later.group("x")) if later else None


def _thing(text: str | None) -> str | None:
    """A chosen or rejected thing: cut at its purpose ("for", "when", ","), no article."""
    if text is None:
        return None
    cut = _CUT.search(text)
    text = text[: cut.start()] if cut else text
    text = _ARTICLE.sub("", text.strip()).strip(" `'\".,;:!?")
    return text or None
