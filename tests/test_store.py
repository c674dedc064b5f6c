"""Tests for planning_memory.store: round-trips, no-op rewrites, optimistic checks, safety."""

from __future__ import annotations

import multiprocessing
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from planning_memory.core import codec
from planning_memory.core.layout import Layout
from planning_memory.errors import (
    BrokenFileWarning,
    ConflictError,
    DecodeError,
    InputError,
    LimitError,
    LockError,
    NotFoundError,
    UnsafePathError,
    printable,
)
from planning_memory.store import (
    ABSENT,
    TEMP_SUFFIX,
    Store,
    digest,
    read_regular,
    valid_name,
)

RECORD: dict[str, Any] = {
    "id": "pat_001",
    "title": "Repository pattern",
    "tags": ["prisma", "typescript"],
    "nested": {"b": [1, 2, 3], "a": None, "ok": True, "ratio": 0.5},
    "text": "canción ✓ 日本",
}


@pytest.fixture
def layout(tmp_path: Path) -> Layout:
    return Layout.for_repo(tmp_path)


@pytest.fixture
def store(layout: Layout) -> Store:
    return Store(layout, lock_timeout=5)


def mode_of(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def target(layout: Layout, name: str = "pat_001") -> Path:
    return layout.record_path("pattern", name)


# -- round trips -----------------------------------------------------------------------------


def test_write_then_read_round_trips_and_is_canonical(store: Store, layout: Layout) -> None:
    path = target(layout)
    assert store.write_json(path, RECORD) is True
    assert store.read_json(path) == RECORD
    assert path.read_bytes() == codec.dump_bytes(RECORD)


def test_load_returns_the_digest_of_the_bytes_on_disk(store: Store, layout: Layout) -> None:
    path = target(layout)
    store.write_json(path, RECORD)
    loaded = store.load(path)
    assert loaded.value == RECORD
    assert loaded.digest == digest(path.read_bytes()) == store.current_digest(path)
    assert store.current_digest(layout.long_term / "nothing.json") == ABSENT


def test_write_text_and_bytes_round_trip(store: Store, layout: Layout) -> None:
    md = layout.patterns_md
    assert store.write_text(md, "# Patterns\n\n- one\n") is True
    assert md.read_text("utf-8") == "# Patterns\n\n- one\n"
    raw = layout.planning / "blob.bin"
    assert store.write_bytes(raw, b"\x00\x01\x02") is True
    assert raw.read_bytes() == b"\x00\x01\x02"


def test_many_records_round_trip(store: Store, layout: Layout) -> None:
    written = {}
    for i in range(50):
        value = {**RECORD, "id": f"pat_{i:03d}", "n": i}
        store.write_json(target(layout, f"pat_{i:03d}"), value)
        written[f"pat_{i:03d}"] = value
    files = store.list_json(layout.record_dir("pattern"))
    assert [p.stem for p in files] == sorted(written)
    assert {p.stem: store.read_json(p) for p in files} == written


def test_list_json_skips_hidden_and_non_json_and_missing_folders(
    store: Store, layout: Layout
) -> None:
    folder = layout.record_dir("pattern")
    folder.mkdir(parents=True)
    (folder / "pat_1.json").write_text("{}")
    (folder / ".pat_2.json.x.pm-tmp").write_text("{}")
    (folder / ".hidden.json").write_text("{}")
    (folder / "notes.txt").write_text("x")
    assert [p.name for p in store.list_json(folder)] == ["pat_1.json"]
    assert store.list_json(layout.long_term / "missing") == []


# -- never rewrite unchanged bytes -----------------------------------------------------------


def test_rewriting_identical_data_leaves_the_file_untouched(store: Store, layout: Layout) -> None:
    path = target(layout)
    store.write_json(path, RECORD)
    past = time.time_ns() - 10_000_000_000
    os.utime(path, ns=(past, past))
    before = os.stat(path)
    reordered = dict(reversed(list(RECORD.items())))
    assert store.write_json(path, reordered) is False
    after = os.stat(path)
    assert after.st_mtime_ns == before.st_mtime_ns == past
    assert after.st_ino == before.st_ino
    assert not list(path.parent.glob(f"*{TEMP_SUFFIX}"))


def test_rewriting_changed_data_replaces_the_file(store: Store, layout: Layout) -> None:
    path = target(layout)
    store.write_json(path, RECORD)
    past = time.time_ns() - 10_000_000_000
    os.utime(path, ns=(past, past))
    assert store.write_json(path, {**RECORD, "title": "Changed"}) is True
    assert os.stat(path).st_mtime_ns != past
    assert store.read_json(path)["title"] == "Changed"


# -- optimistic check ------------------------------------------------------------------------


def test_update_with_the_digest_read_succeeds(store: Store, layout: Layout) -> None:
    path = target(layout)
    store.write_json(path, RECORD)
    loaded = store.load(path)
    assert store.write_json(path, {**RECORD, "title": "v2"}, expect=loaded.digest) is True
    assert store.read_json(path)["title"] == "v2"


def test_update_after_an_outside_edit_is_a_conflict_and_keeps_the_edit(
    store: Store, layout: Layout
) -> None:
    path = target(layout)
    store.write_json(path, RECORD)
    loaded = store.load(path)
    hand_edit = codec.dump_bytes({**RECORD, "title": "edited in vim"})
    path.write_bytes(hand_edit)
    with pytest.raises(ConflictError) as info:
        store.write_json(path, {**RECORD, "title": "ours"}, expect=loaded.digest)
    assert info.value.path is not None and "pat_001.json" in info.value.path
    assert path.read_bytes() == hand_edit


def test_update_of_a_file_deleted_since_read_is_a_conflict(store: Store, layout: Layout) -> None:
    path = target(layout)
    store.write_json(path, RECORD)
    loaded = store.load(path)
    path.unlink()
    with pytest.raises(ConflictError):
        store.write_json(path, RECORD, expect=loaded.digest)
    assert not path.exists()


def test_create_expecting_absent_refuses_an_existing_file(store: Store, layout: Layout) -> None:
    path = target(layout)
    assert store.write_json(path, RECORD, expect=ABSENT) is True
    with pytest.raises(ConflictError):
        store.write_json(path, {**RECORD, "title": "other"}, expect=ABSENT)
    assert store.read_json(path) == RECORD


def test_delete_checks_the_digest_too(store: Store, layout: Layout) -> None:
    path = target(layout)
    store.write_json(path, RECORD)
    stale = store.load(path).digest
    path.write_bytes(codec.dump_bytes({**RECORD, "title": "edited"}))
    with pytest.raises(ConflictError):
        store.delete(path, expect=stale)
    assert path.exists()
    assert store.delete(path, expect=store.current_digest(path)) is True
    assert not path.exists()
    assert store.delete(path) is False


# -- reading broken files --------------------------------------------------------------------


def test_reading_a_broken_file_names_it_and_its_position(store: Store, layout: Layout) -> None:
    path = target(layout)
    path.parent.mkdir(parents=True)
    path.write_bytes(b'{\n  "id": "pat_001",\n  "title": \n}\n')
    with pytest.raises(DecodeError) as info:
        store.load(path)
    err = info.value
    assert err.path == ".planning/memory/long-term/patterns/pat_001.json"
    assert err.line == 4
    assert path.read_bytes() == b'{\n  "id": "pat_001",\n  "title": \n}\n'


def test_reading_errors(store: Store, layout: Layout, tmp_path: Path) -> None:
    with pytest.raises(NotFoundError):
        store.read_json(target(layout))
    folder = target(layout, "pat_dir")
    folder.mkdir(parents=True)
    with pytest.raises(InputError, match="is a directory"):
        store.read_json(folder)
    big = target(layout, "pat_big")
    with open(big, "wb") as fh:
        fh.truncate(codec.MAX_BYTES + 1)
    with pytest.raises(LimitError, match="over the"):
        store.read_json(big)


def test_writing_over_a_directory_is_an_input_error(store: Store, layout: Layout) -> None:
    folder = target(layout)
    folder.mkdir(parents=True)
    with pytest.raises(InputError, match="is a directory"):
        store.write_json(folder, RECORD)
    assert folder.is_dir()


# -- paths stay inside -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "relative",
    ["../outside.json", "memory/../../outside.json", "memory/long-term/../../../x.json"],
)
def test_check_inside_refuses_dot_dot(store: Store, layout: Layout, relative: str) -> None:
    with pytest.raises(UnsafePathError):
        store.check_inside(layout.planning / relative)
    with pytest.raises(UnsafePathError):
        store.write_json(layout.planning / relative, RECORD)
    assert not (layout.repo_root / "outside.json").exists()


