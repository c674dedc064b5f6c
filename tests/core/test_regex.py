"""Lazily compiled regexes, and the literal text a regex's matches start with."""

from __future__ import annotations

import re
from pathlib import Path

from planning_memory.core import privacy, secret_table
from planning_memory.core.regex import Lazy, literal_prefix

FIXTURES = Path(__file__).parents[1] / "fixtures" / "secrets"


def _parsed_prefix(pattern: str, flags: int, *, lowered: bool) -> str:
    """The leading literal as Python's own regex parser sees it (the reference)."""
    from re import _parser  # type: ignore[attr-defined]

    caseless = bool(flags & re.IGNORECASE) or pattern.startswith("(?i)")
    if caseless and not lowered:
        return ""
    found = []
    for op, arg in _parser.parse(pattern.removeprefix("(?i)"), flags):
        if op is not _parser.LITERAL:
            break
        found.append(chr(arg))
    text = "".join(found)
    return text.lower() if lowered else text


def test_lazy_compiles_on_first_use_and_answers_as_re() -> None:
    lazy = Lazy(r"a(b+)", re.IGNORECASE)
    assert lazy._compiled is None
    assert lazy.search("xABBy").group(1) == "BB"  # type: ignore[union-attr]
    assert lazy._compiled is lazy.compiled()
    assert lazy.match("abb x", 0, 2).group(0) == "ab"  # type: ignore[union-attr]
    assert [m.span() for m in lazy.finditer("ab ab")] == [(0, 2), (3, 5)]
    assert lazy.findall("ab abb") == ["b", "bb"]


def test_the_privacy_shapes_prefixes_are_the_parsers() -> None:
    for shapes, lowered in ((privacy._CASED_SHAPES, False), (privacy._LOWER_SHAPES, True)):
        for rx in shapes:
            expected = _parsed_prefix(rx.pattern, rx.flags, lowered=lowered)
            assert literal_prefix(rx.pattern, rx.flags, lowered=lowered) == expected, rx


def test_every_match_of_a_rule_starts_with_its_prefix() -> None:
    corpus = (FIXTURES / "kinds.txt").read_text("utf-8") + (FIXTURES / "secrets.txt").read_text(
        "utf-8"
    )
    checked = 0
    for rule in secret_table.RULES:
        for pattern in filter(None, (rule.pattern, rule.anchor)):
            ours = literal_prefix(pattern)
            for match in re.finditer(pattern, corpus, re.MULTILINE):
                assert corpus.startswith(ours, match.start()), pattern
                checked += bool(ours)
    assert checked > 50


def test_literal_prefix_stops_where_the_text_may_vary() -> None:
    assert literal_prefix(r"ab+c") == "ab"  # at least one b
    assert literal_prefix(r"ab?c") == "a"
    assert literal_prefix(r"ab*") == "a"
    assert literal_prefix(r"ab{2}") == "a"
    assert literal_prefix(r"a\.b\d") == "a.b"
    assert literal_prefix(r"a|b") == ""  # no common start
    assert literal_prefix(r"a(?:b|c)") == "a"
    assert literal_prefix(r"a[|]b") == "a"
    assert literal_prefix(r"a\|b") == "a"
    assert literal_prefix(r"[ab]c") == ""
    assert literal_prefix(r"(?i)Ab") == ""
    assert literal_prefix(r"(?i)Ab", lowered=True) == "ab"
    assert literal_prefix(r"ab", re.VERBOSE) == ""
