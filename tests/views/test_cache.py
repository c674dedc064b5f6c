"""The render cache: a view re-rendered from kept items is the full render, to the byte.

A Hypothesis sequence of saves, forgets, restores, pins, preference changes and edits of the
JSON files behind planning-memory's back, with the views compared after every step against a
full render of the records (pure functions, nothing cached) and, at the end, against a run
with the cache deleted; plus the cases where the cache must not be trusted (a stat too recent
to trust, a corrupt or foreign cache, kept items missing) and the work it must not do.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from planning_memory.core import codec, stamps
from planning_memory.longterm import Catalog, load_all
from planning_memory.memory import Memory
from planning_memory.views import cache, claude, render
from planning_memory.views.cache import cache_dir
from planning_memory.views.fileformat import (
    body_hash,
    legacy_source_hash,
    previous_source_hash,
    source_hash,
)
from planning_memory.views.templates import load_template

NAMES = ("patterns.md", "mistakes.md", "CLAUDE.md")
WORDS = ["retry", "cache", "auth", "## x", "`tick`", "Zeta", "alpha", "<b>", "tab\tin", "é"]
HOUR_NS = 3600 * 10**9


def full_render(mem: Memory) -> dict[str, str]:
    """Every view rendered from all the records, nothing kept: the reference."""
    records = load_all(mem.layout, mem.store, deleted=True)
    found = {}
    for kind in ("patterns", "mistakes"):
        template = load_template(f"{kind}.md")
        mine = [r for r in records if r["type"] == kind[:-1]]
        src = source_hash(mine, template)
        found[f"{kind}.md"] = render.render_view(mine, kind, template, source_hash=src)  # type: ignore[arg-type]
    live = [r for r in records if r.get("deleted_at") is None]
    prefs = mem.preferences() if mem.layout.preferences.is_file() else {}
    template = load_template("CLAUDE.md")
    found["CLAUDE.md"] = claude.render_claude_md(
        live,
        prefs,
        template,
        max_chars=int(mem.config["memory"]["render"]["claudeMdMaxChars"]),
        source_hash=claude.claude_source_hash(live, prefs, template),
    )
    return found


def on_disk(mem: Memory) -> dict[str, str]:
    return {name: (mem.layout.planning / name).read_text("utf-8") for name in NAMES}


def cold_render(mem: Memory) -> dict[str, str]:
    """The views as a run with no render cache renders them."""
    shutil.rmtree(cache_dir(mem.layout), ignore_errors=True)
    views = mem.views()
    return {name: views.text(name) for name in NAMES}


def age(paths: list[Path], step: list[int]) -> None:
    """Wait for the file system's clock to tick past the ctime of each written file, so the
    cache may trust stats at once (``RACY_NS`` 0 below) without two writes ever sharing a
    stamp; the mtimes are set hours in the past too (the cache must not rely on them)."""
    for path in paths:
        if path.exists():
            step[0] += 1
            stamp = 1_600_000_000 * 10**9 + step[0] * HOUR_NS
            os.utime(path, ns=(stamp, stamp))
            probe = path.with_name(".tick")
            while True:
                probe.write_bytes(b"")
                if probe.stat().st_ctime_ns != path.stat().st_ctime_ns:
                    break
            probe.unlink()


@contextmanager
def tree() -> Iterator[Path]:
    with tempfile.TemporaryDirectory() as tmp:
        Memory.init(tmp)
        yield Path(tmp)


OPS = st.one_of(
    st.tuples(st.just("save"), st.sampled_from(["pattern", "mistake", "decision", "learning"])),
    st.tuples(st.just("forget"), st.integers(0, 50)),
    st.tuples(st.just("restore"), st.integers(0, 50)),
    st.tuples(st.just("pin"), st.integers(0, 50)),
    st.tuples(st.just("praise"), st.integers(0, 50)),
    st.tuples(st.just("edit"), st.integers(0, 50)),
    st.tuples(st.just("delete"), st.integers(0, 50)),
    st.tuples(st.just("prefs"), st.integers(0, 3)),
)


def apply(mem: Memory, op: tuple[str, Any], words: list[str], step: list[int]) -> None:
    kind, arg = op
    records = load_all(mem.layout, mem.store, deleted=True)
    target = records[arg % len(records)] if records and isinstance(arg, int) else None
    text = " ".join(words)
    if kind == "save":
        fields: dict[str, Any] = {
            "pattern": {"description": text, "example": words[0]},
            "mistake": {"description": text, "correction": words[-1], "severity": "high"},
        }.get(arg, {"learned": text})
        mem.save(f"{arg} {text} {step[0]}", arg, **fields)
    elif target is None:
        return
    elif kind == "restore" and target.get("deleted_at"):
        mem.restore(target["id"])
    elif kind in ("restore", "forget", "pin", "praise") and target.get("deleted_at"):
        return
    elif kind == "forget":
        mem.forget(target["id"])
    elif kind == "pin":
        mem.pin(target["id"], not target["pinned"])
    elif kind == "praise" and target["type"] == "pattern":
        mem.praise(target["id"])
    elif kind == "edit":  # an editor or `git pull` rewrites a record in place
        path = mem.layout.record_path(target["type"], target["id"])
        value = dict(target, title=f"{text} edited"[:200])
        if "description" in value:
            value["description"] = f"{text} (edited)"
        path.write_text(json.dumps(value, indent=1) + "\n", "utf-8")
        age([path], step)
        mem.refresh_views()
    elif kind == "delete":
        path = mem.layout.record_path(target["type"], target["id"])
        path.unlink()
        mem.refresh_views()
    elif kind == "prefs":
        value = {"testing": {"framework": words[arg % len(words)], "n": arg}}
        mem.layout.preferences.write_bytes(codec.dump_bytes(value))
        age([mem.layout.preferences], step)
        mem.refresh_views()


SEED = [(("save", kind), ["seed", kind]) for kind in ("pattern", "mistake", "decision")]


@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    st.lists(
        st.tuples(OPS, st.lists(st.sampled_from(WORDS), min_size=1, max_size=4)),
        min_size=4,
        max_size=16,
    ),
    st.booleans(),
)
@pytest.mark.slow
def test_incremental_views_equal_a_full_render(
    steps: list[tuple[tuple[str, Any], list[str]]], trust_stats: bool
) -> None:
    """``trust_stats``: stats are trusted at once (each write gets its own mtime, hours ago),
    else every file written in the last 0.1 s is read again."""
    with tree() as root, mock.patch.object(stamps, "RACY_NS", 0 if trust_stats else stamps.RACY_NS):
        written: list[Path] = []
        mem = Memory(root, on_write=written.append)
        step = [0]
        for op, words in [*SEED, *steps]:
            apply(mem, op, words, step)
            age(written, step)
            written.clear()
            assert on_disk(mem) == full_render(mem), op
            assert mem.render_check() == []
        assert cold_render(mem) == on_disk(mem)


# -- when the cache is not trusted ------------------------------------------------------------


@pytest.fixture
def mem(example_repo: Path) -> Memory:
    mem = Memory(example_repo)
    assert not mem.render().conflicts
    return mem


def test_a_same_size_edit_within_the_same_tick_is_seen(mem: Memory) -> None:
    """A stat younger than RACY_NS is not trusted: the file is read again, so an edit that
    keeps the size and the mtime (a coarse clock, a restored stamp) is still seen."""
    out = mem.save("Racy rule", "pattern", description="aaaa")
    path = mem.layout.record_path("pattern", out.record["id"])
    st = path.stat()
    path.write_text(path.read_text("utf-8").replace("aaaa", "bbbb"), "utf-8")
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    stale = [s.name for s in mem.render_check()]
    assert stale[0] == "patterns.md" and "CLAUDE.md" in stale, stale  # CLAUDE.md: every pattern
    mem.refresh_views()
    assert "bbbb" in mem.layout.patterns_md.read_text("utf-8")
    assert on_disk(mem) == full_render(mem)


def test_a_same_size_edit_of_a_view_just_written_is_seen_by_another_process(mem: Memory) -> None:
    """A view written less than RACY_NS ago is told by its bytes: in another process (no copy
    of what was written), by its header line and its body's hash."""
    mem.save("Racy view", "pattern", description="aaaa")
    path = mem.layout.patterns_md
    text = path.read_text("utf-8")
    path.write_text(text.replace("aaaa", "bbbb"), "utf-8")  # by hand, at once, same size
    code = (
        "import sys; from planning_memory.memory import Memory; "
        "print([s.name + ' ' + s.state for s in Memory(sys.argv[1]).render_check()])"
    )
    run = subprocess.run(
        [sys.executable, "-c", code, str(mem.layout.repo_root)],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "patterns.md edited" in run.stdout, run


def test_a_view_is_told_by_its_header_and_body_hash() -> None:
    text = render.render_patterns(
        [], load_template("patterns.md"), source_hash="sha256:" + "0" * 64
    )
    data = text.encode("utf-8")
    digest = cache._digest(text, data)
    assert digest == text.split("\n")[0] and cache._matches(data, digest)
    assert not cache._matches(data.replace(b"Patterns", b"Pattern!"), digest)  # same size
    assert not cache._matches(data + b"\n", digest) and not cache._matches(data[:-1], digest)
    assert not cache._matches(b"<!-- x -->\n" + data.split(b"\n", 1)[1], digest)
    plain = cache._digest("no header\n", b"no header\n")
    assert cache._matches(b"no header\n", plain) and not cache._matches(b"no headeR\n", plain)


def test_an_in_place_edit_of_an_old_record_makes_the_views_stale(mem: Memory) -> None:
    mem.refresh_views()
    path = next(mem.layout.long_term.glob("mistakes/*.json"))
    record = json.loads(path.read_text("utf-8"))
    record["correction"] = "Always check the error type first"
    path.write_text(json.dumps(record, indent=2, sort_keys=True) + "\n", "utf-8")
    assert {s.name: s.state for s in mem.render_check()}["mistakes.md"] == "stale"
    mem.refresh_views()
    assert on_disk(mem) == full_render(mem)


@pytest.mark.parametrize("name", ["index.json", "patterns.items", "claude.items"])
@pytest.mark.parametrize("content", [b"", b"{not json", b'{"code": "another renderer"}\n'])
def test_a_broken_or_foreign_cache_is_rebuilt(mem: Memory, name: str, content: bytes) -> None:
    mem.save("One more rule", "pattern", description="kept in the cache")
    (cache_dir(mem.layout) / name).write_bytes(content)
    mem.save("And another", "pattern", description="after the cache broke")
    assert on_disk(mem) == full_render(mem)
    assert mem.render_check() == []


def test_a_refresh_with_nothing_new_writes_nothing(mem: Memory) -> None:
    """The cache is derived, under contextual/ (gitignored); once its stats are trusted, a
    refresh or a check with nothing new writes no file at all."""
    names = ["claude.items", "index.json", "mistakes.items", "patterns.items"]
    found = sorted(p.name for p in cache_dir(mem.layout).iterdir())
    assert found == sorted([*names, *(f"{name}.delta" for name in names)])
    with mock.patch.object(stamps, "RACY_NS", 0):
        mem.refresh_views()  # the stats of the files just rendered are trusted from now on
        before = {p: p.read_bytes() for p in mem.layout.planning.rglob("*") if p.is_file()}
        assert mem.refresh_views().rendered == [] and mem.render_check() == []
    after = {p: p.read_bytes() for p in mem.layout.planning.rglob("*") if p.is_file()}
    assert after == before


# -- the work it saves --------------------------------------------------------------------------


def _age_records(mem: Memory) -> None:
    """Wait until every stat is old enough to trust (``RACY_NS``)."""
    time.sleep(stamps.RACY_NS / 1e9 + 0.02)


def test_reads_only_the_records_that_changed(mem: Memory) -> None:
    _age_records(mem)
    mem.refresh_views()  # trusts the old stats from now on
    with mock.patch.object(cache, "load_record", wraps=cache.load_record) as reads:
        assert mem.refresh_views().rendered == []
        assert reads.call_count == 0
        out = mem.save("Feature folders", "pattern", description="Group UI code by feature")
        assert [c.args[2] for c in reads.call_args_list] == [f"patterns/{out.record['id']}.json"]
    assert on_disk(mem) == full_render(mem)


def test_missing_kept_items_are_made_again_from_their_records(mem: Memory) -> None:
    _age_records(mem)
    mem.refresh_views()
    (cache_dir(mem.layout) / "patterns.items").unlink()
    with mock.patch.object(cache, "load_record", wraps=cache.load_record) as reads:
        out = mem.save("Feature folders", "pattern", description="Group UI code by feature")
        live = [r["id"] for r in mem.records("pattern")]
        read = sorted(c.args[2] for c in reads.call_args_list)
        assert read == sorted(f"patterns/{rid}.json" for rid in live)  # the patterns only
        assert out.record["id"] in live
    assert on_disk(mem) == full_render(mem)


def test_a_record_claude_md_does_not_show_leaves_it_alone(mem: Memory) -> None:
    before = mem.layout.claude_md.read_bytes()
    report = mem.save("A plain note", "learning", learned="nothing CLAUDE.md shows")
    assert mem.layout.claude_md.read_bytes() == before
    assert ".planning/CLAUDE.md" not in mem.refresh_views().rendered
    assert report.record["id"] not in before.decode("utf-8")
    mem.save("A decision", "decision", learned="it is shown")
    assert mem.layout.claude_md.read_bytes() != before
    assert on_disk(mem) == full_render(mem)


# -- the source hash changed its definition ----------------------------------------------------


@pytest.mark.parametrize("whole_body", [False, True])
@pytest.mark.parametrize("older", [legacy_source_hash, previous_source_hash])
def test_a_view_edited_before_the_upgrade_is_imported_not_a_conflict(
    mem: Memory, older: Callable[..., str], whole_body: bool
) -> None:
    """A header written with an older source hash (and ``whole_body``: with the sha256 of
    the whole body as its body hash, as versions before ``sha256-sections`` wrote it), then a
    hand edit: `pmem sync` imports it."""
    path = mem.layout.patterns_md
    records = mem.views().records("patterns")
    template = load_template("patterns.md")
    text = path.read_text("utf-8")
    head, body = text.split("\n", 1)
    old = head.replace(source_hash(records, template), older(records, template))
    if whole_body:
        digest = hashlib.sha256(body.rstrip("\n").encode()).hexdigest()
        old = re.sub(r"body-hash=\S+", f"body-hash=sha256:{digest}", old)
    assert old != head
    edited = body.replace("Siempre usar try-catch", "Usar siempre try-catch")
    assert edited != body
    path.write_text(old + "\n" + edited, "utf-8")
    assert body_hash(old + "\n" + body) == old.split("body-hash=")[1].split()[0]
    report = mem.sync()
    assert report.conflicts == [] and report.imported == {"patterns.md": 1}
    assert "Usar siempre try-catch" in path.read_text("utf-8")
    assert on_disk(mem) == full_render(mem)


# -- after a save: a quick look at the record folders -------------------------------------------


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


def _trusted(mem: Memory) -> None:
    """Every record file's stat (and its folder's) old enough to trust, and the views
    current: the state a later save starts from."""
    mem.refresh_views()
    _age_records(mem)
    mem.refresh_views()


def _same_size_edit(path: Path, old: str, new: str) -> None:
    """Rewrite ``path`` in place (same inode), same size, same mtime: only its bytes differ."""
    st = path.stat()
    text = path.read_text("utf-8")
    assert old in text and len(old) == len(new)
    with path.open("r+", encoding="utf-8") as fh:
        fh.write(text.replace(old, new, 1))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def test_a_save_lists_no_folder_and_reads_only_its_record(mem: Memory) -> None:
    """The catalog keeps the record a save wrote as it writes it: neither the rules nor the
    views list a record folder again, and the views read only that record."""
    _trusted(mem)
    listed: list[str] = []
    listing = Catalog._listing

    def spy(self: Catalog, folder: str) -> dict[str, tuple[int, int]]:
        listed.append(folder)
        return listing(self, folder)

    with (
        mock.patch.object(Catalog, "_listing", spy),
        mock.patch.object(cache, "load_record", wraps=cache.load_record) as reads,
    ):
        out = mem.save("Feature folders", "pattern", description="Group UI code by feature")
    assert listed == []
    assert [c.args[2] for c in reads.call_args_list] == [f"patterns/{out.record['id']}.json"]
    assert on_disk(mem) == full_render(mem)


def test_a_save_after_a_git_checkout_renders_the_checked_out_records(mem: Memory) -> None:
    """git replaces a file it checks out (often reusing the inode it just freed): the next
    save sees it, even with the old size and mtime, by its ctime."""
    root = mem.layout.repo_root
    (root / ".gitignore").write_text(".planning/memory/contextual/\n", "utf-8")
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "base")
    path = next(mem.layout.long_term.glob("patterns/*.json"))
    st = path.stat()
    _git(root, "checkout", "-qb", "other")
    record = json.loads(path.read_text("utf-8"))
    word = record["description"].split()[0]
    path.write_text(path.read_text("utf-8").replace(word, "X" * len(word), 1), "utf-8")
    _git(root, "commit", "-qam", "edit on a branch")
    _git(root, "checkout", "-q", "-")
    _trusted(mem)
    _git(root, "checkout", "-q", "other")
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    now = path.stat()
    assert (now.st_size, now.st_mtime_ns) == (st.st_size, st.st_mtime_ns)
    mem.save("After the checkout", "pattern", description="saved on the branch")
    assert "X" * len(word) in mem.layout.patterns_md.read_text("utf-8")
    assert on_disk(mem) == full_render(mem)


