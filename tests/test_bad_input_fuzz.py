"""Bad-input fuzz: broken files in the tree and bad arguments, through every command.

Each case plants one broken thing (a record that is a FIFO, a directory, invalid JSON, a schema
violation, a config with an impossible setting, ...) in a fresh copy of a small tree, or passes
a bad argument, and runs one command through the real entry point (``planning_memory.cli.main``)
in-process. Every case must give:

* no traceback (exit code 70 is a bug);
* no hang: a SIGALRM guard fails the case after ``HANG_S`` (a FIFO opened for reading blocks
  until a writer comes, so a reader that does not refuse it hangs here);
* no "wrote then failed": a command that fails changes no file of the tree (the derived index
  aside), and no temp file is left; a command that writes and cannot finish (a view it cannot
  refresh) exits 0 with a warning;
* at most one stderr line naming the broken file (reading commands warn once and go on).

The block at the end adds the cases of broken views and preferences, huge hand-edited files,
text that is not UTF-8 and a full disk, and checks what each of those must give.
"""

from __future__ import annotations

import contextlib
import ctypes
import io
import json
import os
import shutil
import signal
import struct
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from planning_memory.cli import main
from planning_memory.core import codec
from planning_memory.memory import Memory
from planning_memory.store import TEMP_SUFFIX

PMEM = str(Path(sys.executable).parent / "pmem")
HANG_S = 10
LT = ".planning/memory/long-term"
DERIVED = (".planning/memory/contextual", ".planning/.lock")


class Hang(BaseException):  # not an Exception: the CLI must not turn it into an error
    pass


@contextlib.contextmanager
def guard(seconds: int) -> Iterator[None]:
    def fire(signum: int, frame: Any) -> None:
        raise Hang

    old = signal.signal(signal.SIGALRM, fire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


SEED_COMMANDS = (
    ["init"],
    ["save", "Use zod for request validation", "-t", "pattern", "--tag", "ts"],
    ["save", "Do not use any", "-t", "mistake", "--correction", "use unknown"],
    ["save", "JWT sessions", "-t", "decision", "--why", "edge runtime"],
    ["prefs", "set", "code_style.quotes", "single"],
)


def seeded_tree(root: Path, *more: list[str]) -> Path:
    """A git repository at ``root`` with one source file, after ``SEED_COMMANDS`` and ``more``."""
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / "app.py").write_text("def handler(x):\n    return x\n")
    for argv in (*SEED_COMMANDS, *more):
        subprocess.run([PMEM, "-C", str(root), *argv], check=True, capture_output=True)
    return root


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return seeded_tree(tmp_path_factory.mktemp("template") / "repo")


def first(root: Path, folder: str) -> Path:
    return sorted((root / LT / folder).glob("*.json"))[0]


# -- what is planted ---------------------------------------------------------------------------
def _rewrite(folder: str, change: Callable[[dict[str, Any]], None]) -> Callable[[Path], Path]:
    def plant(root: Path) -> Path:
        path = first(root, folder)
        value = codec.loads(path.read_bytes())
        change(value)
        path.write_text(codec.dumps(value))
        return path

    return plant


def _set(**changes: Any) -> Callable[[dict[str, Any]], None]:
    return lambda v: v.update(changes)


def _drop(key: str) -> Callable[[dict[str, Any]], None]:
    return lambda v: v.pop(key, None)


def _bytes(folder: str, data: bytes) -> Callable[[Path], Path]:
    def plant(root: Path) -> Path:
        path = first(root, folder)
        path.write_bytes(data)
        return path

    return plant


def _fifo(folder: str) -> Callable[[Path], Path]:
    def plant(root: Path) -> Path:
        path = first(root, folder)
        path.unlink()
        os.mkfifo(path)
        return path

    return plant


def _new_fifo(folder: str) -> Callable[[Path], Path]:
    def plant(root: Path) -> Path:
        path = root / LT / folder / "lrn_fifo.json"
        os.mkfifo(path)
        return path

    return plant


def _directory(folder: str) -> Callable[[Path], Path]:
    def plant(root: Path) -> Path:
        path = first(root, folder)
        path.unlink()
        path.mkdir()
        return path

    return plant


def _link(folder: str, target: str) -> Callable[[Path], Path]:
    def plant(root: Path) -> Path:
        path = first(root, folder)
        path.unlink()
        path.symlink_to(target)
        return path

    return plant


def _config(change: Callable[[dict[str, Any]], None]) -> Callable[[Path], Path]:
    def plant(root: Path) -> Path:
        path = root / ".planning/memory-config.json"
        value = codec.loads(path.read_bytes())
        change(value)
        path.write_text(codec.dumps(value))
        return path

    return plant


def _config_bytes(data: bytes) -> Callable[[Path], Path]:
    def plant(root: Path) -> Path:
        path = root / ".planning/memory-config.json"
        path.write_bytes(data)
        return path

    return plant


def _contextual(**values: Any) -> Callable[[dict[str, Any]], None]:
    return lambda v: v["memory"]["contextual"].update(values)


def _short_term(**values: Any) -> Callable[[dict[str, Any]], None]:
    return lambda v: v["memory"]["shortTerm"].update(values)


PLANTS: dict[str, Callable[[Path], Path]] = {}
for _folder in ("patterns", "mistakes", "learnings"):
    PLANTS |= {
        f"{_folder}-fifo": _fifo(_folder),
        f"{_folder}-directory": _directory(_folder),
        f"{_folder}-invalid-json": _bytes(_folder, b'{"type": "pattern",'),
        f"{_folder}-empty": _bytes(_folder, b""),
        f"{_folder}-bom": _bytes(_folder, b'\xef\xbb\xbf{"a": 1}'),
        f"{_folder}-conflict": _bytes(_folder, b'<<<<<<< ours\n{"a": 1}\n=======\n{}\n>>>>>>> x\n'),
        f"{_folder}-array": _bytes(_folder, b"[1, 2, 3]\n"),
        f"{_folder}-dev-zero": _link(_folder, "/dev/zero"),
        f"{_folder}-dangling": _link(_folder, "/nonexistent/x.json"),
        f"{_folder}-tags-int": _rewrite(_folder, _set(tags=5)),
        f"{_folder}-body-null": _rewrite(_folder, _set(body=None)),
        f"{_folder}-no-title": _rewrite(_folder, _drop("title")),
        f"{_folder}-created-garbage": _rewrite(_folder, _set(created_at="garbage")),
        f"{_folder}-unknown-type": _rewrite(_folder, _set(type="weird")),
        f"{_folder}-id-int": _rewrite(_folder, _set(id=7)),
        f"{_folder}-anchors-str": _rewrite(_folder, _set(anchors="a")),
    }
