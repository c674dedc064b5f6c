"""Git integration: install, the merge driver and the staged secret scan.

This is the side-effectful shell around ``gitmerge`` (which decides how JSON merges). It runs
the ``git`` command, writes ``.gitignore`` / ``.gitattributes`` / the pre-commit hook in the
work tree and ``.git/``, and writes the merge into the temp file git hands the merge driver
(``repair`` fixes what a merge without the driver left).
"""

from __future__ import annotations

import os
import shutil
import stat
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from planning_memory.core import CONFIG_NAME, PLANNING_DIR, codec, privacy
from planning_memory.errors import ConflictError, InputError, PlanningMemoryError
from planning_memory.gitops import merge as gitmerge
from planning_memory.gitops.run import git, git_out, toplevel

DRIVER = "planning-memory"
DRIVER_ARGS = "merge-driver %O %A %B %P"
DRIVER_NAME = "planning-memory record-level JSON merge"
GITIGNORE_HEADER = "# planning-memory: derived, short-term, personal and temporary files"
GITIGNORE_LINES = (
    "/.planning/memory/contextual/",
    "/.planning/memory/short-term/",
    "/.planning/memory/personal/",
    "/.planning/.lock",
    "/.planning/**/*.pm-tmp",
    "/.planning/**/*.orig",
)
GITATTRIBUTES_HEADER = "# planning-memory: record-level three-way merge of memory JSON"
VIEW_NAMES = ("patterns.md", "mistakes.md", "CLAUDE.md")  # rendered from the records
GITATTRIBUTES_LINES = (
    f".planning/memory/**/*.json merge={DRIVER}",
    f".planning/{CONFIG_NAME} merge={DRIVER}",
    *(f".planning/{name} merge={DRIVER}" for name in VIEW_NAMES),
)
HOOK_MARK = "# planning-memory pre-commit hook"
CHAINED_HOOK = "pre-commit.before-pmem"
OWNED_NAMES = ("CLAUDE.md", "AGENTS.md")  # files outside .planning/ that pmem may write


# -- install -----------------------------------------------------------------------------------
@dataclass
class InstallReport:
    """What ``install`` changed (paths relative to the repository) and what it noticed."""

    root: str
    changed: list[str] = field(default_factory=list)
    hook: str = "skipped"
    notes: list[str] = field(default_factory=list)


def install(repo_root: Path, *, hook: bool = True) -> InstallReport:
    """Set up a repository for memory: ignores, attributes, the merge driver and the hook.
    Idempotent: a second run changes nothing."""
    top = toplevel(repo_root)
    report = InstallReport(str(top))
    if ensure_lines(top / ".gitignore", GITIGNORE_HEADER, GITIGNORE_LINES):
        report.changed.append(".gitignore")
    if ensure_lines(top / ".gitattributes", GITATTRIBUTES_HEADER, GITATTRIBUTES_LINES):
        report.changed.append(".gitattributes")
    if register_driver(top):
        report.changed.append(".git/config")
    if hook:
        report.hook = install_hook(top)
        if report.hook != "unchanged":
            report.changed.append(_hook_path(top).relative_to(top).as_posix())
    if shutil.which("pmem") is None:
        report.notes.append(
            f"`pmem` is not on PATH: git runs the merge driver as `{_python()} -m "
            "planning_memory`, which works while that Python stays installed"
        )
    return report


def ensure_lines(path: Path, header: str, lines: Sequence[str]) -> bool:
    """Append the ``lines`` missing from ``path`` (under ``header``); False if none were."""
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    have = {line.strip() for line in text.splitlines()}
    missing = [line for line in lines if line not in have]
    if not missing:
        return False
    block = ([header] if header not in have else []) + missing
    sep = "" if not text or text.endswith("\n") else "\n"
    gap = "\n" if text.strip() and header not in have else ""
    path.write_text(text + sep + gap + "\n".join(block) + "\n", encoding="utf-8")
    return True


