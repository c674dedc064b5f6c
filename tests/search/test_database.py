"""The FTS5 index: rebuild, incremental updates, sync from files, safety, concurrency."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from planning_memory.core import stamps
from planning_memory.core.layout import Layout
from planning_memory.core.model import new_long_term
from planning_memory.errors import UnsafePathError
from planning_memory.search import documents as sources
from planning_memory.search import upkeep as indexer
from planning_memory.search.database import (
    LISTS,
    SCHEMA_VERSION,
    Filters,
    Index,
    hold_open,
    index_path,
    release_gone,
)
from planning_memory.search.rows import split_identifiers, varints
from planning_memory.store import Store

NOW = datetime(2026, 1, 10, 12, 0, tzinfo=UTC)
REPO = Path(__file__).resolve().parents[2]


def add_record(layout: Layout, store: Store, rtype: str, rid: str, **fields: Any) -> dict[str, Any]:
    title = fields.pop("title", rid)
    record = new_long_term(rtype, rid, NOW, title=title, **fields)
    store.write_json(layout.record_path(rtype, rid), record)
    return record


def session(sid: str, messages: list[tuple[str, str]], **extra: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "id": sid,
        "channel": "cli",
        "status": "active",
        "goal": None,
        "started_at": "2026-01-10T10:00:00Z",
        "updated_at": "2026-01-10T10:30:00Z",
        "ended_at": None,
        "messages": [
            {
                "id": mid,
                "role": "user",
                "content": text,
                "at": f"2026-01-10T10:{n:02d}:00Z",
                "tool_results": [],
            }
            for n, (mid, text) in enumerate(messages)
        ],
        "decisions": [],
        "files_accessed": [],
        "steps": [],
        "current_context": {"active_task": None, "active_phase": None, "focus_area": None},
        "rolling_summary": {
            "summary": "",
            "key_facts": [],
            "last_summarized_msg_id": None,
            "message_count": 0,
        },
        "end_summary": None,
        "checkpoint": None,
    }
    base.update(extra)
    return base


@pytest.fixture
def mem(tmp_path: Path) -> tuple[Layout, Store]:
    layout = Layout.for_repo(tmp_path)
    return layout, Store(layout)


def keys(index: Index, query: str) -> set[str]:
    return {r.doc.key for r in index.match(query, Filters(), 1000)}


def test_rebuild_indexes_every_source(mem: tuple[Layout, Store]) -> None:
    layout, store = mem
    root = layout.repo_root
    add_record(layout, store, "pattern", "pat_1", description="wrap fetch in try catch")
    add_record(layout, store, "decision", "lrn_1", learned="we chose postgres")
    store.write_json(layout.session_path("ses_1"), session("ses_1", [("msg_1", "hello kafka")]))
    store.write_json(
        layout.entity / "files" / "src.json",
        {"src/auth.py": {"purpose": "login handling", "exports": ["login"]}},
    )
    (root / "src").mkdir()
    (root / "src" / "auth.py").write_text("def login(user):\n    return bcrypt_check(user)\n")
    (root / "README.md").write_text("# Project\n\nUses zeromq.\n")
    with Index.open(layout) as index:
        indexer.rebuild(index, layout, store)
        stats = index.stats()
        assert stats["per_source"] == {"record": 2, "message": 1, "entity": 1, "code": 1, "doc": 1}
        assert keys(index, '"fetch"') == {"record:pat_1"}
        assert keys(index, '"kafka"') == {"message:msg_1"}
        assert keys(index, '"zeromq"') == {"doc:README.md#0"}
        assert "entity:file:src/auth.py" in keys(index, '"login"')
        assert "code:src/auth.py#0" in keys(index, '"bcrypt_check"')
        assert index.built


def test_soft_deleted_records_are_never_indexed(mem: tuple[Layout, Store]) -> None:
    layout, store = mem
    rec = add_record(layout, store, "pattern", "pat_1", description="quokka")
    add_record(
        layout, store, "pattern", "pat_2", description="quokka", deleted_at="2026-01-09T00:00:00Z"
    )
    with Index.open(layout) as index:
        indexer.rebuild(index, layout, store)
        assert keys(index, '"quokka"') == {"record:pat_1"}
        rec["deleted_at"] = "2026-01-10T00:00:00Z"
        indexer.index_record(index, layout, rec)
        assert keys(index, '"quokka"') == set()


def test_incremental_calls_update_and_remove(mem: tuple[Layout, Store]) -> None:
    layout, store = mem
    with Index.open(layout) as index:
        indexer.rebuild(index, layout, store)
        rec = new_long_term("mistake", "mis_1", NOW, title="t", description="walrus")
        assert indexer.index_record(index, layout, rec)
        assert not indexer.index_record(index, layout, rec), "same content: no write"
        assert keys(index, '"walrus"') == {"record:mis_1"}
        rec["description"] = "narwhal"
        indexer.index_record(index, layout, rec)
        assert keys(index, '"walrus"') == set() and keys(index, '"narwhal"') == {"record:mis_1"}
        assert indexer.remove_record(index, layout, "mis_1") == 1
        assert keys(index, '"narwhal"') == set()
        s = session("ses_9", [("msg_a", "ocelot"), ("msg_b", "ocelot again")])
        indexer.index_session(index, layout, s)
        assert keys(index, '"ocelot"') == {"message:msg_a", "message:msg_b"}
        indexer.remove_session(index, layout, "ses_9")
        assert keys(index, '"ocelot"') == set()


def test_sync_catches_files_written_behind_its_back(mem: tuple[Layout, Store]) -> None:
    layout, store = mem
    add_record(layout, store, "pattern", "pat_1", description="first")
    with Index.open(layout) as index:
        indexer.rebuild(index, layout, store)
        add_record(layout, store, "pattern", "pat_2", description="pangolin")
        store.write_json(layout.session_path("ses_2"), session("ses_2", [("msg_z", "pangolin")]))
        report = indexer.sync(index, layout, store)
        assert report.changed == 2
        assert keys(index, '"pangolin"') == {"record:pat_2", "message:msg_z"}
        store.delete(layout.record_path("pattern", "pat_2"))
        indexer.sync(index, layout, store)
        assert keys(index, '"pangolin"') == {"message:msg_z"}


def test_sync_skips_unchanged_folders(mem: tuple[Layout, Store]) -> None:
    layout, store = mem
    add_record(layout, store, "pattern", "pat_1", description="first")
    time.sleep(stamps.RACY_NS / 1e9 + 0.02)  # the stamps are old enough to trust
    with Index.open(layout) as index:
        indexer.rebuild(index, layout, store)
        assert indexer.sync(index, layout, store).seen == 0  # folder stamps equal: no listing
        add_record(layout, store, "pattern", "pat_2", description="second")
        assert indexer.sync(index, layout, store).changed == 1


def test_deleted_index_is_rebuilt_on_next_use(mem: tuple[Layout, Store]) -> None:
    layout, store = mem
    add_record(layout, store, "pattern", "pat_1", description="aardvark")
    with Index.open(layout) as index:
        indexer.ensure_ready(index, layout, store)
    for suffix in ("", "-wal", "-shm"):
        Path(f"{index_path(layout)}{suffix}").unlink(missing_ok=True)
    with Index.open(layout) as index:
        assert not index.built
        indexer.ensure_ready(index, layout, store)
        assert keys(index, '"aardvark"') == {"record:pat_1"}


def test_garbage_index_file_is_replaced(mem: tuple[Layout, Store]) -> None:
    layout, store = mem
    add_record(layout, store, "pattern", "pat_1", description="aardvark")
    path = index_path(layout)
    path.parent.mkdir(parents=True)
    path.write_bytes(b"this is not a database" * 100)
    with Index.open(layout) as index:
        indexer.ensure_ready(index, layout, store)
        assert keys(index, '"aardvark"') == {"record:pat_1"}


def test_other_schema_version_is_dropped(mem: tuple[Layout, Store]) -> None:
    layout, store = mem
    with Index.open(layout) as index:
        indexer.rebuild(index, layout, store)
        index.conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    with Index.open(layout) as index:
        assert not index.built


def test_a_version_3_index_gets_the_lists_indexes_in_place(mem: tuple[Layout, Store]) -> None:
    """Version 3 differed only in its partial indexes: upgraded in place, nothing rebuilt."""
    layout, store = mem
    add_record(layout, store, "pattern", "pat_1", description="aardvark", pinned=True)
    with Index.open(layout) as index:
        indexer.rebuild(index, layout, store)
        for name in LISTS:
            index.conn.execute(f"DROP INDEX docs_{name}")
        index.conn.execute("CREATE INDEX docs_pinned ON docs(pinned) WHERE pinned = 1")
        index.conn.execute("CREATE INDEX docs_severity ON docs(severity) WHERE severity >= 2")
        index.conn.execute("PRAGMA user_version = 3")
    with Index.open(layout) as index:
        assert index.built and keys(index, '"aardvark"') == {"record:pat_1"}
        assert [r.doc.key for r in index.listed("pinned", Filters(("record",)), 10)] == [
            "record:pat_1"
        ]
        names = {r[0] for r in index.conn.execute("SELECT name FROM sqlite_master")}
        assert {f"docs_{name}" for name in LISTS} <= names and "docs_severity" not in names
        assert index.conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION


def test_a_records_meta_reads_back_as_built_without_repeating_its_body(
    mem: tuple[Layout, Store],
) -> None:
    layout, store = mem
    long = " ".join(f"word{n}" for n in range(200))  # past META_CHARS: cut with "…"
    fields: dict[str, dict[str, Any]] = {
        "pat_1": {"name": "Retry", "description": "retry the request on error"},
        "pat_2": {"name": "Long", "description": long},
        "pat_3": {"name": "Lines", "description": "first line\nsecond line"},  # kept whole
        "pat_4": {"name": "Spaced", "description": "  padded  "},  # the body's line stripped
        "mis_1": {"description": "forgot the lock", "correction": "forgot the lock"},
    }
    records = [
        add_record(layout, store, "mistake" if rid[0] == "m" else "pattern", rid, **f)
        for rid, f in fields.items()
    ]
    with Index.open(layout) as index:
        indexer.rebuild(index, layout, store)
        for record in records:
            row = index.by_key(f"record:{record['id']}")
            built = sources.record_doc(record)
            assert row is not None and built is not None
            assert dict(row.doc.meta) == dict(built.meta)
        stored = dict(index.conn.execute("SELECT ref_id, meta FROM docs"))
    assert "word1 " not in stored["pat_2"] and "retry the" not in stored["pat_1"]
    assert "second line" in stored["pat_3"] and "  padded  " in stored["pat_4"]


def test_a_rebuild_leaves_few_free_pages(mem: tuple[Layout, Store]) -> None:
    """The merge of the full-text index's segments frees pages: a rebuild gives them back."""
    layout, store = mem
    for n in range(100):  # long texts: the merge moves megabytes
        words = " ".join(f"w{(n * 7 + k * 13) % 20011}" for k in range(2000))
        add_record(layout, store, "pattern", f"pat_{n}", description=words)
    with Index.open(layout) as index:
        indexer.rebuild(index, layout, store)
        free, pages = (
            index.conn.execute(f"PRAGMA {name}").fetchone()[0]
            for name in ("freelist_count", "page_count")
        )
        assert free * 8 <= pages, (free, pages)
        assert keys(index, '"w13"')  # still searchable