PLANTS |= {
    "patterns-usage-string": _rewrite("patterns", _set(usage_count="x")),
    "patterns-usage-1e30": _rewrite("patterns", _set(usage_count=1e30)),
    "patterns-no-name": _rewrite("patterns", _drop("name")),
    "patterns-established-str": _rewrite("patterns", _set(established="yes")),
    "mistakes-occurrences-neg": _rewrite("mistakes", _set(occurrences=-3)),
    "mistakes-severity-bad": _rewrite("mistakes", _set(severity="apocalyptic")),
    "learnings-new-fifo": _new_fifo("learnings"),
}
CONFIG_PLANTS: dict[str, Callable[[Path], Path]] = {
    "config-overlap-over-size": _config(_contextual(chunkOverlap=600, chunkSize=500)),
    "config-overlap-equal-size": _config(_contextual(chunkOverlap=500, chunkSize=500)),
    "config-bogus-timezone": _config(_short_term(timezone="Mars/Olympus_Mons")),
    "config-invalid-json": _config_bytes(b'{"memory": '),
    "config-fifo": lambda root: _replace_with_fifo(root / ".planning/memory-config.json"),
}


def _replace_with_fifo(path: Path) -> Path:
    path.unlink()
    os.mkfifo(path)
    return path


COMMANDS: list[list[str]] = [
    ["patterns"],
    ["mistakes"],
    ["show"],
    ["stats"],
    ["context", "zod validation"],
    ["search", "zod"],
    ["reindex"],
    ["render"],
    ["render", "--check"],
    ["sync"],
    ["validate"],
    ["export"],
    ["save", "Prefer small functions", "-t", "pattern"],
    ["save", "Use zod for request validation", "-t", "pattern"],
    ["learn", "always use pnpm, never npm"],
    ["timeline", "zod"],
    ["resolve"],
]
READS = {  # reading command -> the record folders it reads (it must warn of a broken file)
    "patterns": ("patterns",),
    "mistakes": ("mistakes",),
    "show": ("patterns", "mistakes", "learnings"),
    "context": ("patterns", "mistakes", "learnings"),
    "search": ("patterns", "mistakes", "learnings"),
    "reindex": ("patterns", "mistakes", "learnings"),
}

BAD_ARGS: list[list[str]] = [
    ["save", "   "],
    ["save", ""],
    ["save", "\t\n"],
    ["context", "x", "--budget", "0"],
    ["context", "x", "--budget", "-5"],
    ["context", "x", "--budget", "99999999"],
    ["context", "x", "--budget", "abc"],
    ["resolve", "/etc/passwd"],
    ["resolve", "/nonexistent/file.json"],
    ["resolve", "app.py"],
    ["import", "/dev/zero"],
    ["import", "/dev/null"],
    ["import", "/nonexistent.json"],
    ["import", "/etc/passwd"],
    ["import", "."],
    ["export", "-o", ".planning/memory-config.json"],
    ["export", "-o", ".planning/memory-config.json", "--force"],
    ["export", "-o", "app.py"],
    ["export", "-o", "/dev/null"],
    ["export", "-o", "/nonexistent/dir/out.json"],
    ["pin", "pat_doesnotexist"],
    ["pin", "../../etc/passwd"],
    ["pin", "pat_\x00"],
    ["forget", "mis_nope"],
    ["forget", "../x"],
    ["search", ""],
    ["search", "zod", "-n", "-1"],
    ["search", "zod", "-n", "0"],
    ["timeline", "nonexistent_id"],
    ["entity", "file", "/etc/passwd"],
    ["save", "x" * 100_000],
    ["save", "ok", "--topic", "../../evil"],
    ["save", "ok", "--anchor", "/etc/passwd"],
    ["learn", ""],
    ["learn", "   "],
    ["session", "show", "ses_nope"],
    ["validate", "/dev/zero"],
    ["validate", "/nonexistent"],
]


@dataclass
class Outcome:
    name: str
    code: int
    err: str
    seconds: float
    hang: bool = False


def snapshot(root: Path) -> dict[str, bytes | str]:
    found: dict[str, bytes | str] = {}
    for folder, dirs, files in os.walk(root / ".planning"):
        for name in files + [d for d in dirs if (Path(folder) / d).is_symlink()]:
            path = Path(folder) / name
            rel = path.relative_to(root).as_posix()
            if rel.startswith(DERIVED):
                continue
            if path.is_symlink():
                found[rel] = "link:" + os.readlink(path)
            elif path.is_file():
                found[rel] = path.read_bytes()
            else:
                found[rel] = "special"
    return found


def restore(root: Path, pristine: dict[str, bytes | str]) -> None:
    """Put the tree back as ``pristine`` (the derived index aside): what a case planted or a
    command wrote goes (cheaper than a fresh copy per case)."""
    now = snapshot(root)
    for rel in now.keys() - pristine.keys():
        _remove(root / rel)
    for rel, data in pristine.items():
        path = root / rel
        if now.get(rel) != data or (path.is_dir() and not path.is_symlink()):
            _remove(path)
            path.parent.mkdir(parents=True, exist_ok=True)
            assert isinstance(data, bytes)
            path.write_bytes(data)
    for folder in ("patterns", "mistakes", "learnings"):  # a planted folder named *.json
        for path in (root / LT / folder).iterdir():
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.is_symlink() or path.exists():
        path.unlink()


def run(argv: list[str], root: Path) -> Outcome:
    return run_main(argv, root)[0]


def run_main(argv: list[str], root: Path, stdin: bytes = b"") -> tuple[Outcome, str]:
    """The real entry point in ``root`` with ``stdin``, on streams with a ``buffer`` (a hook
    writes bytes), under the hang guard: its outcome and its stdout."""
    streams = [io.TextIOWrapper(io.BytesIO(), "utf-8", "backslashreplace") for _ in range(2)]
    saved = sys.stdin, sys.stdout, sys.stderr
    sys.stdin = io.TextIOWrapper(io.BytesIO(stdin))
    sys.stdout, sys.stderr = streams
    code, hang, cwd, began = 0, False, os.getcwd(), time.monotonic()
    os.chdir(root)
    try:
        with guard(HANG_S):
            try:
                main(argv)
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else 1
    except Hang:
        hang = True
    finally:
        os.chdir(cwd)
        sys.stdin, sys.stdout, sys.stderr = saved
    out, err = (_text(stream) for stream in streams)
    name = " ".join(argv)[:60].encode("utf-8", "backslashreplace").decode()  # a lone surrogate
    return Outcome(name, code, err, time.monotonic() - began, hang), out


