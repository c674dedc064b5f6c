"""Importing an agent's ``memoria/`` folder: ``largo_plazo.json`` and ``sesion_actual.json``."""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest
from click.testing import CliRunner

from planning_memory.cli import cli
from planning_memory.errors import InputError, SchemaError
from planning_memory.memory import Memory
from planning_memory.transfer import memoria
from planning_memory.validate import layout_for, validate_tree

AGENT = Path(__file__).parents[1] / "fixtures" / "memoria" / "mi-agente"
MADRID = "Europe/Madrid"


@pytest.fixture
def repo(empty_repo: Path) -> Path:
    config = json.loads((empty_repo / ".planning/memory-config.json").read_text("utf-8"))
    config["memory"]["shortTerm"]["timezone"] = MADRID
    (empty_repo / ".planning/memory-config.json").write_text(json.dumps(config), "utf-8")
    return empty_repo


def test_facts_profile_and_steps_are_imported(repo: Path) -> None:
    mem = Memory(repo)
    done = mem.transfer.import_memoria(AGENT)
    summary = done.summary()
    assert summary["created"] == 5 and summary["applied"]
    assert summary["preferences"] == ["business", "user", "user_preferences"]

    learned = {r["learned"]: r for r in mem.records("learning")}
    assert "Los lunes hace review semanal" in learned
    dated = learned["El cliente Acme paga a 60 días"]
    assert dated["created_at"] == "2026-03-01T23:00:00Z"  # 2026-03-02 00:00 in Madrid
    undated = learned["Prefiere reportes cortos, máximo 1 página"]
    assert undated["created_at"] == "2026-03-05T17:22:10Z"  # ultima_actualizacion, Madrid
    assert all(r["tags"] == ["memoria"] and r["source"] == "import" for r in learned.values())
    assert not any("hubspot-secret-123" in json.dumps(r) for r in learned.values())

    prefs = mem.preferences()
    assert prefs["user"] == {
        "nombre": "María",
        "empresa": "AgenciaX",
        "industria": "Marketing digital",
    }
    assert prefs["user_preferences"]["idioma_codigo"] == "español"
    assert prefs["business"]["herramientas_usadas"] == ["Notion", "HubSpot", "Zapier"]
    assert prefs["business"]["clientes_activos"] == 12

    [sid] = summary["sessions"]
    session = mem.get_session_context(sid)["session"]
    assert session["channel"] == "memoria" and session["status"] == "paused"
    assert session["goal"] == "Preparar el reporte semanal de AgenciaX"
    raw = json.loads(mem.layout.session_path(sid).read_text("utf-8"))
    assert [s["action"] for s in raw["steps"]] == ["buscar_datos_hubspot", "redactar_reporte"]
    assert raw["steps"][0]["at"] == "2026-03-06T08:15:04Z"
    assert len(raw["steps"][1]["result"]) == 200 and raw["steps"][1]["result"].endswith("…")
    assert raw["messages"][0]["content"] == session["goal"]

    assert list(validate_tree(layout_for(repo)).findings) == []
    assert dated["id"] in [h.ref_id for h in mem.search("Acme", match="any")]


def test_importing_twice_adds_nothing_and_overwrites_nothing(repo: Path) -> None:
    mem = Memory(repo)
    first = mem.transfer.import_memoria(AGENT)
    fact_id = next(r["id"] for r in mem.records("learning") if "Acme" in r["learned"])
    mem.pin(fact_id)
    before = {p: p.read_bytes() for p in (repo / ".planning").rglob("*.json")}
    second = mem.transfer.import_memoria(AGENT).summary()
    assert second["created"] == 0 and second["sessions"] == []
    assert len(second["already_present"]) == 5 + 1 + 3  # facts, session, preference sections
    after = {p: p.read_bytes() for p in (repo / ".planning").rglob("*.json")}
    assert after == before
    assert mem.get(fact_id)["pinned"] is True
    assert first.summary()["created"] == 5


def test_dry_run_writes_nothing(repo: Path) -> None:
    before = sorted(p.relative_to(repo) for p in repo.rglob("*"))
    done = Memory(repo).transfer.import_memoria(AGENT / "memoria", dry_run=True)
    assert done.summary()["created"] == 5 and not done.summary()["applied"]
    assert sorted(p.relative_to(repo) for p in repo.rglob("*")) == before


def test_the_empty_structure_and_one_file_only(repo: Path, tmp_path: Path) -> None:
    folder = tmp_path / "agent" / "memoria"
    folder.mkdir(parents=True)
    (folder / "largo_plazo.json").write_text(
        json.dumps({"hechos": ["Usa pytest", "Usa pytest"], "preferencias": {"tono": "formal"}}),
        "utf-8",
    )
    summary = Memory(repo).transfer.import_memoria(folder.parent).summary()
    assert summary["created"] == 1 and summary["sessions"] == []
    assert Memory(repo).preferences()["preferences"] == {"tono": "formal"}


@pytest.mark.parametrize(
    ("name", "content", "error"),
    [
        ("largo_plazo.json", "[]", InputError),
        ("largo_plazo.json", '{"aprendido": "not a list"}', SchemaError),
        ("largo_plazo.json", '{"aprendido": [{"fecha": "ayer", "hecho": "x"}]}', SchemaError),
        ("sesion_actual.json", '{"objetivo": "x", "pasos": []}', SchemaError),
        ("sesion_actual.json", '{"inicio": "2026-03-06T09:00:00", "pasos": [3]}', SchemaError),
        ("sesion_actual.json", '{"inicio": "2026-03-06', InputError),
    ],
)
def test_bad_files_are_one_clear_error_and_change_nothing(
    repo: Path, tmp_path: Path, name: str, content: str, error: type[Exception]
) -> None:
    folder = tmp_path / "bad" / "memoria"
    folder.mkdir(parents=True)
    (folder / name).write_text(content, "utf-8")
    before = sorted(p.relative_to(repo) for p in repo.rglob("*"))
    with pytest.raises(error):
        Memory(repo).transfer.import_memoria(folder)
    assert sorted(p.relative_to(repo) for p in repo.rglob("*")) == before


def test_a_folder_without_the_files(repo: Path, tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"largo_plazo\.json"):
        Memory(repo).transfer.import_memoria(tmp_path)


def test_the_cli_command_and_a_folder_is_read_as_memoria_by_default(
    repo: Path, tmp_path: Path
) -> None:
    agent = tmp_path / "mi-agente"
    shutil.copytree(AGENT, agent)
    runner = CliRunner()
    args = ["-C", str(repo), "import", "--from", "memoria", str(agent)]
    dry = runner.invoke(cli, [*args, "--dry-run"])
    assert dry.exit_code == 0 and dry.output.startswith("Would import: 5 new")
    done = runner.invoke(cli, ["-C", str(repo), "import", str(agent), "--json"])
    assert done.exit_code == 0, done.output
    assert json.loads(done.output)["created"] == 5


def test_snake_keys() -> None:
    assert memoria.snake_key("Idioma código") == "idioma_codigo"
    assert memoria.snake_key("2026 objetivos") == "k_2026_objetivos"
    assert memoria.snake_key("¿?") == ""
    assert memoria.fact_record("x", datetime(2026, 1, 1, tzinfo=UTC))["id"].startswith("lrn_s002")
