"""Python extraction: facts from a real-looking module, and parity with ``ast`` on our source."""

from __future__ import annotations

import ast
import json
import shutil
from pathlib import Path

import pytest

from planning_memory.core.layout import Layout
from planning_memory.entity import scan
from planning_memory.entity.entities import qualified_of
from planning_memory.entity.languages import python
from planning_memory.entity.sideeffects import classify
from planning_memory.store import Store

REPO = Path(__file__).resolve().parents[3]

SOURCE = b'''#!/usr/bin/env python3
"""Billing: invoices and payment capture.

Longer description that is not the summary.
"""

from __future__ import annotations

import logging
import os.path as osp
from decimal import Decimal

import requests
from sqlalchemy.orm import Session

from . import models
from ..core.db import engine
from .tax import rate_for as tax_rate

__all__ = ["Invoice", "capture_payment"]

log = logging.getLogger(__name__)
URL = "https://pay.example/charge"


class Invoice(models.Base):
    """An invoice row."""

    def __init__(self, amount: Decimal, currency: str = "EUR") -> None:
        self.amount = amount
        self.currency = currency

    @property
    def total(self) -> Decimal:
        """Amount with tax."""
        return self.amount * (1 + tax_rate(self.currency))

    def _audit(self) -> None:
        log.info("audited %s", self)


def capture_payment(session: Session, invoice: Invoice, *, retries: int = 3) -> bool:
    """Charge the card for ``invoice``. Retries on timeouts."""
    for attempt in range(retries):
        try:
            response = requests.post(URL, json={"amount": str(invoice.total)})
        except requests.Timeout:
            continue
        if response.ok and attempt < retries:
            session.add(invoice)
            session.commit()
            return True
    return False


async def export_csv(path: str, rows: list[Invoice]) -> None:
    def fmt(row: Invoice) -> str:
        return f"{row.amount},{row.currency}"

    with open(path, "w") as fh:
        fh.write("\\n".join(fmt(r) for r in rows if r.amount))
'''


@pytest.fixture(scope="module")
def facts() -> dict:  # type: ignore[type-arg]
    return dict(python.extract(SOURCE))


def _fn(facts: dict, qualified: str) -> dict:  # type: ignore[type-arg]
    return next(f for f in facts["functions"] if f["qualified_name"] == qualified)


def test_module_docstring_is_the_purpose(facts: dict) -> None:  # type: ignore[type-arg]
    assert facts["purpose"] == "Billing: invoices and payment capture."


def test_imports_as_written_and_all(facts: dict) -> None:  # type: ignore[type-arg]
    modules = {i["module"] for i in facts["imports"]}
    assert modules == {
        "logging",
        "os.path",
        "decimal",
        "requests",
        "sqlalchemy.orm",
        ".models",
        "..core.db",
        ".tax",
    }
    assert facts["exports"] == ["Invoice", "capture_payment"]
    assert facts["classes"] == ["Invoice"]
    assert facts["models"] == ["Invoice"]


def test_functions_qualified_names_kinds_and_lines(facts: dict) -> None:  # type: ignore[type-arg]
    got = {(f["qualified_name"], f["kind"]) for f in facts["functions"]}
    assert got == {
        ("Invoice.__init__", "constructor"),
        ("Invoice.total", "method"),
        ("Invoice._audit", "method"),
        ("capture_payment", "function"),
        ("export_csv", "function"),
        ("export_csv.fmt", "function"),
    }
    capture = _fn(facts, "capture_payment")
    node = next(
        n
        for n in ast.parse(SOURCE).body
        if isinstance(n, ast.FunctionDef) and n.name == "capture_payment"
    )
    assert capture["lines"] == [node.lineno, node.end_lineno]
    assert (
        capture["signature"] == "(session: Session, invoice: Invoice, *, retries: int = 3) -> bool"
    )
    assert capture["purpose"] == "Charge the card for ``invoice``."
    assert capture["exported"] is True
    assert _fn(facts, "Invoice._audit")["exported"] is False
    assert _fn(facts, "export_csv")["exported"] is False  # not in __all__


def test_calls_and_side_effects(facts: dict) -> None:  # type: ignore[type-arg]
    capture = _fn(facts, "capture_payment")
    # ``session: Session``: its calls are recorded on the class, side effects read as written
    assert capture["calls"] == ["range", "requests.post", "str", "Session.add", "Session.commit"]
    written = capture["written_calls"]
    assert written == ["range", "requests.post", "str", "session.add", "session.commit"]
    assert classify(written) == ["database-write", "network"]
    export = _fn(facts, "export_csv")
    assert "fmt" in export["calls"] and "open" in export["calls"]
    assert "fmt" not in _fn(facts, "export_csv.fmt")["calls"]
    assert classify(export["calls"]) == ["filesystem"]
    assert classify(_fn(facts, "Invoice._audit")["calls"]) == ["logging"]


