"""What a sentence holds, for the summariser (``extractive``): numbers, code names, paths,
errors, names, choices, reasons, settings, fixes and next steps, in English and Spanish, and
whether it only keeps the conversation going (``routine``). Pure: regexes and scores.
"""

from __future__ import annotations

import re

from planning_memory.sessions.summary_base import FACT, PUNCT, acknowledgement, filler


# -- fact density ------------------------------------------------------------------------------
def _words(*phrases: str) -> re.Pattern[str]:
    """A pattern for any of ``phrases`` as whole words, to search in lower-cased text."""
    return re.compile(r"\b(?:" + "|".join(phrases) + r")\b")


# Specific tokens: numbers and versions, code names (`quoted`, key=value, snake_case,
# camelCase, PascalCase, call(), --flags, kebab-names, dotted.names, letters with digits).
NUMBER = re.compile(r"(?<![\w#.])[#v]?\d[\w.,:/%-]*(?![\w)])")
CODE = re.compile(
    r"`[^`\n]+`|\b\w+=[^\s,;)]+|\b[A-Za-z]\w*_\w+\b|\b[a-z]+[A-Z]\w*\b|\b[A-Z][a-z0-9]+[A-Z]\w*\b"
    r"|\b\w+\(\)|(?<![\w-])(?:--[a-z][\w-]*|-[a-zA-Z]\b)|\b[a-z][a-z0-9]*(?:-[A-Za-z0-9]+)+\b"
    r"|\b[a-z][\w-]+\.[a-z]{2,}\b|\b(?=[A-Za-z]*\d)(?=\d*[A-Za-z])[A-Za-z\d]{2,}\b"
)
FILE = re.compile(
    r"[\w.-]*\w\.(?:py|pyi|ts|tsx|js|jsx|mjs|json|ya?ml|toml|md|rs|go|java|kt|rb|php|cs|cpp|c|h"
    r"|sql|sh|css|scss|html|lock|ini|cfg|env|txt|db|sqlite3?|csv|parquet|xml)",
    re.IGNORECASE,
)
ERROR_NAME = re.compile(
    r"\b[A-Z]\w*(?:Error|Exception|Required|Expired|BackOff|Killed)\b|\bE\d{4}\b"
)
NAME = re.compile(r"(?<=[\w,;:()] )[A-ZÁÉÍÓÚÑ][\w.-]*\w")  # a capital inside a sentence
# a name opening a sentence: a capitalised word followed by a verb or "from" ("Marta owns")
NAME_OPENING = re.compile(
    r"^([A-ZÁÉÍÓÚÑ][a-záéíóúñ]+)(?= (?:from|of|owns?|approved|asked|said|says|wants|will|has"
    r"|is|de|del|dice|quiere|pidió|aprobó|lleva|se encarga)\b)"
)
_NOT_NAME_TEXT = """the this that these those it its we our you your they their he she his her
there here what when where which who why how if then also but and so not no yes ok all any each
every some one none el la los las lo esto eso este esta ese esa ello nosotros ellos ellas usted
aquí allí qué cuando donde cual quien si pero también todo todos cada algún ningún uno"""
NOT_NAMES = frozenset(_NOT_NAME_TEXT.split())
CHOICE = _words(
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
INSTRUCTION = re.compile(
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
ERROR = _words(
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
DONE = re.compile(
    r"^(?:done|added|fixed|implemented|created|changed|removed|updated|wrote|written|pushed"
    r"|installed|moved|renamed|deleted|replaced|switched|migrated|applied|hecho|listo"
    r"|añadid[oa]s?|arreglad[oa]|cread[oa]|instalad[oa]s?|cambiad[oa]|quitad[oa]|escrit[oa])\b"
    r"|\b(?:i've|i have|we've|we have) \w+(?:ed|en|t)\b|\b(?:he|hemos) \w+(?:ado|ido|to|cho)\b"
    r"|\b(?:is|are) (?:installed|in place|fixed|done)\b|\ball \d+ .*\bpass|\bpasan\b",
)
NEXT = re.compile(
    r"\b(next|todo|to do|still need|remaining|pending|later|tomorrow|then we|follow[- ]up"
    r"|left to do|open items?|falta|faltan|pendiente|siguiente|próximo|después|luego|mañana"
    r"|queda|quedan)\b",
)

FILLER_SCORE = -5.0  # small talk


def paths(text: str) -> set[str]:
    """The file paths, URLs and file names in ``text``."""
    found = set()
    for token in text.split():
        token = token.strip(PUNCT + "`[]{}<>")
        slashes = token.count("/")
        if slashes >= 2 or (slashes == 1 and "." in token) or FILE.fullmatch(token):
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


def signal_score(text: str, role: str) -> float:
    """The score of ``text`` besides its specific tokens and names: a choice, its reason, a
    setting, a negation, an error, a fix, a next step, something done (minus a question);
    from the user, anything, more for an instruction or a stated fact. Small talk and
    ``routine`` sentences: -5."""
    if filler(text.split()) or routine(text):
        return FILLER_SCORE
    low = text.lower()
    value = 3 * _has(CHOICE, low) + 2 * _has(_REASON, low) + _has(_SETTING, low)
    error = ERROR.search(low) or ERROR_NAME.search(text)
    value += _has(_NEGATION, low) + 2 * bool(error) + 2 * _has(_FIX, low)
    value += 2 * _has(NEXT, low) + _has(DONE, low) - 2 * text.endswith("?")
    if role == "user":
        value += 1 + 3 * _has(INSTRUCTION, low) + 2 * _has(FACT, low)
        value += 2 * _has(_STATED, low)
    return value