def test_check_inside_refuses_absolute_paths_elsewhere(store: Store, tmp_path: Path) -> None:
    with pytest.raises(UnsafePathError):
        store.write_json(tmp_path.parent / "elsewhere.json", RECORD)


def test_check_inside_accepts_paths_in_the_tree(store: Store, layout: Layout) -> None:
    inside = layout.planning / "memory" / ".." / "memory" / "x.json"
    assert store.check_inside(inside) == inside
    assert store.check_inside(layout.planning) == layout.planning


def test_symlinked_folder_pointing_out_is_refused(
    store: Store, layout: Layout, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    layout.long_term.mkdir(parents=True)
    os.symlink(outside, layout.long_term / "patterns")
    with pytest.raises(UnsafePathError):
        store.write_json(target(layout), RECORD)
    assert list(outside.iterdir()) == []


def test_symlinked_file_pointing_out_is_refused(
    store: Store, layout: Layout, tmp_path: Path
) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    path = target(layout)
    path.parent.mkdir(parents=True)
    os.symlink(victim, path)
    with pytest.raises(UnsafePathError):
        store.write_json(path, RECORD)
    assert victim.read_text() == "precious"


def test_reading_through_a_symlink_that_leads_out_is_refused(
    store: Store, layout: Layout, tmp_path: Path
) -> None:
    secret = tmp_path / "secret.json"
    secret.write_text('{"token": "sk-very-secret"}')
    path = target(layout)
    path.parent.mkdir(parents=True)
    os.symlink(secret, path)
    with pytest.raises(UnsafePathError) as info:
        store.read_json(path)
    assert "sk-very-secret" not in info.value.one_line()


def test_reading_in_a_symlinked_folder_that_leads_out_is_refused(
    store: Store, layout: Layout, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "pat_001.json").write_bytes(codec.dump_bytes(RECORD))
    layout.long_term.mkdir(parents=True)
    os.symlink(outside, layout.long_term / "patterns")
    with pytest.raises(UnsafePathError):
        store.read_json(target(layout))


def test_reading_through_a_symlink_inside_the_tree_is_fine(store: Store, layout: Layout) -> None:
    path = target(layout)
    store.write_json(path, RECORD)
    link = target(layout, "pat_link")
    os.symlink(path, link)
    assert store.read_json(link) == RECORD


def test_symlinked_root_is_allowed(tmp_path: Path) -> None:
    real = tmp_path / "real"
    (real / ".planning").mkdir(parents=True)
    os.symlink(real, tmp_path / "link")
    layout = Layout.for_repo(tmp_path / "link")
    store = Store(layout)
    assert store.write_json(layout.record_path("pattern", "pat_001"), RECORD) is True
    assert (real / ".planning/memory/long-term/patterns/pat_001.json").is_file()


# -- modes -----------------------------------------------------------------------------------


def test_personal_store_files_are_0600_and_folders_0700(tmp_path: Path) -> None:
    layout = Layout.personal({"XDG_STATE_HOME": str(tmp_path / "state"), "HOME": str(tmp_path)})
    store = Store(layout, private=True)
    store.write_json(layout.record_path("pattern", "pat_001"), RECORD)
    store.write_json(layout.session_path("ses_001"), {"id": "ses_001"})
    store.write_json(layout.preferences, {"testing": {}})
    dirs, files = [], []
    for folder, subdirs, names in os.walk(layout.planning):
        dirs += [Path(folder) / d for d in subdirs]
        files += [Path(folder) / n for n in names]
    assert len(files) >= 4  # three records and the lock file
    assert {str(p): oct(mode_of(p)) for p in files} == {str(p): "0o600" for p in files}
    all_dirs = [layout.planning, *dirs]
    assert {str(p): oct(mode_of(p)) for p in all_dirs} == {str(p): "0o700" for p in all_dirs}


def test_project_store_files_follow_the_umask(store: Store, layout: Layout) -> None:
    old = os.umask(0o022)
    try:
        path = target(layout, "pat_umask")
        Store(layout).write_json(path, RECORD)
    finally:
        os.umask(old)
    assert mode_of(path) in (0o644, 0o666 & ~old)


@pytest.mark.parametrize("private", [False, True])
def test_rewrite_keeps_the_old_files_mode(layout: Layout, private: bool) -> None:
    store = Store(layout, private=private)
    path = target(layout)
    store.write_json(path, RECORD)
    os.chmod(path, 0o640)
    assert store.write_json(path, {**RECORD, "title": "v2"}) is True
    assert mode_of(path) == 0o640
    os.chmod(path, 0o755)
    assert store.write_json(path, {**RECORD, "title": "v3"}) is True
    assert mode_of(path) == 0o755


# -- lock and temp files ---------------------------------------------------------------------


def test_lock_is_reentrant_and_lives_in_its_own_file(store: Store, layout: Layout) -> None:
    with store.lock(), store.lock():
        store.write_json(target(layout), RECORD)
    assert layout.lock_file.is_file()
    assert layout.lock_file != target(layout)


def test_the_lock_sweeps_temp_files_left_by_a_writer_that_died_holding_it(
    layout: Layout,
) -> None:
    folder = layout.record_dir("pattern")
    folder.mkdir(parents=True)
    leftover = folder / f".pat_001.json.abc123{TEMP_SUFFIX}"
    leftover.write_bytes(b'{"half": ')
    keep = folder / "pat_002.json"
    keep.write_bytes(codec.dump_bytes(RECORD))
    with Store(layout).lock():  # a clean release names no holder: nothing to sweep
        pass
    assert leftover.exists()
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    layout.lock_file.write_text(f"{dead} 0 {os.uname().nodename}\n")  # died holding it
    with Store(layout).lock():
        pass
    assert not leftover.exists()
    assert keep.read_bytes() == codec.dump_bytes(RECORD)
    assert layout.lock_file.read_text() == ""  # released: no holder named


def _hold_lock(planning: str, ready: Any, release: Any) -> None:
    store = Store(Layout(Path(planning)))
    with store.lock():
        ready.set()
        release.wait(30)


def test_lock_held_by_another_process_times_out_with_lock_error(layout: Layout) -> None:
    ctx = multiprocessing.get_context("spawn")
    ready, release = ctx.Event(), ctx.Event()
    child = ctx.Process(target=_hold_lock, args=(str(layout.planning), ready, release))
    child.start()
    try:
        assert ready.wait(30)
        store = Store(layout, lock_timeout=0.2)
        start = time.monotonic()
        with pytest.raises(LockError) as info:
            store.write_json(target(layout), RECORD)
        assert 0.2 <= time.monotonic() - start < 2
        assert info.value.exit_code == 7
        assert not target(layout).exists()
    finally:
        release.set()
        child.join(30)
    with Store(layout, lock_timeout=5).lock():
        pass


# -- non-regular files: refused with one error, never a blocking open ----------------------------


@pytest.fixture
def alarm() -> Any:
    """Fail a test that blocks (a FIFO opened for reading waits for a writer forever)."""

    def fire(signum: int, frame: Any) -> None:
        raise TimeoutError("blocked on a non-regular file")

    old = signal.signal(signal.SIGALRM, fire)
    signal.alarm(5)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, old)


