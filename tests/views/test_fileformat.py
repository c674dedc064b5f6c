"""The header hashes: ``body_hash`` ignores exactly the editor noise it promises to, and the
source hash is built from one digest per record."""

from __future__ import annotations

import hashlib
import re

from hypothesis import given
from hypothesis import strategies as st

from planning_memory.views.fileformat import (
    HEADER_RE,
    body_hash,
    digests_hash,
    normalize_newlines,
    record_digest,
    source_hash,
)

LEGACY = (
    "<!-- planning-memory view=patterns.md source-hash=sha256:" + "0" * 64
    + " body-hash=sha256:" + "1" * 64 + " -->"
)  # fmt: skip
HEADER = LEGACY.replace("body-hash=sha256:", "body-hash=sha256-sections:")
PIECES = st.sampled_from(
    ["a", "b c", " ", "\t", "\n", "\r", "\r\n", "\ufeff", HEADER, LEGACY, "\n\n", "## ", "#"]
)


def _by_lines(text: str) -> str:
    """body_hash by its definition: header line dropped, every line right-stripped, trailing
    blank lines dropped; then, as the header says (``sha256-sections`` without one), the
    sha256 of the text, or of the sha256 digests of its sections (each starting at the top or
    at a line that starts with "## ")."""
    lines = normalize_newlines(text).split("\n")
    scheme = "sha256-sections"
    header = HEADER_RE.match(lines[0])
    if header:
        scheme = "sha256" if header["body"].startswith("sha256:") else scheme
        lines = lines[1:]
    lines = [line.rstrip(" \t") for line in lines]
    while lines and not lines[-1]:
        lines.pop()
    body = "\n".join(lines)
    if scheme == "sha256":
        return "sha256:" + hashlib.sha256(body.encode("utf-8", "surrogatepass")).hexdigest()
    sections = [s for s in re.split(r"(?<=\n)(?=## )", body) if s]
    digests = b"".join(
        hashlib.sha256(s.encode("utf-8", "surrogatepass")).digest() for s in sections
    )
    return "sha256-sections:" + hashlib.sha256(digests).hexdigest()


@given(st.lists(st.one_of(PIECES, st.text(max_size=5)), max_size=12).map("".join))
def test_body_hash_is_its_definition(text: str) -> None:
    assert body_hash(text) == _by_lines(text)


def test_source_hash_is_order_free_and_from_digests() -> None:
    a, b = {"id": "pat_1", "name": "x"}, {"id": "pat_2", "name": "y"}
    pairs = [("pat_2", record_digest(b)), ("pat_1", record_digest(a))]
    assert source_hash([a, b], "t") == source_hash([b, a], "t") == digests_hash(pairs, "t")
    assert source_hash([a, b], "t") != source_hash([a, b], "u")
    assert record_digest({"k": 1, "j": 2}) == record_digest({"j": 2, "k": 1})
    # ids cannot run into each other: the pairs are length-prefixed
    assert digests_hash([("a", "b1"), ("c", "d")]) != digests_hash([("ab", "1"), ("c", "d")])
