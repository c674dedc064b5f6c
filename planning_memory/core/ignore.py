"""The one exclude dialect: gitignore patterns, for the scanner, the watch daemon and the index.

The only module that imports ``pathspec``. Pure: no file I/O (callers read ``.gitignore`` files
and pass the lines in). ``memory.entity.excludePatterns``, ``includePatterns`` and every
``.gitignore`` are read with git's rules (pathspec's ``GitIgnoreSpec``):

- a pattern without a slash, or with one only at its end, matches at any depth: ``generated/``
  is every folder named ``generated``, ``*.min.js`` every such file;
- a pattern with a slash at its start or in its middle is anchored to the folder the patterns
  belong to (the repository root for the config): ``dist/**``, ``/build``, ``src/gen/``; write
  ``**/dist/`` (or ``dist/``) for "a ``dist`` folder anywhere";
- a trailing slash matches folders only (and so everything below them);
- ``!pattern`` re-includes and the last matching pattern decides, but, as in git, nothing inside
  an excluded folder can be re-included;
- blank lines and ``#`` comments are not patterns.

A folder is asked about with a trailing ``/`` (``src/generated/``). ``Patterns`` is one compiled
list of lines; ``Exclusion`` applies it to a tree the way git does (a path is excluded when a
folder above it is, checked folder by folder and cached, so callers can prune folders before
looking at their files); ``ignored_by_layers`` combines nested ``.gitignore`` files.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING

from planning_memory.errors import ConfigError

if TYPE_CHECKING:
    from pathspec import GitIgnoreSpec

Matcher = Callable[[str], bool]

_GROUP = re.compile(r"\(\?P<[^>]+>")


class Patterns:
    """One compiled list of gitignore lines."""

    __slots__ = ("_spec", "lines", "match")

    def __init__(self, lines: Iterable[str] = (), *, what: str = "ignore pattern") -> None:
        """Compile ``lines``; a line pathspec cannot read is a ``ConfigError`` ("bad
        ``what``: ...")."""
        self._spec: GitIgnoreSpec | None = None
        self.match: Matcher = _nothing
        """``path -> bool``: True when the patterns exclude ``path`` (last match decides)."""
        try:
            self.lines = [line for line in lines if line.strip()]
            if not self.lines:
                return  # no rules: pathspec (~75 ms to import) is not needed
            from pathspec import GitIgnoreSpec

            self._spec = GitIgnoreSpec.from_lines(self.lines)
        except (ValueError, TypeError, AttributeError) as exc:
            raise ConfigError(f"bad {what}: {exc}") from None
        self.match = _matcher(self._spec)

    def verdict(self, path: str) -> bool | None:
        """True (excluded) or False (re-included) by the last pattern matching ``path``; None
        when no pattern matches it."""
        if self._spec is None:
            return None
        result: bool | None = self._spec.check_file(path).include
        return result

    def __bool__(self) -> bool:
        return bool(self.lines)

    def __repr__(self) -> str:
        return f"Patterns({self.lines!r})"


def _nothing(_path: str) -> bool:
    return False


def _matcher(spec: GitIgnoreSpec) -> Matcher:
    """``path -> matched`` for ``spec``: one combined regex when no pattern negates (checking a
    path against each pattern in turn costs 5x more at 100k files), else ``check_file``."""
    patterns = [p for p in spec.patterns if p.include is not None]
    if all(p.include for p in patterns):
        try:
            parts = [_GROUP.sub("(?:", p.regex.pattern) for p in patterns if p.regex is not None]
            combined = re.compile("|".join(f"(?:{part})" for part in parts) or "(?!)")
        except (re.error, AttributeError, TypeError):
            pass
        else:
            return lambda path: combined.search(path) is not None
    return lambda path: bool(spec.check_file(path).include)


class Exclusion:
    """``Patterns`` applied to a tree as git applies them: a path is excluded when one of the
    folders above it is (each folder asked once, then cached) or when the path itself is."""

    __slots__ = ("_dirs", "_match", "patterns")

    def __init__(self, patterns: Patterns | Iterable[str] = ()) -> None:
        self.patterns = patterns if isinstance(patterns, Patterns) else Patterns(patterns)
        self._match = self.patterns.match
        self._dirs: dict[str, bool] = {}

    def dir_excluded(self, directory: str) -> bool:
        """True when ``directory`` (relative, no trailing slash; "" is the root) or a folder
        above it is excluded."""
        if not directory:
            return False
        known = self._dirs.get(directory)
        if known is None:
            parent = directory.rsplit("/", 1)[0] if "/" in directory else ""
            known = self.dir_excluded(parent) or self._match(directory + "/")
            self._dirs[directory] = known
        return known

    def excluded(self, path: str) -> bool:
        """True when the file ``path`` (relative, ``/``-separated) is excluded."""
        directory = path.rsplit("/", 1)[0] if "/" in path else ""
        return self.dir_excluded(directory) or self._match(path)


def ignored_by_layers(path: str, layers: Sequence[tuple[str, Patterns]]) -> bool:
    """Nested ``.gitignore`` files: ``layers`` are (folder ending in "/" or "", its patterns),
    outermost first; each applies to the paths below its folder, and the last matching
    pattern, deepest file last, decides."""
    verdict = False
    for base, patterns in layers:
        if base and not path.startswith(base):
            continue
        result = patterns.verdict(path[len(base) :])
        if result is not None:
            verdict = result
    return verdict
