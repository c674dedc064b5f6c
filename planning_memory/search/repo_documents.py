"""The repository's code and Markdown as search documents: which files, read how, chunked.

Files are listed with ``git ls-files`` inside a git work tree (so ``.gitignore`` is honoured),
else by a walk that skips hidden and vendor folders; the config's exclude patterns apply in both
cases, in gitignore syntax (``core.ignore``, the scanner's and the watch daemon's dialect);
``.planning/`` is never included. Reading refuses big, binary and non-UTF-8 files and
symlinks that leave the repository; secrets and ``<private>`` blocks are redacted before a file
is chunked, so none reaches the index or what is served from it. Nothing here writes.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterable
from pathlib import Path

from planning_memory.core import Exclusion, Patterns, privacy
from planning_memory.search.chunks import chunk_file
from planning_memory.search.documents import MAX_INDEXED_CHARS, Doc, mtime_stamp
from planning_memory.store import valid_name

LANGUAGES = {
    ".py": "python",
    ".pyi": "python",
    ".js": "javascript",
    ".jsx": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".ts": "typescript",
    ".tsx": "typescript",
    ".go": "go",
    ".rs": "rust",
    ".java": "java",
    ".kt": "kotlin",
    ".rb": "ruby",
    ".php": "php",
    ".c": "c",
    ".h": "c",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".hpp": "cpp",
    ".cs": "csharp",
    ".swift": "swift",
    ".scala": "scala",
    ".sh": "shell",
    ".sql": "sql",
    ".vue": "vue",
    ".svelte": "svelte",
    ".toml": "toml",
    ".yaml": "yaml",
    ".yml": "yaml",
    ".md": "markdown",
    ".markdown": "markdown",
    ".mdx": "markdown",
    ".rst": "rst",
    ".txt": "text",
}
DOC_LANGUAGES = frozenset({"markdown", "rst", "text"})
SKIP_DIRS = frozenset(
    {"node_modules", "vendor", "dist", "build", "target", "__pycache__", "site-packages", "venv"}
)


def language_of(path: str) -> str:
    return LANGUAGES.get(os.path.splitext(path)[1].lower(), "")


def exclusion(patterns: Iterable[str] | Exclusion) -> Exclusion:
    """The config's exclude patterns compiled once (gitignore syntax, as the scanner reads
    them: ``generated/`` is that folder at any depth, ``dist/**`` only at the root)."""
    return patterns if isinstance(patterns, Exclusion) else Exclusion(patterns)


def is_excluded(path: str, patterns: Iterable[str] | Exclusion) -> bool:
    """True when the config's exclude patterns exclude ``path`` (or a folder above it)."""
    return exclusion(patterns).excluded(path)


def selection(
    exclude: Iterable[str] | Exclusion = (), include: Iterable[str] = ()
) -> Callable[[str], bool]:
    """Whether the index takes a repository file: one it reads (``language_of``), not
    excluded, and, when the config's ``includePatterns`` name any, matched by one of them, as
    the code map takes its files (documents such as ``README.md`` are taken either way: they
    are no part of the code map)."""
    rules = exclusion(exclude)
    wanted = list(include)
    kept = Patterns(wanted, what="include pattern").match if wanted else None

    def takes(path: str) -> bool:
        language = language_of(path)
        if not language or rules.excluded(path):
            return False
        return kept is None or language in DOC_LANGUAGES or kept(path)

    return takes


def repo_files(
    root: Path, exclude: Iterable[str] | Exclusion = (), include: Iterable[str] = ()
) -> list[str]:
    """Indexable text files of the repository (relative, ``/``-separated; ``selection``),
    honouring ``.gitignore`` through ``git ls-files`` when in a git work tree, else a plain
    walk that skips hidden and vendor folders (and excluded ones). ``.planning/`` is never
    included, nor a file whose name is not valid UTF-8 (the code map warns of it)."""
    rules = exclusion(exclude)
    takes = selection(rules, include)
    names = _git_files(root)
    if names is None:
        names = _walk_files(root, rules)
    return sorted(
        n
        for n in names
        if valid_name(n)
        and not n.startswith(".planning/")
        and not any(part.startswith(".") for part in n.split("/")[:-1])
        and takes(n)
    )


def _git_files(root: Path) -> list[str] | None:
    import subprocess  # only the reindex path needs it

    if not (root / ".git").exists():
        return None
    try:
        out = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=root,
            capture_output=True,
            check=True,
            timeout=120,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    return [n for n in out.decode("utf-8", "surrogateescape").split("\0") if n]


def _walk_files(root: Path, rules: Exclusion) -> list[str]:
    found: list[str] = []
    for folder, dirs, files in os.walk(root):
        rel = os.path.relpath(folder, root)
        prefix = "" if rel == "." else rel.replace(os.sep, "/") + "/"
        dirs[:] = sorted(
            d
            for d in dirs
            if not d.startswith(".")
            and d not in SKIP_DIRS
            and valid_name(d)
            and not rules.dir_excluded(prefix + d)
        )
        found.extend(prefix + n for n in files)
    return found


def read_source_text(root: Path, rel: str, max_bytes: int) -> tuple[str, float] | None:
    """Adapter: (text, mtime) of a repository file, or None if missing, too big, binary,
    a symlink out of the repository, or not UTF-8."""
    path = root / rel
    try:
        real = os.path.realpath(path)
        if not real.startswith(os.path.realpath(root) + os.sep):
            return None
        st = os.stat(path)
        if st.st_size > max_bytes or not stat.S_ISREG(st.st_mode):  # a FIFO would block
            return None
        with open(path, "rb") as fh:
            data = fh.read(max_bytes + 1)
    except OSError:
        return None
    if b"\0" in data[:8192]:
        return None
    try:
        return data.decode("utf-8"), st.st_mtime
    except UnicodeDecodeError:
        return None


def file_docs(rel: str, text: str, mtime: float, size: int = 500, overlap: int = 50) -> list[Doc]:
    """The chunk documents of one repository file (code or Markdown), its secrets and
    ``<private>`` blocks redacted first (line numbers kept)."""
    text = privacy.redact(text, keep_lines=True)
    lang = language_of(rel)
    source = "doc" if lang in DOC_LANGUAGES else "code"
    stamp = mtime_stamp(mtime)
    docs = []
    for chunk in chunk_file(rel, text, size, overlap):
        title = f"{rel}:{chunk.start_line}-{chunk.end_line}"
        if chunk.heading:
            title = f"{rel} § {chunk.heading}"
        docs.append(
            Doc(
                key=f"{source}:{rel}#{chunk.index}",
                source=source,
                type=lang,
                title=title,
                body=chunk.text[:MAX_INDEXED_CHARS],
                path=rel,
                created_at=stamp,
                updated_at=stamp,
                meta={"start_line": chunk.start_line, "end_line": chunk.end_line},
            )
        )
    return docs
