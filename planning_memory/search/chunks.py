"""Chunking of source code and Markdown into overlapping pieces for the search index. Pure.

Sizes are in *token units*: ``estimate_tokens(text) = ceil(len(text) / 4)``, the same estimate
the context packer budgets with (about four characters per token for English and code).
Code is cut at top-level definitions where possible and otherwise at line ends; Markdown is cut
at headings and paragraphs, and each chunk carries its heading path. A chunk never splits a line.
Consecutive chunks share about ``overlap`` token units of trailing lines.
"""

from __future__ import annotations

import itertools
import math
import re
from dataclasses import dataclass

CHARS_PER_TOKEN = 4

_TOP_LEVEL_RE = re.compile(
    r"^(?:async\s+def|def|class|function|func|fn|pub\s|impl|struct|enum|interface|type|"
    r"export|const|let|var|public|private|protected|static|@|#\s)"
)
_HEADING_RE = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_FENCE_RE = re.compile(r"^\s*(```|~~~)")


def estimate_tokens(text: str) -> int:
    """Estimated tokens of ``text``: ``ceil(characters / 4)``."""
    return math.ceil(len(text) / CHARS_PER_TOKEN)


@dataclass(frozen=True)
class Chunk:
    """A piece of a file: lines ``start_line``..``end_line`` (1-based, inclusive)."""

    index: int
    text: str
    start_line: int
    end_line: int
    heading: str = ""


def _blocks_by_start(lines: list[str], starts: set[int]) -> list[tuple[int, int]]:
    """Split line indexes 0..n into [start, end) blocks beginning at each index in ``starts``."""
    cuts = sorted({0, *starts, len(lines)})
    return [(a, b) for a, b in itertools.pairwise(cuts) if a < b]


def _pack(
    lines: list[str], blocks: list[tuple[int, int]], size: int, overlap: int
) -> list[tuple[int, int]]:
    """Group blocks into [start, end) line ranges of about ``size`` tokens with ``overlap``."""
    budget = max(1, size) * CHARS_PER_TOKEN
    lap = max(0, min(overlap, size // 2)) * CHARS_PER_TOKEN
    ranges: list[tuple[int, int]] = []
    units: list[tuple[int, int]] = []
    for start, end in blocks:  # split blocks larger than the budget at line ends
        units.extend(_split_lines(lines, start, end, budget))
    cur_start, cur_chars = -1, 0
    cur_end = 0
    for start, end in units:
        chars = sum(len(line) + 1 for line in lines[start:end])
        if cur_start >= 0 and cur_chars + chars > budget:
            ranges.append((cur_start, cur_end))
            cur_start = _overlap_start(lines, cur_start, cur_end, lap)
            cur_chars = sum(len(line) + 1 for line in lines[cur_start:cur_end])
        if cur_start < 0:
            cur_start, cur_chars = start, 0
        cur_end = end
        cur_chars += chars
    if cur_start >= 0:
        ranges.append((cur_start, cur_end))
    return ranges


def _split_lines(lines: list[str], start: int, end: int, budget: int) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    first, chars = start, 0
    for i in range(start, end):
        width = len(lines[i]) + 1
        if i > first and chars + width > budget:
            out.append((first, i))
            first, chars = i, 0
        chars += width
    out.append((first, end))
    return out


def _overlap_start(lines: list[str], start: int, end: int, lap: int) -> int:
    """The first line of the tail of [start, end) holding at most ``lap`` characters."""
    if lap <= 0:
        return end
    first, chars = end, 0
    while first - 1 > start and chars + len(lines[first - 1]) + 1 <= lap:
        first -= 1
        chars += len(lines[first]) + 1
    return first


def chunk_code(text: str, size: int = 500, overlap: int = 50) -> list[Chunk]:
    """Chunks of a source file, cut before top-level definitions where possible."""
    lines = text.splitlines()
    if not any(line.strip() for line in lines):
        return []
    starts = {i for i, line in enumerate(lines) if line and _TOP_LEVEL_RE.match(line)}
    ranges = _pack(lines, _blocks_by_start(lines, starts), size, overlap)
    return [
        Chunk(n, "\n".join(lines[a:b]), a + 1, b)
        for n, (a, b) in enumerate(ranges)
        if any(line.strip() for line in lines[a:b])
    ]


def _markdown_sections(lines: list[str]) -> list[tuple[int, int, str]]:
    """[start, end, heading path] for each section of a Markdown text (fences respected)."""
    sections: list[tuple[int, int, str]] = []
    path: list[str] = []
    start, heading, fenced = 0, "", False
    for i, line in enumerate(lines):
        if _FENCE_RE.match(line):
            fenced = not fenced
            continue
        match = None if fenced else _HEADING_RE.match(line)
        if match is None:
            continue
        if i > start:
            sections.append((start, i, heading))
        level = len(match.group(1))
        path = [*path[: level - 1], match.group(2)]
        start, heading = i, " > ".join(p for p in path if p)
    sections.append((start, len(lines), heading))
    return sections


def chunk_markdown(text: str, size: int = 500, overlap: int = 50) -> list[Chunk]:
    """Chunks of a Markdown text, cut at headings, then blank lines, then line ends."""
    lines = text.splitlines()
    chunks: list[Chunk] = []
    for start, end, heading in _markdown_sections(lines):
        paragraphs = {i + 1 for i in range(start, end - 1) if not lines[i].strip()}
        cuts = sorted({start, *paragraphs, end})
        blocks = [(a, b) for a, b in itertools.pairwise(cuts) if a < b]
        for a, b in _pack(lines, blocks, size, overlap):
            body = "\n".join(lines[a:b])
            if body.strip():
                chunks.append(Chunk(len(chunks), body, a + 1, b, heading))
    return chunks


MARKDOWN_SUFFIXES = (".md", ".markdown", ".mdx", ".rst", ".txt")


def chunk_file(path: str, text: str, size: int = 500, overlap: int = 50) -> list[Chunk]:
    """Chunks of ``text`` by the kind its ``path`` names (Markdown/text or code)."""
    if path.lower().endswith(MARKDOWN_SUFFIXES):
        return chunk_markdown(text, size, overlap)
    return chunk_code(text, size, overlap)
