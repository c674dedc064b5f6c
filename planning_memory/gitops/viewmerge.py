"""Merging a rendered view: render it again from the merged records, never line-merge it.

A rendered view (``patterns.md``, ``mistakes.md``, ``.planning/CLAUDE.md``) is a function of
the records, so its merge is the render of the merged records. During ``git merge`` (and
``git pull``) git names the commit being merged in a ``GITHEAD_<sha>`` variable; with it and
``HEAD``, ``merged_view`` rebuilds the memory tree the merge will leave in a temporary folder
(ours, plus every memory file the other side changed, merged as the driver merges it) and
renders the view there. Anything it cannot settle (no ``GITHEAD_``, as in a rebase; a record
that really conflicts) gives None and the caller falls back. Writes only its temporary tree
(through a ``Store`` of that tree). ``rendered_only`` tells a view nobody edited by hand;
``render_view`` renders one from the records of a tree.
"""

from __future__ import annotations

import io
import os
import re
import tarfile
import tempfile
from collections.abc import Mapping
from pathlib import Path

from planning_memory.core import CONFIG_NAME, Layout, codec, effective_config, privacy
from planning_memory.errors import PlanningMemoryError
from planning_memory.gitops import merge as gitmerge
from planning_memory.gitops.run import blobs, git
from planning_memory.store import Store
from planning_memory.views import Views, body_hash, header_hashes

_GITHEAD = re.compile(r"^GITHEAD_([0-9a-f]{40}|[0-9a-f]{64})$")


def merging_commit(env: Mapping[str, str]) -> str | None:
    """The commit ``git merge`` is merging in (its only ``GITHEAD_<sha>``), else None."""
    found = [m.group(1) for m in map(_GITHEAD.match, env) if m]
    return found[0] if len(found) == 1 else None


def merged_view(top: Path, rel: str, env: Mapping[str, str] | None = None) -> bytes | None:
    """The bytes ``pmem render`` will give for view ``rel`` (a path from the repository root)
    once the merge in progress is done; None when that cannot be known here."""
    theirs = merging_commit(os.environ if env is None else env)
    planning = Path(rel).parent.as_posix()
    if theirs is None or planning in ("", "."):
        return None
    base = git(top, "merge-base", "HEAD", theirs, check=False).stdout.decode().split()
    if not base:
        return None
    with tempfile.TemporaryDirectory(prefix="pmem-merge-") as tmp:
        root = Path(tmp)
        tree = git(top, "archive", "--format=tar", "HEAD", "--", planning, check=False)
        if tree.returncode != 0:
            return None
        with tarfile.open(fileobj=io.BytesIO(tree.stdout)) as archive:
            if hasattr(tarfile, "data_filter"):  # Python 3.11.4+
                archive.extractall(root, filter="data")
            else:  # git's own archive of a tree: no links out, no absolute paths
                archive.extractall(root)
        if not _apply_theirs(top, root, planning, base[0], theirs):
            return None
        return render_view(root / planning, Path(rel).name)


def _apply_theirs(top: Path, root: Path, planning: str, base: str, theirs: str) -> bool:
    """Bring the other side's changes to memory JSON into the tree at ``root``; False when a
    file really conflicts (its merge is the driver's to report)."""
    out = git(top, "diff", "--name-only", "-z", "--no-renames", "HEAD", theirs, "--", planning)
    names = [n for n in out.stdout.decode("utf-8", "replace").split("\0") if n.endswith(".json")]
    names = [n for n in names if "\n" not in n]  # the views themselves are rendered again
    found = blobs(top, [f"{c}:{n}" for n in names for c in (base, "HEAD", theirs)])
    store = Store(Layout(root / planning))
    for number, name in enumerate(names):
        b, o, t = found[3 * number : 3 * number + 3]
        target = root / name
        if o == b or t == b:
            data = t if o == b else o
        else:
            try:
                result = gitmerge.merge_json(
                    gitmerge.parse_side(b, "base"),
                    gitmerge.parse_side(o, "ours"),
                    gitmerge.parse_side(t, "theirs"),
                    kind=gitmerge.kind_of(name),
                )
            except PlanningMemoryError:
                return False
            if not result.clean:
                return False
            data = gitmerge.merged_text(result).encode("utf-8")
        if data is None:
            store.delete(target)
        else:
            store.write_bytes(target, data)
    return True


def rendered_only(data: bytes) -> bool:
    """Whether ``data`` is a rendered view nobody edited by hand (its header's body hash
    still matches its body)."""
    text = data.decode("utf-8", "replace")
    recorded = header_hashes(text)
    return recorded is not None and recorded[1] == body_hash(text)


def render_view(planning: Path, name: str) -> bytes | None:
    """The bytes ``pmem render`` writes for view ``name`` of the tree at ``planning``; None
    when its records cannot be read."""
    layout = Layout(planning)
    try:
        config = codec.loads((planning / CONFIG_NAME).read_bytes(), path=CONFIG_NAME)
        views = Views(layout, Store(layout), effective_config(config))
        return privacy.redact(views.text(name)).encode("utf-8")
    except (PlanningMemoryError, OSError):
        return None
