"""Browsing the whole code map (the viewer's reads): its areas, its folders, one folder."""

from __future__ import annotations

from pathlib import Path

from planning_memory import Memory


def test_folders_areas_and_one_folder(tmp_path: Path) -> None:
    for rel, text in {
        "app.py": "def main():\n    return helper()\n\ndef helper():\n    return 1\n",
        "src/_shard/odd.py": "def odd():\n    return 2\n",
        "src/100%/pct.py": "def pct():\n    return 3\n",
        "src/auth/login.py": "from src.auth.check import check\n\ndef login():\n    return 1\n",
        "src/auth/check.py": "def check():\n    return True\n",
    }.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, "utf-8")
    mem = Memory.init(tmp_path)
    mem.scan()
    assert mem.code.folders() == ["", "src/100%", "src/_shard", "src/auth"]
    root = mem.code.folder("")
    assert [f["path"] for f in root["files"]] == ["app.py"]
    helper = next(f for f in root["functions"] if f["name"] == "helper")
    assert helper["called_by"] and helper["file"] == "app.py"
    assert [f["path"] for f in mem.code.folder("src/_shard")["files"]] == ["src/_shard/odd.py"]
    assert [f["path"] for f in mem.code.folder("src/100%")["files"]] == ["src/100%/pct.py"]
    assert mem.code.folder("no/such")["files"] == []
    areas = mem.code.areas()
    assert isinstance(areas, dict)
    assert all(isinstance(a, dict) for a in areas.values())


def test_an_unscanned_map_is_empty(tmp_path: Path) -> None:
    mem = Memory.init(tmp_path)
    assert mem.code.folders() == [] and mem.code.areas() == {}
