"""Tests for planning_memory.core.codec: canonical bytes and the strict, bounded reader."""

from __future__ import annotations

import hashlib
import json
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from planning_memory.core import codec
from planning_memory.errors import DecodeError, InputError, LimitError

# -- canonical form --------------------------------------------------------------------------


def test_dumps_sorts_keys_indents_two_and_ends_with_newline() -> None:
    text = codec.dumps({"b": 1, "a": {"d": [1, 2], "c": "x"}})
    expected = '{\n  "a": {\n    "c": "x",\n    "d": [\n      1,\n      2\n    ]\n  },\n'
    assert text == expected + '  "b": 1\n}\n'


def test_dumps_keeps_unicode_unescaped_and_uses_lf_only() -> None:
    data = codec.dump_bytes({"title": "canción — 日本"})
    assert "canción — 日本".encode() in data
    assert b"\r" not in data
    assert data.endswith(b"}\n") and not data.endswith(b"\n\n")


def test_key_order_of_the_input_does_not_change_the_bytes() -> None:
    one = {"z": 1, "a": 2, "m": {"y": 1, "b": 2}}
    two = {"m": {"b": 2, "y": 1}, "a": 2, "z": 1}
    assert codec.dump_bytes(one) == codec.dump_bytes(two)


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_dumps_refuses_nan_and_infinity(bad: float) -> None:
    with pytest.raises(ValueError):
        codec.dumps({"x": bad})


def python_bytes(value: Any) -> bytes:
    """The canonical form by definition: ``json``'s indenting encoder."""
    text = json.dumps(value, sort_keys=True, indent=2, ensure_ascii=False, allow_nan=False)
    return (text + "\n").encode("utf-8")


any_json = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.text()
    | st.floats(allow_nan=False, allow_infinity=False),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=30,
)


@settings(max_examples=1000, deadline=None)
@given(any_json)
def test_dump_bytes_are_the_bytes_of_json_dumps(value: Any) -> None:
    """orjson writes them where it writes the same bytes; ``json`` the rest."""
    try:
        expected = python_bytes(value)
    except UnicodeEncodeError:  # a lone surrogate: refused, one error naming it
        with pytest.raises(DecodeError):
            codec.dump_bytes(value)
        return
    assert codec.dump_bytes(value) == expected


@pytest.mark.parametrize(
    "value",
    [
        {"cover": [1e-5, -3.5e-5, 1e-7, 5e-324, 1e-4, 1e16, 87.5, 100.0, -0.0]},
        {"signature": "(eps=1e-7, tiny=0.00001)"},  # orjson's float shapes inside a string
        {"lines": 2**70, "small": -(2**63)},  # past 64 bits: orjson refuses it
        {"text": '\u2028\u2029\x7f\x00\x1f"\\\t\n é 漢 😀'},
        {"é": 1, "e": 2, "😀": 3, "\uffff": 4, "": 5},
        {1: "a key that is not a string"},
        [[], {}, [{}], {"a": []}],
    ],
)
def test_dump_bytes_edge_values(value: Any) -> None:
    assert codec.dump_bytes(value) == python_bytes(value)


def test_a_lone_surrogate_is_refused_with_one_error_naming_it() -> None:
    with pytest.raises(DecodeError, match="surrogate"):
        codec.dump_bytes({"path": "caf\udce9.py"})


@pytest.mark.parametrize("value", [{"a": [1, 2.5, "x"]}, {"big": 2**70}, {"s": "caf\udce9"}])
def test_compact_bytes_read_back_to_the_value(value: Any) -> None:
    data = codec.compact_bytes(value)
    assert b"\n" not in data
    assert codec.loads_lenient(data) == value


def test_loads_lenient_reads_what_orjson_refuses() -> None:
    assert codec.loads_lenient(b'{"big": 1180591620717411303424}') == {"big": 2**70}
    assert math.isnan(codec.loads_lenient(b'{"n": NaN}')["n"])
    with pytest.raises(ValueError):
        codec.loads_lenient(b'{"a": ')


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**53), max_value=2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=150, deadline=None)
@given(json_values)
def test_round_trip_is_identity_and_canonical_is_a_fixed_point(value: Any) -> None:
    data = codec.dump_bytes(value)
    back = codec.loads(data)
    assert back == value
    assert codec.dump_bytes(back) == data


