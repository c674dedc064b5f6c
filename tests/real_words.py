"""Words of real code for the search tests: every distinct token of two installed packages."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from planning_memory.search.stemming import tokens


def real_words() -> list[str]:
    """Every distinct token of the source of click and markdown-it-py (thousands of words)."""
    words: set[str] = set()
    for name in ("click", "markdown_it"):
        spec = importlib.util.find_spec(name)
        assert spec and spec.submodule_search_locations
        for path in Path(next(iter(spec.submodule_search_locations))).rglob("*.py"):
            words.update(tokens(path.read_text("utf-8")))
    return sorted(words)
