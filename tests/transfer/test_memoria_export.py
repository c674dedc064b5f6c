"""Writing an agent's ``memoria/`` folder back (seed 002): ``pmem export --to memoria``."""

from __future__ import annotations

import json
import os
import shutil
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from planning_memory.cli import cli
from planning_memory.errors import InputError
from planning_memory.memory import Memory

AGENT = Path(__file__).parents[1] / "fixtures" / "memoria" / "mi-agente"
MADRID = "Europe/Madrid"


def _clock() -> datetime:
    return datetime(2026, 3, 9, 16, 30, 5, tzinfo=UTC)


@pytest.fixture
def repo(empty_repo: Path) -> Path:
    config = json.loads((empty_repo / ".planning/memory-config.json").read_text("utf-8"))
    config["memory"]["shortTerm"]["timezone"] = MADRID
    (empty_repo / ".planning/memory-config.json").write_text(json.dumps(config), "utf-8")
    return empty_repo


@pytest.fixture
def mem(repo: Path, tmp_path: Path) -> Memory:
    """The fixture agent's folder imported, a pattern and a session with steps added."""
    memory = Memory(repo, clock=_clock)
    memory.transfer.import_memoria(AGENT)
    memory.save("Usar pnpm, nunca npm", "pattern", description="el lockfile es pnpm-lock.yaml")
    gone = memory.save("Un hecho olvidado", "learning").record["id"]
    memory.forget(gone)
    sid = memory.sessions.start(goal="Enviar el reporte")["id"]
    memory.sessions.add_step(
        sid, "enviar_email", "enviado a María con token sk-ant-api03-" + "a" * 90
    )
    return memory


def _load(path: Path) -> Any:
    return json.loads(path.read_text("utf-8"))


def _facts(doc: dict[str, Any]) -> set[tuple[str, str]]:
    return {(f["fecha"], f["hecho"]) for f in doc["aprendido"]}


def test_seed002_export_writes_largo_plazo_and_sesion_actual(mem: Memory, tmp_path: Path) -> None:
    agent = tmp_path / "agente"
    done = mem.transfer.export_memoria(agent).summary()
    assert done["facts"] == 6 and done["steps"] == 1 and done["folder"] == str(agent)
    long_term = _load(agent / "largo_plazo.json")
    assert list(long_term) == ["usuario", "negocio", "aprendido", "ultima_actualizacion"]
    assert long_term["usuario"]["nombre"] == "María"
    assert long_term["usuario"]["preferencias"]["idioma_codigo"] == "español"
    assert long_term["negocio"]["herramientas_usadas"] == ["Notion", "HubSpot", "Zapier"]
    facts = {f["hecho"]: f["fecha"] for f in long_term["aprendido"]}
    assert facts["El cliente Acme paga a 60 días"] == "2026-03-02"  # the seed's own date
    assert facts["Usar pnpm, nunca npm: el lockfile es pnpm-lock.yaml"] == "2026-03-09"
    assert "Un hecho olvidado" not in facts  # forgotten
    assert "La clave del CRM es [REDACTED]" in facts  # redacted when it was imported
    assert long_term["ultima_actualizacion"] == "2026-03-09T17:30:05"  # local and naive
    log = _load(agent / "sesion_actual.json")
    assert list(log) == ["inicio", "objetivo", "pasos"]
    assert log["inicio"] == "2026-03-09T17:30:05" and log["objetivo"] == "Enviar el reporte"
    [step] = log["pasos"]
    assert step["accion"] == "enviar_email" and step["timestamp"] == "2026-03-09T17:30:05"
    assert "sk-ant-api03" not in json.dumps(log) and "[REDACTED" in step["resultado"]
    assert not [
        p for p in agent.iterdir() if p.name not in ("largo_plazo.json", "sesion_actual.json")
    ]


def test_seed002_export_reads_as_the_seed_reads_it(mem: Memory, tmp_path: Path) -> None:
    out = tmp_path / "agente"
    out.mkdir()
    """The seed's own loader (``cargar_memoria_largo_plazo`` + ``construir_system_prompt``)."""
    mem.transfer.export_memoria(out)
    memoria = _load(out / "largo_plazo.json")
    hechos = [h if isinstance(h, str) else h.get("hecho", h) for h in memoria["aprendido"][-10:]]
    assert "Los lunes hace review semanal" in hechos
    assert memoria.get("usuario", {}).get("preferencias", {})["formato_reportes"] == "markdown"


def test_seed002_export_into_the_agent_folder_writes_its_memoria(
    mem: Memory, tmp_path: Path
) -> None:
    agent = tmp_path / "mi-agente"
    shutil.copytree(AGENT, agent)
    done = mem.transfer.export_memoria(agent).summary()
    assert done["folder"] == str(agent / "memoria")
    assert "Usar pnpm" in (agent / "memoria" / "largo_plazo.json").read_text("utf-8")


def test_seed002_export_then_import_adds_nothing(mem: Memory, tmp_path: Path) -> None:
    mem.transfer.export_memoria(tmp_path / "out")
    before = _memory_files(mem)
    again = mem.transfer.import_memoria(tmp_path / "out").summary()
    assert again["created"] == 0 and again["sessions"] == [] and again["preferences"] == []
    assert _memory_files(mem) == before


def _memory_files(mem: Memory) -> dict[Path, bytes]:
    """The memory's own files (records, preferences, sessions), not derived caches."""
    lay = mem.layout
    return {p: p.read_bytes() for d in (lay.long_term, lay.short_term) for p in d.rglob("*.json")}


