"""Per-file test coverage from a report, when one exists: never invented.

Reads coverage.py JSON (``coverage json``), Cobertura XML (``coverage xml``, and most other
tools' XML), and lcov ``.info`` files. The result maps repository-relative paths to a percent
of lines covered, rounded to one decimal. Files a report lists with no measurable lines are
left out. Reports are looked for at the config's ``coverageReports`` paths, else at
``coverage.json``, ``coverage.xml``, ``lcov.info``, ``coverage/lcov.info`` and
``coverage/coverage.xml``; XML with entity declarations is refused (no entity expansion).
"""

from __future__ import annotations

import json
import os
import posixpath
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from pathlib import Path

DEFAULT_REPORTS = (
    "coverage.json",
    "coverage.xml",
    "lcov.info",
    "coverage/lcov.info",
    "coverage/coverage.xml",
)
MAX_REPORT_BYTES = 64 * 1024 * 1024


def find_reports(root: Path, configured: Iterable[str] | None) -> list[Path]:
    names = list(configured) if configured else list(DEFAULT_REPORTS)
    found = []
    for name in names:
        path = root / name
        if path.is_file() and not path.is_symlink():
            found.append(path)
    return found


def load_reports(root: Path, reports: list[Path], known: frozenset[str]) -> dict[str, float]:
    """Percent covered per repository path, merged over ``reports`` (first report wins)."""
    result: dict[str, float] = {}
    for report in reports:
        for path, percent in _load(root, report, known).items():
            result.setdefault(path, percent)
    return result


def _load(root: Path, report: Path, known: frozenset[str]) -> dict[str, float]:
    try:
        if report.stat().st_size > MAX_REPORT_BYTES:
            return {}
        data = report.read_bytes()
    except OSError:
        return {}
    raw: dict[str, tuple[int, int]] = {}
    sources: list[str] = []
    head = data.lstrip()[:1]
    if head == b"{":
        raw = _coverage_json(data)
    elif head == b"<":
        raw, sources = _cobertura(data)
    else:
        raw = _lcov(data)
    out: dict[str, float] = {}
    for name, (covered, total) in raw.items():
        path = _repo_path(root, name, sources, known)
        if path is not None and total > 0:
            out[path] = round(100.0 * covered / total, 1)
    return out


def _coverage_json(data: bytes) -> dict[str, tuple[int, int]]:
    try:
        files = json.loads(data).get("files", {})
    except (ValueError, AttributeError):
        return {}
    out: dict[str, tuple[int, int]] = {}
    for name, entry in files.items() if isinstance(files, dict) else []:
        summary = entry.get("summary", {}) if isinstance(entry, dict) else {}
        total = summary.get("num_statements")
        covered = summary.get("covered_lines")
        if isinstance(total, int) and isinstance(covered, int):
            out[name] = (covered, total)
    return out


def _cobertura(data: bytes) -> tuple[dict[str, tuple[int, int]], list[str]]:
    if b"<!ENTITY" in data or b"<!DOCTYPE" in data:
        return {}, []
    try:
        tree = ET.fromstring(data)
    except ET.ParseError:
        return {}, []
    sources = [s.text.strip() for s in tree.iter("source") if s.text and s.text.strip()]
    counts: dict[str, list[int]] = {}
    for cls in tree.iter("class"):
        name = cls.get("filename")
        if not name:
            continue
        tally = counts.setdefault(name, [0, 0])
        for line in cls.iter("line"):
            tally[1] += 1
            if (line.get("hits") or "0") != "0":
                tally[0] += 1
    return {k: (v[0], v[1]) for k, v in counts.items()}, sources


def _lcov(data: bytes) -> dict[str, tuple[int, int]]:
    out: dict[str, tuple[int, int]] = {}
    name, found, hit, lines, lines_hit = None, None, None, 0, 0
    for raw in data.decode("utf-8", "replace").splitlines():
        line = raw.strip()
        if line.startswith("SF:"):
            name, found, hit, lines, lines_hit = line[3:], None, None, 0, 0
        elif line.startswith("LF:"):
            found = _int(line[3:])
        elif line.startswith("LH:"):
            hit = _int(line[3:])
        elif line.startswith("DA:"):
            lines += 1
            parts = line[3:].split(",")
            lines_hit += len(parts) > 1 and _int(parts[1]) > 0
        elif line == "end_of_record" and name:
            total = found if found is not None else lines
            covered = hit if hit is not None else lines_hit
            out[name] = (covered, total)
            name = None
    return out


def _int(text: str) -> int:
    try:
        return int(text.strip())
    except ValueError:
        return 0


def _repo_path(root: Path, name: str, sources: list[str], known: frozenset[str]) -> str | None:
    candidates = [name] + [os.path.join(source, name) for source in sources]
    root_text = str(root)
    for candidate in candidates:
        if os.path.isabs(candidate):
            if not candidate.startswith(root_text + os.sep):
                continue
            candidate = os.path.relpath(candidate, root_text)
        path = posixpath.normpath(candidate.replace(os.sep, "/"))
        if path in known:
            return path
    return None
