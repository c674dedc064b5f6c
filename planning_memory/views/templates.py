"""Load the Markdown templates (``patterns.md.tmpl`` ...) shipped with planning-memory.

Installed, they are package data under ``planning_memory/templates``; in a source checkout,
the repository's top-level ``templates/`` folder. Render functions take the template text, so
they stay pure; this module is the one place that reads it.
"""

from __future__ import annotations

import re
from pathlib import Path

from planning_memory.errors import ConfigError

TEMPLATE_NAMES = ("patterns.md.tmpl", "mistakes.md.tmpl", "CLAUDE.md.tmpl")
_NAME_RE = re.compile(r"^[A-Za-z0-9_-][A-Za-z0-9_.-]*$")
_PACKAGED_DIR = Path(__file__).resolve().parents[1] / "templates"  # an installed package's data
_SOURCE_DIR = Path(__file__).resolve().parents[2] / "templates"


def load_template(name: str) -> str:
    """The text of template ``name`` (``patterns.md`` or ``patterns.md.tmpl``)."""
    if not _NAME_RE.match(name):
        raise ConfigError(f"invalid template name {name!r}")
    file_name = name if name.endswith(".tmpl") else name + ".tmpl"
    packaged = _PACKAGED_DIR / file_name
    if packaged.is_file():
        return packaged.read_text(encoding="utf-8")
    local = _SOURCE_DIR / file_name
    if local.is_file():
        return local.read_text(encoding="utf-8")
    raise ConfigError(f"template {file_name!r} not found", path=str(local))