def driver_command(python: str) -> str:
    """The driver as git runs it (through ``sh``): ``pmem`` from ``PATH``, else ``python -m
    planning_memory`` with the Python that installed it, so a merge still gets the driver
    where ``pmem`` is not on ``PATH`` (a GUI client, a shell without the virtualenv)."""
    return (
        f"if command -v pmem >/dev/null 2>&1; then pmem {DRIVER_ARGS}; "
        f"else {_sh_quote(python)} -m planning_memory {DRIVER_ARGS}; fi"
    )


def _python() -> str:
    return sys.executable or "python3"


def register_driver(top: Path) -> bool:
    """Name the merge driver in ``.git/config`` (an older command is replaced); False if it
    was already there."""
    changed = False
    for key, value in (("name", DRIVER_NAME), ("driver", driver_command(_python()))):
        name = f"merge.{DRIVER}.{key}"
        current = git(top, "config", "--local", "--get", name, check=False)
        if current.stdout.decode().strip() != value:
            git(top, "config", "--local", name, value)
            changed = True
    return changed


def _hook_path(top: Path) -> Path:
    return (top / git_out(top, "rev-parse", "--git-path", "hooks/pre-commit")).resolve()


def hook_script(pmem: str) -> str:
    """The pre-commit hook: a chained older hook; while a merge is being committed, a check
    that every memory file is merged (``pmem resolve --check``: a merge without the driver
    leaves one side's counters) and the views rendered from the merged records and staged
    (git reads the index again after the hook);
    the staged secret scan, then validate and render --check of the staged memory tree (a copy
    of what the commit would hold, so an unstaged fix neither hides a staged problem nor an
    unstaged mistake blocks the commit)."""
    return f"""#!/bin/sh
{HOOK_MARK}: written by `pmem git install`.
# Runs the hook that was here before (renamed {CHAINED_HOOK}), then checks memory.
# Skip once with `git commit --no-verify`.
here=$(dirname "$0")
if [ -x "$here/{CHAINED_HOOK}" ]; then
    "$here/{CHAINED_HOOK}" "$@" || exit $?
fi
PMEM=$(command -v pmem 2>/dev/null || echo {_sh_quote(pmem)})
cd "$(git rev-parse --show-toplevel)" || exit 1
fail() {{
    printf '%s\\n' "$2" >&2
    echo "planning-memory: commit blocked: $1 (git commit --no-verify skips this check)" >&2
    exit 1
}}
if git rev-parse -q --verify MERGE_HEAD >/dev/null 2>&1; then
    if "$PMEM" resolve --help 2>/dev/null | grep -q -- --check; then
        out=$("$PMEM" resolve --check 2>&1) || fail "a memory file is not merged" "$out"
    fi
    "$PMEM" render --stage >/dev/null 2>&1  # a merge commit: views from the merged records
fi
out=$("$PMEM" secrets scan --staged 2>&1) || fail "a secret is staged" "$out"
if git ls-files --error-unmatch {PLANNING_DIR}/{CONFIG_NAME} >/dev/null 2>&1; then
    staged=$(mktemp -d) || exit 1
    trap 'rm -rf "$staged"' EXIT
    git ls-files -z -- {PLANNING_DIR} | xargs -0 git checkout-index --prefix="$staged/" -- \
        || fail "could not read the staged memory" ""
    out=$("$PMEM" validate "$staged/{PLANNING_DIR}" 2>&1) || fail "memory does not validate" \
        "$(printf '%s' "$out" | sed "s#$staged/##g")"
    if "$PMEM" render --help >/dev/null 2>&1; then
        out=$("$PMEM" -C "$staged" render --check 2>&1) || fail "rendered views are stale" \
            "$(printf '%s' "$out" | sed "s#$staged/##g")"
    fi
fi
exit 0
"""