def test_a_fifo_is_refused_when_read_written_or_deleted(
    store: Store, layout: Layout, alarm: Any
) -> None:
    path = target(layout)
    path.parent.mkdir(parents=True)
    os.mkfifo(path)
    with pytest.raises(InputError, match="is a FIFO") as info:
        store.read_json(path)
    assert info.value.path == ".planning/memory/long-term/patterns/pat_001.json"
    with pytest.raises(InputError, match="is a FIFO"):
        store.write_json(path, RECORD)
    with pytest.raises(InputError, match="is a FIFO"):
        store.delete(path)
    with pytest.raises(InputError, match="is a FIFO"):
        store.current_digest(path)
    assert stat.S_ISFIFO(os.lstat(path).st_mode)


def test_a_device_is_refused_without_reading_it(store: Store, layout: Layout, alarm: Any) -> None:
    path = target(layout)
    path.parent.mkdir(parents=True)
    path.symlink_to("/dev/zero")  # outside the tree too; the device check must not read it
    other = target(layout, "pat_002")
    os.symlink(os.devnull, other)
    with pytest.raises(InputError):
        store.read_json(path)
    with pytest.raises(InputError, match="is a device"):
        read_regular(other)


def test_read_regular_reads_at_most_the_limit(tmp_path: Path) -> None:
    path = tmp_path / "f.json"
    path.write_bytes(b"x" * 100)
    assert read_regular(path, 100) == b"x" * 100
    with pytest.raises(LimitError, match="over the 99-byte limit"):
        read_regular(path, 99)
    assert read_regular(tmp_path / "missing.json") is None