def test_a_version_6_index_keeps_its_rows(mem: tuple[Layout, Store]) -> None:
    """Version 6 kept the whole meta of each row: read as it is, nothing rebuilt."""
    layout, store = mem
    record = add_record(layout, store, "pattern", "pat_1", description="aardvark")
    built = sources.record_doc(record)
    assert built is not None
    with Index.open(layout) as index:
        indexer.rebuild(index, layout, store)
        index.conn.execute("UPDATE docs SET meta = ?", (json.dumps(dict(built.meta)),))
        index.conn.execute("PRAGMA user_version = 6")
    with Index.open(layout) as index:
        assert index.built
        row = index.by_key("record:pat_1")
        assert row is not None and dict(row.doc.meta) == dict(built.meta)


def test_access_counts_live_in_the_index_and_survive_rebuild(mem: tuple[Layout, Store]) -> None:
    layout, store = mem
    add_record(layout, store, "pattern", "pat_1", description="aardvark")
    before = sorted(p.read_bytes() for p in layout.long_term.rglob("*.json"))
    with Index.open(layout) as index:
        indexer.rebuild(index, layout, store)
        index.touch(["record:pat_1"], "2026-01-10T00:00:00Z")
        index.touch(["record:pat_1"], "2026-01-10T00:00:01Z")
        indexer.rebuild(index, layout, store)
        row = index.by_key("record:pat_1")
        assert row is not None and row.access_count == 2
    assert sorted(p.read_bytes() for p in layout.long_term.rglob("*.json")) == before


