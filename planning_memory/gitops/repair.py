"""Repairing a merge that ran without the merge driver, and finding what such a merge left.

Git falls back to its own merge when the driver is not set up (a web UI, a clone that never ran
``pmem git install``) or cannot start (``pmem`` not on ``PATH``): the first leaves conflict
markers, the second leaves the file unmerged holding ours, with no marker, so one side's
counters win without a word. ``leftovers`` finds such files: unmerged ones, and, during a
merge, a file staged as one side's content where the record-level merge of both differs.
``resolve`` merges them as the driver would (``gitmerge.merge_json``) from git's index stages,
``HEAD`` / ``MERGE_HEAD``, the merge commit that wrote the markers, or the markers themselves,
stages what it settled during a merge, and renders an unmerged view from the merged records.
Writes memory files through ``Store``; runs ``git add``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from planning_memory.core import CONFIG_NAME, PLANNING_DIR, Layout, codec
from planning_memory.errors import InputError, PlanningMemoryError
from planning_memory.gitops import merge as gitmerge
from planning_memory.gitops.integration import VIEW_NAMES
from planning_memory.gitops.run import blob, blobs, git, merging, names, toplevel, unmerged
from planning_memory.gitops.viewmerge import render_view, rendered_only
from planning_memory.store import Store, read_regular

REASONS = {
    "unmerged": "unmerged after a merge (the planning-memory merge driver did not run, or found "
    "a real conflict): run `pmem resolve`, or `git add` it once settled by hand",
    "deleted": "deleted on one side of the merge and changed on the other: keep it (`git add`) "
    "or drop it (`git rm`)",
    "one-side": "staged as one side of the merge only, not the record-level merge of both "
    "(git merged it without the planning-memory merge driver): run `pmem resolve`",
    "unstaged": "merged in the working tree but not staged: run `pmem resolve` (or `git add` it)",
    "markers": "holds conflict markers: run `pmem resolve`, or fix them by hand",
}


@dataclass(frozen=True, order=True)
class Leftover:
    """A memory file a merge left unfinished; ``reason`` is a key of ``REASONS``."""

    path: Path
    reason: str

    @property
    def message(self) -> str:
        return REASONS[self.reason]


def leftovers(path: Path) -> list[Leftover]:
    """The memory files under ``path`` (a memory tree, or one file) that a merge left
    unfinished: unmerged in the index, or, while a merge is in progress, staged as one side
    of it where the record-level merge differs. None outside a git work tree."""
    path = Path(os.path.abspath(path))
    try:
        top = toplevel(path if path.is_dir() else path.parent).resolve()
    except PlanningMemoryError:
        return []
    rel = os.path.relpath(path.resolve(), top)
    if rel == ".." or rel.startswith(f"..{os.sep}"):
        return []
    rel = Path(rel).as_posix()
    stages = {n: s for n, s in unmerged(top, rel).items() if _memory_file(n)}
    found = [
        Leftover(top / n, "unmerged" if {"2", "3"} <= set(s) else "deleted")
        for n, s in stages.items()
    ]
    if merging(top):
        found += _one_sided(top, rel, set(stages))
    return sorted(found)


def _memory_file(name: str) -> bool:
    return name.endswith(".json") or name.rsplit("/", 1)[-1] in VIEW_NAMES


def _one_sided(top: Path, rel: str, skip: set[str]) -> list[Leftover]:
    """Memory JSON both sides of the merge in progress changed, staged as one side's content
    while their record-level merge is clean and differs (a conflict is the user's to settle,
    and a file that is neither side was settled by hand)."""
    base = git(top, "merge-base", "HEAD", "MERGE_HEAD", check=False).stdout.decode().split()
    if not base:
        return []
    ours, theirs = (
        set(names(top, "diff", "--name-only", "-z", "--no-renames", base[0], side, "--", rel))
        for side in ("HEAD", "MERGE_HEAD")
    )
    both = sorted(n for n in ours & theirs if n.endswith(".json") and n not in skip)
    found = blobs(top, [f"{c}:{n}" for n in both for c in (base[0], "HEAD", "MERGE_HEAD", "")])
    out = []
    for number, name in enumerate(both):
        b, o, t, staged = found[4 * number : 4 * number + 4]
        try:
            sides = [gitmerge.parse_side(x, name) for x in (b, o, t, staged)]
            if staged is None or sides[3] not in (sides[1], sides[2]):
                continue
            result = gitmerge.merge_json(*sides[:3], kind=gitmerge.kind_of(name))
            want = codec.loads(gitmerge.merged_text(result)) if result.clean else None
            if want is None or want == sides[3]:
                continue
            here = read_regular(top / name)
            merged = here is not None and gitmerge.parse_side(here, name) == want
        except PlanningMemoryError:
            continue  # not JSON: `pmem validate` says so
        out.append(Leftover(top / name, "unstaged" if merged else "one-side"))
    return out


def unfinished(cwd: Path | None = None) -> list[Leftover]:
    """``leftovers`` of the memory tree of the repository at ``cwd`` (default: the working
    directory), and its JSON files holding conflict markers."""
    return _unfinished(toplevel(Path(cwd or Path.cwd())).resolve())


def _unfinished(top: Path) -> list[Leftover]:
    planning = top / PLANNING_DIR
    found = {item.path: item for item in leftovers(planning)} if planning.is_dir() else {}
    for path in planning.rglob("*.json") if planning.is_dir() else ():
        try:
            data = read_regular(path) or b""  # bounded, and never blocks on a FIFO
        except PlanningMemoryError:
            continue
        if b"<<<<<<<" in data and gitmerge.has_markers(data.decode("utf-8", "replace")):
            found.setdefault(path.resolve(), Leftover(path.resolve(), "markers"))
    return sorted(found.values())


# -- resolve -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Resolution:
    """``status``: resolved, conflict (markers left around ``conflicts``), clean (nothing to
    do) or error (``message``). ``source`` says where the sides came from; ``staged``: the
    result was ``git add``ed (a merge in progress)."""

    path: str
    status: str
    source: str = ""
    conflicts: tuple[str, ...] = ()
    message: str = ""
    staged: bool = False


def resolve(paths: list[Path] | None = None, *, cwd: Path | None = None) -> list[Resolution]:
    """Repair what a merge without the driver left in memory files (``paths``, default every
    one ``unfinished`` names): records first, merged as the driver merges them, then the
    rendered views, rendered again from them."""
    here = Path(cwd or Path.cwd()).resolve()
    top = toplevel(here).resolve()
    left = {item.path: item for item in _unfinished(top)}
    targets = [(here / p).resolve() for p in paths] if paths else list(left)
    records = [p for p in targets if p.name not in VIEW_NAMES]
    done = [resolve_file(top, path, left.get(path)) for path in records]
    settled = all(r.status in ("resolved", "clean") for r in done)
    views = [p for p in targets if p.name in VIEW_NAMES]
    done += [resolve_view(top, path, left.get(path), settled) for path in views]
    if settled and not paths and any(r.staged for r in done):  # merged records: views follow
        swept = [resolve_view(top, p, None, settled) for p in _views(top) if p not in views]
        done += [r for r in swept if r.status != "clean"]
    return done


def _views(top: Path) -> list[Path]:
    planning = (top / PLANNING_DIR).resolve()
    return [planning / name for name in VIEW_NAMES if (planning / name).is_file()]


def resolve_file(top: Path, path: Path, leftover: Leftover | None = None) -> Resolution:
    rel = _rel(top, path)
    if leftover is not None and leftover.reason == "deleted":
        return Resolution(rel, "error", "index", message=leftover.message)
    try:
        current = read_regular(path)  # a FIFO or device refused, never read without bound
        if current is None:
            raise InputError("no such file", path=rel)
        text = codec.decode_text(current, path=rel)
        if gitmerge.has_markers(text):
            source, (base, ours, theirs) = _sides(top, rel, current, text)
        elif leftover is None or leftover.reason == "markers":
            return Resolution(rel, "clean")
        elif leftover.reason == "unstaged":
            return Resolution(rel, "resolved", "MERGE_HEAD", staged=_stage(top, rel))
        else:
            source, (base, ours, theirs) = _unmarked_sides(top, rel, current, leftover)
        result = gitmerge.merge_json(
            gitmerge.parse_side(base, f"{rel} (base)"),
            gitmerge.parse_side(ours, f"{rel} (ours)"),
            gitmerge.parse_side(theirs, f"{rel} (theirs)"),
            kind=gitmerge.kind_of(rel),
        )
        store = Store(_memory_layout(path))
        store.write_bytes(path, gitmerge.merged_text(result).encode("utf-8"))
        staged = result.clean and source in ("index", "MERGE_HEAD") and _stage(top, rel)
    except PlanningMemoryError as exc:
        return Resolution(rel, "error", message=exc.one_line())
    if result.clean:
        return Resolution(rel, "resolved", source, staged=staged)
    return Resolution(rel, "conflict", source, tuple(result.conflicts))


def resolve_view(top: Path, path: Path, leftover: Leftover | None, settled: bool) -> Resolution:
    """A view rendered again from the merged records and staged: an unmerged one that both
    sides only rendered, or one nobody edited when its records were just merged. One edited
    by hand (on a side, or here) is left alone: an unmerged one for a hand merge."""
    rel = _rel(top, path)
    if leftover is not None and leftover.reason == "deleted":
        return Resolution(rel, "error", "index", message=leftover.message)
    if leftover is not None and leftover.reason == "unmerged":
        sides = [blob(top, f":2:{rel}"), blob(top, f":3:{rel}")]
    else:
        sides = [read_regular(path)]
    if not all(side and rendered_only(side) for side in sides):
        if leftover is None:
            return Resolution(rel, "clean")
        message = f"edited by hand on a side: merge it by hand (theirs: `git show :3:{rel}`)"
        return Resolution(rel, "conflict", "index", message=message)
    text = render_view(path.parent, path.name) if settled else None
    if text is None:
        message = "its records are not resolved yet: resolve them, then `pmem resolve` again"
        return Resolution(rel, "conflict", "index", message=message)
    try:
        store = Store(_memory_layout(path))
        written = store.write_bytes(path, text)
    except PlanningMemoryError as exc:
        return Resolution(rel, "error", message=exc.one_line())
    if not written and leftover is None:
        return Resolution(rel, "clean")
    return Resolution(rel, "resolved", "records", staged=_stage(top, rel))


def _rel(top: Path, path: Path) -> str:
    return path.relative_to(top).as_posix() if path.is_relative_to(top) else str(path)


def _stage(top: Path, rel: str) -> bool:
    git(top, "add", "--", rel)
    return True


Texts = tuple[bytes | None, bytes | None, bytes | None]


def _unmarked_sides(top: Path, rel: str, current: bytes, leftover: Leftover) -> tuple[str, Texts]:
    """The sides of a file without markers that ``leftovers`` named: git's stages while it is
    unmerged (the file holds one side, as git's fallback left it, or was settled by hand),
    else ``HEAD`` and ``MERGE_HEAD``."""
    if leftover.reason == "unmerged":
        found = _from_index(top, rel)
        if found is not None:
            here = gitmerge.parse_side(current, rel)
            sides = [gitmerge.parse_side(side, rel) for side in found[1:]]
            if here not in sides:
                raise InputError(
                    "unmerged, and not one side of the merge (settled by hand?): left as it is",
                    path=rel,
                    hint=f"`git add {rel}` keeps it; `git checkout -m {rel}` starts over",
                )
            return "index", found
    found = _from_merge_head(top, rel)
    if found is None:
        raise InputError("git no longer holds the sides of this merge", path=rel)
    return "MERGE_HEAD", found


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
    stages = unmerged(top, rel).get(rel, {})
    if "2" not in stages or "3" not in stages:
        return None
    base = blob(top, stages["1"]) if "1" in stages else None
    return base, blob(top, stages["2"]), blob(top, stages["3"])


def _from_merge_head(top: Path, rel: str) -> Texts | None:
    if not merging(top):
        return None
    return _from_commits(top, rel, "HEAD", "MERGE_HEAD")


def _from_merge_commit(top: Path, rel: str, current: bytes) -> tuple[str, Texts] | None:
    """The sides of the merge commit whose blob for ``rel`` is the current file (a merge that
    committed the markers, e.g. on a web UI)."""
    oid = git(top, "hash-object", "--stdin", data=current).stdout.decode().strip()
    done = git(top, "rev-list", "--merges", "--max-count=50", "HEAD", "--", rel, check=False)
    for commit in done.stdout.decode().split():
        found = git(top, "rev-parse", "-q", "--verify", f"{commit}:{rel}", check=False)
        if found.stdout.decode().strip() == oid:
            texts = _from_commits(top, rel, f"{commit}^1", f"{commit}^2")
            return (f"merge {commit[:12]}", texts) if texts is not None else None
    return None


def _from_commits(top: Path, rel: str, ours: str, theirs: str) -> Texts | None:
    base_commit = git(top, "merge-base", ours, theirs, check=False).stdout.decode().strip()
    ours_text, theirs_text = blob(top, f"{ours}:{rel}"), blob(top, f"{theirs}:{rel}")
    if ours_text is None or theirs_text is None:
        return None
    base = blob(top, f"{base_commit}:{rel}") if base_commit else None
    return base, ours_text, theirs_text


def _memory_layout(path: Path) -> Layout:
    for folder in path.parents:
        if folder.name == PLANNING_DIR or (folder / CONFIG_NAME).is_file():
            return Layout(folder)
    raise InputError(
        "not inside a memory tree (.planning/)",
        path=str(path),
        hint="`pmem resolve` repairs memory files only",
    )
