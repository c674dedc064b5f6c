"""Edge cases of a scan: syntax errors, bad encodings, empty, huge and binary files, symlink
loops and links out of the repository, and an ignored folder that must never be read."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from planning_memory.core.layout import Layout
from planning_memory.entity import IgnoreRules, get_file, get_function, parsefile, scan, walk
from planning_memory.store import Store


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, capture_output=True, check=True)


def run(root: Path, config: dict | None = None):  # type: ignore[no-untyped-def,type-arg]
    layout = Layout.for_repo(root)
    return scan(layout, Store(layout), config or {})


def lookup(root: Path, path: str) -> dict | None:  # type: ignore[type-arg]
    layout = Layout.for_repo(root)
    return get_file(layout, Store(layout), path)


@pytest.fixture(params=["git", "plain"])
def root(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    folder = tmp_path / "repo"
    folder.mkdir()
    (folder / "ok.py").write_text("def fine():\n    return 1\n")
    if request.param == "git":
        git(folder, "init", "-q")
    return folder


def test_syntax_errors_give_partial_results_and_a_flag(root: Path) -> None:
    (root / "broken.ts").write_text(
        "export function good(a: number) { return a + 1 }\n"
        "export function bad(a: number { return a }\n"
        "export function later() { return good(2) }\n"
    )
    report = run(root)
    assert report.errors == 1 and any(p.startswith("broken.ts") for p in report.error_paths)
    entity = lookup(root, "broken.ts")
    assert entity is not None and entity["parse_errors"] is True
    assert "good" in entity["functions"]


def test_non_utf8_and_empty_files(root: Path) -> None:
    (root / "legacy.py").write_bytes(
        "# Módulo de cálculo\ndef suma(a, b):\n    return a + b\n".encode("latin-1")
    )
    (root / "empty.py").write_bytes(b"")
    run(root)
    legacy = lookup(root, "legacy.py")
    assert legacy is not None and legacy["encoding_errors"] is True
    assert legacy["functions"] == ["suma"] and legacy["lines"] == 3
    empty = lookup(root, "empty.py")
    assert empty is not None and empty["lines"] == 0 and empty["functions"] == []


def test_huge_and_binary_files_are_skipped_and_counted(root: Path) -> None:
    line = "export const v{0} = {0}\n"
    with open(root / "generated.ts", "w") as fh:
        index = 0
        while fh.tell() < 10 * 1024 * 1024:
            fh.write("".join(line.format(index + i) for i in range(1000)))
            index += 1000
    (root / "blob.js").write_bytes(b"\x7fELF\x00\x00binary" * 100)
    report = run(root)
    assert (report.skipped_large, report.skipped_binary) == (1, 1)
    assert lookup(root, "generated.ts") is None and lookup(root, "blob.js") is None
    assert report.parsed == 1  # ok.py


def test_max_file_bytes_comes_from_the_config(root: Path) -> None:
    (root / "medium.py").write_text("def g():\n    return 2\n" * 20)
    report = run(root, {"memory": {"entity": {"maxFileBytes": 100}}})
    assert (report.parsed, report.skipped_large) == (1, 1)
    assert lookup(root, "medium.py") is None
    report = run(root, {"memory": {"entity": {"maxFileBytes": 10_000}}})
    assert (report.parsed, report.skipped_large) == (1, 0)
    assert lookup(root, "medium.py") is not None


def test_symlink_loops_and_links_out_are_never_followed(root: Path, tmp_path: Path) -> None:
    (root / "pkg").mkdir()
    (root / "pkg" / "mod.py").write_text("def inside():\n    pass\n")
    os.symlink("..", root / "pkg" / "loop")
    os.symlink(root / "pkg", root / "pkg" / "self")
    outside = tmp_path / "secret.py"
    outside.write_text("def outside_the_repo():\n    pass\n")
    os.symlink(outside, root / "linked.py")
    report = run(root)
    assert report.parsed == 2  # ok.py and pkg/mod.py, once each
    layout = Layout.for_repo(root)
    assert get_function(layout, Store(layout), "outside_the_repo") == []
    assert lookup(root, "linked.py") is None


def test_an_ignored_folder_is_never_read(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (root / ".gitignore").write_text("generated/\n")
    folder = root / "generated" / "deep"
    folder.mkdir(parents=True)
    for i in range(10_000):
        (folder / f"f{i}.py").write_text(f"def f{i}(): pass\n")
    opened: list[str] = []
    scanned: list[str] = []
    real_read, real_scandir = parsefile.read_source, os.scandir

    def counting_read(location: str, max_bytes: int) -> tuple[str, bytes]:
        opened.append(location)
        return real_read(location, max_bytes)

    def counting_scandir(path: str | Path) -> object:
        scanned.append(str(path))
        return real_scandir(path)

    monkeypatch.setattr(parsefile, "read_source", counting_read)
    monkeypatch.setattr(walk.os, "scandir", counting_scandir)
    report = run(root, {"memory": {"entity": {"scanWorkers": 1}}})
    assert report.parsed == 1 and report.files_seen == 2  # ok.py and .gitignore
    assert not [p for p in opened + scanned if "generated" in p]
    assert report.skipped_ignored <= 1  # the folder counts once, or git never lists it


def test_config_include_and_exclude_patterns(root: Path) -> None:
    for path in ("src/app.py", "src/vendor/lib.py", "scripts/tool.py"):
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text("def f():\n    pass\n")
    config = {
        "memory": {"entity": {"includePatterns": ["src/**/*"], "excludePatterns": ["src/vendor/"]}}
    }
    report = run(root, config)
    assert report.parsed == 1
    assert lookup(root, "src/app.py") is not None
    assert lookup(root, "src/vendor/lib.py") is None and lookup(root, "scripts/tool.py") is None


def test_fifos_and_other_special_files_are_skipped_without_blocking(root: Path) -> None:
    """A FIFO named like a source file (new, or in place of a tracked file) would block an
    open for reading until a writer came: the scan must finish and leave it out."""
    (root / "tracked.py").write_text("def tracked():\n    return 1\n")
    if (root / ".git").exists():
        git(root, "add", "-A")
        git(root, "-c", "user.name=t", "-c", "user.email=t@x", "commit", "-q", "-m", "x")
    run(root)
    (root / "tracked.py").unlink()
    os.mkfifo(root / "tracked.py")
    os.mkfifo(root / "pipe.py")
    if not (root / ".git").exists():  # outside git the walk reads each folder's .gitignore
        (root / "sub").mkdir()
        (root / "sub" / "inner.py").write_text("def inner():\n    return 2\n")
        os.mkfifo(root / "sub" / ".gitignore")
    done = subprocess.run(  # in a child, so that a hang fails the test instead of stalling it
        [
            sys.executable,
            "-c",
            "import sys; from planning_memory.core.layout import Layout;"
            "from planning_memory.entity import scan; from planning_memory.store import Store;"
            "layout = Layout.for_repo(sys.argv[1]); r = scan(layout, Store(layout), {});"
            "print(r.files_seen, r.removed, r.errors)",
            str(root),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert lookup(root, "tracked.py") is None and lookup(root, "pipe.py") is None
    assert lookup(root, "ok.py") is not None
    if (root / "sub").exists():
        assert lookup(root, "sub/inner.py") is not None
        assert not IgnoreRules(str(root), []).ignored("sub/inner.py")  # read without blocking
    status, data = parsefile.read_source(str(root / "pipe.py"), 1000)
    assert (status, data) == ("gone", b"")


def test_a_checkout_during_a_scan_is_never_written_as_a_mix_of_two_branches(
    tmp_path: Path,
) -> None:
    """``git checkout`` runs while the files are parsed (from the progress callback): the scan
    notices that git moved the tree, lists it again, and writes the settled branch's map,
    byte for byte what a first scan of that branch writes."""
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    for i in range(40):
        (root / f"m{i}.py").write_text(f"def on_main_{i}():\n    return {i}\n")
    git(root, "add", "-A")
    git(root, "-c", "user.name=t", "-c", "user.email=t@x", "commit", "-q", "-m", "main")
    git(root, "checkout", "-q", "-b", "other")
    for i in range(40):
        (root / f"m{i}.py").write_text(f"def on_other_{i}():\n    return {i}\n")
    git(root, "-c", "user.name=t", "-c", "user.email=t@x", "commit", "-qam", "other")
    git(root, "checkout", "-q", "main")
    switched: list[bool] = []

    def progress(done: int, total: int) -> None:
        if not switched:
            switched.append(True)
            git(root, "checkout", "-q", "other")

    layout = Layout.for_repo(root)
    scan(layout, Store(layout), {}, progress=progress)
    assert switched
    text = "".join(p.read_text() for p in sorted(layout.entity.rglob("*.json")))
    assert "on_other_0" in text and "on_main_" not in text
    fresh = tmp_path / "fresh"
    subprocess.run(["cp", "-a", str(root), str(fresh)], check=True)
    subprocess.run(["rm", "-rf", str(fresh / ".planning")], check=True)
    run(fresh)
    assert {
        p.relative_to(fresh): p.read_bytes()
        for p in (fresh / ".planning").rglob("*.json")
        if "entity" in p.parts
    } == {
        p.relative_to(root): p.read_bytes()
        for p in (root / ".planning").rglob("*.json")
        if "entity" in p.parts
    }
