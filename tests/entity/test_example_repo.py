"""The example entity tree is what scanning the nextauth-app fixture gives, and it reproduces
seed 000's entity example: the LoginForm file and component, validateCredentials and the
authentication area.

Regenerate after a scanner change with ``PMEM_UPDATE_EXAMPLE=1 .venv/bin/pytest
tests/test_scan_example.py``.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from planning_memory.core import schema
from planning_memory.core.layout import Layout
from planning_memory.entity import (
    get_area,
    get_component,
    get_file,
    get_function,
    scan,
    update_file_annotations,
)
from planning_memory.store import Store

REPO = Path(__file__).resolve().parents[2]
FIXTURE = REPO / "tests" / "fixtures" / "repos" / "nextauth-app"
EXAMPLE = REPO / ".planning.example"
LOGIN_FORM = "src/components/Auth/LoginForm.tsx"


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("example") / "nextauth-app"
    shutil.copytree(FIXTURE, root)
    layout = Layout.for_repo(root)
    store = Store(layout)
    config = json.loads((EXAMPLE / "memory-config.json").read_text())
    report = scan(layout, store, config)
    assert report.errors == 0 and report.parsed == 27
    update_file_annotations(
        layout,
        store,
        LOGIN_FORM,
        notes=["Usa react-hook-form", "Validación con zod"],
        modified_by="elsabro-executor",
    )
    if os.environ.get("PMEM_UPDATE_EXAMPLE"):
        shutil.rmtree(EXAMPLE / "memory" / "entity", ignore_errors=True)
        shutil.copytree(layout.entity, EXAMPLE / "memory" / "entity")
    return root


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*.json"))}


def test_the_example_tree_is_a_fresh_scan_of_the_fixture(built: Path) -> None:
    expected = _files(Layout.for_repo(built).entity)
    assert _files(EXAMPLE / "memory" / "entity") == expected


def test_the_example_validates_against_the_schemas() -> None:
    entity = EXAMPLE / "memory" / "entity"
    shards = sorted((entity / "files").rglob("_shard*.json"))
    assert len(shards) > 10
    for path in shards:
        assert not list(schema.validator("entity-files").iter_errors(json.loads(path.read_text())))
    relationships = json.loads((entity / "relationships.json").read_text())
    assert not list(schema.validator("relationships").iter_errors(relationships))


def _lookups(root: Path) -> tuple[Layout, Store]:
    layout = Layout.for_repo(root)
    return layout, Store(layout)


def test_seed_login_form_file(built: Path) -> None:
    entity = get_file(*_lookups(built), LOGIN_FORM)
    assert entity is not None
    assert entity["type"] == "component"
    assert entity["purpose"] == "Login form with email/password."
    assert entity["exports"] == ["LoginForm", "LoginFormProps"]
    assert {"@/lib/auth", "@/components/ui/Button"} <= set(entity["imports"])
    assert entity["imports"]["@/lib/auth"] == "src/lib/auth/index.ts"
    assert entity["complexity"] == "medium"
    assert entity["test_coverage"] == 85.0
    assert entity["modified_by"] == ["elsabro-executor"]
    assert entity["notes"] == ["Usa react-hook-form", "Validación con zod"]


def test_seed_login_form_component(built: Path) -> None:
    [component] = get_component(*_lookups(built), "LoginForm")
    assert component["file"] == LOGIN_FORM
    assert component["props"] == ["onSuccess", "onError", "redirectUrl"]
    assert component["state"] == ["isLoading", "error"]
    assert component["hooks"] == ["useForm", "useAuth"]
    assert component["children"] == ["Button", "Input", "ErrorMessage"]


def test_seed_validate_credentials(built: Path) -> None:
    [function] = get_function(*_lookups(built), "validateCredentials")
    assert function["file"] == "src/lib/auth/validators.ts"
    assert function["signature"] == "(email: string, password: string) => Promise<User | null>"
    assert function["purpose"] == "Validates credentials against the database."
    assert function["side_effects"] == ["database-read"]
    assert function["calls"] == ["bcrypt.compare", "prisma.user.findUnique"]
    assert function["called_by"] == [
        "src/components/Auth/LoginForm.tsx::LoginForm",
        "src/lib/auth/options.ts::authOptions.authorize",
    ]


def test_seed_authentication_area(built: Path) -> None:
    area = get_area(*_lookups(built), "authentication")
    assert area is not None
    assert area["entry"] == "src/app/api/auth/[...nextauth]/route.ts"
    assert area["components"] == ["ForgotPassword", "LoginForm", "RegisterForm"]
    assert area["services"] == ["AuthService", "EmailService"]
    assert area["database"] == ["Account", "Session", "User"]
    assert get_area(*_lookups(built), "auth") == area  # a synonym finds it too
