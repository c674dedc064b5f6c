"""The table of record files: a new stat reads only the files whose stat moved."""

from __future__ import annotations

import pytest

from planning_memory.views.table import Reader, Row, Stats, Table


def _row(file: str, ctime: int, size: int, tag: str = "") -> Row:
    return Row(ctime, size, f"d-{file}{tag}", file.split("/")[1], "pattern", True, False)


def _reader(log: list[str], tag: str = "") -> Reader:
    def read(file: str, ctime: int, size: int) -> Row:
        log.append(file)
        return _row(file, ctime, size, tag)

    return read


def _stats(files: list[str], ctimes: list[int], sizes: list[int]) -> Stats:
    return files, ctimes, sizes


def _table(files: list[str]) -> Table:
    n = len(files)
    table, _, _ = Table.empty().updated(_stats(files, [10] * n, [5] * n), _reader([]))
    return table


def test_an_unchanged_stat_reads_nothing() -> None:
    table = _table(["a/1", "a/2"])
    assert table.unchanged(_stats(["a/1", "a/2"], [10, 10], [5, 5]))
    assert not table.unchanged(_stats(["a/1", "a/2"], [10, 0], [5, 5]))  # too recent to trust
    log: list[str] = []
    new, changed, touched = table.updated(_stats(["a/1", "a/2"], [10, 10], [5, 5]), _reader(log))
    assert (new, changed, touched, log) == (table, [], [], [])


def test_added_moved_and_gone_files() -> None:
    table = _table(["a/1", "a/2", "a/3"])
    log: list[str] = []
    new, changed, touched = table.updated(
        _stats(["a/0", "a/1", "a/3"], [10, 11, 10], [5, 5, 5]), _reader(log, "+")
    )
    assert log == ["a/0", "a/1"] and touched == ["a/0", "a/1", "a/2"]
    assert new.files == ["a/0", "a/1", "a/3"] and new.digest[2] == "d-a/3"
    assert new.digest[:2] == ["d-a/0+", "d-a/1+"] and new.ctime == [10, 11, 10]
    assert _row("a/0", 10, 5, "+") in changed and _row("a/2", 10, 5) in changed
    assert table.files == ["a/1", "a/2", "a/3"]  # the old table is left as it was


def test_a_file_read_again_with_the_same_content_is_no_change() -> None:
    table = _table(["a/1"])
    log: list[str] = []
    new, changed, touched = table.updated(_stats(["a/1"], [0], [5]), _reader(log))
    assert log == touched == ["a/1"] and changed == [] and new.ctime == [0]


def test_the_span_of_a_folder() -> None:
    table = _table(["learnings/a", "mistakes/b", "mistakes/c", "patterns/d"])
    assert table.files[table.span("mistakes")] == ["mistakes/b", "mistakes/c"]
    assert table.files[table.span("patterns")] == ["patterns/d"]
    assert table.files[table.span("other")] == []


def test_patched_rows() -> None:
    table = _table(["a/1", "a/3"])
    row = list(_row("a/2", 7, 4))
    new = table.patched({"a/2": row, "a/3": None, "a/1": list(_row("a/1", 8, 4))})
    assert new.files == ["a/1", "a/2"] and new.ctime == [8, 7]
    assert new.row_of("a/2") == row and new.row_of("a/3") is None
    assert table.files == ["a/1", "a/3"]  # the old table is left as it was
    with pytest.raises(ValueError, match="not a row"):
        table.patched({"a/1": [1, 2]})


def test_json_round_trip() -> None:
    table = _table(["a/1", "b/2"])
    assert Table.from_json(table.to_json()) == table
    with pytest.raises(ValueError, match="not a table"):
        Table.from_json(table.to_json() | {"size": [1]})