def test_used_lists_what_was_handed_out_newest_update_first(mem: tuple[Layout, Store]) -> None:
    """``used``: the documents with an access count, read from the counts, as a scan of
    every document with the same condition finds them."""
    layout, store = mem
    for n in range(6):
        add_record(layout, store, "pattern", f"pat_{n}", updated_at=f"2026-01-0{n + 1}T00:00:00Z")
    with Index.open(layout) as index:
        indexer.rebuild(index, layout, store)
        index.touch(["record:pat_1", "record:pat_4", "record:pat_2"], "2026-01-10T00:00:00Z")
        records = Filters(("record",))
        used = [r.doc.key for r in index.used(records, 10)]
        assert used == ["record:pat_4", "record:pat_2", "record:pat_1"]
        assert used == [r.doc.key for r in index.where("a.count > 0", [], records, 10)]
        assert [r.doc.key for r in index.used(records, 2)] == used[:2]
        assert index.used(Filters(("message",)), 10) == []


@pytest.mark.parametrize(
    "shard",
    [
        {"src/a.py": {"purpose": "tapir handling"}},
        {"files": {"src/a.py": {"purpose": "tapir handling"}}},
        [{"path": "src/a.py", "purpose": "tapir handling"}],
        {"path": "src/a.py", "purpose": "tapir handling"},
    ],
)
def test_entity_adapter_tolerates_shard_shapes(mem: tuple[Layout, Store], shard: Any) -> None:
    layout, store = mem
    store.write_json(layout.entity / "files" / "src.json", shard)
    with Index.open(layout) as index:
        indexer.rebuild(index, layout, store, code=False)
        assert keys(index, '"tapir"') == {"entity:file:src/a.py"}


