"""The index's vectors: one embedding per record and session summary, searched in full.

Vectors live in the derived index (table ``vectors``: document key, the document's row id,
a digest of the embedded text, 384 float16 values). Triggers count every insert and delete
of an embeddable document (``docs_epoch`` in ``meta``); ``refresh`` embeds what is new or
changed since the last refresh (``vectors_epoch``) and drops the vectors of documents that
are gone. A document re-inserted with the same text (a rebuild, a re-sync) keeps its
vector: only new text is embedded. ``nearest`` compares a query's vector with every stored
vector (numpy, brute force: about 1 ms at 10k records), the matrix kept in memory per index
file until the vectors change.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from planning_memory.core import TAUGHT_TAG
from planning_memory.search import semantic

if TYPE_CHECKING:
    from planning_memory.search.database import Index
    from planning_memory.search.semantic import Embedder


def embeddable(row: str) -> str:
    """The SQL condition on a ``docs`` row (``d``, ``new``) that it gets a vector."""
    return f"({row}.source = 'record' OR ({row}.source = 'session' AND {row}.type = 'summary'))"


def has_vector(source: str, type_: str) -> bool:
    """Whether a document of this source and type gets a vector (``embeddable`` in Python)."""
    return source == "record" or (source == "session" and type_ == "summary")


EMBED_CHARS = 240  # of title and text embedded per document (the cost grows with its tokens)
UNEMBEDDED_TAGS = frozenset({TAUGHT_TAG})  # machinery, not subject: every taught rule has it
BATCH = 16
MEDIAN_FROM = 20  # vectors: from this many on, a query's typical cosine is its median
TYPICAL = 0.80  # the typical cosine of unrelated texts, for an index with fewer vectors
_BUMP = """INSERT INTO meta(key, value) VALUES ('docs_epoch', '1') ON CONFLICT(key)
        DO UPDATE SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT)"""
SCHEMA = (
    """CREATE TABLE IF NOT EXISTS vectors(
      key TEXT PRIMARY KEY, doc_id INTEGER NOT NULL, hash TEXT NOT NULL, vec BLOB NOT NULL)""",
    f"""CREATE TRIGGER IF NOT EXISTS docs_vec AFTER INSERT ON docs
      WHEN {embeddable("new")} BEGIN {_BUMP}; END""",
    f"""CREATE TRIGGER IF NOT EXISTS docs_unvec AFTER DELETE ON docs
      WHEN {embeddable("old")} BEGIN {_BUMP}; END""",
)
MATRICES_KEPT = 4  # index files whose matrix a process keeps (10k vectors: 15 MB each)
_MATRICES: dict[str, tuple[str, list[str], Any]] = {}


@dataclass(frozen=True)
class Near:
    """A document close to the query: its key, its cosine similarity, and how far that
    stands above the query's typical cosine (``lift``)."""

    key: str
    cosine: float
    lift: float = 0.0


def text_of(title: str, body: str, tags: str = "") -> str:
    """What is embedded for a document: its title and the start of its text, then its tags
    (``tags`` as the index stores them, " a b "), which name its subject in a word or two."""
    subject = " ".join(t for t in tags.split() if t not in UNEMBEDDED_TAGS)
    text = f"{title}\n{body}"[:EMBED_CHARS]
    return f"{text}\n{subject}" if subject else text


def digest(text: str) -> str:
    """The digest a vector keeps of what the model was given (``semantic.STORED_AS`` and the
    text), so a vector embedded another way is embedded again."""
    given = f"{semantic.STORED_AS}: {text}"
    return hashlib.sha1(given.encode(), usedforsecurity=False).hexdigest()[:16]


def stale(index: Index) -> bool:
    """Whether documents were indexed since the vectors were last refreshed."""
    return index.get_meta("docs_epoch") != index.get_meta("vectors_epoch")


def present(index: Index) -> bool:
    """Whether the index holds any vector."""
    return index.conn.execute("SELECT 1 FROM vectors LIMIT 1").fetchone() is not None


def count(index: Index) -> int:
    return int(index.conn.execute("SELECT count(*) FROM vectors").fetchone()[0])