def test_seed002_export_then_import_into_a_fresh_tree_gives_the_same_facts(
    mem: Memory, tmp_path: Path
) -> None:
    mem.transfer.export_memoria(tmp_path / "out")
    fresh_root = tmp_path / "fresh"
    fresh_root.mkdir()
    shutil.copy(mem.layout.config, Memory.init(fresh_root).layout.config)  # the same timezone
    fresh = Memory(fresh_root, clock=_clock)
    done = fresh.transfer.import_memoria(tmp_path / "out").summary()
    assert done["created"] == 6 and len(done["sessions"]) == 1
    assert fresh.preferences()["user_preferences"] == mem.preferences()["user_preferences"]
    fresh.transfer.export_memoria(tmp_path / "again")
    first, second = (
        _load(tmp_path / "out/largo_plazo.json"),
        _load(tmp_path / "again/largo_plazo.json"),
    )
    assert _facts(first) == _facts(second)
    assert first["usuario"] == second["usuario"] and first["negocio"] == second["negocio"]
    assert _load(tmp_path / "out/sesion_actual.json") == _load(
        tmp_path / "again/sesion_actual.json"
    )


def test_seed002_export_writes_nothing_when_nothing_changed(mem: Memory, tmp_path: Path) -> None:
    out = tmp_path / "agente"
    out.mkdir()
    first = mem.transfer.export_memoria(out).summary()
    assert all(f["written"] for f in first["files"])
    stamps = {p: p.stat().st_mtime_ns for p in out.glob("*.json")}
    second = mem.transfer.export_memoria(out).summary()
    assert not any(f["written"] for f in second["files"])
    assert {p: p.stat().st_mtime_ns for p in out.glob("*.json")} == stamps


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("largo_plazo.json", "[1, 2]"),
        ("largo_plazo.json", '{"aprendido": "no es una lista"}'),
        ("largo_plazo.json", '{"nombre": "texto suelto"}'),
        ("largo_plazo.json", "{not json"),
        ("sesion_actual.json", '{"objetivo": "sin inicio"}'),
    ],
)
def test_seed002_export_refuses_a_file_that_is_not_seed_shaped(
    mem: Memory, tmp_path: Path, name: str, content: str
) -> None:
    out = tmp_path / "agente"
    out.mkdir()
    (out / name).write_text(content, "utf-8")
    with pytest.raises(InputError, match="not a seed-shaped"):
        mem.transfer.export_memoria(out)
    assert (out / name).read_text("utf-8") == content
    assert sorted(p.name for p in out.iterdir()) == [name]  # neither file written
    mem.transfer.export_memoria(out, force=True)
    assert _load(out / "largo_plazo.json")["aprendido"]


def test_seed002_export_refuses_to_drop_facts_memory_lacks(mem: Memory, tmp_path: Path) -> None:
    out = tmp_path / "agente"
    out.mkdir()
    mem.transfer.export_memoria(out)
    doc = _load(out / "largo_plazo.json")
    doc["aprendido"].append({"fecha": "2026-03-10", "hecho": "El agente aprendió esto solo"})
    (out / "largo_plazo.json").write_text(json.dumps(doc), "utf-8")
    with pytest.raises(InputError, match="El agente aprendió esto solo"):
        mem.transfer.export_memoria(out)
    assert mem.transfer.import_memoria(out).summary()["created"] == 1  # import first, then export
    mem.transfer.export_memoria(out)
    assert "El agente aprendió esto solo" in (out / "largo_plazo.json").read_text("utf-8")


def test_seed002_export_refuses_to_replace_an_unknown_session_log(
    mem: Memory, tmp_path: Path
) -> None:
    out = tmp_path / "agente"
    out.mkdir()
    log = {"inicio": "2026-03-10T08:00:00", "objetivo": "Otra sesión", "pasos": []}
    (out / "sesion_actual.json").write_text(json.dumps(log), "utf-8")
    with pytest.raises(InputError, match="session log"):
        mem.transfer.export_memoria(out)
    mem.transfer.import_memoria(out)
    newest = mem.sessions.list()[0].id  # the imported log started last
    assert mem.transfer.export_memoria(out).summary()["session"] == newest


def test_seed002_pmem_export_to_memoria(mem: Memory, tmp_path: Path) -> None:
    runner = CliRunner()
    root = str(mem.layout.repo_root)
    out = tmp_path / "agente"
    done = runner.invoke(cli, ["-C", root, "export", "--to", "memoria", str(out)])
    assert done.exit_code == 0, done.output
    assert f"Wrote {out / 'largo_plazo.json'}" in done.output and "6 facts" in done.output
    again = runner.invoke(cli, ["-C", root, "export", "--to", "memoria", str(out), "--json"])
    assert [f["written"] for f in json.loads(again.output)["files"]] == [False, False]
    for args, said in (
        ([], "needs a folder"),
        ([str(mem.layout.planning)], "inside the memory tree"),
    ):
        refused = runner.invoke(cli, ["-C", root, "export", "--to", "memoria", *args])
        assert isinstance(refused.exception, InputError) and said in str(refused.exception)
    stray = runner.invoke(cli, ["-C", root, "export", str(out)])
    assert isinstance(stray.exception, InputError) and "--to memoria" in stray.exception.hint
    assert sorted(os.listdir(out)) == ["largo_plazo.json", "sesion_actual.json"]