def test_complexity_counts_branches(facts: dict) -> None:  # type: ignore[type-arg]
    # for, except, if, and  -> 1 + 4
    assert _fn(facts, "capture_payment")["complexity"] == 5
    assert _fn(facts, "Invoice.__init__")["complexity"] == 1
    assert facts["parse_errors"] is False


def test_syntax_error_gives_partial_results() -> None:
    facts = python.extract(
        b"def ok():\n    return 1\n\ndef broken(:\n    pass\n\ndef later(): pass\n"
    )
    assert facts["parse_errors"] is True
    names = {f["name"] for f in facts["functions"]}
    assert "ok" in names and "later" in names


def test_non_utf8_source_still_parses() -> None:
    facts = python.extract("# café\ndef naïve_total(x):\n    return x\n".encode("latin-1"))
    assert [f["lines"] for f in facts["functions"]] == [[2, 3]]


def _ast_functions(source: str) -> set[tuple[str, int]]:
    found: set[tuple[str, int]] = set()

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{prefix}{child.name}"
                if not isinstance(child, ast.ClassDef):
                    found.add((name, child.lineno))
                visit(child, name + ".")
            else:
                visit(child, prefix)

    visit(ast.parse(source), "")
    return found


def test_every_function_ast_finds_in_our_own_source(tmp_path: Path) -> None:
    source = tmp_path / "repo" / "planning_memory"
    shutil.copytree(REPO / "planning_memory", source, ignore=shutil.ignore_patterns("__pycache__"))
    layout = Layout.for_repo(tmp_path / "repo")
    only_python = {"memory": {"entity": {"includePatterns": ["**/*.py"]}}}
    report = scan(layout, Store(layout), only_python)
    files = sorted(source.rglob("*.py"))
    assert report.parsed == len(files) > 20 and report.errors == 0
    found: set[tuple[str, str, int]] = set()
    for shard in (layout.entity / "files").rglob("_shard*.json"):
        for key, entity in json.loads(shard.read_text()).get("functions", {}).items():
            found.add((key.split("::")[0], qualified_of(key), entity["lines"][0]))
    expected = {
        (path.relative_to(tmp_path / "repo").as_posix(), name, line)
        for path in files
        for name, line in _ast_functions(path.read_text("utf-8"))
    }
    assert found == expected


def test_a_coding_cookie_decodes_the_module_and_keeps_names_exact(tmp_path: Path) -> None:
    source = "# -*- coding: latin-1 -*-\ndef café_name(x):\n    return 'é'\n"
    assert python.utf8_source(source.encode("latin-1")) == source.encode("utf-8")
    second = "#!/usr/bin/env python\n# vim: set fileencoding=iso-8859-15 :\nA = '€'\n"
    assert python.utf8_source(second.encode("iso-8859-15")) == second.encode("utf-8")
    late = "x = 1\n# coding: latin-1\nA = 'é'\n".encode("latin-1")  # not on a first line
    assert python.utf8_source(late) == late
    (tmp_path / "legacy.py").write_bytes(source.encode("latin-1"))
    layout = Layout.for_repo(tmp_path)
    assert scan(layout, Store(layout), {}).errors == 0
    [shard] = (layout.entity / "files").rglob("_shard*.json")
    stored = json.loads(shard.read_text())
    assert list(stored["functions"]) == ["legacy.py::café_name"]
    assert "encoding_errors" not in stored["files"]["legacy.py"]


def test_calls_through_imports_are_recorded_by_the_name_they_import() -> None:
    facts = python.extract(
        b"import os.path\nimport pkg.mod as m\nfrom . import sibling\n"
        b"try:\n    import json\nexcept ImportError:\n    import simplejson as json\n"
        b"from .tax import rate_for as tax_rate, total\nfrom json import loads\n\n\n"
        b"def loads(text):\n    return text\n\n\n"
        b"def run():\n    m.helper()\n    os.path.join('a')\n    tax_rate(1)\n    total()\n"
        b"    sibling.go()\n    loads('x')\n    m.Klass().make()\n    json.dumps(1)\n"
    )
    assert _fn(dict(facts), "run")["calls"] == [
        "pkg.mod.helper",
        "os.path.join",
        ".tax.rate_for",
        ".tax.total",
        "sibling.go",  # a name imported as itself keeps its text when looked up on
        "loads",  # the module's own loads shadows the import
        "pkg.mod.Klass().make",
        "pkg.mod.Klass",
        "json.dumps",  # imported as itself too: not simplejson.dumps
    ]