def refresh(
    index: Index,
    embedder: Embedder,
    *,
    limit: int | None = None,
    progress: Callable[[int], None] | None = None,
) -> int:
    """Embed the documents indexed since the last refresh (at most ``limit``; the rest stays
    pending for the next call) and drop the vectors of removed documents. Returns how many
    texts were embedded."""
    if not stale(index):
        return 0
    epoch = index.get_meta("docs_epoch")
    todo = index.conn.execute(
        "SELECT d.id, d.key, d.title, substr(d.body, 1, ?), d.tags, v.hash FROM docs d "
        f"LEFT JOIN vectors v ON v.key = d.key WHERE {embeddable('d')} "
        "AND (v.doc_id IS NULL OR v.doc_id != d.id)",
        (EMBED_CHARS,),
    ).fetchall()
    moved: list[tuple[int, str, str]] = []
    new: list[tuple[int, str, str]] = []
    for doc_id, key, title, body, tags, known in todo:
        text = text_of(title, body, tags)
        (moved if known == digest(text) else new).append((doc_id, key, text))
    done = new[:limit] if limit is not None else new
    with index.write():
        index.conn.executemany(
            "UPDATE vectors SET doc_id = ? WHERE key = ?", [(i, k) for i, k, _t in moved]
        )
    for start in range(0, len(done), BATCH):
        _store(index, embedder, done[start : start + BATCH])
        if progress is not None:
            progress(min(start + BATCH, len(done)))
    with index.write():
        index.conn.execute("DELETE FROM vectors WHERE key NOT IN (SELECT key FROM docs)")
        if len(done) == len(new) and epoch is not None:
            index.conn.execute(
                "INSERT OR REPLACE INTO meta(key, value) VALUES ('vectors_epoch', ?)", (epoch,)
            )
    return len(done)


def _store(index: Index, embedder: Embedder, batch: Sequence[tuple[int, str, str]]) -> None:
    np = semantic.numpy()

    vectors = embedder.passages([text for _i, _k, text in batch]).astype(np.float16)
    rows = [
        (key, doc_id, digest(text), vector.tobytes())
        for (doc_id, key, text), vector in zip(batch, vectors, strict=True)
    ]
    with index.write():
        index.conn.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?, ?, ?)", rows)


def clear(index: Index) -> None:
    """Forget every vector (embeddings turned off)."""
    with index.write():
        index.conn.execute("DELETE FROM vectors")
        index.conn.execute("DELETE FROM meta WHERE key = 'vectors_epoch'")


def stats(index: Index) -> dict[str, int]:
    """How many vectors and their bytes."""
    sql = "SELECT count(*), coalesce(sum(length(vec)), 0) FROM vectors"
    n, size = index.conn.execute(sql).fetchone()
    return {"vectors": int(n), "vector_bytes": int(size)}


def _matrix(index: Index) -> tuple[list[str], Any]:
    """The keys and the float32 matrix of the index's vectors, cached until they change."""
    np = semantic.numpy()

    marker = f"{index.get_meta('vectors_epoch')}:{count(index)}"
    cached = _MATRICES.get(str(index.path))
    if cached is not None and cached[0] == marker:
        return cached[1], cached[2]
    rows = index.conn.execute("SELECT key, vec FROM vectors ORDER BY key").fetchall()
    keys = [key for key, _vec in rows]
    if len(_MATRICES) >= MATRICES_KEPT:  # a resident server serving many trees
        _MATRICES.clear()
    blob = b"".join(vec for _key, vec in rows)
    matrix = np.frombuffer(blob, dtype=np.float16).astype(np.float32)
    matrix = matrix.reshape(len(rows), -1) if rows else matrix.reshape(0, 0)
    _MATRICES[str(index.path)] = (marker, keys, matrix)
    return keys, matrix


def median(values: Any) -> float:
    """The median of a 1-D float array, as ``numpy.median`` gives it, by a partition (numpy's
    own median imports ``numpy.ma``, 17-28 ms of CPU in a command's own process)."""
    np = semantic.numpy()
    count = len(values)
    if not count:
        raise ValueError("the median of no values")
    middle = count // 2
    if count % 2:
        return float(np.partition(values, middle)[middle])
    low, high = np.partition(values, (middle - 1, middle))[middle - 1 : middle + 1]
    return float((low + high) / 2)


def nearest(index: Index, query: Any, n: int, margin: float) -> list[Near]:
    """The ``n`` documents whose vectors are closest to ``query``, closest first, among those
    whose cosine passes the query's typical one by ``margin``: the median cosine over the
    index (``TYPICAL`` below ``MEDIAN_FROM`` vectors). Unrelated texts are not far apart for
    e5 (cosines around 0.8), so only what stands out from the crowd counts as near."""
    np = semantic.numpy()

    keys, matrix = _matrix(index)
    if not keys:
        return []
    cosines = matrix @ np.asarray(query, dtype=np.float32)
    typical = median(cosines) if len(keys) >= MEDIAN_FROM else TYPICAL
    top = np.argpartition(-cosines, n)[:n] if len(keys) > n else range(len(keys))
    found = [
        Near(keys[i], float(cosines[i]), float(cosines[i]) - typical)
        for i in top
        if cosines[i] >= typical + margin
    ]
    return sorted(found, key=lambda near: (-near.cosine, near.key))
