"""Running git: one command and its errors, the work tree's root, blobs, the merge in progress.

Reads only: what git writes (``git add``) is the caller's to ask for."""

from __future__ import annotations

import subprocess
from pathlib import Path

from planning_memory.errors import ExternalCommandError, NotInitializedError


def git(
    cwd: Path, *args: str, data: bytes | None = None, check: bool = True
) -> subprocess.CompletedProcess[bytes]:
    try:
        done = subprocess.run(["git", *args], cwd=cwd, input=data, capture_output=True)
    except FileNotFoundError:
        raise ExternalCommandError("git is not installed or not on PATH") from None
    if check and done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise ExternalCommandError(
            f"git {args[0]} failed: {message[-1] if message else done.returncode}"
        )
    return done


def git_out(cwd: Path, *args: str) -> str:
    return git(cwd, *args).stdout.decode("utf-8", "replace").strip()


def toplevel(start: Path) -> Path:
    """The root of the git work tree containing ``start``."""
    done = git(start, "rev-parse", "--show-toplevel", check=False)
    if done.returncode != 0:
        raise NotInitializedError(
            "not inside a git repository", path=str(start), hint="run `git init` first"
        )
    return Path(done.stdout.decode().strip())


def blob(top: Path, spec: str) -> bytes | None:
    """The blob ``spec`` names (``HEAD:path``, ``:2:path``, an object id), or None."""
    done = git(top, "cat-file", "blob", spec, check=False)
    return done.stdout if done.returncode == 0 else None


def blobs(top: Path, specs: list[str]) -> list[bytes | None]:
    """The blobs ``specs`` name (None where missing), read by one ``git cat-file``."""
    if not specs:
        return []
    stream = git(top, "cat-file", "--batch", data="".join(f"{s}\n" for s in specs).encode())
    data, pos = stream.stdout, 0
    found: list[bytes | None] = []
    for _spec in specs:
        end = data.index(b"\n", pos)
        header = data[pos:end].split()
        pos = end + 1
        if len(header) != 3 or header[1] != b"blob":
            found.append(None)  # "<spec> missing"
            continue
        size = int(header[2])
        found.append(data[pos : pos + size])
        pos += size + 1
    return found


def names(top: Path, *args: str) -> list[str]:
    """The NUL-separated paths a git command prints (``diff --name-only -z``...)."""
    out = git(top, *args).stdout.decode("utf-8", "replace")
    return [n for n in out.split("\0") if n and "\n" not in n]


def unmerged(top: Path, rel: str) -> dict[str, dict[str, str]]:
    """The paths under ``rel`` git holds conflict stages for: ``{path: {stage: object id}}``
    (stage ``1`` base, ``2`` ours, ``3`` theirs; a side that deleted the file has none)."""
    out = git(top, "ls-files", "-u", "-z", "--", rel).stdout.decode("utf-8", "replace")
    found: dict[str, dict[str, str]] = {}
    for entry in filter(None, out.split("\0")):
        info, _, name = entry.partition("\t")
        _mode, oid, stage = info.split()
        found.setdefault(name, {})[stage] = oid
    return found


def merging(top: Path) -> bool:
    """Whether a merge is in progress (``MERGE_HEAD`` exists)."""
    return git(top, "rev-parse", "-q", "--verify", "MERGE_HEAD", check=False).returncode == 0
