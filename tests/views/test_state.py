"""What a view writes: its render, redacted. Of patterns.md and mistakes.md, redaction is
decided item by item (kept in the render cache), which must give what a scan of the whole
text gives: every secret sample of ``tests/fixtures/secrets`` and ``<private>`` block, whole in
one record or split across two neighbouring items, in every text field."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from unittest import mock

import pytest

from planning_memory.core import codec, new_long_term, privacy
from planning_memory.memory import Memory
from planning_memory.views import render
from planning_memory.views.fileformat import source_hash
from planning_memory.views.templates import load_template

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "secrets"
NOW = datetime(2026, 1, 1, tzinfo=UTC)
CLEAN = "Keep handlers small and log the error type"


def _sentences() -> list[str]:
    found = ["note <private>kept out</private> ok", "open <private>to the end", "x </private> y"]
    for name in ("kinds.txt", "secrets.txt"):
        for line in (FIXTURES / name).read_text("utf-8").splitlines():
            if line and not line.startswith("#"):
                sentence = line.split("\t")[2]
                found.append(json.loads(sentence) if sentence[0] == '"' else sentence)
    return found


SENTENCES = _sentences()


def _record(kind: str, n: int, first: str, last: str) -> dict[str, Any]:
    """A record of ``kind`` whose item starts with ``first`` (its heading) and whose last
    text field ends with ``last``."""
    if kind == "patterns":
        fields = {"name": first, "description": CLEAN, "example": f"run(){last}"}
        return new_long_term("pattern", f"pat_{n:03d}", NOW, title=first, **fields)
    fields = {"description": CLEAN, "correction": f"Check it {last}", "severity": "high"}
    return new_long_term("mistake", f"mis_{n:03d}", NOW, title=first, **fields)


def _by_items(kind: str, records: list[dict[str, Any]]) -> tuple[str, str]:
    """The view's text, and what ``Views.redacted`` writes for it: the text as it is when
    no item and not the frame holds anything to redact, else the whole text redacted."""
    template = load_template(f"{kind}.md")
    items = [render.view_item(r, kind) for r in records]  # type: ignore[arg-type]
    fresh = render.assemble_view(items, kind, template, source_hash=source_hash(records, template))  # type: ignore[arg-type]
    head = render.view_head(template)
    header = fresh.partition("\n")[0]
    clean = all(privacy.redact(t) == t for t in [header, head, *(text for _, text in items)])
    return fresh, fresh if clean else privacy.redact(fresh)


@pytest.mark.parametrize("kind", ["patterns", "mistakes"])
def test_redaction_by_item_equals_a_scan_of_the_whole_view(kind: str) -> None:
    cut_across = 0
    for n, sentence in enumerate(SENTENCES):
        splits = {len(sentence) * k // 4 for k in (1, 2, 3)} - {0, len(sentence)}
        cases = [
            [_record(kind, 1, sentence[:200], ""), _record(kind, 2, "Plain", "")],
            [_record(kind, 1, "Plain", sentence), _record(kind, 2, "Plain", "")],
        ]
        cases += [
            [_record(kind, 1, "Plain", " " + sentence[:at]), _record(kind, 2, sentence[at:], "")]
            for at in splits
            if sentence[at:].strip()
        ]
        for records in cases:
            fresh, written = _by_items(kind, records)
            assert written == privacy.redact(fresh), (n, sentence)
            cut_across += written == fresh
    assert cut_across > 0  # some splits leave both halves clean: the fast path was taken


def _tree(root: Path, records: list[dict[str, Any]]) -> Memory:
    """A tree whose records were written behind planning-memory's back (nothing redacted)."""
    mem = Memory.init(root)
    for record in records:
        path = mem.layout.record_path(record["type"], record["id"])
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(codec.dump_bytes(record))
    return mem


def test_a_view_of_clean_items_is_not_scanned_whole(tmp_path: Path) -> None:
    records = [_record("patterns", n, f"Rule {n}", "") for n in range(40)]
    mem = _tree(tmp_path, records)
    with mock.patch.object(privacy, "redact", wraps=privacy.redact) as redact:
        assert mem.render().rendered
    longest = max(len(c.args[0]) for c in redact.call_args_list)
    assert longest < len(mem.layout.patterns_md.read_text("utf-8"))
    assert mem.render_check() == []


def test_a_view_with_a_secret_is_written_redacted(tmp_path: Path) -> None:
    secret = "glpat-lhQCvpm8-FOFlE_sD4qmq"
    records = [_record("patterns", n, f"Rule {n}", "") for n in range(40)]
    records.append(_record("patterns", 99, "Token", f" export GITLAB_TOKEN={secret}"))
    mem = _tree(tmp_path, records)
    mem.render()
    text = mem.layout.patterns_md.read_text("utf-8")
    assert secret not in text and "[REDACTED:" in text
    assert text == privacy.redact(mem.views().text("patterns.md"))


def test_a_render_nobody_edited_is_stale_without_being_read(tmp_path: Path) -> None:
    mem = _tree(tmp_path, [_record("patterns", n, f"Rule {n}", "") for n in range(5)])
    mem.render()
    view = mem.layout.patterns_md
    mem.save("Prefer small pure functions", "pattern", description=CLEAN)  # JSON moves on
    record = json.loads(next(mem.layout.long_term.glob("patterns/pat_000.json")).read_text())
    record["description"] = "Changed in JSON"
    mem.store.write_json(mem.layout.long_term / "patterns" / "pat_000.json", record)
    views, read = mem.views(), []
    real = views.read
    object.__setattr__(views, "read", lambda path: read.append(path) or real(path))  # frozen
    state = next(s for s in views.states() if s.name == "patterns.md")
    assert state.state == "stale"
    assert view not in read
    assert state.on_disk == view.read_text("utf-8")  # read when asked for
    assert view in read
    view.write_text(view.read_text("utf-8") + "\nhand edit\n", "utf-8")
    assert next(s for s in mem.views().states() if s.name == "patterns.md").state == "conflict"