def _sh_quote(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


def install_hook(top: Path) -> str:
    """Write the pre-commit hook; an existing foreign hook is kept and chained.
    Returns installed, updated, unchanged or chained."""
    path = _hook_path(top)
    pmem = shutil.which("pmem") or str(Path(sys.executable).parent / "pmem")
    script = hook_script(pmem)
    action = "installed"
    if path.exists():
        old = path.read_text(encoding="utf-8", errors="replace")
        if HOOK_MARK in old:
            if old == script:
                return "unchanged"
            action = "updated"
        else:
            chained = path.with_name(CHAINED_HOOK)
            if chained.exists():
                raise ConflictError(
                    f"{path.name} is not ours and {chained.name} already exists",
                    path=str(path),
                    hint=f"merge them by hand, or call `pmem validate` from {path.name}",
                )
            path.rename(chained)
            action = "chained"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(script, encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return action


def stage(paths: Sequence[Path], cwd: Path) -> None:
    """``git add`` the files ``paths`` (rendered views, for a merge commit)."""
    if paths:
        top = toplevel(cwd)
        git(top, "add", "--", *(os.path.relpath(p, top) for p in paths))


# -- the merge driver --------------------------------------------------------------------------
def merge_driver(base_path: Path, ours_path: Path, theirs_path: Path, path_name: str = "") -> int:
    """Git's ``merge=planning-memory`` driver: write the merge into ``ours_path``; 0 when clean,
    1 when a real conflict is left there between markers. Input that is not memory JSON falls
    back to git's line merge. A rendered view that both sides only re-rendered becomes the
    render of the merged records (``viewmerge``); where those cannot be known (a rebase, a
    record in real conflict) it keeps ours, stale until the next write, the daemon or `pmem
    render`. A hand edit on either side is merged line by line."""
    if Path(path_name).name in VIEW_NAMES:
        from planning_memory.gitops.viewmerge import merged_view, rendered_only

        if all(rendered_only(Path(p).read_bytes()) for p in (ours_path, theirs_path)):
            merged = merged_view(Path.cwd(), path_name)
            if merged is not None:
                Path(ours_path).write_bytes(merged)
            return 0
    try:
        base = gitmerge.parse_side(Path(base_path).read_bytes(), "base")
        ours = gitmerge.parse_side(Path(ours_path).read_bytes(), "ours")
        theirs = gitmerge.parse_side(Path(theirs_path).read_bytes(), "theirs")
    except PlanningMemoryError:
        done = git(Path.cwd(), "merge-file", "-L", "ours", "-L", "base", "-L", "theirs",
                   str(ours_path), str(base_path), str(theirs_path), check=False)  # fmt: skip
        return 0 if done.returncode == 0 else 1
    result = gitmerge.merge_json(base, ours, theirs, kind=gitmerge.kind_of(path_name))
    Path(ours_path).write_bytes(gitmerge.merged_text(result).encode("utf-8"))
    return 0 if result.clean else 1


# -- secret scan -------------------------------------------------------------------------------
@dataclass(frozen=True)
class SecretHit:
    """A secret (or an unredacted ``<private>`` block) in a file: ``where`` is ``line N`` or a
    JSON path. The secret itself is never kept."""

    path: str
    kind: str
    where: str

    def line(self) -> str:
        return f"{self.path}: {self.where}: {self.kind}"


def scan_secrets(
    paths: Sequence[Path] | None = None, *, staged: bool = False, cwd: Path | None = None
) -> list[SecretHit]:
    """Secrets in ``paths`` (files or folders, as on disk; default: the files pmem owns,
    ``.planning/``, ``CLAUDE.md`` and ``AGENTS.md``) or, with ``staged``, in the staged content
    of the files pmem owns."""
    here = Path(cwd or Path.cwd())
    if staged:
        files = staged_files(here)
    else:
        owned_here = [n for n in (PLANNING_DIR, *OWNED_NAMES) if (here / n).exists()]
        files = disk_files(here, paths or [Path(n) for n in owned_here])
    hits: list[SecretHit] = []
    for name, data in files:
        hits.extend(scan_bytes(name, data))
    return hits


def owned(name: str) -> bool:
    return name.startswith(f"{PLANNING_DIR}/") or name.rsplit("/", 1)[-1] in OWNED_NAMES


def staged_files(cwd: Path) -> Iterator[tuple[str, bytes]]:
    """(path, staged bytes) of the added or modified files pmem owns."""
    top = toplevel(cwd)
    out = git(top, "diff", "--cached", "--name-only", "-z", "--diff-filter=ACMR")
    names = [n for n in out.stdout.decode("utf-8", "replace").split("\0") if n and owned(n)]
    names = [n for n in names if "\n" not in n]
    if not names:
        return
    batch = git(top, "cat-file", "--batch", data="".join(f":{n}\n" for n in names).encode())
    stream = batch.stdout
    pos = 0
    for name in names:
        end = stream.index(b"\n", pos)
        header = stream[pos:end].split()
        pos = end + 1
        if len(header) != 3:
            continue  # "missing"
        size = int(header[2])
        yield name, stream[pos : pos + size]
        pos += size + 1


def disk_files(cwd: Path, paths: Sequence[Path]) -> Iterator[tuple[str, bytes]]:
    for given in paths:
        path = cwd / given
        if path.is_dir():
            for folder, dirs, files in os.walk(path):
                dirs[:] = sorted(d for d in dirs if d != ".git")
                for name in sorted(files):
                    yield from _read(Path(folder) / name, cwd, named=False)
        else:
            yield from _read(path, cwd)


SCAN_MAX_BYTES = 64 * 1024 * 1024  # a bigger text file is refused, not half scanned
_SNIFF_BYTES = 8192  # a NUL in the first bytes: binary, skipped without reading the rest


def _read(path: Path, cwd: Path, *, named: bool = True) -> Iterator[tuple[str, bytes]]:
    """``(shown path, bytes)`` of a regular file; a device, FIFO or socket is refused when
    ``named`` on the command line (skipped in a folder), and reads stop at a size cap."""
    try:
        info = path.stat()
    except FileNotFoundError:
        raise InputError("no such file", path=str(path)) from None
    if not stat.S_ISREG(info.st_mode):
        if not named:
            return
        raise InputError(
            "not a regular file (a device, FIFO or socket is never read)",
            path=str(path),
            hint="give files or folders to scan",
        )
    with path.open("rb") as fh:
        data = fh.read(_SNIFF_BYTES)
        if b"\0" not in data:
            data += fh.read(SCAN_MAX_BYTES + 1 - len(data))
    if len(data) > SCAN_MAX_BYTES:
        raise InputError(
            f"larger than the scan limit of {SCAN_MAX_BYTES // 2**20} MiB",
            path=str(path),
            hint="secrets in memory files are redacted when written; scan a smaller file",
        )
    shown = os.path.relpath(path, cwd) if path.is_absolute() else str(path)
    yield shown, data


def scan_bytes(name: str, data: bytes) -> list[SecretHit]:
    """Secrets in one file: JSON is scanned value by value (so escapes do not hide a key),
    other text line by line; binary files are skipped."""
    if b"\0" in data:
        return []
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return []
    if name.endswith(".json"):
        try:
            value = codec.loads(text, path=name)
        except PlanningMemoryError:
            pass
        else:
            return [SecretHit(name, kind, where) for where, kind in _json_secrets(value, "$")]
    return [
        SecretHit(name, found.kind, f"line {text.count(chr(10), 0, found.start) + 1}")
        for found in privacy.find_secrets(text)
    ]


def _json_secrets(value: Any, path: str, key: str | None = None) -> Iterator[tuple[str, str]]:
    if isinstance(value, str):
        found = privacy.find_secrets(value)
        for hit in found:
            yield path, hit.kind
        kind = privacy.secret_key_kind(key) if key is not None else None
        if not found and kind is not None and privacy.redact_value({key: value})[key] != value:
            yield path, kind  # a secret by the key it is stored under
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _json_secrets(v, gitmerge.child_path(path, k), k)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _json_secrets(item, f"{path}[{i}]")