def test_the_lock_file_names_its_holder_while_held_and_no_one_after(
    store: Store, layout: Layout
) -> None:
    with store.lock():
        pid, _start, _host = layout.lock_file.read_text().split()
        assert int(pid) == os.getpid()
    assert layout.lock_file.read_bytes() == b""


def test_a_lock_named_for_a_live_holder_is_never_taken_over(layout: Layout) -> None:
    ctx = multiprocessing.get_context("spawn")
    ready, release = ctx.Event(), ctx.Event()
    child = ctx.Process(target=_hold_lock, args=(str(layout.planning), ready, release))
    child.start()
    try:
        assert ready.wait(30)
        inode = os.stat(layout.lock_file).st_ino
        with pytest.raises(LockError, match=f"process {child.pid}"):
            Store(layout, lock_timeout=0.6).write_json(target(layout), RECORD)
        assert os.stat(layout.lock_file).st_ino == inode
    finally:
        release.set()
        child.join(30)


def _counting(monkeypatch: pytest.MonkeyPatch, name: str) -> list[int]:
    """Count the calls of ``os.<name>`` (the real call still runs)."""
    calls: list[int] = []
    real = getattr(os, name)

    def counted(*args: Any) -> Any:
        calls.append(1)
        return real(*args)

    monkeypatch.setattr(os, name, counted)
    return calls