@settings(max_examples=150, deadline=None)
@given(json_values)
def test_bytes_read_again_decode_to_the_same_value_and_type(value: Any) -> None:
    """``loads_known``: the second read of the same bytes (decoded without the checks)
    gives what the first gave, float for float and int for int."""
    data = codec.dump_bytes(value)
    key = hashlib.sha256(data).hexdigest()
    first, again = codec.loads_known(data, key), codec.loads_known(data, key)
    assert first == again == value
    assert codec.dump_bytes(again) == data and repr(again) == repr(first)


def test_bytes_that_fail_a_check_fail_it_at_every_read() -> None:
    for bad in (b'{"a": 1, "a": 2}', b'{"a": NaN}', b"<<<<<<< HEAD\n{}", b"\xef\xbb\xbf{}"):
        key = hashlib.sha256(bad).hexdigest()
        for _ in range(2):
            with pytest.raises(InputError):
                codec.loads_known(bad, key)


# -- the strict reader -----------------------------------------------------------------------


def test_loads_accepts_bytes_and_str() -> None:
    assert codec.loads(b'{"a": [1, 2]}') == {"a": [1, 2]}
    assert codec.loads('{"a": null}') == {"a": None}


def test_invalid_json_reports_line_and_column_and_path() -> None:
    with pytest.raises(DecodeError) as info:
        codec.loads(b'{\n  "a": 1,\n  "b": }\n', path="x/pat_1.json")
    err = info.value
    assert (err.line, err.column) == (3, 8)
    assert err.path == "x/pat_1.json"
    assert err.one_line().startswith("x/pat_1.json:3:8: invalid JSON")


def test_truncated_json_is_a_decode_error() -> None:
    with pytest.raises(DecodeError, match="invalid JSON") as info:
        codec.loads(b'{"a": [1, 2')
    assert info.value.line == 1


def test_empty_input_is_a_decode_error() -> None:
    with pytest.raises(DecodeError):
        codec.loads(b"")


def test_bom_is_refused_at_line_1_column_1() -> None:
    with pytest.raises(DecodeError, match="byte order mark") as info:
        codec.loads(b'\xef\xbb\xbf{"a": 1}', path="f.json")
    assert (info.value.line, info.value.column) == (1, 1)
    assert info.value.hint


def test_invalid_utf8_names_the_byte_and_position() -> None:
    with pytest.raises(DecodeError, match="0xff") as info:
        codec.loads(b'{\n  "a": "\xff"\n}')
    assert (info.value.line, info.value.column) == (2, 9)


def test_nul_byte_is_refused_with_position() -> None:
    with pytest.raises(DecodeError, match="NUL") as info:
        codec.loads(b'{"a":\n "b\x00"}')
    assert (info.value.line, info.value.column) == (2, 4)


def test_escaped_nul_inside_a_string_is_plain_json() -> None:
    assert codec.loads(b'{"a": "\\u0000"}') == {"a": "\x00"}


def test_duplicate_keys_are_refused_and_named() -> None:
    with pytest.raises(DecodeError, match="duplicate key 'id'"):
        codec.loads(b'{"id": "pat_1", "title": "t", "id": "pat_2"}')


def test_duplicate_keys_in_nested_objects_are_refused() -> None:
    with pytest.raises(DecodeError, match="duplicate key 'x'"):
        codec.loads(b'{"a": [{"x": 1, "x": 1}]}')


def test_same_key_in_sibling_objects_is_fine() -> None:
    assert codec.loads(b'[{"x": 1}, {"x": 2}]') == [{"x": 1}, {"x": 2}]


@pytest.mark.parametrize("word", ["NaN", "Infinity", "-Infinity"])
def test_nan_and_infinity_are_refused(word: str) -> None:
    with pytest.raises(DecodeError, match="not valid JSON"):
        codec.loads(f'{{"confidence": {word}}}'.encode())


@pytest.mark.parametrize(
    "text",
    [
        '{\n<<<<<<< HEAD\n  "a": 1\n=======\n  "a": 2\n>>>>>>> branch\n}\n',
        '{\n  "a": 1\n=======\n}\n',
        '>>>>>>> theirs\n{"a": 1}\n',
    ],
)
def test_git_conflict_markers_are_refused_with_their_line(text: str) -> None:
    with pytest.raises(DecodeError, match="conflict markers") as info:
        codec.loads(text.encode())
    expected_line = next(
        i for i, line in enumerate(text.splitlines(), 1) if line[:7] in ("<" * 7, "=" * 7, ">" * 7)
    )
    assert (info.value.line, info.value.column) == (expected_line, 1)


def test_marker_like_text_inside_a_string_value_is_fine() -> None:
    assert codec.loads(b'{"a": "<<<<<<< not at line start"}') == {"a": "<<<<<<< not at line start"}


