"""Bad-input fuzz: broken files in the tree and bad arguments, through every command.

Each case plants one broken thing (a record that is a FIFO, a directory, invalid JSON, a schema
violation, a config with an impossible setting, ...) in a fresh copy of a small tree, or passes
a bad argument, and runs one command through the real entry point (``planning_memory.cli.main``)
in-process. Every case must give:

* no traceback (exit code 70 is a bug);
* no hang: a SIGALRM guard fails the case after ``HANG_S`` (a FIFO opened for reading blocks
  until a writer comes, so a reader that does not refuse it hangs here);
* no half-write: a command that fails changes no file of the tree (the derived index aside),
  and no temp file is left;
* at most one stderr line naming the broken file (reading commands warn once and go on).
"""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import signal
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


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("template") / "repo"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / "app.py").write_text("def handler(x):\n    return x\n")
    for argv in (
        ["init"],
        ["save", "Use zod for request validation", "-t", "pattern", "--tag", "ts"],
        ["save", "Do not use any", "-t", "mistake", "--correction", "use unknown"],
        ["save", "JWT sessions", "-t", "decision", "--why", "edge runtime"],
    ):
        subprocess.run([PMEM, "-C", str(root), *argv], check=True, capture_output=True)
    return root


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
    out, err = io.StringIO(), io.StringIO()
    began = time.monotonic()
    code = 0
    hang = False
    cwd = os.getcwd()
    os.chdir(root)
    try:
        with guard(HANG_S), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                main(argv)
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else 1
    except Hang:
        hang = True
    finally:
        os.chdir(cwd)
    return Outcome(" ".join(argv)[:60], code, err.getvalue(), time.monotonic() - began, hang)


def cases() -> list[tuple[str, list[str]]]:
    found = [(plant, cmd) for plant in PLANTS for cmd in COMMANDS]
    found += [(plant, cmd) for plant in CONFIG_PLANTS for cmd in COMMANDS]
    found += [("", argv) for argv in BAD_ARGS]
    return found


@pytest.mark.slow
def test_bad_input_fuzz(template: Path, tmp_path: Path) -> None:
    problems: list[str] = []
    counts = {"cases": 0, "tracebacks": 0, "hangs": 0, "half_writes": 0, "warned_twice": 0}
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
            counts["half_writes"] += 1
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
        f"hangs, {counts['half_writes']} half-writes, {counts['warned_twice']} files warned "
        f"about twice; slowest case {slowest:.2f} s"
    )
    print("seconds per command:", {k: round(v, 1) for k, v in sorted(took.items())})
    assert counts["cases"] >= 800
    assert problems == [], "\n".join(problems[:40])
