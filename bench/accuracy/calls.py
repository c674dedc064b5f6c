"""Call edges: a seeded sample of the code map's caller -> callee links, labelled by hand.

An edge is (caller key, callee key) from the callee's ``called_by``; the sample is the edges
with the smallest seeded hashes, so it keeps its members while the map changes. The call
site printed for labelling is the first line in the caller's span holding a recorded call
expression that ends in the callee's name (a line defining that name is skipped).

``bench/labels/call_edges.tsv`` holds the labels. A label says whether the caller really
calls that callee at that line (a call through a base class or an interface counts when the
callee is a method that can receive it in this program; a same-named function of another
receiver does not), a fact of the source, so every label is kept even when its edge leaves
the map. Precision is over the current sample's labelled edges; the labelled edges the map
no longer has are listed (``--sample-edges`` adds the current sample's new edges to the
file, unlabelled: label them, then rerun).
"""

from __future__ import annotations

import csv
import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path

from accuracy.codemap import CodeMap, lines_of

LABELS = Path(__file__).resolve().parent.parent / "labels" / "call_edges.tsv"
COLUMNS = ["corpus", "caller", "callee", "call_site", "correct", "note"]
SEED = 2026


def edges(code: CodeMap) -> list[tuple[str, str]]:
    return sorted(
        (caller, key) for key, fn in code.functions.items() for caller in fn.get("called_by", [])
    )


def sample(code: CodeMap, size: int) -> list[tuple[str, str]]:
    """The ``size`` edges with the smallest seeded hashes: a random sample that stays the
    same as the map changes, but for edges that come or go."""
    return sorted(sorted(edges(code), key=_rank)[:size])


def _rank(edge: tuple[str, str]) -> str:
    return hashlib.sha256(f"{SEED}\t{edge[0]}\t{edge[1]}".encode()).hexdigest()


def call_site(root: Path, code: CodeMap, caller: str, callee: str) -> str:
    """Where the caller calls the callee: the first line holding one of the caller's
    recorded call expressions that ends in the callee's name, else the bare name called."""
    fn = code.functions[caller]
    name = code.functions[callee]["name"]
    opening = r"\s*(\(|::<|\[[^\]]*\]\s*\()"
    written = [c for c in fn.get("calls", []) if re.split(r"\.|::", c)[-1] == name]
    patterns = [re.escape(c) + opening for c in written] + [
        rf"(?<![\w$]){re.escape(name)}{opening}"
    ]
    definition = re.compile(rf"\b(def|func|fn|function)\s+(\([^)]*\)\s*)?{re.escape(name)}\b")
    lines = lines_of(root, fn["file"])
    start, end = fn["lines"]
    for pattern in patterns:
        call = re.compile(pattern)
        for number in range(start, end + 1):
            text = lines[number - 1]
            if call.search(text) and not definition.search(text):
                return f"{fn['file']}:{number}"
    return f"{fn['file']}:{start}-{end} (no call text found)"


def read_labels() -> list[dict[str, str]]:
    if not LABELS.exists():
        return []
    with open(LABELS, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh, delimiter="\t"))


def _labelled(row: dict[str, str]) -> bool:
    return row["correct"] in ("yes", "no")


def write_sample(corpus: str, root: Path, code: CodeMap, size: int) -> int:
    """Add this corpus' current sample to the labels file: every labelled row stays (a label
    is a fact of the source, reused if its edge comes back), unlabelled rows outside the
    sample go. Returns how many sampled edges need a label."""
    rows = read_labels()
    known = {(r["corpus"], r["caller"], r["callee"]): r for r in rows}
    drawn = sample(code, size)
    for caller, callee in drawn:
        known.setdefault(
            (corpus, caller, callee),
            {"corpus": corpus, "caller": caller, "callee": callee, "correct": "", "note": ""},
        )
    current = set(edges(code))
    kept = []
    for (name, caller, callee), row in sorted(known.items()):
        if name == corpus and (caller, callee) in current and not row.get("call_site"):
            row["call_site"] = call_site(root, code, caller, callee)
        if _labelled(row) or (name == corpus and (caller, callee) in drawn):
            kept.append(row)
    LABELS.parent.mkdir(parents=True, exist_ok=True)
    with open(LABELS, "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, COLUMNS, delimiter="\t", lineterminator="\n")
        writer.writeheader()
        writer.writerows(kept)
    labelled = {(r["caller"], r["callee"]) for r in kept if r["corpus"] == corpus and _labelled(r)}
    return sum(1 for edge in drawn if edge not in labelled)


@dataclass
class CallScore:
    sampled: int = 0  # edges the seeded sample draws from today's map
    labelled: int = 0  # of those, the ones with a label
    correct: int = 0
    wrong: list[dict[str, str]] = field(default_factory=list)
    unlabelled: list[tuple[str, str]] = field(default_factory=list)
    # labelled edges (in the sample or not) that the map no longer has
    gone: list[dict[str, str]] = field(default_factory=list)


def score(corpus: str, code: CodeMap, size: int) -> CallScore:
    """Precision over the current sample's labelled edges."""
    result = CallScore()
    current = set(edges(code))
    rows = {
        (r["caller"], r["callee"]): r
        for r in read_labels()
        if r["corpus"] == corpus and _labelled(r)
    }
    drawn = sample(code, size)
    result.sampled = len(drawn)
    for edge in drawn:
        row = rows.get(edge)
        if row is None:
            result.unlabelled.append(edge)
            continue
        result.labelled += 1
        if row["correct"] == "yes":
            result.correct += 1
        else:
            result.wrong.append(row)
    result.gone = [row for edge, row in sorted(rows.items()) if edge not in current]
    return result
