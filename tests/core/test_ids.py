"""Tests for planning_memory.core.ids: ``<prefix>_<ULID>`` format, order and uniqueness."""

from __future__ import annotations

import time

import pytest

from planning_memory.core import ids
from planning_memory.errors import InputError, UnsafePathError

CROCKFORD = set("0123456789ABCDEFGHJKMNPQRSTVWXYZ")


@pytest.mark.parametrize("prefix", sorted(ids.PREFIXES))
def test_new_id_has_prefix_and_26_crockford_characters(prefix: str) -> None:
    value = ids.new_id(prefix)
    head, _, tail = value.partition("_")
    assert head == prefix
    assert len(tail) == 26
    assert set(tail) <= CROCKFORD
    assert ids.ULID_RE.match(tail)
    assert ids.check_id(value) == value


def test_unknown_prefix_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown id prefix"):
        ids.new_id("foo")


def test_ulid_encodes_the_timestamp_in_its_first_ten_characters() -> None:
    assert ids.ulid(0).startswith("0000000000")
    # 2024-01-20T15:00:00Z in milliseconds
    millis = 1_705_762_800_000
    head = ids.ulid(millis)[:10]
    decoded = 0
    for ch in head:
        decoded = decoded * 32 + "0123456789ABCDEFGHJKMNPQRSTVWXYZ".index(ch)
    assert decoded == millis


def test_ids_sort_by_time() -> None:
    earlier = ids.new_id("pat", now_ms=1_700_000_000_000)
    later = ids.new_id("pat", now_ms=1_700_000_000_001)
    much_later = ids.new_id("pat", now_ms=1_800_000_000_000)
    assert earlier < later < much_later


def test_ids_within_one_millisecond_are_strictly_increasing() -> None:
    values = [ids.ulid(1_700_000_000_000) for _ in range(1000)]
    assert values == sorted(values)
    assert len(set(values)) == len(values)


def test_100k_ids_are_unique_and_generated_in_sorted_order() -> None:
    start = time.perf_counter()
    values = [ids.new_id("lrn") for _ in range(100_000)]
    elapsed = time.perf_counter() - start
    assert len(set(values)) == 100_000
    assert values == sorted(values)
    print(f"\n100k ids in {elapsed:.3f} s")


@pytest.mark.parametrize("good", ["pat_001", "learn_001", "mis_ABCdef123", "ses_" + "A" * 64])
def test_check_id_accepts_import_ids(good: str) -> None:
    assert ids.check_id(good) == good


@pytest.mark.parametrize(
    "bad",
    [
        "",
        "pat",
        "pat_",
        "p_001",
        "PAT_001",
        "pat_../x",
        "../pat_001",
        "pat_001/..",
        "/etc/passwd",
        "pat_0 1",
        "pat_001.json",
        "pat_001\n",
        "pat_" + "A" * 65,
        "toolongprefix_001",
        "pat_ü",
    ],
)
def test_check_id_refuses_unsafe_or_malformed_ids(bad: str) -> None:
    with pytest.raises(UnsafePathError) as info:
        ids.check_id(bad)
    assert isinstance(info.value, InputError)
    assert info.value.record_id == bad
