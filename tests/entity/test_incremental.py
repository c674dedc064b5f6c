"""The incremental scan on a real git repository: nothing changed -> nothing written; one file
changed -> one shard rewritten; deleted and renamed files lose their entities; annotations
survive; the incremental ``called_by`` equals a full recomputation."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from planning_memory.core import TREE_GITIGNORE as GITIGNORE
from planning_memory.core.layout import Layout
from planning_memory.entity import (
    get_file,
    get_function,
    scan,
    update_file_annotations,
)
from planning_memory.store import Store

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "repos" / "nextauth-app"
SOURCES = 27  # .ts/.tsx files in the fixture


def git(root: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True)
    return done.stdout


def snapshot(root: Path) -> dict[str, tuple[int, bytes]]:
    entity = root / ".planning" / "memory" / "entity"
    return {
        str(p.relative_to(entity)): (p.stat().st_mtime_ns, p.read_bytes())
        for p in sorted(entity.rglob("*.json"))
    }


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "app"
    shutil.copytree(FIXTURE, root)
    (root / ".planning").mkdir()
    (root / ".planning" / ".gitignore").write_text(GITIGNORE)  # as `pmem init` writes it
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "app")
    return root


def run(root: Path, **kwargs: object):  # type: ignore[no-untyped-def]
    layout = Layout.for_repo(root)
    return scan(layout, Store(layout), {}, **kwargs)  # type: ignore[arg-type]


def commit_memory(root: Path) -> None:
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "memory")


def test_cold_then_warm_rescan_writes_nothing(repo: Path) -> None:
    first = run(repo)
    assert first.parsed == SOURCES and first.errors == 0 and first.shards_written > 0
    commit_memory(repo)
    before = snapshot(repo)
    again = run(repo)
    assert again.parsed == 0 and again.unchanged == SOURCES and again.shards_written == 0
    assert snapshot(repo) == before  # same bytes and same mtimes: nothing was rewritten
    assert git(repo, "status", "--porcelain") == ""


def test_a_fresh_clone_is_warm(repo: Path, tmp_path: Path) -> None:
    run(repo)
    commit_memory(repo)
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(repo), str(clone))
    report = run(clone)
    assert report.parsed == 0 and report.unchanged == SOURCES and report.shards_written == 0
    assert git(clone, "status", "--porcelain") == ""


def test_one_file_change_rewrites_one_shard(repo: Path) -> None:
    run(repo)
    commit_memory(repo)
    before = snapshot(repo)
    validators = repo / "src/lib/auth/validators.ts"
    text = validators.read_text()
    validators.write_text(text.replace("password.length >= 8", "password.length >= 10"))
    report = run(repo)
    assert report.parsed == 1 and report.unchanged == SOURCES - 1
    after = snapshot(repo)
    changed = sorted(k for k in after if after[k] != before.get(k))
    assert changed == ["files/src/lib/auth/_shard.json"]
    assert report.shards_written == 1


def test_deleted_and_renamed_files_lose_their_entities(repo: Path) -> None:
    run(repo)
    git(repo, "mv", "src/lib/auth/hash.ts", "src/lib/auth/hashing.ts")
    index = repo / "src/lib/auth/index.ts"
    index.write_text(index.read_text().replace("'./hash'", "'./hashing'"))
    (repo / "src/components/ui/ErrorMessage.tsx").unlink()
    report = run(repo)
    assert report.removed == 2
    layout = Layout.for_repo(repo)
    store = Store(layout)
    assert get_file(layout, store, "src/lib/auth/hash.ts") is None
    assert get_file(layout, store, "src/components/ui/ErrorMessage.tsx") is None
    assert get_file(layout, store, "src/lib/auth/hashing.ts") is not None
    [hashing] = get_function(layout, store, "hashPassword")
    assert hashing["file"] == "src/lib/auth/hashing.ts"
    assert hashing["called_by"] == ["src/lib/services/auth-service.ts::AuthService.register"]
    shards = (layout.entity / "files").rglob("*.json")
    text = "".join(p.read_text() for p in shards)
    assert "src/lib/auth/hash.ts" not in text and "ErrorMessage.tsx" not in text
    assert (
        not (layout.entity / "files/src/components/ui/_shard.json")
        .read_text()
        .count("ErrorMessage")
    )


def entity_files(root: Path) -> dict[str, bytes]:
    entity = root / ".planning" / "memory" / "entity"
    return {str(p.relative_to(entity)): p.read_bytes() for p in sorted(entity.rglob("*.json"))}


def test_a_deleted_or_renamed_folder_leaves_no_shard_and_matches_a_fresh_scan(
    repo: Path, tmp_path: Path
) -> None:
    run(repo)
    ui = repo / "src/components/ui"
    shutil.rmtree(repo / "src/lib/auth")  # deleted; then a rescan of just that folder
    run(repo, paths=["src/lib/auth"])
    ui.rename(repo / "src/components/widgets")  # renamed: both folders named
    run(repo, paths=["src/components/ui", "src/components/widgets"])
    shards = entity_files(repo)
    assert not [
        k for k in shards if k.startswith(("files/src/lib/auth/", "files/src/components/ui/"))
    ]
    fresh = tmp_path / "fresh"
    shutil.copytree(repo, fresh)
    shutil.rmtree(fresh / ".planning" / "memory")
    run(fresh)
    assert entity_files(fresh) == shards


def test_annotations_survive_rescans(repo: Path) -> None:
    run(repo)
    layout = Layout.for_repo(repo)
    store = Store(layout)
    path = "src/components/Auth/LoginForm.tsx"
    update_file_annotations(
        layout,
        store,
        path,
        notes=["Uses react-hook-form", "Validation with zod"],
        purpose="Email/password login form",
        modified_by="elsabro-executor",
    )
    target = repo / path
    target.write_text(target.read_text().replace("Sign in", "Log in"))
    assert run(repo).parsed == 1
    entity = get_file(layout, store, path)
    assert entity is not None
    assert entity["notes"] == ["Uses react-hook-form", "Validation with zod"]
    assert entity["modified_by"] == ["elsabro-executor"]
    assert (entity["purpose"], entity["purpose_source"]) == (
        "Email/password login form",
        "annotation",
    )
    update_file_annotations(layout, store, path, purpose="")
    assert run(repo, full=True).parsed == SOURCES
    entity = get_file(layout, store, path)
    assert entity is not None
    assert (entity["purpose"], entity["purpose_source"]) == (
        "Login form with email/password.",
        "code",
    )
    assert entity["notes"] == ["Uses react-hook-form", "Validation with zod"]


def _functions(root: Path) -> dict[str, dict]:  # type: ignore[type-arg]
    merged: dict[str, dict] = {}  # type: ignore[type-arg]
    for path in (root / ".planning/memory/entity/files").rglob("*.json"):
        merged.update(json.loads(path.read_text()).get("functions", {}))
    return merged


def test_incremental_called_by_equals_a_full_recomputation(repo: Path, tmp_path: Path) -> None:
    run(repo)
    edits = [
        (
            "src/lib/auth/validators.ts",
            "export function isStrongPassword",
            "export function isGood",
        ),
        ("src/lib/services/auth-service.ts", "isStrongPassword(password)", "isGood(password)"),
        ("src/app/api/auth/register/route.ts", "auth.register(", "auth.linkAccount("),
        ("src/lib/auth/index.ts", "export { hashPassword } from './hash'\n", ""),
    ]
    for path, old, new in edits:
        target = repo / path
        assert old in target.read_text()
        target.write_text(target.read_text().replace(old, new))
        run(repo)
    (repo / "src/lib/extra.ts").write_text(
        "import { validateCredentials } from '@/lib/auth'\n"
        "export async function check(e: string) { return validateCredentials(e, 'x') }\n"
    )
    run(repo)
    incremental = _functions(repo)
    fresh = tmp_path / "fresh"
    shutil.copytree(repo, fresh, ignore=shutil.ignore_patterns(".planning"))
    run(fresh)
    assert _functions(fresh) == incremental
    [validate] = get_function(
        Layout.for_repo(repo), Store(Layout.for_repo(repo)), "validateCredentials"
    )
    assert "src/lib/extra.ts::check" in validate["called_by"]
    [good] = get_function(Layout.for_repo(repo), Store(Layout.for_repo(repo)), "isGood")
    assert good["called_by"] == ["src/lib/services/auth-service.ts::AuthService.register"]
