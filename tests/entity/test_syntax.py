"""The extractors' shared plumbing where it takes shortcuts for speed: call texts sliced from
the decoded source, the first statement of a body found without listing them all, a file read
with a buffer of its own size. Each shortcut must give what the plain way gives."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from planning_memory.entity import parsefile
from planning_memory.entity.languages import javascript, python
from planning_memory.entity.syntax import Scope, callee, innermost, nest, node_texts, squash, text

ASCII = b"""import os
def run(items):
    os.path.join("a", "b")
    return [str(i).strip() for i in sorted(items, key=len)]
"""
# non-ASCII before and inside the calls: byte offsets are no longer character offsets
UNICODE = "# caf\u00e9 \u2603\ndef f():\n    caf\u00e9('\u00fc')\n    o.m\u00e9thode(1)\n".encode()
BROKEN = b"def f():\n    g(b'\\xff')\n    h(\xff)\n"  # invalid UTF-8 inside a call


@pytest.mark.parametrize("source", [ASCII, UNICODE, BROKEN])
def test_node_texts_equal_each_nodes_text(source: bytes) -> None:
    _root, caps = python.grammar().captures(source)
    nodes = caps["call"]
    assert nodes
    assert node_texts(nodes, source) == [text(n) for n in nodes]


def test_unicode_call_texts_are_whole_names() -> None:
    functions = python.extract(UNICODE)["functions"]
    assert functions[0]["calls"] == ["caf\u00e9", "o.m\u00e9thode"]


def test_javascript_calls_and_constructions_keep_their_text() -> None:
    source = "const \u00e9 = 1;\nexport function go() { api.fetch('\u00fc'); return new Map(); }\n"
    (go,) = javascript.extract_javascript(source.encode())["functions"]
    assert go["calls"] == ["api.fetch", "new Map"]


@pytest.mark.parametrize(
    ("body", "purpose"),
    [
        ('    """Doc."""\n    return 1\n', "Doc."),
        ('    # a comment first\n    # another\n    """After comments."""\n', "After comments."),
        ("    # only comments\n    pass\n", None),
        ('    x = 1\n    """Not first."""\n', None),
        ("    return f'{1}'\n", None),
    ],
)
def test_docstring_is_the_first_statement_after_comments(body: str, purpose: str | None) -> None:
    (function,) = python.extract(f"def f():\n{body}".encode())["functions"]
    assert function["purpose"] == purpose


def test_empty_and_comment_only_modules_have_no_docstring() -> None:
    assert python.extract(b"")["purpose"] is None
    assert python.extract(b"# just a note\n")["purpose"] == "just a note"


@pytest.mark.parametrize("size", [0, 1, 800, 65535, 65536, 200_000])
def test_read_source_returns_the_whole_file(tmp_path: Path, size: int) -> None:
    data = os.urandom(size)
    path = tmp_path / "f.py"
    path.write_bytes(data)
    assert parsefile.read_source(str(path), 1_000_000) == ("ok", data)
    assert parsefile.read_source(str(path), size) == ("ok", data)
    if size:
        assert parsefile.read_source(str(path), size - 1) == ("large", b"")


def test_callee_reduces_arguments_that_hold_calls() -> None:
    """A chained call's arguments become ``()`` also when they hold calls themselves, so
    the chain stays readable and short (``Jsoup.connect(origin().url()).get``)."""
    assert callee("Jsoup.connect(origin().redirect.url()).data(a, f(b(c))).get") == (
        "Jsoup.connect().data().get"
    )
    assert callee('TestTime::new(tz.zoned("x".parse()).later()).set') == "TestTime::new().set"


class _Node:
    """What ``Scope`` reads of a tree-sitter node: its byte span."""

    def __init__(self, start: int, end: int) -> None:
        self.start_byte, self.end_byte = start, end


def _nested_spans(cuts: list[int]) -> list[tuple[int, int]]:
    """Properly nested (or disjoint) spans drawn from the sorted ``cuts``, as parse trees
    make them."""
    spans, stack = [], []
    for i, cut in enumerate(cuts):
        if stack and (i % 3 == 0 or len(stack) > 3):
            spans.append((stack.pop(), cut))
        else:
            stack.append(cut)
    end = (cuts[-1] if cuts else 0) + 1
    spans += [(start, end + depth) for depth, start in enumerate(reversed(stack))]
    return spans


@given(
    cuts=st.lists(st.integers(0, 400), unique=True, max_size=24).map(sorted),
    kinds=st.lists(st.sampled_from(["function", "class", "method"]), min_size=24, max_size=24),
    positions=st.lists(st.integers(0, 420), max_size=40).map(sorted),
)
def test_innermost_is_the_smallest_enclosing_functions_scope(
    cuts: list[int], kinds: list[str], positions: list[int]
) -> None:
    """The shortcut for positions inside the scope of the one before gives what a search
    of every scope gives: the innermost scope holding the position, or the function
    around it when that scope is a class."""
    spans = _nested_spans(cuts)
    scopes = nest(
        [Scope(_Node(s, e), f"s{i}", kinds[i]) for i, (s, e) in enumerate(spans)]  # type: ignore[arg-type]
    )

    def expected(pos: int) -> Scope | None:
        holding = [s for s in scopes if s.start <= pos < s.end]
        holding.sort(key=lambda s: (s.start, -s.end))
        functions = [s for s in holding if s.is_function]
        return functions[-1] if functions else None

    assert innermost(scopes, positions) == [expected(p) for p in positions]


@given(
    st.text(st.characters(), max_size=40)
    | st.text(" \t\n\r\x0b\x0c\x1c\xa0\u2003ab(,)", max_size=40)
)
def test_squash_collapses_every_whitespace_run(value: str) -> None:
    """The shortcut for printable text without double spaces gives what the regular
    expression gives."""
    expected = re.sub(r"\s+", " ", value).strip()
    assert squash(value, 1000) == expected
