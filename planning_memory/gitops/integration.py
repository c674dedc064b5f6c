"""Git integration: install, the merge driver, ``resolve`` and the staged secret scan.

This is the side-effectful shell around ``gitmerge`` (which decides how JSON merges). It runs
the ``git`` command, writes ``.gitignore`` / ``.gitattributes`` / the pre-commit hook in the
work tree and ``.git/``, and writes merged memory files: through ``Store`` under ``.planning/``,
directly only into the temp file git hands the merge driver.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from planning_memory.core import CONFIG_NAME, PLANNING_DIR, Layout, codec, privacy
from planning_memory.errors import (
    ConflictError,
    ExternalCommandError,
    InputError,
    NotInitializedError,
    PlanningMemoryError,
)
from planning_memory.gitops import merge as gitmerge
from planning_memory.store import Store, read_regular
from planning_memory.views import body_hash, header_hashes

DRIVER = "planning-memory"
DRIVER_COMMAND = "pmem merge-driver %O %A %B %P"
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


# -- running git -------------------------------------------------------------------------------
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


def _blob(top: Path, spec: str) -> bytes | None:
    done = git(top, "cat-file", "blob", spec, check=False)
    return done.stdout if done.returncode == 0 else None


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
        report.notes.append("`pmem` is not on PATH: git needs it there to run the merge driver")
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


def register_driver(top: Path) -> bool:
    """Name the merge driver in ``.git/config``; False if it was already there."""
    changed = False
    for key, value in (("name", DRIVER_NAME), ("driver", DRIVER_COMMAND)):
        name = f"merge.{DRIVER}.{key}"
        current = git(top, "config", "--local", "--get", name, check=False)
        if current.stdout.decode().strip() != value:
            git(top, "config", "--local", name, value)
            changed = True
    return changed


def _hook_path(top: Path) -> Path:
    return (top / git_out(top, "rev-parse", "--git-path", "hooks/pre-commit")).resolve()


def hook_script(pmem: str) -> str:
    """The pre-commit hook: a chained older hook; while a merge is being committed, the views
    rendered from the merged records and staged (git reads the index again after the hook);
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
if git rev-parse -q --verify MERGE_HEAD >/dev/null 2>&1; then
    "$PMEM" render --stage >/dev/null 2>&1  # a merge commit: views from the merged records
fi
fail() {{
    printf '%s\\n' "$2" >&2
    echo "planning-memory: commit blocked: $1 (git commit --no-verify skips this check)" >&2
    exit 1
}}
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
    if Path(path_name).name in VIEW_NAMES and _only_rendered(ours_path, theirs_path):
        from planning_memory.gitops.viewmerge import merged_view

        merged = merged_view(Path.cwd(), path_name)
        if merged is not None:
            Path(ours_path).write_bytes(merged)
        return 0
    try:
        base = _parse(Path(base_path).read_bytes(), "base")
        ours = _parse(Path(ours_path).read_bytes(), "ours")
        theirs = _parse(Path(theirs_path).read_bytes(), "theirs")
    except PlanningMemoryError:
        done = git(Path.cwd(), "merge-file", "-L", "ours", "-L", "base", "-L", "theirs",
                   str(ours_path), str(base_path), str(theirs_path), check=False)  # fmt: skip
        return 0 if done.returncode == 0 else 1
    result = gitmerge.merge_json(base, ours, theirs, kind=gitmerge.kind_of(path_name))
    Path(ours_path).write_bytes(_merged_text(result).encode("utf-8"))
    return 0 if result.clean else 1


def _only_rendered(*paths: Path) -> bool:
    """True when every one of ``paths`` is a rendered view nobody edited by hand."""
    for path in paths:
        text = Path(path).read_bytes().decode("utf-8", "replace")
        recorded = header_hashes(text)
        if recorded is None or recorded[1] != body_hash(text):
            return False
    return True


def _parse(data: bytes | None, side: str) -> Any:
    """The JSON of one side; None for a missing or empty side (no common ancestor)."""
    if data is None or not data.strip():
        return None
    return codec.loads(data, path=side)


def _merged_text(result: gitmerge.MergeResult) -> str:
    if result.clean:
        return codec.dumps(privacy.redact_value(result.value))
    return privacy.redact(gitmerge.conflict_text(result))


# -- resolve -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Resolution:
    """``status``: resolved, conflict (markers left around ``conflicts``), clean (nothing to
    do) or error (``message``). ``source`` says where the sides came from."""

    path: str
    status: str
    source: str = ""
    conflicts: tuple[str, ...] = ()
    message: str = ""


def resolve(paths: Sequence[Path] | None = None, *, cwd: Path | None = None) -> list[Resolution]:
    """Repair memory JSON left with conflict markers by a merge that ran without the driver:
    the sides come from git (index stages, MERGE_HEAD, or the merge commit that wrote the
    markers) or, failing that, from the markers themselves; ``merge_json`` merges them."""
    here = Path(cwd or Path.cwd()).resolve()
    top = toplevel(here)
    targets = [(here / p).resolve() for p in paths] if paths else conflicted_files(top)
    return [resolve_file(top, path) for path in targets]


