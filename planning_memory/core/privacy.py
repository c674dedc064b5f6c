"""Redaction of ``<private>`` blocks and secrets, and text-field limits (pure: no I/O).

``redact`` is applied to every string before it reaches disk, a rendered file or a log:

- ``<private>...</private>`` (any case, across lines, nested, or left open to the end of the
  text) becomes ``[REDACTED]``;
- a secret (provider API keys and tokens, private key blocks, JWTs, passwords in URLs, values
  of ``password=`` / ``api_key:`` / ``token=`` style assignments, random-looking values of
  other ``..._key`` assignments) becomes ``[REDACTED:<kind>]``; for assignments and URLs only
  the value goes: the key, the user name and the host stay. The provider shapes of gitleaks and
  detect-secrets are a rule table (``secret_rules``, matched by ``secret_table``); the
  assignments are read by ``assignments``.

``find_secrets`` reports the same spans for the pre-commit secret scan. Overlapping findings are
merged, so nothing partly covered survives. ``redact`` is idempotent. Every shape's regex
starts with a literal; the table's one pass over the text (``secret_table.literals``) also
tells which of those literals occur, so a shape runs only where its literal does, and is
compiled the first time it turns up (``core.regex.Lazy``), as are the table's rules.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import TypeVar, cast

from planning_memory.core import assignments, secret_table
from planning_memory.core.assignments import secret_key_kind as secret_key_kind
from planning_memory.core.regex import Lazy, literal_prefix
from planning_memory.errors import LimitError

MAX_FIELD_CHARS = 50_000
PRIVATE_MARKER = "[REDACTED]"
TRUNCATION_MARKER = "\n[TRUNCATED: the text was longer than the limit]"
PRIVATE_KIND = "private"

_T = TypeVar("_T")


@dataclass(frozen=True, slots=True)
class Finding:
    """A span ``text[start:end]`` that must not be stored; ``kind`` names what it is."""

    kind: str
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class _Rule:
    """A secret shape. Each regex starts with a literal, so the scan is a fast substring search."""

    kind: str
    regexes: tuple[Lazy, ...]
    group: int = 0  # the group that holds the secret
    lower: bool = False  # match against the lower-cased text (a case-insensitive shape)
    boundary: bool = False  # the match must not follow a letter, digit or underscore
    check: Callable[[str], bool] | None = None  # a last look at the secret's text


def _has_digit_and_letter(value: str) -> bool:
    return any(c.isdigit() for c in value) and any(c.isalpha() for c in value)


def _strong_token(value: str) -> bool:
    """A bearer value that looks generated: has a digit, or mixed case and some length."""
    mixed = any(c.isupper() for c in value) and any(c.islower() for c in value)
    return any(c.isdigit() for c in value) or (mixed and len(value) >= 16)


def _url_password_ok(value: str) -> bool:
    return not assignments.PLACEHOLDER.match(value)


_C = Lazy
_PEM_BEGIN = _C(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----")
_PEM_END = _C(r"-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----")
_AWS_SECRET_TAIL = r"\\?[\"']?[ \t]{0,3}(?:=>|=|:)[ \t]{0,3}\\?[\"']?([a-z0-9/+=]{40})"

_RULES: tuple[_Rule, ...] = (
    _Rule("aws_access_key_id", (_C(r"A(?:KIA|SIA)[A-Z0-9]{16}\b"),), boundary=True),
    _Rule(
        "aws_secret_access_key",
        (_C(r"secret_?access_?key" + _AWS_SECRET_TAIL), _C(r"aws_?secret_?key" + _AWS_SECRET_TAIL)),
        group=1,
        lower=True,
    ),
    _Rule(
        "github_token",
        (_C(r"gh[pousr]_[A-Za-z0-9]{36,255}\b"), _C(r"github_pat_[A-Za-z0-9_]{22,255}\b")),
        boundary=True,
    ),
    _Rule("anthropic_api_key", (_C(r"sk-ant-[A-Za-z0-9_-]{20,}"),), boundary=True),
    _Rule(
        "openai_api_key",
        (_C(r"sk-(?:(?:proj|svcacct|admin)-[A-Za-z0-9_-]{20,}|[A-Za-z0-9]{32,})"),),
        boundary=True,
        check=_has_digit_and_letter,
    ),
    _Rule(
        "slack_webhook",
        (_C(r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/-]+"),),
    ),
    _Rule(
        "slack_token",
        (_C(r"xox[abeoprs]-[A-Za-z0-9-]{10,}"), _C(r"xapp-[A-Za-z0-9-]{20,}")),
        boundary=True,
    ),
    _Rule(
        "stripe_secret_key",
        (
            _C(r"sk_(?:live|test)_[A-Za-z0-9]{16,}\b"),
            _C(r"rk_(?:live|test)_[A-Za-z0-9]{16,}\b"),
            _C(r"whsec_[A-Za-z0-9]{24,}\b"),
        ),
        boundary=True,
    ),
    _Rule(
        "google_api_key",
        (_C(r"AIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])"),),
        boundary=True,
    ),
    _Rule("npm_token", (_C(r"npm_[A-Za-z0-9]{36}\b"),), boundary=True),
    _Rule(
        "jwt",
        (_C(r"eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*"),),
        boundary=True,
    ),
    _Rule(
        "url_password",
        (_C(r"://[^\s:/@?#\[\]]*:([^\s/@?#]+)@(?=[\w\[])"),),
        group=1,
        check=_url_password_ok,
    ),
    _Rule(
        "bearer_token",
        (_C(r"bearer[ \t]+([a-z0-9._~+/-]{8,}=*)"),),
        group=1,
        lower=True,
        boundary=True,
        check=_strong_token,
    ),
    _Rule(
        "basic_auth",
        (
            _C(
                r"authorization[\"']?[ \t]{0,3}[:=][ \t]{0,3}[\"']?"
                r"basic[ \t]+([a-z0-9+/]{8,}={0,2})"
            ),
        ),
        group=1,
        lower=True,
        boundary=True,
    ),
)

_MARKER = _C(r"\[REDACTED(?::[a-z0-9_]+)?\]")
_PRIVATE_TAG = _C(r"(?i)<(/?)private(?:\s[^<>]*)?>")
_RESCAN_GAP = 2000  # lines closer than this are scanned again as one text
# A shape that spans lines, a Kubernetes YAML secret block, may form anew a few lines from a
# marker: where the text has a ``kind:``, the lines around a marker are scanned again too.
_RESCAN_LINES = 12
_YAML_KIND = _C(r"(?i)\bkind:")
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")

_KINDS = (
    PRIVATE_KIND,
    "private_key",
    *(rule.kind for rule in _RULES),
    *secret_table.KINDS,
    "password",
    "token",
    "secret",
)
_PRIORITY = {kind: rank for rank, kind in enumerate(_KINDS)}
# Every regex a finding starts from, split by the text it runs on (``_may_hold_secret``).
_CASED_SHAPES = (
    _PEM_BEGIN,
    *(rx for rule in _RULES if not rule.lower for rx in rule.regexes),
)
_LOWER_SHAPES = (
    _PRIVATE_TAG,
    *(rx for rule in _RULES if rule.lower for rx in rule.regexes),
    *(rx for _kind, rx in assignments.HEADS),
)


# each shape with the text its matches start with: a substring test for it is far cheaper than
# a regex search, and most text holds none of the shapes' prefixes
_CASED_PREFIXED = tuple((literal_prefix(rx.pattern, rx.flags), rx) for rx in _CASED_SHAPES)
_LOWER_PREFIXED = tuple(
    (literal_prefix(rx.pattern, rx.flags, lowered=True), rx) for rx in _LOWER_SHAPES
)


def _gate(prefix: str) -> str:
    return prefix.lower() if len(prefix) > 1 else ""


# the prefixes, lower-cased, that the table's pass looks for beside its own literals, and each
# shape with the literal that pass tells about ("": a prefix shorter than two characters, a
# plain substring test)
_LITERALS = tuple(sorted({p.lower() for p, _rx in _CASED_PREFIXED + _LOWER_PREFIXED}))
_CASED_GATED = tuple((_gate(p), p, rx) for p, rx in _CASED_PREFIXED)
_LOWER_GATED = tuple((_gate(p), p, rx) for p, rx in _LOWER_PREFIXED)
_GATE_OF = {rx: gate for gate, _p, rx in _CASED_GATED + _LOWER_GATED}


def _lower(text: str) -> str:
    """Lower case with the same length as ``text``, so that offsets carry over."""
    lowered = text.lower()
    return lowered if len(lowered) == len(text) else text.translate(_ASCII_LOWER)


def _after_word(text: str, start: int) -> bool:
    if start == 0:
        return False
    before = text[start - 1]
    return before.isalnum() or before == "_"


def find_secrets(text: str) -> list[Finding]:
    """Every private block and secret in ``text``, merged where they overlap, by position."""
    lowered = _lower(text)
    seen = secret_table.literals(lowered, _LITERALS)
    found = [Finding(s.kind, s.start, s.end) for s in secret_table.find(text, lowered, seen)]
    if found and "[REDACTED" in text:
        found = _outside_markers(text, found)
    if not found and not _may_hold_secret(text, lowered, seen.present):
        return []
    return _merge([*_private_spans(text), *_secret_spans(text, lowered, seen.present), *found])


def _outside_markers(text: str, found: list[Finding]) -> list[Finding]:
    """The findings that touch no ``[REDACTED...]`` marker (a marker is never a secret)."""
    markers = [m.span() for m in _MARKER.finditer(text)]
    return [f for f in found if not any(s < f.end and f.start < e for s, e in markers)]


def _may_hold_secret(text: str, lowered: str, present: AbstractSet[str]) -> bool:
    """False when no shape can match anywhere in ``text``: a search only where the shape's
    literal prefix occurs (``present``: the prefixes the table's pass found in ``lowered``; a
    prefix found in ``text`` is in ``lowered`` too). The common case, text with nothing to
    redact (a source file, a message), skips the per-match checks."""
    for gate, prefix, rx in _CASED_GATED:  # a hot path: loops, no generators
        if (gate in present or not gate) and prefix in text and rx.search(text):
            return True
    for gate, prefix, rx in _LOWER_GATED:
        if (gate in present or not gate) and prefix in lowered and rx.search(lowered):
            return True
    return False


def redact(text: str, *, keep_lines: bool = False) -> str:
    """``text`` with private blocks replaced by ``[REDACTED]``, secrets by ``[REDACTED:kind]``;
    with ``keep_lines`` each marker is followed by the line breaks of what it replaced, so a
    source file keeps its line numbers.

    Idempotent: a shape can qualify only once its neighbour became a marker (``AKIA...`` glued
    to another secret, a quoted value that now reads differently), so every line that received
    a marker is scanned again until nothing is found. Shapes that span lines (private blocks,
    key blocks) cannot be formed by a marker, and every finding holds text that is not a
    marker, so each round shortens what is left.
    """
    findings = find_secrets(text)
    while findings:
        text, markers = _replace(text, findings, keep_lines)
        findings = _rescan_lines(text, markers)
    return text


def _replace(
    text: str, findings: list[Finding], keep_lines: bool = False
) -> tuple[str, list[tuple[int, int]]]:
    """The text with each finding replaced by its marker, and where the markers now are."""
    parts: list[str] = []
    markers: list[tuple[int, int]] = []
    cursor = 0
    length = 0
    for found in findings:
        kept = text[cursor : found.start]
        marker = PRIVATE_MARKER if found.kind == PRIVATE_KIND else f"[REDACTED:{found.kind}]"
        breaks = "\n" * text.count("\n", found.start, found.end) if keep_lines else ""
        parts += (kept, marker, breaks)
        length += len(kept)
        markers.append((length, length + len(marker)))
        length += len(marker) + len(breaks)
        cursor = found.end
    parts.append(text[cursor:])
    return "".join(parts), markers


def _rescan_lines(text: str, markers: list[tuple[int, int]]) -> list[Finding]:
    """Scan again the lines that hold a marker (close ones together, to save calls)."""
    found: list[Finding] = []
    around = _RESCAN_LINES if _YAML_KIND.search(text) else 0
    for start, end in _line_ranges(text, markers, around):
        found += (
            Finding(f.kind, f.start + start, f.end + start) for f in find_secrets(text[start:end])
        )
    return found


def _line_ranges(
    text: str, markers: list[tuple[int, int]], around: int = 0
) -> Iterator[tuple[int, int]]:
    range_start, range_end = -1, -1
    for start, end in markers:
        if start <= range_end:
            continue  # already inside the current range
        line_start, line_end = _lines_around(text, start, end, around)
        if range_end >= 0 and line_start - range_end <= _RESCAN_GAP:
            range_end = line_end
            continue
        if range_end >= 0:
            yield range_start, range_end
        range_start, range_end = line_start, line_end
    if range_end >= 0:
        yield range_start, range_end


def _lines_around(text: str, start: int, end: int, around: int) -> tuple[int, int]:
    """The span of the lines of ``text[start:end]`` and ``around`` lines either side."""
    first = text.rfind("\n", 0, start) + 1
    last = text.find("\n", end)
    last = len(text) if last == -1 else last
    for _ in range(around):
        first = text.rfind("\n", 0, first - 1) + 1 if first > 0 else 0
        last = text.find("\n", last + 1) if last < len(text) else last
        last = len(text) if last == -1 else last
    return first, last


def redact_value(value: _T) -> _T:
    """A copy of a JSON value with every string value redacted (mapping keys are kept).

    A string stored under a key that names a secret (``password``, ``api_key``, ``token``...)
    is replaced whole unless it is empty, a placeholder or already redacted.
    """
    return cast(_T, _redact_any(value, None))


def redact_known(value: _T, source: str, found: list[Finding]) -> _T:
    """``redact_value(value)`` for facts taken from ``source`` (``found``: its findings),
    then every secret of ``source`` still in a string of ``value`` replaced by its marker,
    and so is the start of one left at a string's end: a summary or a signature cut at a
    length limit keeps a piece of a secret that no shape matches any more."""
    known = sorted(
        {(source[f.start : f.end], f.kind) for f in found if f.end - f.start >= _PIECE},
        key=lambda item: -len(item[0]),
    )
    return cast(_T, _scrub(redact_value(value), known))


_PIECE = 8  # the shortest piece of a known secret that is scrubbed


def _scrub(value: object, known: list[tuple[str, str]]) -> object:
    if isinstance(value, str):
        for secret, kind in known:
            marker = PRIVATE_MARKER if kind == PRIVATE_KIND else f"[REDACTED:{kind}]"
            value = value.replace(secret, marker)
            body = value.rstrip("…. ")
            for size in range(min(len(secret), len(body)), _PIECE - 1, -1):
                if body.endswith(secret[:size]):
                    value = body[: len(body) - size] + marker + value[len(body) :]
                    break
        return value
    if isinstance(value, dict):
        return {k: _scrub(v, known) for k, v in value.items()}
    if isinstance(value, list):
        return [_scrub(item, known) for item in value]
    if isinstance(value, tuple):
        return tuple(_scrub(item, known) for item in value)
    return value


def truncate_field(text: str, limit: int = MAX_FIELD_CHARS, marker: str = TRUNCATION_MARKER) -> str:
    """``text`` cut so that, with ``marker`` appended, it is at most ``limit`` characters."""
    if len(text) <= limit:
        return text
    if len(marker) >= limit:
        return marker[:limit]
    return text[: limit - len(marker)] + marker


def check_field_length(name: str, text: str, limit: int = MAX_FIELD_CHARS) -> None:
    """Raise ``LimitError`` when ``text`` (the field ``name``) is longer than ``limit``."""
    if len(text) > limit:
        raise LimitError(
            f"text field is {len(text):,} characters long; the limit is {limit:,}",
            json_path=name,
            hint="shorten it or split it into several records",
        )


def _private_spans(text: str) -> Iterator[Finding]:
    if "<" not in text:
        return
    depth = 0
    start = 0
    for tag in _PRIVATE_TAG.finditer(text):
        if not tag.group(1):
            if depth == 0:
                start = tag.start()
            depth += 1
        elif depth > 0:
            depth -= 1
            if depth == 0:
                yield Finding(PRIVATE_KIND, start, tag.end())
    if depth > 0:
        yield Finding(PRIVATE_KIND, start, len(text))


def _pem_spans(text: str, present: AbstractSet[str]) -> Iterator[Finding]:
    """Private key blocks, from BEGIN to the matching END line, or to the end of the text."""
    if not _open(_PEM_BEGIN, present):
        return
    pos = 0
    while (begin := _PEM_BEGIN.search(text, pos)) is not None:
        end = _PEM_END.search(text, begin.end())
        stop = len(text) if end is None else end.end()
        yield Finding("private_key", begin.start(), stop)
        pos = stop


def _secret_spans(text: str, lowered: str, present: AbstractSet[str]) -> Iterator[Finding]:
    """Every shape's findings; a shape whose prefix the table's pass did not find is not run
    (``present``: what it found in ``lowered``)."""
    yield from _pem_spans(text, present)
    for rule in _RULES:
        yield from _rule_spans(rule, text, lowered, present)
    heads = [head for head in assignments.HEADS if _open(head[1], present)]
    yield from (Finding(*span) for span in assignments.spans(text, lowered, heads))


def _open(shape: Lazy, present: AbstractSet[str]) -> bool:
    """Whether ``shape`` may match: its prefix's gate is in ``present``, or it has none."""
    gate = _GATE_OF[shape]
    return not gate or gate in present