def test_a_batch_writes_whole_files_without_fsync_and_syncs_once_at_its_end(
    store: Store, layout: Layout, monkeypatch: pytest.MonkeyPatch
) -> None:
    fsyncs, syncs = _counting(monkeypatch, "fsync"), _counting(monkeypatch, "sync")
    with store.batch():
        with store.batch():  # re-entrant: only the outermost one syncs
            for n in range(5):
                store.write_json(target(layout, f"pat_00{n}"), {**RECORD, "n": n})
        store.delete(target(layout, "pat_000"))
        assert store.batching and store._depth > 0  # the lock is held throughout
        assert fsyncs == [] and syncs == []
    assert syncs == [1] and not store.batching
    assert [p.name for p in store.list_json(target(layout).parent)] == [
        f"pat_00{n}.json" for n in range(1, 5)
    ]
    assert store.read_json(target(layout, "pat_003"))["n"] == 3
    assert list(target(layout).parent.glob(f"*{TEMP_SUFFIX}")) == []
    store.write_json(target(layout, "pat_009"), RECORD)  # outside a batch: durable again
    assert len(fsyncs) == 2  # the file, then its folder


def test_a_batch_ended_by_an_error_still_syncs_what_it_wrote(
    store: Store, layout: Layout, monkeypatch: pytest.MonkeyPatch
) -> None:
    syncs = _counting(monkeypatch, "sync")
    with pytest.raises(ZeroDivisionError), store.batch():
        store.write_json(target(layout), RECORD)
        1 / 0  # noqa: B018
    assert syncs == [1]
    assert store.read_json(target(layout)) == RECORD
    assert not store.batching and store._fd is None  # the lock was released


# -- a hostile tree: links out of it, file names that are not UTF-8 --------------------------------
@pytest.fixture
def canary(tmp_path: Path) -> Path:
    """A file outside the tree standing for ``~/.bashrc``."""
    path = tmp_path / "bashrc"
    path.write_text("export PATH=$HOME/bin:$PATH\n")
    return path


