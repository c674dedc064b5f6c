"""The language registry: file extensions to language names, and language names to extractors.

Adding a language is one module with an ``extract(source: bytes, path: str | None = None) ->
FileFacts`` function and two lines here. Registries are plain dicts behind the ``Extractor``
protocol. ``path`` is the file's repository path (``src/Header.tsx``); an extractor may ignore
it (JavaScript names an anonymous default-exported component after its file).
"""

from __future__ import annotations

import os
from typing import Protocol

from planning_memory.entity.facts import FileFacts
from planning_memory.entity.languages import go, java, javascript, python, rust


class Extractor(Protocol):
    def __call__(self, source: bytes, path: str, /) -> FileFacts: ...


EXTRACTORS: dict[str, Extractor] = {
    "python": python.extract,
    "javascript": javascript.extract_javascript,
    "typescript": javascript.extract_typescript,
    "tsx": javascript.extract_tsx,
    "go": go.extract,
    "rust": rust.extract,
    "java": java.extract,
}

EXTENSIONS: dict[str, str] = {
    ".py": "python",
    ".pyi": "python",
    ".js": "javascript",
    ".jsx": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".ts": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".tsx": "tsx",
    ".go": "go",
    ".rs": "rust",
    ".java": "java",
}

# which languages share one module system (for import resolution and call visibility)
FAMILY: dict[str, str] = {
    "python": "python",
    "javascript": "js",
    "typescript": "js",
    "tsx": "js",
    "go": "go",
    "rust": "rust",
    "java": "java",
}


def language_for(path: str) -> str | None:
    """The language of ``path`` from its extension, or None if we do not scan it.

    The extension is ``os.path.splitext``'s (a name's leading dots start no extension:
    ``.py`` has none), found without its per-call overhead: a warm rescan asks for 100k
    paths."""
    name = path.rfind(os.sep) + 1
    if os.altsep:
        name = max(name, path.rfind(os.altsep) + 1)
    dot = path.rfind(".")
    if dot <= name:
        return None
    while name < dot and path[name] == ".":  # skip the name's leading dots
        name += 1
    if dot == name:
        return None
    return EXTENSIONS.get(path[dot:].lower())