def test_entity_functions_components_and_areas(mem: tuple[Layout, Store]) -> None:
    layout, store = mem
    store.write_json(
        layout.entity / "functions" / "src.json",
        {
            "validateCredentials": {
                "file": "src/v.ts",
                "signature": "(email) => User",
                "purpose": "checks llama",
            }
        },
    )
    store.write_json(
        layout.entity / "components" / "src.json",
        {"LoginForm": {"file": "src/L.tsx", "props": ["onSuccess"], "hooks": ["useLlama"]}},
    )
    store.write_json(
        layout.entity / "relationships.json",
        {"authentication": {"components": ["LoginForm"], "entry": "llama.ts"}},
    )
    with Index.open(layout) as index:
        indexer.rebuild(index, layout, store, code=False)
        found = keys(index, '"llama"')
        assert found == {
            "entity:function:validateCredentials",
            "entity:component:LoginForm",
            "entity:area:authentication",
        }
        # camelCase identifiers are split into words as well
        assert "entity:function:validateCredentials" in keys(index, '"credentials"')


def test_split_identifiers() -> None:
    assert split_identifiers("getFullContext and HTTPServer x_y") == "get full context http server"


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


def test_code_index_honours_gitignore_and_follows_changes(mem: tuple[Layout, Store]) -> None:
    layout, store = mem
    root = layout.repo_root
    _git(root, "init", "-q")
    (root / ".gitignore").write_text("ignored/\n")
    (root / "ignored").mkdir()
    (root / "ignored" / "x.py").write_text("capybara = 1\n")
    (root / "kept.py").write_text("capybara = 2\n")
    (root / "node_modules").mkdir()
    (root / "node_modules" / "dep.js").write_text("capybara()\n")
    with Index.open(layout) as index:
        indexer.rebuild(index, layout, store)
        assert keys(index, '"capybara"') == {"code:kept.py#0"}
        (root / "kept.py").write_text("emu = 3\n")
        indexer.index_files(index, root, ["kept.py"])
        assert keys(index, '"capybara"') == set() and keys(index, '"emu"') == {"code:kept.py#0"}
        (root / "kept.py").unlink()
        indexer.reindex_codebase(index, layout)
        assert keys(index, '"emu"') == set()


WRITER = """
import sys
from planning_memory.search.database import Filters, Index
from planning_memory.core.layout import Layout
from planning_memory.search.documents import Doc
from pathlib import Path
layout = Layout.for_repo(Path(sys.argv[1]))
tag = sys.argv[2]
with Index.open(layout) as index:
    for i in range(40):
        title = f"beaver {tag} {i}"
        doc = Doc(key=f"k:{tag}:{i}", source="record", type="pattern", title=title, body="x")
        index.replace_group(f"g:{tag}:{i}", [doc], f"h{i}")
        index.match('"beaver"', Filters(), 5)
"""


def test_parallel_writer_processes_lose_nothing(mem: tuple[Layout, Store]) -> None:
    layout, _store = mem
    with Index.open(layout):
        pass
    env = dict(os.environ, PYTHONPATH=str(REPO))
    procs = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(layout.repo_root), tag], env=env)
        for tag in ("a", "b", "c")
    ]
    assert [p.wait(timeout=120) for p in procs] == [0, 0, 0]
    with Index.open(layout) as index:
        assert len(keys(index, '"beaver"')) == 120
        assert index.conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        index.conn.execute("INSERT INTO fts(fts, rank) VALUES ('integrity-check', 1)")