def cases() -> list[tuple[str, list[str]]]:
    found = [(plant, cmd) for plant in PLANTS for cmd in COMMANDS]
    found += [(plant, cmd) for plant in CONFIG_PLANTS for cmd in COMMANDS]
    found += [("", argv) for argv in BAD_ARGS]
    return found


@pytest.mark.slow
def test_bad_input_fuzz(template: Path, tmp_path: Path) -> None:
    problems: list[str] = []
    counts = {"cases": 0, "tracebacks": 0, "hangs": 0, "wrote_then_failed": 0, "warned_twice": 0}
    slowest = 0.0
    plants = {**PLANTS, **CONFIG_PLANTS}
    began = time.monotonic()
    took: dict[str, float] = {}
    root = tmp_path / "repo"
    shutil.copytree(template, root, symlinks=True)
    pristine = snapshot(root)
    for plant, argv in cases():
        broken = plants[plant](root).relative_to(root).as_posix() if plant else None
        before = snapshot(root)
        result = run(argv, root)
        counts["cases"] += 1
        slowest = max(slowest, result.seconds)
        where = f"{plant or 'args'} | {result.name}"
        if result.hang:
            counts["hangs"] += 1
            problems.append(f"hang: {where}")
        if result.code == 70 or "Traceback" in result.err:
            counts["tracebacks"] += 1
            problems.append(f"traceback: {where}: {result.err[-300:]}")
        after = snapshot(root)
        if list(root.rglob("*.pm-tmp")) or (result.code != 0 and after != before):
            counts["wrote_then_failed"] += 1
            changed = sorted(k for k in {*before, *after} if before.get(k) != after.get(k))
            problems.append(f"wrote then failed ({result.code}): {where}: {changed[:3]}")
        if broken is not None:
            naming = [line for line in result.err.splitlines() if Path(broken).name in line]
            if len(naming) > 1:
                counts["warned_twice"] += 1
                problems.append(f"{len(naming)} lines name {broken}: {where}")
            folder = plant.split("-", 1)[0]
            if result.code == 0 and folder in READS.get(argv[0], ()) and not naming:
                problems.append(f"served without a warning: {where}")
        restore(root, pristine)
        took[argv[0]] = took.get(argv[0], 0.0) + result.seconds
    elapsed = time.monotonic() - began
    print(
        f"\n{counts['cases']} bad inputs ({len(PLANTS)} broken records and "
        f"{len(CONFIG_PLANTS)} broken configs x {len(COMMANDS)} commands, {len(BAD_ARGS)} bad "
        f"arguments) in {elapsed:.1f} s: {counts['tracebacks']} tracebacks, {counts['hangs']} "
        f"hangs, {counts['wrote_then_failed']} wrote then failed, {counts['warned_twice']} "
        f"files warned about twice; slowest case {slowest:.2f} s"
    )
    print("seconds per command:", {k: round(v, 1) for k, v in sorted(took.items())})
    assert counts["cases"] >= 800
    assert problems == [], "\n".join(problems[:40])


# == Broken views and preferences, huge hand-edited files, text that is not UTF-8, a full disk ==
# The cases this block adds to the tables above run through ``test_bad_input_fuzz`` like every
# other; the tests below check what they must give. The rule of a write: check everything it
# touches first (fail with one line, write nothing), or write and warn (exit 0) when what is
# left undone is only derived (a view re-rendered from the records); never write and fail.

PREFS = f"{LT}/preferences.json"
PASTE_ITEMS = 50_000  # a paste of about 2 MB into a view: refused by its size, never parsed
SAVE = ["save", "Prefer small functions", "-t", "pattern"]
LEARN = ["learn", "always use pnpm, never npm"]  # it sets tooling.package_manager as well


def _in_place(rel: str, make: Callable[[Path], object]) -> Callable[[Path], Path]:
    """A plant: ``make(path)`` where the file ``rel`` was."""

    def plant(root: Path) -> Path:
        path = root / rel
        _remove(path)
        make(path)
        return path

    return plant


def _pasted(rel: str) -> Callable[[Path], Path]:
    def plant(root: Path) -> Path:
        path = root / rel
        with path.open("a", encoding="utf-8") as fh:
            fh.write("".join(f"\n## Pasted {i}\n\ntext {i}\n" for i in range(PASTE_ITEMS)))
        return path

    return plant


def _unparsable(rel: str) -> Callable[[Path], Path]:
    """A hand edit that cannot be parsed: a code fence opened above the first item."""

    def plant(root: Path) -> Path:
        path = root / rel
        path.write_text(path.read_text("utf-8").replace("\n## ", "\n```\n## ", 1), "utf-8")
        return path

    return plant


BROKEN: dict[str, Callable[[Path], object]] = {
    "fifo": os.mkfifo,
    "directory": Path.mkdir,
    "link-loop": lambda p: p.symlink_to(p.name),
    "binary": lambda p: p.write_bytes(bytes(range(256)) * 64),
}
BIG_PREFERENCES = {
    "updated_at": "2026-01-01T00:00:00Z",
    "notes": {f"k{i}": "x" * 1000 for i in range(1100)},
}
for _view in ("patterns.md", "mistakes.md"):
    PLANTS |= {f"{_view}-{k}": _in_place(f".planning/{_view}", m) for k, m in BROKEN.items()}
    PLANTS[f"{_view}-unparsable"] = _unparsable(f".planning/{_view}")
    PLANTS[f"{_view}-pasted"] = _pasted(f".planning/{_view}")
PLANTS |= {
    f"preferences.json-{kind}": _in_place(PREFS, make)
    for kind, make in {
        **BROKEN,
        "garbage": lambda p: p.write_text("{{{ not json"),
        "array": lambda p: p.write_text("[]\n"),
        "over-1mib": lambda p: p.write_text(codec.dumps(BIG_PREFERENCES)),
    }.items()
}
PLANTS |= {
    "patterns-10000-tags": _rewrite("patterns", _set(tags=[f"t{i:05}" for i in range(10_000)])),
    "scope-personal-in-project": _rewrite("learnings", _set(scope="personal")),
}
CONFIG_PLANTS |= {
    "config-directory": _in_place(".planning/memory-config.json", Path.mkdir),
    "config-over-1mib": _config(
        lambda v: v["memory"]["entity"].update(
            excludePatterns=[f"{i}/{'x' * 900}" for i in range(1200)]
        )
    ),
    "config-claude-md-10": _config(lambda v: v["memory"]["render"].update(claudeMdMaxChars=10)),
}
BAD_ARGS += [  # a lone surrogate: what Python makes of an argument that is not UTF-8
    ["save", "bad \udcff title"],
    ["save", "ok", "-t", "pattern", "--tag", "t\udcff"],
    ["learn", "always use pnpm\udcff"],
    ["search", "zod \udcff"],
    ["context", "zod \udcff"],
    ["prefs", "set", "code_style.quotes", "\udcff"],
    ["session", "log", "hello \udcff"],
    ["save", "many tags", *[arg for i in range(10_000) for arg in ("--tag", f"t{i}")]],
]


