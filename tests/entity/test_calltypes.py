"""Which Java overloads can take a call's arguments (``calltypes.accepts``)."""

from __future__ import annotations

import pytest

from planning_memory.entity.calltypes import accepts, parameters


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
