"""File discovery inside git (index hashes, modified, untracked, deleted files) and outside it
(nested .gitignore files), scans limited to some paths, and the process pool."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from planning_memory.core.layout import Layout
from planning_memory.entity import get_file, scan, walk
from planning_memory.entity.languages import EXTENSIONS, language_for
from planning_memory.entity.parsefile import blob_id
from planning_memory.errors import UnmappedFileWarning, UnsafePathError
from planning_memory.store import Store


def git(root: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True)
    return done.stdout


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


def test_git_listing_uses_index_hashes_and_status(tmp_path: Path) -> None:
    write(tmp_path, {"a.py": "a = 1\n", "b.py": "b = 1\n", "c.py": "c = 1\n", "d.py": "d = 1\n"})
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-q", "-m", "one")
    (tmp_path / "b.py").write_text("b = 2\n")  # modified, not staged
    (tmp_path / "c.py").unlink()  # deleted
    (tmp_path / "e.py").write_text("e = 1\n")  # untracked
    (tmp_path / ".gitignore").write_text("ignored/\n")
    write(tmp_path, {"ignored/x.py": "x = 1\n"})
    listing = walk.discover(tmp_path, walk.Rules.from_patterns([], []))
    assert listing.git
    got = {item.path: item.git_hash for item in listing.files}
    assert got == {
        "a.py": blob_id(b"a = 1\n"),
        "b.py": None,
        "d.py": blob_id(b"d = 1\n"),
        "e.py": None,
        ".gitignore": None,
    }
    assert git(tmp_path, "hash-object", "a.py").strip() == got["a.py"]


def test_nested_gitignore_files_outside_git(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            ".gitignore": "*.gen.py\nbuild/\n",
            "src/.gitignore": "!keep.gen.py\nscratch.py\n",
            "src/app.py": "",
            "src/app.gen.py": "",
            "src/keep.gen.py": "",
            "src/scratch.py": "",
            "build/out.py": "",
            "node_modules/pkg/index.js": "",
            "lib/scratch.py": "",
        },
    )
    listing = walk.discover(tmp_path, walk.Rules.from_patterns([], []), use_git=False)
    assert not listing.git
    assert [item.path for item in listing.files] == [
        ".gitignore",
        "lib/scratch.py",
        "src/.gitignore",
        "src/app.py",
        "src/keep.gen.py",
    ]


def test_a_scan_limited_to_paths_touches_only_those(tmp_path: Path) -> None:
    write(tmp_path, {"a/one.py": "def one():\n    pass\n", "b/two.py": "def two():\n    pass\n"})
    git(tmp_path, "init", "-q")
    layout = Layout.for_repo(tmp_path)
    store = Store(layout)
    assert scan(layout, store, {}).parsed == 2
    (tmp_path / "a/one.py").write_text("def uno():\n    pass\n")
    (tmp_path / "b/two.py").unlink()
    report = scan(layout, store, {}, paths=["a/one.py"])
    assert (report.parsed, report.removed) == (1, 0)
    assert get_file(layout, store, "b/two.py") is not None  # outside the hint: left alone
    report = scan(layout, store, {}, paths=[str(tmp_path / "b")])
    assert report.removed == 1 and get_file(layout, store, "b/two.py") is None
    with pytest.raises(UnsafePathError):
        scan(layout, store, {}, paths=["../elsewhere"])


def test_the_process_pool_gives_the_same_shards(tmp_path: Path) -> None:
    # 40 folders of files, plus enough folders that shards are encoded in forked workers too
    files = {
        f"pkg{i % 7}/m{i}.py": f"def f{i}(x):\n    return f{(i + 1) % 40}(x) if x else {i}\n"
        for i in range(40)
    }
    files.update(
        {f"many/d{i:03d}/m.py": f"from ..d{(i + 1) % 210:03d} import m\n" for i in range(210)}
    )
    progress: list[tuple[int, int]] = []
    results = []
    for name, config in (
        ("pool", {"parallelThreshold": 1, "scanWorkers": 2}),
        ("serial", {"scanWorkers": 1}),
    ):
        root = tmp_path / name
        root.mkdir()
        write(root, files)
        layout = Layout.for_repo(root)
        report = scan(
            layout,
            Store(layout),
            {"memory": {"entity": config}},
            progress=lambda done, total: progress.append((done, total)),
        )
        assert report.parsed == 250
        results.append(
            {
                p.relative_to(root).as_posix(): p.read_bytes()
                for p in sorted(layout.entity.rglob("*.json"))
            }
        )
    assert results[0] == results[1]
    assert progress[-1] == (250, 250)
    assert json.loads(results[0][".planning/memory/entity/files/pkg0/_shard.json"])["files"]


def test_the_pool_works_when_threads_make_fork_unsafe(tmp_path: Path) -> None:
    import threading

    write(tmp_path, {f"m{i}.py": f"def f{i}():\n    return {i}\n" for i in range(12)})
    stop = threading.Event()
    watcher = threading.Thread(target=stop.wait, daemon=True)  # like the daemon's threads
    watcher.start()
    try:
        layout = Layout.for_repo(tmp_path)
        config = {"memory": {"entity": {"parallelThreshold": 1, "scanWorkers": 2}}}
        assert scan(layout, Store(layout), config).parsed == 12
    finally:
        stop.set()
    assert get_file(layout, Store(layout), "m3.py") is not None


def test_the_store_tells_of_every_shard_the_writers_wrote(tmp_path: Path) -> None:
    write(tmp_path, {f"d{i:03d}/m.py": f"def f{i}():\n    pass\n" for i in range(210)})
    layout = Layout.for_repo(tmp_path)
    written: list[Path] = []
    store = Store(layout, on_write=written.append)
    assert scan(layout, store, {}).parsed == 210
    on_disk = {str(p) for p in (layout.entity / "files").rglob("_shard*.json")}
    assert len(on_disk) == 210
    assert on_disk <= {str(p) for p in written}


@settings(max_examples=2000, deadline=None)
@given(st.text(alphabet="ab./.pyTSgoj", max_size=12))
def test_language_for_reads_the_extension_as_splitext_does(path: str) -> None:
    expected = EXTENSIONS.get(os.path.splitext(path)[1].lower())
    assert language_for(path) == expected


@pytest.mark.parametrize(
    ("path", "language"),
    [
        ("src/a.py", "python"),
        (".py", None),
        ("a/..py", None),
        ("a/.eslintrc.js", "javascript"),
        ("web/App.TSX", "tsx"),
        ("types/x.d.ts", "typescript"),
        ("dir.py/README", None),
        ("a/...", None),
    ],
)
def test_language_for_examples(path: str, language: str | None) -> None:
    assert language_for(path) == language


@pytest.mark.parametrize("use_git", [True, False])
def test_a_file_name_that_is_not_utf8_is_left_out_and_named_once(
    tmp_path: Path, use_git: bool
) -> None:
    write(
        tmp_path, {"ok.py": "def fine():\n    pass\n", "build/x.py": "", ".gitignore": "build/\n"}
    )
    for name in (b"caf\xe9.py", b"d\xe9j\xe0/inner.py", b"build/caf\xe9.py"):  # the last: ignored
        path = os.path.join(os.fsencode(tmp_path), name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as fh:
            fh.write("def badly_named():\n    pass\n")
    if use_git:
        git(tmp_path, "init", "-q")
    rules = walk.Rules.from_patterns([], [])
    listing = walk.discover(tmp_path, rules, use_git=use_git)
    assert [item.path for item in listing.files] == [".gitignore", "ok.py"]
    assert sorted(listing.unnamed) == [
        os.fsdecode(b"caf\xe9.py"),
        os.fsdecode(b"d\xe9j\xe0/inner.py"),
    ]
    layout = Layout.for_repo(tmp_path)
    with pytest.warns(UnmappedFileWarning) as seen:
        report = scan(layout, Store(layout), {"memory": {"entity": {"useGit": use_git}}})
    assert sorted(str(w.message) for w in seen) == [
        "caf\\xe9.py: file name is not valid UTF-8, so the code map leaves the file out"
        " (rename it to have it mapped)",
        "d\\xe9j\\xe0/inner.py: file name is not valid UTF-8, so the code map leaves the file out"
        " (rename it to have it mapped)",
    ]
    assert (report.parsed, report.errors) == (1, 0)
    assert get_file(layout, Store(layout), "ok.py") is not None