@pytest.fixture
def repo(template: Path, tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    shutil.copytree(template, root, symlinks=True)
    return root


def _records(root: Path) -> list[Path]:
    return sorted((root / LT).glob("*/*.json"))


def _naming(result: Outcome, name: str) -> list[str]:
    return [line for line in result.err.splitlines() if name in line]


VIEW_PLANTS = [p for p in PLANTS if p.endswith(tuple(f"md-{k}" for k in BROKEN))]


@pytest.mark.parametrize("plant", VIEW_PLANTS)
def test_a_write_beside_a_broken_view_is_kept_and_the_view_named(repo: Path, plant: str) -> None:
    """The record is what was asked for and the source of truth; the view is only rendered
    from it. So the save stands (exit 0, one record more, not two on a retry) and one warning
    says which view was not refreshed and how to bring it back."""
    broken = PLANTS[plant](repo)
    for argv in (SAVE, LEARN):
        before = len(_records(repo))
        result = run(argv, repo)
        assert result.code == 0, result.err
        assert len(_records(repo)) == before + 1
        (warning,) = _naming(result, broken.name)
        assert "not refreshed" in warning and "the change itself was saved" in warning
        assert "`pmem render`" in warning


@pytest.mark.parametrize("plant", [p for p in PLANTS if p.startswith("preferences.json-")])
def test_a_broken_preferences_file_stops_learn_before_it_writes(repo: Path, plant: str) -> None:
    """`learn` must update preferences.json: a broken one refuses it before anything is
    written. `save` needs it only to render CLAUDE.md: the save stands, CLAUDE.md is named."""
    PLANTS[plant](repo)
    before = snapshot(repo)
    result = run(LEARN, repo)
    assert result.code == 4 and not result.hang
    (line,) = result.err.splitlines()
    assert "preferences.json" in line and "nothing was saved" in line
    assert snapshot(repo) == before
    result = run(SAVE, repo)
    assert result.code == 0, result.err
    (warning,) = _naming(result, "preferences.json")
    assert "CLAUDE.md was not refreshed" in warning


@pytest.mark.parametrize("view", ["patterns.md", "mistakes.md"])
def test_a_pasted_view_is_refused_by_its_size_before_it_is_parsed(repo: Path, view: str) -> None:
    """A 2 MB paste took minutes and a gigabyte to parse and import; it is refused at once."""
    path = PLANTS[f"{view}-pasted"](repo)
    before = snapshot(repo)
    result = run(["sync"], repo)
    assert (result.code, result.hang) == (4, False), result.err
    (line,) = result.err.splitlines()
    assert f"is {path.stat().st_size:,} bytes" in line and "nothing was imported" in line
    assert snapshot(repo) == before


@pytest.mark.parametrize(
    ("plant", "argv", "code"),
    [("config-over-1mib", ["show"], 2), ("preferences.json-over-1mib", ["prefs"], 4)],
)
def test_a_hand_edited_json_file_over_its_limit_is_refused(
    repo: Path, plant: str, argv: list[str], code: int
) -> None:
    """Valid JSON, but over 1 MiB: refused by its size (before it is read), naming the file."""
    path = {**PLANTS, **CONFIG_PLANTS}[plant](repo)
    result = run(argv, repo)
    assert result.code == code
    (line,) = result.err.splitlines()
    assert path.name in line and "over the 1,048,576-byte limit" in line


@pytest.mark.parametrize("plant", ["config-fifo", "config-directory"])
def test_a_config_that_is_not_a_file_is_an_error_not_the_defaults(repo: Path, plant: str) -> None:
    CONFIG_PLANTS[plant](repo)
    result = run(["show"], repo)
    assert (result.code, result.hang) == (2, False)
    (line,) = result.err.splitlines()
    assert "memory-config.json" in line and ("FIFO" in line or "directory" in line)


@pytest.mark.parametrize(
    ("plant", "where", "says"),
    [
        ("scope-personal-in-project", "$.scope", "live only in the personal store"),
        ("patterns-10000-tags", "$.tags", "10,000 items; at most 100 are allowed"),
        ("config-claude-md-10", "$.memory.render.claudeMdMaxChars", "minimum of 1000"),
    ],
)
def test_validate_refuses(repo: Path, plant: str, where: str, says: str) -> None:
    path = {**PLANTS, **CONFIG_PLANTS}[plant](repo)
    assert run(["validate"], repo).code == 1
    found = [(f.path, f.json_path) for f in Memory.validate(repo).findings if says in f.message]
    assert found == [(path.relative_to(repo).as_posix(), where)]


def test_a_personal_record_in_the_personal_store_is_valid(repo: Path) -> None:
    mem = Memory(repo)
    saved = mem.save("Prefer tabs in my editor", "learning", scope="personal")
    personal = mem.personal().layout
    assert personal.planning != mem.layout.planning
    assert personal.record_path("learning", saved.record["id"]).is_file()
    scoped = [f for f in Memory.validate(personal.planning).findings if f.json_path == "$.scope"]
    assert scoped == []


def test_context_warns_of_a_broken_record_on_every_run(repo: Path) -> None:
    """A record broken after the index was built (replaced whole, as an editor or git does)
    is named by every `pmem context` after, once each time, like every command that reads
    the records; not only by the one that found it."""
    assert run(["context", "zod validation"], repo).code == 0  # the index is built
    broken = first(repo, "patterns")
    swap = broken.with_name(".swap")
    swap.write_bytes(b'{"type": "pattern",')
    swap.replace(broken)
    for _ in range(3):
        result = run(["context", "zod validation"], repo)
        assert result.code == 0
        assert len(_naming(result, broken.name)) == 1, result.err


# -- a full disk, for real: a small tmpfs in a mount namespace of its own ------------------------
FREE_KIB = (0, 8, 16, 32, 64, 128)  # what is left free on the disk for each round
FULL_DISK_COMMANDS = (SAVE, LEARN, ["reindex"], ["prefs", "set", "testing.framework", "vitest"])


def _fill(path: Path, free_kib: int) -> None:
    """Fill the file system of ``path`` with ``path``, then give back ``free_kib``."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    try:
        for chunk in (b"\0" * (1 << 20), b"\0" * 4096):
            with contextlib.suppress(OSError):  # ENOSPC: full for chunks of this size
                while True:
                    os.write(fd, chunk)
    finally:
        os.close(fd)
    os.truncate(path, max(0, path.stat().st_size - free_kib * 1024))


def full_disk_child() -> None:
    """Run by ``test_a_full_disk_...`` inside ``unshare -m`` with a small tmpfs at
    ``sys.argv[2]``: the tree ``sys.argv[1]`` copied onto it, then for each of ``FREE_KIB`` and
    each of ``FULL_DISK_COMMANDS``, the disk filled to leave that much, the command run as a
    process, the disk emptied and the tree validated; one JSON line per run on stdout."""
    template, disk = Path(sys.argv[1]), Path(sys.argv[2])
    root = disk / "repo"
    shutil.copytree(template, root, symlinks=True)
    subprocess.run([PMEM, "-C", str(root), "reindex"], check=True, capture_output=True)
    pristine = snapshot(root)
    for free in FREE_KIB:
        for argv in FULL_DISK_COMMANDS:
            _fill(disk / "filler", free)
            before = snapshot(root)
            done = subprocess.run(
                [PMEM, "-C", str(root), *argv], capture_output=True, text=True, timeout=120
            )
            after = snapshot(root)
            (disk / "filler").unlink()
            run_ = {
                "free": free,
                "argv": argv,
                "code": done.returncode,
                "err": done.stderr,
                "changed": sorted(k for k in {*before, *after} if before.get(k) != after.get(k)),
                "temps": sorted(str(p) for p in root.rglob("*" + TEMP_SUFFIX)),
                "findings": [f.line() for f in Memory.validate(root).findings],
            }
            print(json.dumps(run_), flush=True)
            restore(root, pristine)


@pytest.mark.slow
def test_a_full_disk_is_one_line_and_nothing_half_written(template: Path, tmp_path: Path) -> None:
    """`pmem save`, `learn`, `reindex` and `prefs set` on a full disk (sqlite's "database or
    disk is full", ENOSPC from a write or an fsync): exit 74 with one line naming what could
    not be written and nothing changed, or (the record saved, a view left stale) exit 0 with a
    warning; never a traceback, never a temp file left, every file whole."""
    disk = tmp_path / "disk"
    disk.mkdir()
    mount = ["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(disk)]
    if shutil.which("unshare") is None:
        pytest.skip("no unshare(1) to mount a small tmpfs in a mount namespace of its own")
    probe = subprocess.run(["unshare", "-m", *mount], capture_output=True, text=True)
    if probe.returncode != 0:
        pytest.skip(f"a tmpfs cannot be mounted here (needs root): {probe.stderr.strip()}")
    child = f"import sys; sys.path.insert(0, {str(Path(__file__).parent)!r}); "
    child += "import test_bad_input_fuzz; test_bad_input_fuzz.full_disk_child()"
    script = f'{" ".join(mount)} && exec "$@"'
    done = subprocess.run(
        [
            "unshare",
            "-m",
            "sh",
            "-c",
            script,
            "sh",
            sys.executable,
            "-c",
            child,
            str(template),
            str(disk),
        ],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    runs = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(runs) == len(FREE_KIB) * len(FULL_DISK_COMMANDS)
    problems: list[str] = []
    counts = dict.fromkeys(("refused", "saved with a warning", "saved"), 0)
    counts |= dict.fromkeys(("tracebacks", "wrote then failed", "temp files", "torn"), 0)
    for got in runs:
        where = f"{got['free']} KiB free | {' '.join(got['argv'])}"
        lines = got["err"].splitlines()
        if got["code"] not in (0, 74) or "Traceback" in got["err"]:
            counts["tracebacks"] += 1
            problems.append(f"exit {got['code']}: {where}: {got['err'][-300:]}")
        elif got["code"] == 74:
            counts["refused"] += 1
            if len(lines) != 1 or "cannot write" not in lines[0] or ".planning/" not in lines[0]:
                problems.append(f"not one line naming the file: {where}: {lines}")
            if got["changed"]:
                counts["wrote then failed"] += 1
                problems.append(f"wrote then failed: {where}: {got['changed']}")
        else:
            warned = any(line.startswith("pmem: warning:") for line in lines)
            counts["saved with a warning" if warned else "saved"] += 1
        if got["temps"]:
            counts["temp files"] += 1
            problems.append(f"temp files left: {where}: {got['temps']}")
        if got["findings"]:
            counts["torn"] += 1
            problems.append(f"invalid after: {where}: {got['findings'][:3]}")
    shape = f"{len(FREE_KIB)} levels x {len(FULL_DISK_COMMANDS)} commands"
    print(f"\nfull disk: {len(runs)} runs ({shape}):", counts)
    assert problems == [], "\n".join(problems)
    assert counts["refused"] > 0, "the disk was never full: nothing was tested"


# -- a hostile clone: symlinks at every path pmem writes; file names that are not UTF-8 ----------
# A cloned repository may carry ``.planning/.lock -> ~/.bashrc`` or a record folder that is a
# link to a folder elsewhere. Each case below plants one such link (pointing at a canary file or
# folder outside the repository, whose files hold MARK in their text) and runs one command.
# Besides no traceback and no hang, every case must give: no write outside the repository (the
# canaries unchanged, nothing added beside them), no read out of it (the kernel saw no open of
# anything there, and MARK is nowhere in the output or in the tree, the index included), and a
# command that refuses exits 4 (a hook 0) with one line naming the link, having changed nothing.
MARK = "canaryoutside7f3a"  # one FTS token: found in the index too if a read let it in
CTX = ".planning/memory/contextual"
ST = ".planning/memory/short-term"
LINKED_FILES = [  # every file pmem writes under .planning/ ("*": the folder's first file)
    ".planning/.lock",
    ".planning/.gitignore",
    ".planning/memory-config.json",
    ".planning/patterns.md",
    ".planning/mistakes.md",
    ".planning/CLAUDE.md",
    f"{LT}/preferences.json",
    f"{LT}/patterns/*",
    f"{LT}/mistakes/*",
    f"{LT}/learnings/*",
    f"{LT}/patterns/pat_01NEWRECORD0000000000000000.json",
    ".planning/memory/entity/relationships.json",
    ".planning/memory/entity/files/_shard.json",
    f"{ST}/session-*",
    f"{ST}/claude-code/*",
    f"{CTX}/index.sqlite3",
    f"{CTX}/index.sqlite3-wal",
    f"{CTX}/index.sqlite3-shm",
    f"{CTX}/index.sqlite3-journal",
    f"{CTX}/index.sqlite3.build",
    f"{CTX}/longterm.sqlite3",
    f"{CTX}/longterm.sqlite3-wal",
    f"{CTX}/longterm.sqlite3-shm",
    f"{CTX}/.config-valid",
    f"{CTX}/entity-hashes.json",
    f"{CTX}/annotated-at.json",
    f"{CTX}/recent-queries.jsonl",
    f"{CTX}/recent-queries.jsonl.1",
    f"{CTX}/watch.lock",
    f"{CTX}/watch.pid",
    f"{CTX}/watch.log",
    f"{CTX}/watch-status.json",
    f"{CTX}/views/patterns.md",
    f"{CTX}/views/mistakes.md",
    f"{CTX}/views/cache/index.json",
    f"{CTX}/views/cache/index.json.delta",
    f"{CTX}/views/cache/patterns.items",
    f"{CTX}/views/cache/claude.items.delta",
]
LINKED_FOLDERS = [
    ".planning/memory",
    LT,
    f"{LT}/patterns",
    f"{LT}/mistakes",
    f"{LT}/learnings",
    ST,
    f"{ST}/claude-code",
    ".planning/memory/entity",
    ".planning/memory/entity/files",
    CTX,
    f"{CTX}/views",
    f"{CTX}/views/cache",
]
PERSONAL_LINKS = [".lock", "memory/long-term/patterns", "memory/long-term/patterns/*"]
HOOK_CWD = "{{CWD}}"
HOSTILE_COMMANDS: list[list[str]] = [
    ["save", "Prefer small functions", "-t", "pattern"],
    ["learn", "always use pnpm, never npm"],
    ["prefs", "set", "testing.coverage", "80"],
    ["render"],
    ["sync"],
    ["reindex"],
    ["context", "zod validation"],
    ["search", "zod"],
    ["scan"],
    ["entity", "annotate", "app.py", "--note", "the handler"],
    ["session", "start", "--goal", "Add login"],
    ["show"],
    ["validate"],
    ["watch", "status"],
    ["hook", "claude-code", "SessionStart"],
    ["hook", "claude-code", "UserPromptSubmit"],
]
PERSONAL_COMMANDS: list[list[str]] = [
    ["save", "Prefer tabs", "-t", "pattern", "--scope", "personal"],
    ["show"],
    ["context", "tabs"],
]
HOOK_PAYLOADS = {
    "SessionStart": {"hook_event_name": "SessionStart", "source": "startup"},
    "UserPromptSubmit": {"prompt": "Always use pnpm instead of npm in this repo"},
}
CLAUDE_ID = "9f1c2a4e-5b6d-4c3e-8a1f-0d2e3c4b5a61"


@pytest.fixture(scope="module")
def full_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tree in which pmem has written every kind of file it writes."""
    root = seeded_tree(
        tmp_path_factory.mktemp("full") / "repo",
        ["session", "start", "--goal", "Add login"],
        ["session", "log", "Use NextAuth", "--role", "user"],
        ["session", "end"],
        ["scan"],
        ["entity", "annotate", "app.py", "--note", "entry point"],
        ["reindex"],
        ["search", "zod"],
        ["render"],
    )
    payload = json.dumps({"session_id": CLAUDE_ID, "cwd": str(root), "source": "startup"})
    subprocess.run(
        [PMEM, "hook", "claude-code", "SessionStart"], input=payload, text=True, cwd=root,
        check=True, capture_output=True,
    )  # fmt: skip
    return root


def _marked(data: bytes) -> bytes:
    """``data`` with MARK in its first title (a record read through a link would show it)."""
    if b'"title": "' in data:
        return data.replace(b'"title": "', f'"title": "{MARK} '.encode(), 1)
    return data if data else f"{MARK}\n".encode()


def _resolve(base: Path, rel: str) -> Path:
    if "*" not in rel:
        return base / rel
    found = sorted(p for p in base.glob(rel) if not p.name.startswith("."))
    assert found, f"the template has no {rel}"
    return found[0]


def _link_file(base: Path, rel: str, outside: Path) -> Path:
    """Replace the file at ``rel`` (made if absent) with a link to a canary outside."""
    path = _resolve(base, rel)
    canary = outside / path.name
    data = path.read_bytes() if path.is_file() else b""
    canary.write_bytes(_marked(data))
    if path.is_file():
        path.unlink()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.symlink_to(canary)
    return path


def _link_folder(base: Path, rel: str, outside: Path) -> Path:
    """Move the folder ``rel`` outside (its files marked) and leave a link to it."""
    path = base / rel
    canary = outside / path.name
    shutil.copytree(path, canary, symlinks=True)
    for file in canary.rglob("*"):
        if file.is_file() and not file.is_symlink():
            file.write_bytes(_marked(file.read_bytes()))
    shutil.rmtree(path)
    path.symlink_to(canary, target_is_directory=True)
    return path


def _files_of(folder: Path) -> dict[str, bytes | str]:
    found: dict[str, bytes | str] = {}
    for here, dirs, files in os.walk(folder):
        for name in files + dirs:
            path = Path(here) / name
            rel = path.relative_to(folder).as_posix()
            if path.is_symlink():
                found[rel] = "link:" + os.readlink(path)
            elif path.is_file():
                found[rel] = path.read_bytes()
            elif not path.is_dir():
                found[rel] = "special"
    return found


class Touches:
    """Every open, read or write of a file or folder under ``folder``, from the kernel
    (inotify): how a case tells that a command went through a link out of the tree, even one
    that changed nothing there and printed nothing it read."""

    def __init__(self, folder: Path) -> None:
        self.fd = _LIBC.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        assert self.fd >= 0, os.strerror(ctypes.get_errno())
        self.names: dict[int, str] = {}
        for here in [folder, *(p for p in folder.rglob("*") if p.is_dir())]:
            wd = _LIBC.inotify_add_watch(self.fd, os.fsencode(here), 0xFFF)  # IN_ALL_EVENTS
            assert wd >= 0, os.strerror(ctypes.get_errno())
            self.names[wd] = here.name

    def seen(self) -> list[str]:
        """The names touched since the last call."""
        found = []
        while True:
            try:
                data = os.read(self.fd, 1 << 16)
            except BlockingIOError:
                return found
            at = 0
            while at < len(data):
                wd, _mask, _cookie, size = struct.unpack_from("iIII", data, at)
                name = data[at + 16 : at + 16 + size].rstrip(b"\0").decode("utf-8", "replace")
                found.append(name or self.names.get(wd, "?"))
                at += 16 + size

    def close(self) -> None:
        os.close(self.fd)


_LIBC = ctypes.CDLL(None, use_errno=True)


def _marked_files(root: Path) -> list[str]:
    return [
        p.relative_to(root).as_posix()
        for p in (root / ".planning").rglob("*")
        if p.is_file() and not p.is_symlink() and MARK.encode() in p.read_bytes()
    ]


def run_hostile(argv: list[str], root: Path) -> tuple[Outcome, str]:
    """``run_main`` with a hook's payload on stdin (what a hook command reads)."""
    payload = {"session_id": CLAUDE_ID, "cwd": str(root), **HOOK_PAYLOADS.get(argv[-1], {})}
    return run_main(argv, root, json.dumps(payload).encode())


def _text(stream: io.TextIOWrapper) -> str:
    stream.flush()
    buffer = stream.buffer
    assert isinstance(buffer, io.BytesIO)
    return buffer.getvalue().decode("utf-8", "replace")


def reset(root: Path, template: Path, pristine: dict[str, bytes | str]) -> None:
    """``restore``, and the derived files too (a case may have moved a derived folder)."""
    restore(root, pristine)
    for rel in (CTX, ".planning/.lock"):
        _remove(root / rel)
        if (template / rel).is_dir():
            shutil.copytree(template / rel, root / rel, symlinks=True)
        else:
            shutil.copy2(template / rel, root / rel)


@dataclass
class Figures:
    cases: int = 0
    tracebacks: int = 0
    hangs: int = 0
    writes_outside: int = 0
    reads_outside: int = 0
    wrote_then_failed: int = 0
    unclear: int = 0

    def line(self, *names: str) -> str:
        shown = names or tuple(vars(self))
        return ", ".join(f"{getattr(self, k)} {k.replace('_', ' ')}" for k in shown)


def _hook_refused(result: Outcome, link: str) -> bool:
    """A hook's refusal is its own error line naming the link (``pmem hook: EVENT: ...``); a
    record it skipped with a warning (``pmem hook: warning: ...``) and went on without is not."""
    errors = [ln for ln in result.err.splitlines() if not ln.startswith("pmem hook: warning: ")]
    return any(ln.startswith("pmem hook: ") and link in ln for ln in errors)


def _judge(
    figures: Figures,
    problems: list[str],
    where: str,
    result: Outcome,
    printed: str,
    touched: list[str],
    outside: tuple[Path, dict[str, bytes | str]],
    tree: tuple[Path, dict[str, bytes | str], dict[str, bytes | str]],
    link: str,
) -> None:
    figures.cases += 1
    if result.hang:
        figures.hangs += 1
        problems.append(f"hang: {where}")
    if result.code == 70 or "Traceback" in result.err:
        figures.tracebacks += 1
        problems.append(f"traceback: {where}: {result.err[-300:]}")
    folder, canaries = outside
    if _files_of(folder) != canaries:
        figures.writes_outside += 1
        problems.append(f"wrote outside the repository: {where}")
    root, before, after = tree
    if touched or MARK in result.err + printed or _marked_files(root):
        figures.reads_outside += 1
        problems.append(f"went through the link: {where}: {touched[:3]} {_marked_files(root)[:2]}")
    if result.code not in (0, 1, 4):
        figures.unclear += 1
        problems.append(f"exit {result.code}: {where}: {result.err[-200:]}")
    elif result.code == 4 or (result.name.startswith("hook ") and _hook_refused(result, link)):
        if after != before:  # a hook refuses as a command does, but exits 0 (never blocks)
            figures.wrote_then_failed += 1
            changed = sorted(k for k in {*before, *after} if before.get(k) != after.get(k))
            problems.append(f"wrote then failed: {where}: {changed[:3]}")
        if len([ln for ln in result.err.splitlines() if link in ln]) != 1:
            figures.unclear += 1
            problems.append(f"refused without one line naming {link}: {where}: {result.err}")


@pytest.mark.slow
def test_hostile_clone_fuzz(full_template: Path, tmp_path: Path) -> None:
    """A symlink at every path pmem writes under .planning/ (files, folders, the personal
    store's), each leading out of the repository, through the commands that write."""
    problems: list[str] = []
    figures = Figures()
    began = time.monotonic()
    root = tmp_path / "repo"
    shutil.copytree(full_template, root, symlinks=True)
    pristine = snapshot(root)
    outside = tmp_path / "outside"
    personal = Path(os.environ["XDG_STATE_HOME"]) / "planning-memory" / "personal"
    plants: list[tuple[str, Callable[[], Path], list[list[str]]]] = []
    for rel in LINKED_FILES:
        plants.append((rel, lambda rel=rel: _link_file(root, rel, outside), HOSTILE_COMMANDS))
    for rel in LINKED_FOLDERS:
        plants.append((rel, lambda rel=rel: _link_folder(root, rel, outside), HOSTILE_COMMANDS))
    for rel in PERSONAL_LINKS:
        plant = _link_folder if rel.endswith("patterns") else _link_file
        plants.append(
            (f"personal/{rel}", lambda p=plant, r=rel: p(personal, r, outside), PERSONAL_COMMANDS)
        )
    for name, plant, commands in plants:
        for argv in commands:
            outside.mkdir()
            if name.startswith("personal/"):
                run(PERSONAL_COMMANDS[0], root)  # the personal store exists, holding a record
            link = plant()
            canaries = _files_of(outside)
            before = snapshot(root)
            touches = Touches(outside)
            result, printed = run_hostile(argv, root)
            touched = touches.seen()
            touches.close()
            where = f"{name} | {result.name}"
            shown = link.relative_to(root).as_posix() if link.is_relative_to(root) else link.name
            tree = (root, before, snapshot(root))
            outcome = (result, printed, touched)
            _judge(figures, problems, where, *outcome, (outside, canaries), tree, shown)
            _remove(link)
            reset(root, full_template, pristine)
            shutil.rmtree(personal, ignore_errors=True)
            shutil.rmtree(outside)
    print(
        f"\n{figures.cases} hostile-clone cases ({len(LINKED_FILES)} linked files and "
        f"{len(LINKED_FOLDERS)} linked folders x {len(HOSTILE_COMMANDS)} commands, "
        f"{len(PERSONAL_LINKS)} personal-store links x {len(PERSONAL_COMMANDS)}) in "
        f"{time.monotonic() - began:.1f} s: {figures.line()}"
    )
    assert figures.cases >= 800
    assert problems == [], "\n".join(problems[:40])


# -- file names that are not UTF-8, in the code and in the memory tree ---------------------------
# The bytes b"caf\xe9" are no UTF-8: os.listdir and git give the name with a lone surrogate, which
# JSON, SQLite and a terminal refuse. The code map leaves such a source file out with one
# warning; a memory folder's stray file by such a name is warned about once and skipped.
UNNAMED = "caf\udce9"
UNNAMED_SHOWN = "caf\\xe9"  # how pmem prints it
UNNAMED_PLANTS = {  # plant -> (path it makes, the file it copies or the text it holds)
    "source-file": (f"{UNNAMED}.py", "def handler(x):\n    return x\n"),
    "source-folder": (f"{UNNAMED}/handler.py", "def handler(x):\n    return x\n"),
    "patterns-record": (f"{LT}/patterns/pat_{UNNAMED}.json", f"{LT}/patterns/*"),
    "mistakes-record": (f"{LT}/mistakes/mis_{UNNAMED}.json", f"{LT}/mistakes/*"),
    "learnings-record": (f"{LT}/learnings/lrn_{UNNAMED}.json", f"{LT}/learnings/*"),
    "session": (f"{ST}/session-{UNNAMED}.json", f"{ST}/session-*"),
    "entity-shard": (f".planning/memory/entity/files/_shard{UNNAMED}.json", "*/_shard.json"),
    "entity-folder": (f".planning/memory/entity/files/{UNNAMED}/_shard.json", "*/_shard.json"),
}
UNNAMED_COMMANDS = [*COMMANDS, ["scan"], ["session", "list"], ["entity", "file", "app.py"]]


def plant_unnamed(root: Path, rel: str, source: str) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if source.endswith("_shard.json"):
        source = ".planning/memory/entity/files/_shard.json"
    copied = "*" in source or source.startswith(".planning/")
    path.write_bytes(_resolve(root, source).read_bytes() if copied else source.encode())
    return path


@pytest.mark.slow
def test_unnamed_files_fuzz(full_template: Path, tmp_path: Path) -> None:
    """A file whose name is not UTF-8 in the code and in each memory folder, through every
    command: no traceback, one warning naming it (escaped), and the rest served."""
    problems: list[str] = []
    figures = Figures()
    began = time.monotonic()
    root = tmp_path / "repo"
    shutil.copytree(full_template, root, symlinks=True)
    pristine = snapshot(root)
    for plant, (rel, source) in UNNAMED_PLANTS.items():
        for argv in UNNAMED_COMMANDS:
            path = plant_unnamed(root, rel, source)
            result, printed = run_hostile(argv, root)
            figures.cases += 1
            where = f"{plant} | {result.name}"
            if result.hang:
                figures.hangs += 1
                problems.append(f"hang: {where}")
            if result.code == 70 or "Traceback" in result.err:
                figures.tracebacks += 1
                problems.append(f"traceback: {where}: {result.err[-300:]}")
            elif result.code not in (0, 1, 4):  # 4: a bad argument, `export` of a broken tree
                figures.unclear += 1
                problems.append(f"exit {result.code}: {where}: {result.err[-300:]}")
            naming = [ln for ln in result.err.splitlines() if UNNAMED_SHOWN in ln]
            folder = plant.split("-", 1)[0]
            must = (argv[0] == "scan" and folder == "source") or (
                folder in READS.get(argv[0], ()) and argv[0] not in ("context", "search")
            )
            if len(naming) > 1 or (must and not naming):
                figures.unclear += 1
                problems.append(f"{len(naming)} warnings name it: {where}: {result.err[-300:]}")
            if UNNAMED in result.err + printed:
                figures.unclear += 1
                problems.append(f"printed a lone surrogate: {where}")
            _remove(root / rel.split("/", 1)[0] if folder == "source" else path)
            reset(root, full_template, pristine)
    print(
        f"\n{figures.cases} names that are not UTF-8 ({len(UNNAMED_PLANTS)} places x "
        f"{len(UNNAMED_COMMANDS)} commands) in {time.monotonic() - began:.1f} s: "
        + figures.line("cases", "tracebacks", "hangs", "unclear")
    )
    assert figures.cases >= 150
    assert problems == [], "\n".join(problems[:40])


@pytest.mark.parametrize(
    "rel", [".planning/.lock", f"{CTX}/index.sqlite3", f"{CTX}/longterm.sqlite3", f"{LT}/patterns"]
)
def test_a_hostile_clone_opened_in_claude_code_leaves_home_alone(tmp_path: Path, rel: str) -> None:
    """The whole story, in processes: a repository whose commit holds a link from .planning/
    to ~/.bashrc (or to a folder of the home), cloned with git, opened by Claude Code (its
    SessionStart and UserPromptSubmit hooks run pmem), then used with `pmem save`."""
    home = Path(os.environ["HOME"])
    bashrc = home / ".bashrc"
    bashrc.write_text("export PATH=$HOME/bin:$PATH\n")
    notes = home / "notes"
    notes.mkdir()
    (notes / "todo.json").write_text('{"title": "mine"}\n')
    origin = tmp_path / "origin"
    origin.mkdir()
    subprocess.run(["git", "init", "-q", str(origin)], check=True)
    subprocess.run([PMEM, "-C", str(origin), "init"], check=True, capture_output=True)
    link = origin / rel
    if link.is_dir():
        shutil.rmtree(link)
    link.unlink(missing_ok=True)
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(notes if link.name == "patterns" else bashrc)
    subprocess.run(["git", "-C", str(origin), "add", "-f", "-A"], check=True)
    subprocess.run(["git", "-C", str(origin), "commit", "-qm", "hostile"], check=True)
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(origin), str(clone)], check=True)
    assert (clone / rel).is_symlink()
    for event, extra in HOOK_PAYLOADS.items():
        payload = json.dumps({"session_id": CLAUDE_ID, "cwd": str(clone), **extra})
        done = subprocess.run(
            [PMEM, "hook", "claude-code", event], input=payload, text=True, cwd=clone,
            capture_output=True, timeout=60,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr  # a hook never blocks the agent
        assert "Traceback" not in done.stderr
    saved = subprocess.run(
        [PMEM, "save", "Prefer small functions", "-t", "pattern"], text=True, cwd=clone,
        capture_output=True, timeout=60,
    )  # fmt: skip
    assert saved.returncode == 4, saved.stderr
    assert saved.stderr.count("\n") == 1 and rel in saved.stderr, saved.stderr
    assert "leads outside the memory tree" in saved.stderr
    assert bashrc.read_text() == "export PATH=$HOME/bin:$PATH\n"
    assert sorted(p.name for p in notes.iterdir()) == ["todo.json"]
    assert (notes / "todo.json").read_text() == '{"title": "mine"}\n'
