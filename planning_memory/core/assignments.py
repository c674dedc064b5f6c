"""Secrets in assignments: a key that names one, a separator, then a value that is one (pure).

``password=hunter2``, ``api_key: "sk..."``, ``token => 'abc'``, ``contraseña: ...``: one
regex per stem (``HEADS``), each starting with the stem and run on the lower-cased text; the
value is read from the original text. A key that names a secret (``password``, ``api_key``)
makes any literal value one, unless it is a placeholder (``PLACEHOLDER``), a type, code or
prose; a key that may hold one (``storage_key``, ``credentials``) only a random-looking value.
Only the value is redacted: the key stays. ``privacy`` merges these spans with the others.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from planning_memory.core import secret_table
from planning_memory.core.regex import Lazy

_C = Lazy

PLACEHOLDER = Lazy(
    r"""(?ix)^(?:
        \*+ | x{3,} | \.{3} | … | -+ | _+ | \?+
      | <[^<>]*> | \{\{.*\}\} | \$\{.*\} | \$\(.*\) | \$[a-z_][a-z0-9_]* | %[a-z_][a-z0-9_]*%
      | your[-_ .][a-z_ .-]* | (?:my|the|some)[-_ ]?(?:password|secret|token|key)[a-z_ .-]*
      | change[-_ ]?me | replace[-_ ]?me | example | dummy | fake | placeholder
      | redacted | none | null | nil | undefined | todo | tbd | n/?a | \[redacted.*
      | password | passwd | pass | pwd | secret | token | api[-_ ]?key | contraseña
      | .{0,12}(?:\.\.\.|…)
    )$"""
)


# Assignments: a key that ends in a secret word, a separator, then the value. One regex per
# stem, each starting with the stem, run on the lower-cased text; the value is read from the
# original text.
_SEP = r"(?![\w-])(?:\\?[\"'])?[ \t]{0,3}(?P<sep>=>|:=|=(?!=)|:(?![:/]))"
HEADS: tuple[tuple[str, Lazy], ...] = (
    ("token", _C(r"token" + _SEP)),
    ("password", _C(r"pass(?P<long>w(?:or)?d|phrase)?" + _SEP)),
    ("password", _C(r"contrase(?:ñ|n|\\u00f1)a" + _SEP)),
    ("secret", _C(r"secret(?:[_-]?(?:access[_-]?)?key)?" + _SEP)),
    ("secret", _C(r"key" + _SEP)),
    ("secret", _C(r"cred(?:s|entials?)" + _SEP)),
)
_PUBLIC_BEFORE_KEY = _C(r"(?:public|publishable|pub|site)[_-]?$")
_KEY_BEFORE_KEY = _C(r"(?:api|access|private|signing|encryption|auth)[_-]?$")
_VALUE = _C(
    r"""[ \t]{0,20}(?:
        "(?P<dq>[^"\n]+)"
      | '(?P<sq>[^'\n]+)'
      | `(?P<bq>[^`\n]+)`
      | \\"(?P<edq>[^"\\\n]+)\\"   # quotes escaped inside a string of code or JSON
      | \\'(?P<esq>[^'\\\n]+)\\'
      | (?P<bare>[^\s"'`,;&|(){}\[\]<>]+)
    )""",
    re.VERBOSE,
)
_SECRET_KEY = _C(
    r"(?i)^[\w.-]*?(?:(?:api|access|private|signing|encryption|auth)[_-]?key|apikey"
    r"|secret(?:[_-]?(?:access[_-]?)?key)?|passw(?:or)?d|passphrase|contrase(?:ñ|n)a"
    r"|[_.-]pass|token)$"
)
_NOT_VALUE_WORDS = (
    "none null nil true false undefined str string int bytes number bool boolean optional any"
    " object required secret secretstr password token buffer"
)
_NOT_VALUES = frozenset(_NOT_VALUE_WORDS.split())
_DOTTED = _C(r"^[A-Za-z_$][\w$]*(?:(?:\.|::|->)[A-Za-z_$][\w$]*)+$")
_SNAKE_VAR = _C(r"^[a-z][a-z0-9]*(?:_[a-z0-9]+)+$")
_PHRASE = _C(r"^[^\W\d_]+(?:[ '-][^\W\d_]+)+[.!:?]?$")
_LABEL_PHRASE = _C(r"(?i)passw|contrase|token|secret|key|clave|[.!:?]$")
_WORD = _C(r"^[A-Za-z_]{1,15}$")
_NAME = _C(r"^[A-Za-z_]+$")
_RANDOM_CHARS = _C(r"^[A-Za-z0-9+/_~.-]+={0,3}$")
_UUID = _C(r"^[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}$")
_HEX = _C(r"^[0-9a-fA-F]+$")
_DIGIT_RUNS = _C(r"[0-9]+")
_NOT_SECRET = _C(r"^(?:#[0-9a-fA-F]{3,8}|[-+]?[0-9]{1,5}(?:\.[0-9]+)?)$")  # a colour, a number


def _stem_in(stem: str, value: str) -> bool:
    """Whether ``value`` is a name built on the key's own word (``token=refresh_token``); a
    value with digits or symbols (``password=Passw0rd!2024``) is a secret all the same."""
    if not _NAME.match(value):
        return False
    low = value.lower()
    stems = {"token": ("token", "tok"), "password": ("pass", "pwd", "contrase")}
    return any(part in low for part in stems.get(stem, ("secret", "key")))


def is_secret_value(value: str) -> bool:
    """Whether a quoted or whole value looks like a real secret (not empty, not a stand-in)."""
    text = value.strip()
    if not text or text.startswith("[REDACTED") or PLACEHOLDER.match(text):
        return False
    if len(text) < 3 and not any(c.isalnum() for c in text):
        return False  # a quote, an emoji: a symbol, not a secret
    if _NOT_SECRET.match(text):
        return False
    return not (_PHRASE.match(text) and _LABEL_PHRASE.search(text))


def _bare_is_secret(stem: str, sep: str, spaced: bool, value: str, after: str) -> bool:
    """Whether an unquoted value is a literal secret rather than code, a type or prose."""
    if after and after in "([{":
        return False  # a call, an index or a ${...} reference
    if value.startswith(("$", "%", "/", "~")) or value.lower() in _NOT_VALUES:
        return False
    if value.isdigit() and len(value) < 6:
        return False
    if spaced and _WORD.match(value):
        return False  # ``token = word``: a variable in code, or prose
    if sep == ":" and value.isalpha() and len(value) < 16:
        return False  # ``token: string``, ``secret: the ...``: a type or prose
    if _DOTTED.match(value) or _SNAKE_VAR.match(value) or _stem_in(stem, value):
        return False
    return is_secret_value(value)


def _key_strength(head: re.Match[str], lowered: str) -> bool | None:
    """True for a key that names a secret (any literal value is one), False for a key that may
    hold one (``storage_key``, ``hmacKey``, ``credentials``: only a random-looking value is),
    None for no key at all."""
    stem = head.group(0)[:3]
    if stem == "key":
        before = max(0, head.start() - 12), head.start()
        if _PUBLIC_BEFORE_KEY.search(lowered, *before):
            return None  # a public or publishable key is meant to be shared
        return bool(_KEY_BEFORE_KEY.search(lowered, *before))
    if stem == "cre":
        return False
    if stem == "pas" and head.group("long") is None:  # bare ``pass``: only as ``db_pass``
        return (head.start() > 0 and lowered[head.start() - 1] in "_.-") or None
    return True


def _random_looking(value: str) -> bool:
    """A generated key rather than a name, a word, a hash-like id or prose: 16 or more
    characters of a token alphabet, with letters and digits, and high Shannon entropy."""
    if not 16 <= len(value) <= 1024 or not _RANDOM_CHARS.match(value) or _UUID.match(value):
        return False
    if _DOTTED.match(value) or _SNAKE_VAR.match(value):
        return False
    digits = any(c.isdigit() for c in value)
    upper = any(c.isupper() for c in value)
    lower = any(c.islower() for c in value)
    if _HEX.match(value):
        return digits and (upper or lower) and secret_table.entropy(value) >= 3.0
    if value.isalnum() and len(_DIGIT_RUNS.findall(value)) < 2:
        return False  # ``PKCS12PrivateKeyTypes``: a name with a number in it
    return digits and upper and lower and secret_table.entropy(value) >= 3.5


def spans(
    text: str, lowered: str, heads: Sequence[tuple[str, Lazy]] = HEADS
) -> Iterator[tuple[str, int, int]]:
    """``(kind, start, end)`` of each assigned value in ``text`` that is a secret, read after
    the key stems of ``heads`` (all of ``HEADS``, or those the caller knows may occur)."""
    for kind, head_re in heads:
        if kind == "secret" and not ("key" in lowered or "secret" in lowered or "cred" in lowered):
            continue
        for head in head_re.finditer(lowered):
            strong = _key_strength(head, lowered)
            if strong is None:
                continue
            value = _VALUE.match(text, head.end())
            if value is None:
                continue
            found = _value_span(kind, head.group("sep"), value, strong)
            if found is not None:
                yield kind, *found


def _value_span(
    kind: str, sep: str, value: re.Match[str], strong: bool = True
) -> tuple[int, int] | None:
    for name in ("dq", "sq", "bq", "edq", "esq"):
        if value.group(name) is not None:
            quoted = value.group(name)
            if not strong:
                return value.span(name) if _random_looking(quoted) else None
            ok = is_secret_value(quoted) and not _stem_in(kind, quoted)  # "ErrorIdToken"
            return value.span(name) if ok else None
    start, end = value.span("bare")
    if not strong:
        after = value.string[end : end + 1]
        code = bool(after) and after in "([{"  # a call or an index
        return (start, end) if not code and _random_looking(value.group("bare")) else None
    spaced = start > value.start()
    text = value.string
    if _bare_is_secret(kind, sep, spaced, value.group("bare"), text[end : end + 1]):
        return start, end
    return None


def secret_key_kind(key: str) -> str | None:
    """``password``, ``token`` or ``secret`` when a mapping key names a secret, else None."""
    if not _SECRET_KEY.match(key):
        return None
    low = key.lower()
    if "pass" in low or "contrase" in low:
        return "password"
    return "token" if low.endswith("token") else "secret"
