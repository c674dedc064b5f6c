"""Shard storage: canonical bytes, folder-name escaping, bucket splitting of big folders,
broken shards, person-edited areas, coverage reports and anchors."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

from planning_memory.core.layout import Layout
from planning_memory.entity import (
    changed_anchors,
    current_anchor_hash,
    get_area,
    get_file,
    get_function,
    mark_stale_anchors,
    scan,
)
from planning_memory.entity.shards import SPLIT_AT, Shards
from planning_memory.store import Store


def run(root: Path, config: dict[str, Any] | None = None):  # type: ignore[no-untyped-def]
    layout = Layout.for_repo(root)
    return scan(layout, Store(layout), config or {})


def test_folder_names_cannot_collide_with_shards(tmp_path: Path) -> None:
    for folder in ("_shard.json", "100%", "a b"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "m.py").write_text("def f():\n    pass\n")
    run(tmp_path)
    base = tmp_path / ".planning/memory/entity/files"
    assert (base / "%5Fshard.json/_shard.json").is_file()
    assert (base / "100%25/_shard.json").is_file()
    assert (base / "a b/_shard.json").is_file()
    layout = Layout.for_repo(tmp_path)
    assert get_file(layout, Store(layout), "_shard.json/m.py") is not None


def test_a_big_folder_is_split_and_one_change_rewrites_one_bucket(tmp_path: Path) -> None:
    count = SPLIT_AT // 2 + 50  # each file is one file entity and one function
    for i in range(count):
        (tmp_path / f"m{i:04d}.py").write_text(f"def f{i}():\n    return {i}\n")
    run(tmp_path, {"memory": {"entity": {"scanWorkers": 1}}})
    base = tmp_path / ".planning/memory/entity/files"
    buckets = sorted(base.glob("_shard-*.json"))
    assert len(buckets) == 2 and not (base / "_shard.json").exists()
    assert sum(len(json.loads(p.read_text())["files"]) for p in buckets) == count
    before = {p.name: p.read_bytes() for p in buckets}
    (tmp_path / "m0007.py").write_text("def f7():\n    return 'seven'\n")
    report = run(tmp_path)
    after = {p.name: p.read_bytes() for p in sorted(base.glob("_shard-*.json"))}
    assert report.shards_written == 1
    assert sum(before[n] != after[n] for n in before) == 1


def test_a_broken_shard_is_reported_and_rebuilt(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text("def f():\n    pass\n")
    run(tmp_path)
    shard = tmp_path / ".planning/memory/entity/files/_shard.json"
    shard.write_text("<<<<<<< ours\n{}\n=======\n{}\n>>>>>>> theirs\n")
    report = run(tmp_path)
    assert report.errors == 1 and report.parsed == 1
    assert json.loads(shard.read_text())["files"]["m.py"]["language"] == "python"


def test_person_edited_areas_are_kept(tmp_path: Path) -> None:
    (tmp_path / "billing").mkdir()
    (tmp_path / "billing" / "invoice.py").write_text("def total():\n    return 1\n")
    run(tmp_path)
    layout = Layout.for_repo(tmp_path)
    target = layout.entity / "relationships.json"
    document = json.loads(target.read_text())
    assert document["areas"]["billing"]["edited_by"] == "scan"
    document["areas"]["billing"] = {
        "edited_by": "human",
        "entry": "billing/invoice.py",
        "notes": ["Stripe lives elsewhere"],
    }
    document["areas"]["payments"] = {"manual": True, "services": ["StripeClient"]}
    target.write_text(json.dumps(document))
    (tmp_path / "billing" / "tax.py").write_text("def rate():\n    return 0.2\n")
    run(tmp_path)
    store = Store(layout)
    assert get_area(layout, store, "billing") == {
        "name": "billing",
        "edited_by": "human",
        "entry": "billing/invoice.py",
        "notes": ["Stripe lives elsewhere"],
    }
    assert get_area(layout, store, "payments") == {
        "name": "payments",
        "manual": True,
        "services": ["StripeClient"],
    }


def test_coverage_from_json_xml_and_lcov(tmp_path: Path) -> None:
    for name in ("a.py", "b.py", "c.ts"):
        (tmp_path / name).write_text("x = 1\n")
    (tmp_path / "coverage.json").write_text(
        json.dumps(
            {
                "files": {
                    "a.py": {
                        "summary": {
                            "num_statements": 8,
                            "covered_lines": 6,
                            "percent_covered": 75.0,
                        }
                    },
                }
            }
        )
    )
    (tmp_path / "coverage.xml").write_text(
        f'<?xml version="1.0" ?><coverage><sources><source>{tmp_path}</source></sources>'
        '<packages><package><classes><class filename="b.py" line-rate="0.5"><lines>'
        '<line number="1" hits="1"/><line number="2" hits="0"/></lines></class>'
        "</classes></package></packages></coverage>"
    )
    (tmp_path / "lcov.info").write_text("SF:c.ts\nDA:1,1\nDA:2,1\nDA:3,0\nend_of_record\n")
    run(tmp_path)
    layout = Layout.for_repo(tmp_path)
    store = Store(layout)
    got = {
        n: (get_file(layout, store, n) or {}).get("test_coverage") for n in ("a.py", "b.py", "c.ts")
    }
    assert got == {"a.py": 75.0, "b.py": 50.0, "c.ts": 66.7}
    (tmp_path / "lcov.info").unlink()
    (tmp_path / "coverage.json").unlink()
    (tmp_path / "coverage.xml").unlink()
    (tmp_path / "a.py").write_text("x = 2\n")
    run(tmp_path)
    assert "test_coverage" not in (get_file(layout, store, "a.py") or {})  # never invented


def _record(root: Path, anchors: list[dict[str, Any]]) -> Path:
    path = root / ".planning/memory/long-term/patterns/pat_01HM8SPCE0EC56N9TXPSGQY6AN.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    record = {
        "id": "pat_01HM8SPCE0EC56N9TXPSGQY6AN",
        "type": "pattern",
        "title": "t",
        "anchors": anchors,
        "needs_review": False,
        "updated_at": "2024-01-20T15:00:00Z",
        "deleted_at": None,
        "usage_count": 3,
    }
    path.write_text(json.dumps(record))
    return path


def test_anchors_to_changed_code_are_marked_for_review(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    (tmp_path / "auth.py").write_text(
        "def login(user):\n    return check(user)\n\n\ndef check(user):\n    return bool(user)\n"
    )
    (tmp_path / "schema.prisma").write_text("model User {\n  id Int @id\n}\n")
    run(tmp_path)
    layout = Layout.for_repo(tmp_path)
    store = Store(layout)
    anchors = [
        {
            "path": "auth.py",
            "symbol": "login",
            "hash": current_anchor_hash(layout, store, "auth.py", "login"),
        },
        {
            "path": "auth.py",
            "symbol": "check",
            "hash": current_anchor_hash(layout, store, "auth.py", "check"),
        },
        {
            "path": "schema.prisma",
            "symbol": "User",
            "hash": current_anchor_hash(layout, store, "schema.prisma", "User"),
        },
        {"path": "auth.py", "symbol": None, "hash": None},
    ]
    record = _record(tmp_path, anchors)
    assert changed_anchors(layout, store, anchors) == []
    assert mark_stale_anchors(layout, store, now="2024-02-01T00:00:00Z") == []
    (tmp_path / "auth.py").write_text(
        "def login(user):\n    return check(user)\n\n\n"
        "def check(user):\n    return user is not None\n"
    )
    run(tmp_path)
    assert [a["symbol"] for a in changed_anchors(layout, store, anchors)] == ["check"]
    assert mark_stale_anchors(layout, store, now="2024-02-01T00:00:00Z") == [
        "pat_01HM8SPCE0EC56N9TXPSGQY6AN"
    ]
    value = json.loads(record.read_text())
    assert value["needs_review"] is True and value["updated_at"] == "2024-02-01T00:00:00Z"
    assert value["usage_count"] == 3 and value["anchors"] == anchors
    assert mark_stale_anchors(layout, store) == []  # already marked
    (tmp_path / "schema.prisma").write_text("model User {\n  id String @id\n}\n")
    assert [a["symbol"] for a in changed_anchors(layout, store, anchors)] == ["check", "User"]


def test_load_of_a_missing_tree_is_empty(tmp_path: Path) -> None:
    layout = Layout.for_repo(tmp_path)
    assert Shards(layout, Store(layout)).load_files() == {}


def test_the_hash_index_is_only_a_cache(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("def a():\n    pass\n")
    (tmp_path / "b.py").write_text("def b():\n    pass\n")
    assert run(tmp_path).parsed == 2
    layout = Layout.for_repo(tmp_path)
    cache = layout.contextual / "entity-hashes.json"
    assert set(json.loads(cache.read_text())["folders"]["."][1]) == {"a.py", "b.py"}
    assert run(tmp_path).parsed == 0
    shard = layout.entity / "files" / "_shard.json"
    edited = json.loads(shard.read_text())
    edited["files"]["a.py"]["hash"] = "0" * 40  # as if another branch had other content
    shard.write_text(json.dumps(edited))
    assert run(tmp_path).parsed == 1  # the shard changed under the cache: it is read again
    cache.write_text("{not json")
    assert run(tmp_path).parsed == 0  # a broken cache is rebuilt from the shards
    assert set(json.loads(cache.read_text())["folders"]["."][1]) == {"a.py", "b.py"}
    cache.unlink()
    assert run(tmp_path).parsed == 0 and cache.exists()


def test_a_one_file_change_reads_only_the_shards_it_needs(tmp_path: Path) -> None:
    for folder, other in (("app", "lib"), ("lib", "app"), ("misc", "app")):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "m.py").write_text(f"from {other} import m\n\ndef f_{folder}():\n")
        (tmp_path / folder / "__init__.py").write_text("")
    (tmp_path / "app/m.py").write_text("from lib.m import f_lib\n\ndef f_app():\n    f_lib()\n")
    (tmp_path / "lib/m.py").write_text("def f_lib():\n    return 1\n")
    (tmp_path / "misc/m.py").write_text("def f_misc():\n    return 2\n")
    assert run(tmp_path).errors == 0
    layout = Layout.for_repo(tmp_path)
    misc = layout.entity / "files/misc/_shard.json"
    # misc/ is unrelated to the change below: make its shard unreadable without changing the
    # size, mtime or inode the hash index trusts it by; a scan that read it would report it
    st = misc.stat()
    with open(misc, "r+b") as fh:
        fh.write(b"<" * st.st_size)
    os.utime(misc, ns=(st.st_atime_ns, st.st_mtime_ns))
    (tmp_path / "lib/m.py").write_text("def f_lib():\n    return 1\n\ndef g_lib():\n    f_lib()\n")
    report = run(tmp_path)
    assert (report.parsed, report.errors, report.shards_written) == (1, 0, 1)
    store = Store(layout)
    assert get_function(layout, store, "f_lib")[0]["called_by"] == [
        "app/m.py::f_app",
        "lib/m.py::g_lib",
    ]
    misc.write_bytes(b"{}")  # a shard that is read again (its signature changed) is rebuilt
    report = run(tmp_path)
    assert report.parsed == 2 and get_function(layout, store, "f_misc")  # m.py, __init__.py


def test_the_saved_hash_index_equals_one_rebuilt_from_the_shards(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg/__init__.py").write_text("from .b import g\nfrom .a import f\n")
    (tmp_path / "pkg/a.py").write_text("import os\nfrom pkg import b\nfrom . import b as again\n")
    (tmp_path / "pkg/b.py").write_text("def g():\n    return 1\n")
    (tmp_path / "main.py").write_text("from pkg.b import g\nfrom pkg.a import f\nimport pkg\n")
    assert run(tmp_path).errors == 0
    layout = Layout.for_repo(tmp_path)
    saved = json.loads((layout.contextual / "entity-hashes.json").read_bytes())
    rebuilt = Shards(layout, Store(layout)).index(layout.contextual / "absent.json")
    assert saved["folders"] == rebuilt.folders
    assert saved["folders"]["pkg"][2]["pkg/__init__.py"] == [["pkg/a.py", "pkg/b.py"], []]


def test_a_warm_rescan_counts_the_files_that_still_have_syntax_errors(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "ok.py").write_text("def fine():\n    return 1\n")
    (tmp_path / "pkg/broken.py").write_text("def bad(:\n    return 1\n")
    message = "pkg/broken.py: syntax errors (partial results)"
    first = run(tmp_path)
    assert (first.parsed, first.errors, first.error_paths) == (2, 1, (message,))
    warm = run(tmp_path)  # nothing parsed: the count comes from what the map knows
    assert (warm.parsed, warm.errors, warm.error_paths) == (0, 1, (message,))
    (tmp_path / "ok.py").write_text("def fine():\n    return 2\n")  # a change elsewhere
    other = run(tmp_path)
    assert (other.parsed, other.errors, other.error_paths) == (1, 1, (message,))
    layout = Layout.for_repo(tmp_path)
    (layout.contextual / "entity-hashes.json").unlink()  # rebuilt from the shards
    assert run(tmp_path).errors == 1
    (tmp_path / "pkg/broken.py").write_text("def bad():\n    return 1\n")
    fixed = run(tmp_path)
    assert (fixed.parsed, fixed.errors, fixed.error_paths) == (1, 0, ())
    assert run(tmp_path).errors == 0


def _generated_go(lines: int) -> str:
    """A protoc-style generated Go file of about ``lines`` lines."""
    out = ["// Code generated by protoc-gen-go. DO NOT EDIT.", "package pb", ""]
    i = 0
    while len(out) < lines:
        out += [
            f"// GetField{i} returns the field {i} of the message, or its zero value.",
            f"func (x *Message{i % 50}) GetField{i}() string {{",
            f"\tif x != nil {{ return x.Field{i} }}",
            '\treturn ""',
            "}",
            "",
        ]
        i += 1
    return "\n".join(out)


def test_one_huge_generated_file_makes_no_shard_over_a_megabyte(tmp_path: Path) -> None:
    (tmp_path / "pb").mkdir()
    (tmp_path / "pb/api.pb.go").write_text(_generated_go(50_000))
    (tmp_path / "pb/small.go").write_text("package pb\n\nfunc Small() int { return 1 }\n")
    config = {"memory": {"entity": {"maxFileBytes": 5_000_000, "scanWorkers": 1}}}
    assert run(tmp_path, config).parsed == 2
    shards = list((tmp_path / ".planning/memory/entity/files").rglob("_shard*.json"))
    assert shards and max(p.stat().st_size for p in shards) < 1_000_000
    functions: dict[str, Any] = {}
    for path in shards:
        functions.update(json.loads(path.read_text())["functions"])
    kept = [k for k in functions if k.startswith("pb/api.pb.go::")]
    assert len(kept) > 500  # the start of the file is mapped, in source order
    assert "pb/api.pb.go::Message0.GetField0" in kept and "pb/small.go::Small" in functions
    assert run(tmp_path, config).parsed == 0  # and stays stable on a warm rescan