def test_a_lock_file_linked_out_of_the_tree_is_never_opened(
    store: Store, layout: Layout, canary: Path
) -> None:
    layout.planning.mkdir()
    layout.lock_file.symlink_to(canary)
    with pytest.raises(UnsafePathError) as info:
        store.write_json(target(layout), RECORD)
    assert canary.read_text() == "export PATH=$HOME/bin:$PATH\n"  # was emptied by the lock
    assert info.value.path == ".planning/.lock" and info.value.exit_code == 4
    line = info.value.one_line()
    assert "leads outside the memory tree" in line and "`rm .planning/.lock`" in line
    assert not target(layout).exists()


@pytest.mark.parametrize("kind", ["link inside", "fifo", "folder"])
def test_a_lock_file_that_is_no_regular_file_is_refused_without_blocking(
    store: Store, layout: Layout, alarm: Any, kind: str
) -> None:
    layout.planning.mkdir()
    if kind == "link inside":
        layout.config.write_text("{}\n")
        layout.lock_file.symlink_to(layout.config)
    elif kind == "fifo":
        os.mkfifo(layout.lock_file)
    else:
        layout.lock_file.mkdir()
    with pytest.raises(InputError) as info:
        store.write_json(target(layout), RECORD)
    assert info.value.path == ".planning/.lock"
    assert "then run the command again" in info.value.one_line()
    assert layout.config.read_text() == "{}\n" if kind == "link inside" else True


