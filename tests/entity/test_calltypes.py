"""Which Java overloads can take a call's arguments (``calltypes.accepts``)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from planning_memory.entity.calltypes import accepts, parameters, split_arguments


@pytest.mark.parametrize(
    ("signature", "args", "expected"),
    [
        ("(Path path, String charsetName) -> Document", ("File", "null"), False),
        ("(File file, String charsetName) -> Document", ("File", "null"), True),
        ("(InputStream in, String charsetName) -> Document", ("GZIPInputStream", "_"), True),
        ("(Iterator<?> strings, String sep) -> String", ("Set", "String"), False),
        ("(Collection<?> strings, String sep) -> String", ("Set", "String"), True),
        ("(String[] strings, String sep) -> String", ("List", "String"), False),
        ("(List<String> strings) -> String", ("String[]",), False),
        ("(int index, Node... children)", ("int", "Node[]"), True),
        ("(int index, Node... children)", ("int", "Node", "Node"), True),
        ("(String... keyvals) -> Connection", ("String[]",), True),
        ("(Supplier<String> fallback)", ("->",), True),
        ("(String fallback)", ("->",), False),
    ],
)
def test_an_argument_of_a_known_type_passes_only_where_java_would_take_it(
    signature: str, args: tuple[str, ...], expected: bool
) -> None:
    params = parameters(signature)
    assert params is not None
    assert accepts(params, args) is expected


def _split_by_depth(call: str) -> tuple[str, tuple[str, ...] | None]:
    """The argument list matched by counting parentheses from the end: what
    ``split_arguments`` must give, shortcut or not."""
    if not call.endswith(")"):
        return call, None
    depth = 0
    for i in range(len(call) - 1, -1, -1):
        depth += {")": 1, "(": -1}.get(call[i], 0)
        if depth == 0:
            inner = call[i + 1 : -1]
            return call[:i], tuple(inner.split(",")) if inner else ()
    return call, None


@given(st.text("ab.(),_@<>[]-", max_size=30))
def test_split_arguments_matches_the_last_argument_list(call: str) -> None:
    assert split_arguments(call) == _split_by_depth(call)


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        ("a.b(String,_)", ("a.b", ("String", "_"))),
        ("f().g()", ("f().g", ())),
        ("x)", ("x)", None)),
        ("m(@A(x) T)", ("m", ("@A(x) T",))),
        ("cut short…", ("cut short…", None)),
    ],
)
def test_split_arguments_examples(call: str, expected: tuple[str, tuple[str, ...] | None]) -> None:
    assert split_arguments(call) == expected