def test_only_index_imports_sqlite3() -> None:
    package = REPO / "planning_memory"
    users = []
    for path in package.rglob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            if any(n.split(".")[0] == "sqlite3" for n in names):
                users.append(path.relative_to(package).as_posix())
    # the search index, and the catalog of the record files (kept by catalog.py, asked by
    # lookups.py), and their in-memory stand-ins in a tree that may only be read (readonly.py)
    assert sorted(users) == [
        "longterm/catalog.py",
        "longterm/lookups.py",
        "readonly.py",
        "search/database.py",
    ]


def test_doc_hash_changes_with_content() -> None:
    a = sources.Doc(key="k", source="record", type="pattern", title="t", body="b")
    b = sources.Doc(key="k", source="record", type="pattern", title="t", body="c")
    assert sources.content_hash([a]) != sources.content_hash([b])


def test_indexes_the_example_tree_in_the_scanners_format(example_repo: Path) -> None:
    layout = Layout.for_repo(example_repo)
    store = Store(layout)
    with Index.open(layout) as index:
        indexer.rebuild(index, layout, store, code=False)
        per_type = index.stats()["per_type"]
        for kind in ("file", "function", "component", "area"):
            assert per_type.get(f"entity:{kind}", 0) > 0, kind
        assert per_type.get("record:pattern", 0) > 0
        assert per_type.get("message:user", 0) > 0
        found = keys(index, '"loginform"')
        assert "entity:file:src/components/Auth/LoginForm.tsx" in found
        row = index.by_key("entity:area:authentication")
        assert row is not None and "LoginForm" in row.doc.body


def test_entity_tree_is_only_walked_when_a_folder_changed(mem: tuple[Layout, Store]) -> None:
    layout, store = mem
    for n in range(3):
        store.write_json(
            layout.entity / "files" / f"pkg{n}" / "_shard.json",
            {"files": {f"pkg{n}/a.py": {"purpose": "okapi"}}},
        )
    time.sleep(stamps.RACY_NS / 1e9 + 0.02)  # the folders' stamps are old enough to trust
    with Index.open(layout) as index:
        indexer.rebuild(index, layout, store, code=False)
        assert indexer.sync(index, layout, store).seen == 0
        store.write_json(
            layout.entity / "files" / "pkg1" / "_shard.json",
            {"files": {"pkg1/a.py": {"purpose": "zorilla"}}},
        )
        report = indexer.sync(index, layout, store)
        assert report.changed == 1
        assert keys(index, '"zorilla"') == {"entity:file:pkg1/a.py"}
        store.delete(layout.entity / "files" / "pkg2" / "_shard.json")
        indexer.sync(index, layout, store)
        assert keys(index, '"okapi"') == {"entity:file:pkg0/a.py"}


def test_totals_lengths_and_estimated_counts(mem: tuple[Layout, Store]) -> None:
    layout, store = mem
    with Index.open(layout) as index:
        indexer.rebuild(index, layout, store, code=False)
        with index.write():  # one document at a time: ids in this order
            for n in range(400):
                words = ["every", "half"] if n % 2 else ["every"]
                words += ["rare"] if n < 3 else []
                learned = " ".join(words)
                record = new_long_term(
                    "learning", f"lrn_{n:04d}", NOW, title="note", learned=learned
                )
                indexer.index_record(index, layout, record)
        totals = index.totals()
        assert totals.documents == totals.last_id == 400
        rows = index.match('"every"', Filters(), 1000)
        lengths = [r.length for r in rows]
        assert min(lengths) > 0
        assert totals.mean_length == pytest.approx(sum(lengths) / len(lengths))
        assert sum(totals.shares) == pytest.approx(1.0)
        assert index.estimate_count('"rare"', 50, totals) == 3  # under the cap: exact
        assert index.estimate_count('"every"', 50, totals) == 400
        assert index.estimate_count('"half"', 50, totals) == pytest.approx(200, rel=0.02)
        assert index.estimate_count('"absent"', 50, totals) == 0


def test_varints() -> None:
    assert varints(bytes([0x05, 0x7F, 0x81, 0x00, 0x82, 0x80, 0x01])) == [5, 127, 128, 32769]
    assert varints(b"") == []