def test_a_takeover_never_opens_a_temp_name_planted_beside_the_lock(
    layout: Layout, canary: Path
) -> None:
    """The lock of a dead holder kept by a leftover child is replaced by a new file: made
    under an unguessable name with O_EXCL, never through a link planted where it goes."""
    store = Store(layout, lock_timeout=10)
    store.write_json(target(layout), RECORD)  # the tree was looked over: the links come later
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    keeper = subprocess.Popen(  # a leftover child still holding the dead holder's flock
        [
            sys.executable,
            "-c",
            "import fcntl, os, sys, time; fd = os.open(sys.argv[1], os.O_RDWR); "
            "fcntl.flock(fd, fcntl.LOCK_EX); print('held', flush=True); time.sleep(60)",
            str(layout.lock_file),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert keeper.stdout is not None and keeper.stdout.readline() == "held\n"
        layout.lock_file.write_text(f"{dead} 0 {os.uname().nodename}\n")
        for pid in range(os.getpid() - 5, os.getpid() + 50):  # where a guess would put it
            (layout.planning / f".lock.{pid}{TEMP_SUFFIX}").symlink_to(canary)
        assert store.write_json(target(layout), {**RECORD, "n": 2})
    finally:
        keeper.kill()
        keeper.wait()
    assert canary.read_text() == "export PATH=$HOME/bin:$PATH\n"
    assert not layout.lock_file.is_symlink()


@pytest.mark.parametrize(
    "rel",
    [
        "patterns.md",
        "memory/contextual/views/cache/index.json",
        "memory/contextual/recent-queries.jsonl",
        "memory/long-term/patterns/pat_001.json",
    ],
)
def test_every_write_refuses_a_file_linked_out_of_the_tree(
    store: Store, layout: Layout, canary: Path, rel: str
) -> None:
    path = layout.planning / rel
    path.parent.mkdir(parents=True)
    path.symlink_to(canary)
    writes = [
        lambda: store.write_bytes(path, b"x"),
        lambda: store.write_bytes(path, b"x", durable=False),
        lambda: store.append_line(path, "x", rotate_at=1000),
        lambda: store.write_unlocked(path, b"x"),
        lambda: store.open_file(path, os.O_WRONLY | os.O_CREAT),
        lambda: store.check_database(path),
    ]
    for write in writes:
        with pytest.raises(UnsafePathError, match="leads outside the memory tree"):
            write()
    with pytest.raises(UnsafePathError):
        store.read_bytes(path)
    assert canary.read_text() == "export PATH=$HOME/bin:$PATH\n"


@pytest.mark.parametrize(
    "rel", ["memory", "memory/contextual", "memory/contextual/views", "memory/long-term/patterns"]
)
def test_a_folder_linked_out_of_the_tree_is_refused_before_anything_is_read_or_written(
    store: Store, layout: Layout, tmp_path: Path, rel: str
) -> None:
    """The first touch of a tree looks its own folders over, so a command that would write
    several files refuses before the first one, not half way."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.json").write_text("{}\n")
    layout.config.parent.mkdir()
    layout.config.write_text("{}\n")
    link = layout.planning / rel
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(outside, target_is_directory=True)
    with pytest.raises(UnsafePathError) as info:
        store.read_json(layout.config)  # elsewhere in the tree: the look-over refuses it
    assert info.value.path == f".planning/{rel}"
    for folder in (link, link / "sub"):
        with pytest.raises(UnsafePathError):
            store.make_dirs(folder)
        with pytest.raises(UnsafePathError):
            store.write_bytes(folder / "x.json", b"{}")
    assert sorted(p.name for p in outside.iterdir()) == ["keep.json"]


def test_a_link_that_stays_inside_the_tree_is_followed(store: Store, layout: Layout) -> None:
    real = layout.long_term / "patterns-real"
    real.mkdir(parents=True)
    (layout.long_term / "patterns").symlink_to(real, target_is_directory=True)
    assert store.write_json(target(layout), RECORD) is True
    assert (real / "pat_001.json").is_file()
    assert store.read_json(target(layout)) == RECORD


def test_a_planning_folder_linked_out_of_its_repository_is_refused(tmp_path: Path) -> None:
    repo, elsewhere = tmp_path / "repo", tmp_path / "elsewhere"
    repo.mkdir()
    elsewhere.mkdir()
    (repo / ".planning").symlink_to(elsewhere, target_is_directory=True)
    layout = Layout.for_repo(repo)
    with pytest.raises(UnsafePathError, match="leads outside the repository") as info:
        Store(layout).write_json(layout.record_path("pattern", "pat_001"), RECORD)
    assert info.value.path == ".planning"
    assert list(elsewhere.iterdir()) == []


def test_a_database_and_its_journals_are_checked_before_sqlite_opens_them(
    store: Store, layout: Layout, canary: Path, alarm: Any
) -> None:
    path = layout.contextual / "index.sqlite3"
    path.parent.mkdir(parents=True)
    assert store.check_database(path) == path  # absent: SQLite makes it
    for suffix in ("-wal", "-shm", "-journal"):
        journal = Path(f"{path}{suffix}")
        journal.symlink_to(canary)
        with pytest.raises(UnsafePathError, match="a symbolic link") as info:
            store.check_database(path)
        assert info.value.path == f".planning/memory/contextual/index.sqlite3{suffix}"
        journal.unlink()
    os.mkfifo(path)
    with pytest.raises(InputError, match="a FIFO"):
        store.check_database(path)


def test_a_file_name_that_is_not_utf8_is_warned_about_once_and_left_out(
    store: Store, layout: Layout
) -> None:
    folder = layout.record_dir("pattern")
    store.write_json(folder / "pat_001.json", RECORD)
    with open(os.path.join(os.fsencode(folder), b"pat_caf\xe9.json"), "wb") as fh:
        fh.write(codec.dump_bytes(RECORD))
    with pytest.warns(BrokenFileWarning) as seen:
        assert [p.name for p in store.list_json(folder)] == ["pat_001.json"]
        assert [p.name for p in store.list_json(folder)] == ["pat_001.json"]
    assert [str(w.message) for w in seen] == [
        ".planning/memory/long-term/patterns/pat_caf\\xe9.json: file name is not valid UTF-8;"
        " no memory file has one (rename or remove it)"
    ]


def test_valid_name_and_printable() -> None:
    assert valid_name("pat_01.json") and valid_name("café.py") and valid_name("日本.py")
    assert not valid_name(os.fsdecode(b"caf\xe9.py"))
    assert printable(os.fsdecode(b"caf\xe9.py")) == "caf\\xe9.py"
    assert printable("café.py") == "café.py"
    assert printable("a\ud800b") == "a\\ud800b"  # a surrogate no file name gives
