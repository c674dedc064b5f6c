"""The one exclude dialect (``core.ignore``): gitignore semantics for scan, watch and the index.

Unit tests of the dialect, then the same pattern list asked of the scanner's rules, the watch
daemon's ``IgnoreRules`` and the search index, then an end-to-end ``pmem init`` + ``scan`` +
``reindex`` on real files showing that an excluded ``generated/`` folder is in neither the code
map nor the search index.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from planning_memory.cli import cli
from planning_memory.core import ignore
from planning_memory.core.layout import Layout
from planning_memory.entity import IgnoreRules, get_file, walk
from planning_memory.errors import ConfigError
from planning_memory.search import repo_documents
from planning_memory.search.database import Index
from planning_memory.store import Store


def excluded(patterns: list[str], path: str) -> bool:
    return ignore.Exclusion(patterns).excluded(path)


# -- the dialect --------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("path", "want"),
    [
        ("generated/x.py", True),
        ("src/generated/x.py", True),  # a folder pattern without a slash: any depth
        ("a/b/generated/c/d.py", True),
        ("src/generated.py", False),  # a trailing slash matches folders only
        ("src/generated", False),
        ("src/generated_models.py", False),
    ],
)
def test_a_folder_pattern_excludes_that_folder_at_any_depth(path: str, want: bool) -> None:
    assert excluded(["generated/"], path) is want


def test_dir_star_star_is_anchored_to_the_root_as_in_git() -> None:
    assert excluded(["dist/**"], "dist/app.js")
    assert excluded(["dist/**"], "dist/a/b/app.js")
    assert not excluded(["dist/**"], "pkg/dist/app.js")  # git anchors a pattern with a slash
    assert excluded(["**/dist/**"], "pkg/dist/app.js")  # ... so say "any depth" like this
    assert excluded(["dist/"], "pkg/dist/app.js")  # ... or like this
    assert excluded(["/build"], "build/x.py") and not excluded(["/build"], "src/build/x.py")


def test_basename_globs_match_at_any_depth() -> None:
    assert excluded(["*.min.js"], "app.min.js")
    assert excluded(["*.min.js"], "static/js/app.min.js")
    assert not excluded(["*.min.js"], "static/js/app.js")


def test_negations_last_match_wins_but_never_inside_an_excluded_folder() -> None:
    patterns = ["*.log", "!keep.log", "logs/", "!logs/keep.txt"]
    assert excluded(patterns, "debug.log") and excluded(patterns, "src/debug.log")
    assert not excluded(patterns, "keep.log") and not excluded(patterns, "src/keep.log")
    assert excluded(patterns, "logs/keep.txt")  # git cannot re-include inside logs/
    assert excluded(["*.log", "!x.log", "*.log"], "x.log")  # the last match decides


def test_blank_lines_and_comments_are_not_patterns() -> None:
    rules = ignore.Exclusion(["", "   ", "# a comment", "*.tmp"])
    assert rules.excluded("a.tmp") and not rules.excluded("a.py")
    assert not ignore.Exclusion([]).excluded("anything/at/all.py")
    assert not ignore.Patterns([])


def test_folders_are_asked_with_a_trailing_slash() -> None:
    rules = ignore.Exclusion(["generated/"])
    assert rules.dir_excluded("src/generated")
    assert rules.dir_excluded("src/generated/deeper")  # below an excluded folder
    assert not rules.dir_excluded("src") and not rules.dir_excluded("")
    assert rules.patterns.match("src/generated/") and not rules.patterns.match("src/generated")


def test_a_bad_pattern_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="bad ignore pattern"):
        ignore.Patterns(["!"])
    with pytest.raises(ConfigError, match="bad include/exclude pattern"):
        walk.Rules.from_patterns([], ["!"])  # the scanner's message is unchanged


def test_the_fast_matcher_agrees_with_pathspec() -> None:
    import pathspec

    lines = ["generated/", "dist/**", "*.min.js", "/top.py", "a/**/b", "doc?/x[0-9].md"]
    paths = [
        "generated/", "src/generated/", "src/generated/x.py", "dist/a.js", "pkg/dist/a.js",
        "a.min.js", "x/a.min.js", "top.py", "x/top.py", "a/b", "a/x/y/b", "docs/x1.md",
        "docs/xa.md", "src/app.py",
    ]  # fmt: skip
    spec = pathspec.GitIgnoreSpec.from_lines(lines)
    patterns = ignore.Patterns(lines)
    for path in paths:
        assert patterns.match(path) is bool(spec.match_file(path)), path
        assert patterns.verdict(path) is spec.check_file(path).include, path


def test_layers_of_gitignore_files_deepest_last_decides() -> None:
    layers = [
        ("", ignore.Patterns(["*.gen.py", "build/"])),
        ("src/", ignore.Patterns(["!keep.gen.py"])),
    ]
    assert ignore.ignored_by_layers("app.gen.py", layers)
    assert ignore.ignored_by_layers("src/app.gen.py", layers)
    assert not ignore.ignored_by_layers("src/keep.gen.py", layers)
    assert ignore.ignored_by_layers("src/keep.gen.py", layers[:1])  # without src/.gitignore
    assert ignore.ignored_by_layers("build/", layers)
    assert not ignore.ignored_by_layers("src/app.py", layers)


# -- one answer in scan, watch and the index ----------------------------------------------------
PATTERNS = ["generated/", "dist/**", "*.min.js", "!keep.min.js", "/top.py", "logs/", "!logs/k.txt"]
PATHS = [
    "src/generated/x.py",
    "generated/y.py",
    "src/generated.py",
    "dist/a.js",
    "pkg/dist/a.js",
    "static/app.min.js",
    "static/keep.min.js",
    "top.py",
    "src/top.py",
    "logs/k.txt",
    "logs/other.txt",
    "src/app.py",
]


@pytest.mark.parametrize("path", PATHS)
def test_scan_watch_and_index_give_the_same_answer(tmp_path: Path, path: str) -> None:
    want = excluded(PATTERNS, path)
    scan_rules = walk.Rules.from_patterns([], PATTERNS)
    watch_rules = IgnoreRules(str(tmp_path), PATTERNS)  # no .gitignore: config only
    assert (not scan_rules.keep(path)) is want
    assert watch_rules.ignored(path) is want
    assert repo_documents.is_excluded(path, PATTERNS) is want


def test_the_expected_answers() -> None:
    got = {path for path in PATHS if excluded(PATTERNS, path)}
    assert got == {
        "src/generated/x.py",
        "generated/y.py",
        "dist/a.js",
        "static/app.min.js",
        "top.py",
        "logs/k.txt",
        "logs/other.txt",
    }


# -- end to end ---------------------------------------------------------------------------------
def invoke(*args: str | Path) -> str:
    result = CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


@pytest.mark.parametrize("kind", ["git", "plain"])
def test_an_excluded_folder_is_in_neither_the_code_map_nor_the_index(
    tmp_path: Path, kind: str
) -> None:
    root = tmp_path / "repo"
    (root / "src" / "generated").mkdir(parents=True)
    (root / "src" / "app.py").write_text("def handwritten_helper():\n    return 1\n")
    (root / "src" / "generated" / "x.py").write_text("def zanzibar_generated():\n    return 2\n")
    if kind == "git":
        subprocess.run(["git", "init", "-q"], cwd=root, check=True, capture_output=True)
    invoke("init", root)
    config_path = root / ".planning" / "memory-config.json"
    config = json.loads(config_path.read_text())
    config["memory"]["entity"]["excludePatterns"] = ["generated/"]
    config_path.write_text(json.dumps(config, indent=2))
    invoke("-C", root, "scan")
    invoke("-C", root, "reindex")

    layout = Layout.for_repo(root)
    store = Store(layout)
    assert get_file(layout, store, "src/app.py") is not None
    assert get_file(layout, store, "src/generated/x.py") is None  # not in the code map
    index = Index.open(layout)
    try:
        indexed = set(index.group_state("file:"))
    finally:
        index.close()
    assert "file:src/app.py" in indexed
    assert "file:src/generated/x.py" not in indexed  # not in the search index
    found = json.loads(invoke("-C", root, "search", "zanzibar_generated", "--json"))
    assert found == []
    assert json.loads(invoke("-C", root, "search", "handwritten_helper", "--json"))
    # and the watch daemon's rules agree
    assert IgnoreRules(str(root), ["generated/"]).ignored("src/generated/x.py")
    assert not IgnoreRules(str(root), ["generated/"]).ignored("src/app.py")