def test_a_save_after_a_record_was_deleted_drops_it(mem: Memory) -> None:
    _trusted(mem)
    path = next(mem.layout.long_term.glob("mistakes/*.json"))
    path.unlink()
    mem.save("Another rule", "pattern", description="saved after the delete")
    assert path.stem not in mem.layout.mistakes_md.read_text("utf-8")
    assert on_disk(mem) == full_render(mem)


def test_a_save_after_a_record_was_replaced_by_an_editor_renders_it(mem: Memory) -> None:
    """An editor's safe write: a new file renamed over the record, same size and mtime."""
    _trusted(mem)
    path = next(mem.layout.long_term.glob("patterns/*.json"))
    st = path.stat()
    record = json.loads(path.read_text("utf-8"))
    word = record["description"].split()[0]
    temp = path.with_name(".edit.tmp")
    temp.write_text(path.read_text("utf-8").replace(word, "Y" * len(word), 1), "utf-8")
    os.replace(temp, path)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    mem.save("Another rule", "pattern", description="saved after the editor")
    assert "Y" * len(word) in mem.layout.patterns_md.read_text("utf-8")
    assert on_disk(mem) == full_render(mem)


def test_a_record_edited_in_place_is_never_stale_silently(mem: Memory) -> None:
    """A record rewritten in place (same inode, here same size and mtime too) leaves its
    folder's stamp as it was: a save does not look at it, whichever folder it wrote to;
    ``render --check`` (a full look) reports the views stale, and ``sync`` renders them."""
    _trusted(mem)
    mistake = next(mem.layout.long_term.glob("mistakes/*.json"))
    pattern = next(mem.layout.long_term.glob("patterns/*.json"))
    words = [json.loads(p.read_text("utf-8"))["description"].split()[0] for p in (mistake, pattern)]
    _same_size_edit(mistake, words[0], "Z" * len(words[0]))
    _same_size_edit(pattern, words[1], "W" * len(words[1]))
    mem.save("Another rule", "pattern", description="saved after the edits in place")
    assert {s.name for s in mem.render_check()} == {"patterns.md", "mistakes.md", "CLAUDE.md"}
    assert not mem.sync().conflicts
    assert "W" * len(words[1]) in mem.layout.patterns_md.read_text("utf-8")
    assert "Z" * len(words[0]) in mem.layout.mistakes_md.read_text("utf-8")
    assert on_disk(mem) == full_render(mem) and mem.render_check() == []


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.lists(st.tuples(st.integers(0, 6), st.integers(0, 40)), max_size=30), max_size=6)
)
def test_a_kept_order_patched_is_the_order_a_sort_gives(steps: list[list[tuple[int, int]]]) -> None:
    """Each step is a view's items in read order (key, content): patching the order kept from
    the step before gives the stable sort by key, ties (equal keys) included."""
    kept = None
    for step in steps:
        items = [([key, f"k{key}"], f"item {key} {n}") for key, n in dict.fromkeys(step)]
        digests = [text for _, text in items]
        if kept is not None and not kept.ties:
            went = set(kept.digests) - set(digests)
            came = {
                d: item for d, item in zip(digests, items, strict=True) if d not in kept.digests
            }
            kept = cache._patched(kept, went, came)
        if kept is None or kept.ties:
            kept = cache._sorted(items, digests)
        assert kept.texts == [text for _, text in sorted(items, key=lambda item: item[0])]
        assert kept.digests == kept.texts