def test_each_list_is_read_through_its_partial_index_and_equals_a_full_scan(
    mem: tuple[Layout, Store],
) -> None:
    """Every record, pinned records, high-severity mistakes and what a person taught: each
    read through its own partial index (the plan names it), newest update first, the same
    rows as the condition on every document."""
    layout, store = mem
    for n in range(30):
        add_record(layout, store, "pattern", f"pat_P{n:03d}", pinned=n % 7 == 0)
        severity = ("low", "medium", "high", "critical")[n % 4]
        add_record(layout, store, "mistake", f"mis_M{n:03d}", severity=severity)
        tags = ["learned-from-conversation"] if n % 5 == 0 else ["misc"]
        add_record(layout, store, "learning", f"lrn_L{n:03d}", tags=tags)
        if n % 9 == 0:
            add_record(layout, store, "preference", f"lrn_R{n:03d}")
    with Index.open(layout) as index:
        indexer.rebuild(index, layout, store)
        records = Filters(("record",))
        sizes = {}
        for name, condition in LISTS.items():
            listed = index.listed(name, records, 100)
            assert [r.doc.key for r in listed] == [
                r.doc.key for r in index.where(condition, [], records, 100)
            ]
            sizes[name] = len(listed)
            sql = (  # SQLite refuses an index that cannot answer the condition
                f"EXPLAIN QUERY PLAN SELECT id FROM docs INDEXED BY docs_{name} "
                f"WHERE {condition} ORDER BY updated_at"
            )
            plan = " ".join(str(row[3]) for row in index.conn.execute(sql))
            assert f"docs_{name}" in plan, plan
    assert sizes == {"records": 94, "pinned": 5, "severe": 14, "taught": 10}


def test_a_resident_process_keeps_the_index_open_until_its_file_is_gone(
    mem: tuple[Layout, Store],
) -> None:
    """``hold_open``: closing a handle leaves the WAL in place (the last close would
    checkpoint it and remove it); ``release_gone`` lets go of a file that was removed."""
    layout, store = mem
    add_record(layout, store, "pattern", "pat_1", description="aardvark")
    path = index_path(layout)
    wal = Path(f"{path}-wal")

    def fds_on(file: Path) -> int:
        links = (os.readlink(fd) for fd in Path("/proc/self/fd").iterdir() if fd.is_symlink())
        return sum(1 for link in links if link.startswith(str(file)))

    with Index.open(layout) as index:
        indexer.rebuild(index, layout, store)
    assert not wal.exists()  # closed by its last handle: checkpointed and removed
    hold_open()
    try:
        with Index.open(layout) as index:
            index.touch(["record:pat_1"], "2026-01-10T00:00:00Z")
        assert wal.exists() and fds_on(path) >= 1
        with Index.open(layout) as index:  # the held connection sees what handles wrote
            assert index.by_key("record:pat_1").access_count == 1  # type: ignore[union-attr]
        release_gone()
        assert fds_on(path) >= 1  # still there: kept
        for suffix in ("", "-wal", "-shm"):
            Path(f"{path}{suffix}").unlink()
        release_gone()
        assert fds_on(path) == 0
    finally:
        hold_open(False)


# -- a hostile tree: SQLite follows symlinks, so the index never opens one ------------------------
@pytest.mark.parametrize("suffix", ["", "-wal", "-shm", "-journal", ".build"])
def test_an_index_file_linked_out_of_the_tree_is_never_opened(tmp_path: Path, suffix: str) -> None:
    layout = Layout.for_repo(tmp_path / "repo")
    canary = tmp_path / "bashrc"
    canary.write_text("export PATH=$HOME/bin:$PATH\n")
    link = Path(f"{index_path(layout)}{suffix}")
    link.parent.mkdir(parents=True)
    link.symlink_to(canary)
    with pytest.raises(UnsafePathError) as info, Index.open(layout) as index, index.build_guard():
        pass
    assert info.value.path == f".planning/memory/contextual/index.sqlite3{suffix}"
    assert canary.read_text() == "export PATH=$HOME/bin:$PATH\n"


def test_an_index_folder_linked_out_of_the_tree_is_never_entered(tmp_path: Path) -> None:
    layout = Layout.for_repo(tmp_path / "repo")
    outside = tmp_path / "outside"
    outside.mkdir()
    layout.memory.mkdir(parents=True)
    layout.contextual.symlink_to(outside, target_is_directory=True)
    with pytest.raises(UnsafePathError, match="leads outside the memory tree"):
        Index.open(layout)
    assert list(outside.iterdir()) == []
