"""The table of record files: a new stat reads only the files whose stat moved."""

from __future__ import annotations

import pytest

from planning_memory.views.table import Reader, Row, Table


def _row(file: str, mtime: int, size: int, tag: str = "") -> Row:
    return Row(mtime, size, f"d-{file}{tag}", file.split("/")[1], "pattern", True, False)


def _reader(log: list[str], tag: str = "") -> Reader:
    def read(file: str, mtime: int, size: int) -> Row:
        log.append(file)
        return _row(file, mtime, size, tag)

    return read


def _table(files: list[str]) -> Table:
    table, _ = Table.empty().updated(files, [10] * len(files), [5] * len(files), _reader([]))
    return table


def test_an_unchanged_stat_reads_nothing() -> None:
    table = _table(["a/1", "a/2"])
    assert table.unchanged(["a/1", "a/2"], [10, 10], [5, 5])
    assert not table.unchanged(["a/1", "a/2"], [10, 0], [5, 5])  # too recent to trust
    log: list[str] = []
    new, changed = table.updated(["a/1", "a/2"], [10, 10], [5, 5], _reader(log))
    assert (new, changed, log) == (table, [], [])


def test_added_moved_and_gone_files() -> None:
    table = _table(["a/1", "a/2", "a/3"])
    log: list[str] = []
    new, changed = table.updated(
        ["a/0", "a/1", "a/3"],
        [10, 11, 10],
        [5, 5, 5],
        _reader(log, "+"),
    )
    assert log == ["a/0", "a/1"]
    assert new.files == ["a/0", "a/1", "a/3"] and new.digest[2] == "d-a/3"
    assert new.digest[:2] == ["d-a/0+", "d-a/1+"] and new.mtime == [10, 11, 10]
    assert _row("a/0", 10, 5, "+") in changed and _row("a/2", 10, 5) in changed
    assert table.files == ["a/1", "a/2", "a/3"]  # the old table is left as it was


def test_a_file_read_again_with_the_same_content_is_no_change() -> None:
    table = _table(["a/1"])
    log: list[str] = []
    new, changed = table.updated(["a/1"], [0], [5], _reader(log))
    assert log == ["a/1"] and changed == [] and new.mtime == [0]


def test_json_round_trip() -> None:
    table = _table(["a/1", "b/2"])
    assert Table.from_json(table.to_json()) == table
    with pytest.raises(ValueError, match="not a table"):
        Table.from_json(table.to_json() | {"size": [1]})