def conflicted_files(top: Path) -> list[Path]:
    """Unmerged paths under ``.planning/`` plus memory JSON files holding conflict markers."""
    found = {
        (top / line.split("\t", 1)[1]).resolve()
        for line in git(top, "ls-files", "-u", "-z", "--", PLANNING_DIR)
        .stdout.decode("utf-8", "replace")
        .split("\0")
        if "\t" in line
    }
    planning = top / PLANNING_DIR
    for path in planning.rglob("*.json") if planning.is_dir() else ():
        try:
            data = read_regular(path) or b""  # bounded, and never blocks on a FIFO
        except PlanningMemoryError:
            continue
        if b"<<<<<<<" in data and gitmerge.has_markers(data.decode("utf-8", "replace")):
            found.add(path.resolve())
    return sorted(p for p in found if p.is_file() and p.suffix == ".json")


def resolve_file(top: Path, path: Path) -> Resolution:
    rel = path.relative_to(top).as_posix() if path.is_relative_to(top) else str(path)
    try:
        current = read_regular(path)  # a FIFO or device refused, never read without bound
        if current is None:
            raise InputError("no such file", path=rel)
        text = codec.decode_text(current, path=rel)
        if not gitmerge.has_markers(text):
            return Resolution(rel, "clean")
        source, (base, ours, theirs) = _sides(top, rel, current, text)
        result = gitmerge.merge_json(
            _parse(base, f"{rel} (base)"),
            _parse(ours, f"{rel} (ours)"),
            _parse(theirs, f"{rel} (theirs)"),
            kind=gitmerge.kind_of(rel),
        )
        store = Store(_memory_layout(path))
        store.write_bytes(path, _merged_text(result).encode("utf-8"))
    except PlanningMemoryError as exc:
        return Resolution(rel, "error", message=exc.one_line())
    if result.clean:
        return Resolution(rel, "resolved", source)
    return Resolution(rel, "conflict", source, tuple(result.conflicts))


Texts = tuple[bytes | None, bytes | None, bytes | None]


def _sides(top: Path, rel: str, current: bytes, text: str) -> tuple[str, Texts]:
    for source, find in (("index", _from_index), ("MERGE_HEAD", _from_merge_head)):
        found = find(top, rel)
        if found is not None:
            return source, found
    committed = _from_merge_commit(top, rel, current)
    if committed is not None:
        return committed
    sides = gitmerge.split_conflicts(text, path=rel)
    base = None if sides.base is None else sides.base.encode("utf-8")
    return "markers", (base, sides.ours.encode("utf-8"), sides.theirs.encode("utf-8"))


def _from_index(top: Path, rel: str) -> Texts | None:
    stages: dict[str, str] = {}
    out = git(top, "ls-files", "-u", "-z", "--", rel).stdout.decode("utf-8", "replace")
    for entry in filter(None, out.split("\0")):
        info, _, name = entry.partition("\t")
        if name == rel:
            _mode, oid, stage = info.split()
            stages[stage] = oid
    if "2" not in stages or "3" not in stages:
        return None
    base = _blob(top, stages["1"]) if "1" in stages else None
    return base, _blob(top, stages["2"]), _blob(top, stages["3"])


def _from_merge_head(top: Path, rel: str) -> Texts | None:
    if git(top, "rev-parse", "-q", "--verify", "MERGE_HEAD", check=False).returncode != 0:
        return None
    return _from_commits(top, rel, "HEAD", "MERGE_HEAD")


def _from_merge_commit(top: Path, rel: str, current: bytes) -> tuple[str, Texts] | None:
    """The sides of the merge commit whose blob for ``rel`` is the current file (a merge that
    committed the markers, e.g. on a web UI)."""
    oid = git(top, "hash-object", "--stdin", data=current).stdout.decode().strip()
    done = git(top, "rev-list", "--merges", "--max-count=50", "HEAD", "--", rel, check=False)
    for commit in done.stdout.decode().split():
        blob = git(top, "rev-parse", "-q", "--verify", f"{commit}:{rel}", check=False)
        if blob.stdout.decode().strip() == oid:
            texts = _from_commits(top, rel, f"{commit}^1", f"{commit}^2")
            return (f"merge {commit[:12]}", texts) if texts is not None else None
    return None


def _from_commits(top: Path, rel: str, ours: str, theirs: str) -> Texts | None:
    base_commit = git(top, "merge-base", ours, theirs, check=False).stdout.decode().strip()
    ours_text, theirs_text = _blob(top, f"{ours}:{rel}"), _blob(top, f"{theirs}:{rel}")
    if ours_text is None or theirs_text is None:
        return None
    base = _blob(top, f"{base_commit}:{rel}") if base_commit else None
    return base, ours_text, theirs_text


def _memory_layout(path: Path) -> Layout:
    for folder in path.parents:
        if folder.name == PLANNING_DIR or (folder / CONFIG_NAME).is_file():
            return Layout(folder)
    raise InputError(
        "not inside a memory tree (.planning/)",
        path=str(path),
        hint="`pmem resolve` repairs memory JSON files only",
    )


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