def _rule_spans(
    rule: _Rule, text: str, lowered: str, present: AbstractSet[str]
) -> Iterator[Finding]:
    subject = lowered if rule.lower else text
    for regex in rule.regexes:
        if not _open(regex, present):
            continue
        pos = 0
        while (match := regex.search(subject, pos)) is not None:
            start, end = match.span(rule.group)
            if rule.boundary and _after_word(text, match.start()):
                pos = match.start() + 1  # a shape may still start inside the rejected one
            elif start < end and (rule.check is None or rule.check(text[start:end])):
                yield Finding(rule.kind, start, end)
                pos = max(match.end(), match.start() + 1)
            else:
                pos = match.start() + 1


def _merge(findings: list[Finding]) -> list[Finding]:
    """Union overlapping spans; a merged span takes the kind of highest priority."""
    if not findings:
        return []
    last_rank = len(_PRIORITY)
    ordered = sorted((f.start, _PRIORITY.get(f.kind, last_rank), f.end, f.kind) for f in findings)
    merged: list[Finding] = []
    start, rank, end, kind = ordered[0]
    for next_start, next_rank, next_end, next_kind in ordered[1:]:
        if next_start < end:
            end = max(end, next_end)
            if next_rank < rank:
                rank, kind = next_rank, next_kind
        else:
            merged.append(Finding(kind, start, end))
            start, rank, end, kind = next_start, next_rank, next_end, next_kind
    merged.append(Finding(kind, start, end))
    return merged


def _redact_any(value: object, key: str | None) -> object:
    if isinstance(value, str):
        kind = secret_key_kind(key) if key is not None else None
        if kind is not None and assignments.is_secret_value(value):
            return f"[REDACTED:{kind}]"
        return redact(value)
    if isinstance(value, dict):
        return {k: _redact_any(v, k if isinstance(k, str) else None) for k, v in value.items()}
    if isinstance(value, list):
        return [_redact_any(item, None) for item in value]
    if isinstance(value, tuple):
        return tuple(_redact_any(item, None) for item in value)
    return value
