"""Record-level three-way merge of memory JSON (pure: values in, a merged value out).

``merge_json(base, ours, theirs)`` merges field by field, with rules chosen by field name:

- counters (``usage_count``, ``occurrences``, ``revision_count``, ``duplicate_count``,
  ``applications``): base + (ours - base) + (theirs - base); a side that went down (a reset or
  a hand edit) while the other also changed is a conflict;
- sets (``tags``; the string arrays of ``preferences.json``): three-way set merge, i.e. what
  either side added, minus what either side removed;
- keyed lists: ``anchors`` by (path, symbol), session ``messages`` and ``decisions`` by id;
  items merge one by one and come out in time order;
- logs (session ``files_accessed`` and ``steps``, which have no id): three-way merge of their
  entries by value, in time order;
- ``updated_at``, ``last_occurrence``: the latest; ``created_at``, ``started_at``: the earliest;
  ``established``: either side, or 5 merged uses; ``confidence``: the higher; ``severity``:
  the higher (and a merge that makes a mistake's ``occurrences`` reach the escalation threshold
  escalates it, as ``learn`` would have);
- ``deleted_at``: a deletion on either side wins, unless the other side edited the record
  after the deletion (any field besides ``updated_at`` differs from the base and its
  ``updated_at`` is later), in which case the record stays live; both deleted: the earliest;
  a side that restored a record deleted in the base wins;
- any other object merges key by key (a key one side added or removed is taken; preferences
  sections and entity shards merge like this); any other value changed by one side is taken
  from it; a value both sides changed differently is a real conflict.

When ``ours == theirs`` the result is that value: git never calls a driver for identical sides,
and the merge does the same, so ``merge(base, x, x) == x``. Inside a merge, though, equal
increments still add up: both sides bumping a counter from 5 to 6 gives 7.

A conflict leaves ours in ``value`` and theirs in ``other`` at each conflicting JSON path;
``conflict_text`` turns the pair into the canonical text with git-style markers around the
lines that differ (``merged_text``: what a merge writes, clean or not). ``split_conflicts``
reads such markers (also diff3 style) back into sides.

``merge_copies(ours, theirs)`` is the two-way form, for two copies of one file whose common
ancestor is unknown (an import: the tree's record and an exported copy of it). The same rules
apply with an empty base, and it never conflicts: counters take the larger (both copies count
from one record, so the smaller is the count of an earlier state of the larger one; adding
them would count the shared uses twice and grow on every re-import), sets and the keys of
objects are the union, a deletion wins unless the live copy was changed after it, and
whatever else differs is taken from the newer copy (later ``updated_at``, then higher
``revision_count``; ours on a tie). Two copies that both counted since they parted get the
larger count, not the sum: only the three-way merge, which knows the base, can add them.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Final

from planning_memory.core import ESCALATE_AT, LONG_TERM_TYPES, SEVERITIES, codec, normalize, privacy
from planning_memory.errors import DecodeError

ABSENT: Final[Any] = object()  # a key that a side does not have

COUNTERS = frozenset(
    {"usage_count", "occurrences", "revision_count", "duplicate_count", "applications"}
)
LATEST = frozenset({"updated_at", "last_occurrence"})
EARLIEST = frozenset({"created_at", "started_at"})
ANY_TRUE = frozenset({"established"})
SETS = frozenset({"tags"})
LOGS = {"files_accessed": "at", "steps": "at"}
KEYED: dict[str, tuple[Callable[[dict[str, Any]], str], str]] = {
    "anchors": (lambda a: f"{a.get('path')}#{a.get('symbol') or ''}", "path"),
    "messages": (lambda m: str(m.get("id")), "at"),
    "decisions": (lambda d: str(d.get("id")), "decided_at"),
}
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass
class MergeResult:
    """``value`` is the merge; where ``conflicts`` (JSON paths) are, it holds ours and
    ``other`` holds theirs. Without conflicts ``value is other``."""

    value: Any
    conflicts: list[str] = field(default_factory=list)
    other: Any = None

    @property
    def clean(self) -> bool:
        return not self.conflicts


def kind_of(path_name: str | None) -> str:
    """``record``, ``preferences``, ``session``, ``entity`` or ``config`` from a file path."""
    name = (path_name or "").replace("\\", "/")
    base = name.rsplit("/", 1)[-1]
    if base == "preferences.json":
        return "preferences"
    if base.startswith("session-"):
        return "session"
    if base == "memory-config.json":
        return "config"
    if "/entity/" in f"/{name}":
        return "entity"
    return "record"


def merge_json(base: Any, ours: Any, theirs: Any, *, kind: str = "record") -> MergeResult:
    """Three-way merge of two versions of one memory file. ``base`` None: no common ancestor
    (the file was added on both sides)."""
    if ours == theirs or base == theirs:
        return MergeResult(ours, [], ours)
    if base == ours:
        return MergeResult(theirs, [], theirs)
    merger = _Merger(kind)
    mine, other = merger.merge("$", None, ABSENT if base is None else base, ours, theirs)
    if _is_record(mine):
        mine = _finish_record(base, mine)
        other = mine if not merger.conflicts else _finish_record(base, other)
    return MergeResult(mine, merger.conflicts, other if merger.conflicts else mine)


def merge_copies(ours: Any, theirs: Any, *, kind: str = "record") -> Any:
    """Two-way merge of two copies of one memory file with no known common ancestor: never
    a conflict (see the module's docstring). ``ours`` itself when ``theirs`` adds nothing to
    it (a later ``updated_at`` alone adds nothing), so that a caller can tell that nothing
    needs writing."""
    if ours == theirs:
        return ours
    merger = _Merger(kind, prefer_theirs=_age(theirs) > _age(ours))
    merged, _ = merger.merge("$", None, ABSENT, ours, theirs)
    if _is_record(merged):
        merged = _finish_record(None, merged)
    if merged == ours or _only_the_clock(merged, ours):
        return ours
    return merged


def _only_the_clock(merged: Any, ours: Any) -> bool:
    """``merged`` is ``ours`` but for a later ``updated_at``."""
    if not isinstance(merged, dict) or not isinstance(ours, dict) or "updated_at" not in ours:
        return False
    return {**merged, "updated_at": ours["updated_at"]} == ours


def _age(copy: Any) -> tuple[str, int]:
    """How far a copy got: when it was last written, then how many revisions it had."""
    if not isinstance(copy, dict):
        return "", 0
    revisions = copy.get("revision_count")
    return str(copy.get("updated_at") or ""), revisions if isinstance(revisions, int) else 0


# -- the merger --------------------------------------------------------------------------------
class _Merger:
    """``prefer_theirs`` None: a three-way merge that records its conflicts; True or False:
    a two-way merge that settles each one with theirs' or ours' value."""

    def __init__(self, kind: str, *, prefer_theirs: bool | None = None) -> None:
        self.kind = kind
        self.conflicts: list[str] = []
        self.prefer_theirs = prefer_theirs

    def conflict(self, path: str, ours: Any, theirs: Any) -> tuple[Any, Any]:
        if self.prefer_theirs is not None:
            picked = theirs if self.prefer_theirs else ours
            return picked, picked
        self.conflicts.append(path)
        return ours, theirs

    def merge(self, path: str, key: str | None, b: Any, o: Any, t: Any) -> tuple[Any, Any]:
        """(ours-side, theirs-side) merged values; equal unless a conflict lies beneath.
        ``key`` names the field (for its rule); None for list items."""
        if key in COUNTERS and _all_ints(o, t) and (b is ABSENT or _is_int(b)):
            return self._counter(path, b, o, t)
        if o == t or b == t:
            return o, o
        if b == o:
            return t, t
        rule = self._rule(key, o, t)
        if rule is not None:
            value = rule(b, o, t)
            return value, value
        if isinstance(o, list) and isinstance(t, list) and (b is ABSENT or isinstance(b, list)):
            listed = self._list(path, key, [] if b is ABSENT else b, o, t)
            if listed is not None:
                return listed
        if isinstance(o, dict) and isinstance(t, dict):
            return self._dict(path, b if isinstance(b, dict) else {}, o, t)
        return self.conflict(path, o, t)

    def _rule(self, key: str | None, o: Any, t: Any) -> Callable[[Any, Any, Any], Any] | None:
        strings = isinstance(o, str) and isinstance(t, str)
        if key in LATEST and strings:
            return lambda b, o, t: max(o, t)
        if key in EARLIEST and strings:
            return lambda b, o, t: min(o, t)
        if key in ANY_TRUE and isinstance(o, bool) and isinstance(t, bool):
            return lambda b, o, t: o or t
        if key == "severity" and o in SEVERITIES and t in SEVERITIES:
            return lambda b, o, t: max(o, t, key=SEVERITIES.index)
        if key == "confidence" and all(type(v) in (int, float) for v in (o, t)):
            return lambda b, o, t: max(o, t)  # each side's evidence stands: the surer
        return None

    def _counter(self, path: str, b: Any, o: int, t: int) -> tuple[Any, Any]:
        if b is ABSENT:
            value = max(o, t)
        elif (o < b and t != b) or (t < b and o != b):
            return self.conflict(path, o, t)
        else:
            value = o + t - b
        return value, value

    def _list(
        self, path: str, key: str | None, b: list[Any], o: list[Any], t: list[Any]
    ) -> tuple[Any, Any] | None:
        if key in SETS or (self.kind == "preferences" and _all_scalars(b, o, t)):
            merged = _set_merge(b, o, t)
            return (sorted(merged), sorted(merged)) if key in SETS else (merged, merged)
        if key in LOGS and _all_dicts(b, o, t):
            when = LOGS[key]
            merged = sorted(_set_merge(b, o, t), key=lambda e: (str(e.get(when)), codec.dumps(e)))
            return merged, merged
        if key in KEYED and _all_dicts(b, o, t):
            return self._keyed(path, key, b, o, t)
        return None

    def _keyed(
        self, path: str, key: str, b: list[Any], o: list[Any], t: list[Any]
    ) -> tuple[Any, Any] | None:
        key_of, when = KEYED[key]
        maps = [_by_key(items, key_of) for items in (b, o, t)]
        if any(m is None for m in maps):
            return None
        mb, mo, mt = (m or {} for m in maps)
        mine, other = self._dict(path, mb, mo, mt, item_paths=True)

        def order(items: dict[str, Any]) -> list[Any]:
            return sorted(items.values(), key=lambda i: (str(i.get(when)), key_of(i)))

        return order(mine), order(other)

    def _dict(
        self,
        path: str,
        b: dict[str, Any],
        o: dict[str, Any],
        t: dict[str, Any],
        *,
        item_paths: bool = False,
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        mine: dict[str, Any] = {}
        other: dict[str, Any] = {}
        for name in _ordered_keys(o, t, b):
            sub = f"{path}[{name}]" if item_paths else child_path(path, name)
            bv, ov, tv = b.get(name, ABSENT), o.get(name, ABSENT), t.get(name, ABSENT)
            if name == "deleted_at" and _is_record(o) and _is_record(t):
                ov = tv = _deleted_at(b, o, t)
            m, th = self._present(sub, None if item_paths else name, bv, ov, tv)
            if m is not ABSENT:
                mine[name] = m
            if th is not ABSENT:
                other[name] = th
        return mine, other

    def _present(self, path: str, name: str | None, b: Any, o: Any, t: Any) -> tuple[Any, Any]:
        """Merge one key where a side may lack it (``ABSENT``)."""
        if o is ABSENT or t is ABSENT:
            if o is t:
                return ABSENT, ABSENT
            kept = t if o is ABSENT else o
            if b is ABSENT:
                return kept, kept  # added on one side
            if b == kept:
                return ABSENT, ABSENT  # removed on one side, untouched on the other
            return self.conflict(path, o, t)  # removed on one side, changed on the other
        return self.merge(path, name, b, o, t)


# -- rules -------------------------------------------------------------------------------------
def _deleted_at(b: dict[str, Any], o: dict[str, Any], t: dict[str, Any]) -> Any:
    od, td, bd = o.get("deleted_at"), t.get("deleted_at"), b.get("deleted_at")
    if od == td:
        return od
    if od is not None and td is not None:
        return min(od, td)
    gone, live = (o, t) if od is not None else (t, o)
    if gone["deleted_at"] == bd or _edited_after(b, live, gone["deleted_at"]):
        return None  # an old deletion the live side undid, or an edit after a new one
    return gone["deleted_at"]


def _edited_after(base: dict[str, Any], live: dict[str, Any], deleted_at: str) -> bool:
    """Did ``live`` change the record (beyond its clock) later than ``deleted_at``? A restore
    of a record deleted in the base counts as a change."""
    skip = ("updated_at", "deleted_at")
    changed = base.get("deleted_at") is not None or any(
        live.get(k) != base.get(k) for k in {*live, *base} if k not in skip
    )
    return changed and str(live.get("updated_at", "")) > str(deleted_at)


def _finish_record(base: Any, record: dict[str, Any]) -> dict[str, Any]:
    """Derived fields: ``established`` at the use threshold, escalation at the occurrence one;
    sorted tags and anchors."""
    out = dict(record)
    if isinstance(base, dict) and _escalates(base, out):
        out["severity"] = SEVERITIES[SEVERITIES.index(out["severity"]) + 1]
    return normalize(out)


def _escalates(base: dict[str, Any], merged: dict[str, Any]) -> bool:
    """The merge brought ``occurrences`` to the threshold and neither side escalated."""
    before, after = base.get("occurrences"), merged.get("occurrences")
    severity = merged.get("severity")
    return (
        isinstance(before, int)
        and isinstance(after, int)
        and before < ESCALATE_AT <= after
        and severity == base.get("severity")
        and severity in SEVERITIES[:-1]
    )


def _set_merge(b: list[Any], o: list[Any], t: list[Any]) -> list[Any]:
    """Ours' items that theirs did not remove, then theirs' additions; each distinct item as
    many times as the side that changed its count has it."""
    counts = [_counts(x) for x in (b, o, t)]
    out: list[Any] = []
    seen: set[str] = set()
    for item in (*o, *t):
        mark = _mark(item)
        if mark in seen:
            continue
        seen.add(mark)
        cb, co, ct = (c.get(mark, 0) for c in counts)
        n = ct if co == cb else co if ct == cb else max(co, ct)
        out.extend([item] * n)
    return out


# -- conflict markers --------------------------------------------------------------------------
def conflict_text(
    result: MergeResult, *, ours: str = "ours", theirs: str = "theirs", size: int = 7
) -> str:
    """The canonical text of the merge with git-style markers around the lines that differ
    between ours' and theirs' picks at the conflicts."""
    if result.clean:
        return codec.dumps(result.value)
    a = codec.dumps(result.value).splitlines(keepends=True)
    b = codec.dumps(result.other).splitlines(keepends=True)
    out: list[str] = []
    pending: tuple[list[str], list[str]] | None = None
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            if pending:
                out.extend(_hunk(*pending, ours, theirs, size))
                pending = None
            out.extend(a[i1:i2])
            continue
        pending = pending or ([], [])
        pending[0].extend(a[i1:i2])
        pending[1].extend(b[j1:j2])
    if pending:
        out.extend(_hunk(*pending, ours, theirs, size))
    return "".join(out)


def merged_text(result: MergeResult) -> str:
    """What a merge writes: a clean merge in canonical form, else ``conflict_text``; secrets
    and ``<private>`` text redacted either way."""
    if result.clean:
        return codec.dumps(privacy.redact_value(result.value))
    return privacy.redact(conflict_text(result))


def parse_side(data: bytes | None, side: str) -> Any:
    """The JSON of one side of a merge; None for a missing or empty side (no common
    ancestor). ``side`` names it in an error."""
    if data is None or not data.strip():
        return None
    return codec.loads(data, path=side)


def _hunk(mine: list[str], other: list[str], ours: str, theirs: str, size: int) -> list[str]:
    return [f"{'<' * size} {ours}\n", *mine, f"{'=' * size}\n", *other, f"{'>' * size} {theirs}\n"]


@dataclass(frozen=True)
class Sides:
    """The texts of a file with conflict markers: ``base`` is None unless every hunk carried
    a diff3 ``|||||||`` section."""

    base: str | None
    ours: str
    theirs: str


def has_markers(text: str) -> bool:
    return any(_marker(line) == "<" for line in text.splitlines())


def split_conflicts(text: str, *, path: str | None = None) -> Sides:
    """Rebuild the sides of a git text merge from its ``<<<<<<<``/``|||||||``/``=======``/
    ``>>>>>>>`` hunks: lines outside hunks belong to every side."""
    parts: dict[str, list[str]] = {"base": [], "ours": [], "theirs": []}
    state, hunks, with_base = "common", 0, 0
    for number, line in enumerate(text.splitlines(keepends=True), 1):
        mark = _marker(line)
        step = _STEPS.get((state, mark))
        if step is not None:
            state = step
            hunks += step == "ours"
            with_base += step == "base"
            continue
        if (mark is not None and state != "common") or mark in (">", "|", "="):
            raise DecodeError(
                "unbalanced conflict markers",
                path=path,
                line=number,
                column=1,
                hint="fix the markers by hand",
            )
        for side in ("base", "ours", "theirs") if state == "common" else (state,):
            parts[side].append(line)
    if state != "common":
        raise DecodeError("a conflict hunk is not closed", path=path, hint="fix it by hand")
    base = "".join(parts["base"]) if hunks and with_base == hunks else None
    return Sides(base, "".join(parts["ours"]), "".join(parts["theirs"]))


_STEPS: dict[tuple[str, str | None], str] = {
    ("common", "<"): "ours",
    ("ours", "|"): "base",
    ("ours", "="): "theirs",
    ("base", "="): "theirs",
    ("theirs", ">"): "common",
}


def _marker(line: str) -> str | None:
    head = line[:7]
    if len(head) == 7 and head in ("<" * 7, "|" * 7, "=" * 7, ">" * 7):
        rest = line[7:8]
        if rest in ("", " ", "\n", "\r"):
            return head[0]
    return None


# -- helpers -----------------------------------------------------------------------------------
def _is_record(value: Any) -> bool:
    return isinstance(value, dict) and value.get("type") in LONG_TERM_TYPES and "id" in value


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _all_ints(*values: Any) -> bool:
    return all(_is_int(v) for v in values)


def _all_dicts(*lists: list[Any]) -> bool:
    return all(isinstance(i, dict) for items in lists for i in items)


def _all_scalars(*lists: list[Any]) -> bool:
    return all(isinstance(i, str | int | float | bool) for items in lists for i in items)


def _mark(item: Any) -> str:
    return json.dumps(item, sort_keys=True, ensure_ascii=False)


def _counts(items: Iterable[Any]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for item in items:
        mark = _mark(item)
        counts[mark] = counts.get(mark, 0) + 1
    return counts


def _by_key(
    items: list[dict[str, Any]], key_of: Callable[[dict[str, Any]], str]
) -> dict[str, Any] | None:
    """Items by key, or None when two items share a key (then the list merges as a value)."""
    out: dict[str, Any] = {}
    for item in items:
        k = key_of(item)
        if k in out:
            return None
        out[k] = item
    return out


def _ordered_keys(*maps: dict[str, Any]) -> list[str]:
    seen: dict[str, None] = {}
    for m in maps:
        seen.update(dict.fromkeys(m))
    return list(seen)


def child_path(path: str, name: str) -> str:
    """The JSON path of key ``name`` under ``path``: ``$.a.b`` or ``$.files["src/x.py"]``."""
    return f"{path}.{name}" if _NAME.match(name) else f"{path}[{json.dumps(name)}]"
