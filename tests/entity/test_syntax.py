"""The extractors' shared plumbing where it takes shortcuts for speed: call texts sliced from
the decoded source, the first statement of a body found without listing them all, a file read
with a buffer of its own size. Each shortcut must give what the plain way gives."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from planning_memory.entity import parsefile
from planning_memory.entity.languages import javascript, python
from planning_memory.entity.syntax import callee, node_texts, text

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