@pytest.mark.parametrize("opener", ["[", '{"a":'])
def test_runaway_nesting_is_a_limit_error(opener: str) -> None:
    closer = "]" if opener == "[" else "}"
    text = opener * 100_000 + "1" + closer * 100_000
    with pytest.raises(LimitError, match="nesting deeper than"):
        codec.loads(text.encode())


def test_nesting_just_over_the_limit_is_refused_and_at_the_limit_accepted() -> None:
    at_limit = "[" * codec.MAX_DEPTH + "]" * codec.MAX_DEPTH
    assert codec.depth(codec.loads(at_limit)) == codec.MAX_DEPTH
    over = "[" * (codec.MAX_DEPTH + 1) + "]" * (codec.MAX_DEPTH + 1)
    with pytest.raises(LimitError):
        codec.loads(over)


def test_size_limit_is_checked_before_parsing() -> None:
    with pytest.raises(LimitError, match="over the 10-byte limit"):
        codec.loads(b'{"a": "0123456789"}', max_bytes=10)
    with pytest.raises(LimitError):
        codec.loads('{"a": "0123456789"}', max_bytes=10)


def test_every_reader_error_is_an_input_error() -> None:
    for bad in (b"", b"\xff", b"\xef\xbb\xbf{}", b'{"a":1,"a":2}', b"[NaN]", b"\x00"):
        with pytest.raises(InputError):
            codec.loads(bad)


def test_depth_counts_containers() -> None:
    assert codec.depth(1) == 0
    assert codec.depth([]) == 1
    assert codec.depth({"a": [{"b": []}]}) == 4
    assert codec.depth([[[[[]]]]], stop=2) == 2


def test_loads_matches_json_for_plain_documents() -> None:
    doc = '{"a": [1, 2.5, "x", true, false, null], "b": {"c": "é"}}'
    assert codec.loads(doc.encode()) == json.loads(doc)


@pytest.mark.parametrize("number", ["1e400", "-1e400", "1.5E+999"])
def test_numbers_that_overflow_to_infinity_are_refused(number: str) -> None:
    with pytest.raises(DecodeError, match="out of range"):
        codec.loads(f'{{"confidence": {number}}}'.encode())


def test_large_finite_numbers_are_fine() -> None:
    assert codec.loads(b"[1.5e300, -2e-300, 123456789012345678901234567890]") == [
        1.5e300,
        -2e-300,
        123456789012345678901234567890,
    ]


def test_an_integer_too_long_for_python_is_a_decode_error_not_a_crash() -> None:
    with pytest.raises(DecodeError, match="5,000 digits is too large"):
        codec.loads(b"[" + b"9" * 5000 + b"]")
    assert codec.loads(b"[" + b"9" * codec.MAX_DIGITS + b"]")[0] > 0


def test_an_unpaired_surrogate_escape_is_refused() -> None:
    with pytest.raises(DecodeError, match=r"unpaired surrogate \\ud800"):
        codec.loads(b'{"title": "a\\ud800b"}')
    with pytest.raises(DecodeError, match="unpaired surrogate"):
        codec.loads(b'{"\\udfff": 1}')


def test_text_utf8_cannot_hold_is_refused_with_its_json_path_not_a_crash() -> None:
    """What Python makes of an argument that was not UTF-8 (``\\udcff``) never reaches a
    write as a UnicodeEncodeError: the error names where it is."""
    value = {"body": {"what": "ok"}, "tags": ["fine", "bad \udcff"]}
    with pytest.raises(DecodeError, match=r"unpaired surrogate \\udcff") as caught:
        codec.dump_bytes(value)
    assert caught.value.json_path == "$.tags[1]"
    assert caught.value.hint is not None and "UTF-8" in caught.value.hint
    codec.check_encodable({"title": "\U0001f600 é"})  # paired and plain text are fine


def test_a_paired_surrogate_escape_is_a_normal_character() -> None:
    value = codec.loads(b'{"title": "\\ud83d\\ude00", "path": "C:\\\\ud800"}')
    assert value == {"title": "\U0001f600", "path": "C:\\ud800"}
    assert codec.loads(codec.dump_bytes(value)) == value


def test_a_duplicate_key_message_stays_short() -> None:
    key = "k" * 10_000
    with pytest.raises(DecodeError) as info:
        codec.loads(f'{{"{key}": 1, "{key}": 2}}'.encode())
    assert len(info.value.one_line()) < 100
