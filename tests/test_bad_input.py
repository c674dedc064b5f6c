"""Malformed input given to ``pmem validate`` (inside a tree) and ``pmem import FILE``.

Every case must give one clear line naming the file and the problem (``validate``: one finding
line per problem, each naming the file), no traceback, nothing written, in under a second.
Most cases run the real entry point (``planning_memory.cli.main``) in-process; a sample runs
the ``pmem`` console script as a process. The cases are generated here, at test time, so that
the 100 MB file and the 10^5-deep nesting are never committed.
"""

from __future__ import annotations

import copy
import gzip
import hashlib
import json
import os
import random
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from planning_memory.cli import main
from planning_memory.core import codec, schema
from planning_memory.validate import kind_of

REPO = Path(__file__).resolve().parent.parent
EXAMPLE = REPO / ".planning.example"
PMEM = str(Path(sys.executable).parent / "pmem")
LT = "memory/long-term"
PLACES = {  # where a broken file goes in the tree (validate)
    "pattern": f"{LT}/patterns/pat_bad.json",
    "config": "memory-config.json",
    "preferences": f"{LT}/preferences.json",
    "session": "memory/short-term/session-ses_bad.json",
}
BIG_FILE = 100 * 1024 * 1024


def example(kind: str) -> dict[str, Any]:
    """A valid file of the example tree, as a value."""
    if kind == "config":
        path = EXAMPLE / "memory-config.json"
    elif kind == "preferences":
        path = EXAMPLE / LT / "preferences.json"
    elif kind == "session":
        path = sorted((EXAMPLE / "memory/short-term").glob("session-*.json"))[0]
    else:
        folder = {"pattern": "patterns", "mistake": "mistakes", "learning": "learnings"}[kind]
        path = sorted((EXAMPLE / LT / folder).glob("*.json"))[0]
    value: dict[str, Any] = codec.loads(path.read_bytes())
    return value


def record(kind: str, **changes: Any) -> dict[str, Any]:
    value = example(kind)
    value["id"] = {"pattern": "pat_bad", "mistake": "mis_bad"}.get(kind, "lrn_bad")
    value.update(changes)
    return value


def raw(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, indent=2).encode()


def deep(opener: str, closer: str, levels: int) -> bytes:
    return (opener * levels + "1" + closer * levels).encode()


# -- syntax and encoding: the same bytes anywhere ---------------------------------------------
def _pattern_bytes() -> bytes:
    return raw(record("pattern"))


SYNTAX: dict[str, tuple[Callable[[], bytes], str]] = {
    "truncated-half": (lambda: _pattern_bytes()[: len(_pattern_bytes()) // 2], "invalid JSON"),
    "truncated-one-byte": (lambda: b"{", "invalid JSON"),
    "truncated-in-string": (lambda: b'{"id": "pat_b', "invalid JSON"),
    "empty": (lambda: b"", "invalid JSON"),
    "whitespace-only": (lambda: b"  \n\t\n", "invalid JSON"),
    "invalid-utf8-ff": (lambda: b'{"title": "caf\xff"}', "invalid UTF-8 byte 0xff"),
    "invalid-utf8-overlong": (lambda: b'{"title": "\xc0\x80"}', "invalid UTF-8"),
    "invalid-utf8-continuation": (lambda: b'{"title": "\x80"}', "invalid UTF-8"),
    "invalid-utf8-cut-sequence": (lambda: b'{"title": "\xe6\x97"}', "invalid UTF-8"),
    "utf16": (lambda: _pattern_bytes().decode().encode("utf-16"), "invalid UTF-8"),
    "utf8-bom": (lambda: b"\xef\xbb\xbf" + _pattern_bytes(), "byte order mark"),
    "nul-in-middle": (lambda: _pattern_bytes()[:40] + b"\x00" + _pattern_bytes()[40:], "NUL"),
    "nul-only": (lambda: b"\x00" * 1024, "NUL"),
    "duplicate-key-top": (lambda: b'{"id": "pat_bad", "title": "t", "id": "x"}', "'id'"),
    "duplicate-key-nested": (lambda: b'{"body": {"what": "a", "what": "b"}}', "'what'"),
    "nan": (lambda: b'{"confidence": NaN}', "NaN is not valid JSON"),
    "infinity": (lambda: b'{"confidence": Infinity}', "Infinity is not valid JSON"),
    "minus-infinity": (lambda: b'{"confidence": -Infinity}', "-Infinity is not valid JSON"),
    "float-overflow": (lambda: b'{"confidence": 1e400}', "out of range"),
    "huge-integer": (lambda: b'{"usage_count": ' + b"9" * 5000 + b"}", "too large"),
    "lone-surrogate": (lambda: b'{"title": "\\ud800"}', "unpaired surrogate"),
    "conflict-block": (
        lambda: (
            b'{\n<<<<<<< HEAD\n  "title": "ours"\n=======\n  "title": "theirs"\n'
            b">>>>>>> feature\n}\n"
        ),
        "conflict markers",
    ),
    "conflict-separator-only": (lambda: b'{\n  "a": 1\n=======\n}\n', "conflict markers"),
    "conflict-theirs-only": (lambda: b'>>>>>>> main\n{"a": 1}\n', "conflict markers"),
    "deep-arrays-1e5": (lambda: deep("[", "]", 100_000), "nesting deeper than"),
    "deep-objects-1e5": (lambda: deep('{"a":', "}", 100_000), "nesting deeper than"),
    "deep-65": (lambda: deep("[", "]", 65), "nesting deeper than"),
    "trailing-garbage": (lambda: _pattern_bytes() + b"x", "Extra data"),
    "two-documents": (lambda: b"{}{}", "Extra data"),
    "single-quotes": (lambda: b"{'id': 'pat_bad'}", "invalid JSON"),
    "trailing-comma": (lambda: b'{"id": "pat_bad",}', "invalid JSON"),
    "comment": (lambda: b'// a pattern\n{"id": "pat_bad"}', "invalid JSON"),
    "raw-newline-in-string": (lambda: b'{"title": "two\nlines"}', "Invalid control character"),
    "bad-escape": (lambda: b'{"title": "\\x41"}', "Invalid \\escape"),
    "unquoted-key": (lambda: b"{id: 1}", "invalid JSON"),
    "random-bytes": (lambda: random.Random(7).randbytes(512), "invalid UTF-8"),
    "gzip": (lambda: gzip.compress(_pattern_bytes(), mtime=0), "invalid UTF-8"),
    "html": (lambda: b"<!doctype html><html><body>404</body></html>", "invalid JSON"),
    "yaml": (lambda: b"id: pat_bad\ntitle: a pattern\n", "invalid JSON"),
}


# -- valid JSON of the wrong shape ------------------------------------------------------------
@dataclass(frozen=True)
class Shape:
    name: str
    kind: str  # the file kind it is placed as for validate
    data: Callable[[], bytes]
    expect: str  # in the validate finding
    import_data: Callable[[], bytes] | None  # what import gets (None: not an import case)
    import_expect: str


def _wrap(kind: str, value: Any) -> bytes:
    key = {"pattern": "patterns", "mistake": "mistakes"}.get(kind, "learnings")
    return raw({"longTerm": {key: [value]}})


SHAPES = [
    Shape(
        "array-not-object",
        "pattern",
        lambda: b"[]",
        "a record must be a JSON object",
        lambda: b"[1, 2]",
        "$[0]: each record must be a JSON object",
    ),
    Shape(
        "string-top",
        "pattern",
        lambda: b'"hello"',
        "a record must be a JSON object",
        lambda: b'"hello"',
        "expected a JSON object or array",
    ),
    Shape(
        "null-top",
        "pattern",
        lambda: b"null",
        "a record must be a JSON object",
        lambda: b"null",
        "expected a JSON object or array",
    ),
    Shape(
        "number-top",
        "pattern",
        lambda: b"42",
        "a record must be a JSON object",
        lambda: b"42",
        "expected a JSON object or array",
    ),
    Shape(
        "empty-object",
        "pattern",
        lambda: b"{}",
        "unknown record type None",
        lambda: b"{}",
        "nothing to import",
    ),
    Shape(
        "config-array",
        "config",
        lambda: b"[]",
        "is not of type 'object'",
        None,
        "",
    ),
    Shape(
        "config-wrong-type",
        "config",
        lambda: raw(_config_with(chunkSize="big")),
        "'big' is not of type 'integer'",
        None,
        "",
    ),
    Shape(
        "preferences-camel-case",
        "preferences",
        lambda: raw({**example("preferences"), "codeStyle": {}}),
        "'codeStyle' does not match",
        lambda: raw({"longTerm": {"preferences": {"codeStyle": {"nested": {"a": 1}}}}}),
        "is not of type",
    ),
    Shape(
        "preferences-no-updated-at",
        "preferences",
        lambda: raw({k: v for k, v in example("preferences").items() if k != "updated_at"}),
        "'updated_at' is a required property",
        lambda: raw({"longTerm": {"preferences": [1, 2]}}),
        "preferences must be an object",
    ),
    Shape(
        "session-bad-status",
        "session",
        lambda: raw({**example("session"), "id": "ses_bad", "status": "sleeping"}),
        "'sleeping' is not one of",
        lambda: raw({"shortTerm": {"sessions": [{**example("session"), "status": "sleeping"}]}}),
        "'sleeping' is not one of",
    ),
    Shape(
        "session-messages-not-array",
        "session",
        lambda: raw({**example("session"), "id": "ses_bad", "messages": "hi"}),
        "'hi' is not of type 'array'",
        lambda: raw({"shortTerm": {"sessions": [{**example("session"), "messages": "hi"}]}}),
        "'hi' is not of type 'array'",
    ),
    Shape(
        "session-unsafe-id",
        "session",
        lambda: raw({**example("session"), "id": "../../etc"}),
        "'../../etc'",
        lambda: raw({"shortTerm": {"sessions": [{**example("session"), "id": "../../etc"}]}}),
        "invalid id",
    ),
    Shape(
        "session-id-file-name-mismatch",
        "session",
        lambda: raw({**example("session"), "id": "ses_other"}),
        "'ses_other' does not match the file name",
        lambda: raw({"shortTerm": {"sessions": [{**example("session"), "id": "ses_1\n"}]}}),
        "$.shortTerm.sessions[0].id: invalid id",
    ),
    Shape(
        "long-term-not-object",
        "pattern",
        lambda: raw({"longTerm": 5}),
        "unknown record type None",
        lambda: raw({"longTerm": 5}),
        "longTerm must be an object",
    ),
    Shape(
        "patterns-not-array",
        "pattern",
        lambda: raw({"patterns": "x"}),
        "unknown record type None",
        lambda: raw({"longTerm": {"patterns": "x"}}),
        "expected an array of records",
    ),
    Shape(
        "duplicate-ids-in-import",
        "pattern",
        lambda: raw([record("pattern")]),
        "a record must be a JSON object",
        lambda: raw({"longTerm": {"patterns": [record("pattern"), record("pattern")]}}),
        "duplicate id pat_bad",
    ),
]


def _config_with(**contextual: Any) -> dict[str, Any]:
    value = example("config")
    value["memory"]["contextual"].update(contextual)
    return value


# -- records that break their schema ----------------------------------------------------------
@dataclass(frozen=True)
class Broken:
    name: str
    kind: str
    change: Callable[[dict[str, Any]], None]
    expect: str
    in_import: bool = True


def _set(**changes: Any) -> Callable[[dict[str, Any]], None]:
    return lambda value: value.update(copy.deepcopy(changes))


def _drop(key: str) -> Callable[[dict[str, Any]], None]:
    return lambda value: value.pop(key)


def _body(**changes: Any) -> Callable[[dict[str, Any]], None]:
    return lambda value: value["body"].update(changes)


ANCHOR = {"path": "src/a.ts", "symbol": None, "hash": None}
BROKEN = [
    Broken("usage-count-string", "pattern", _set(usage_count="12"), "not of type 'integer'"),
    Broken("usage-count-bool", "pattern", _set(usage_count=True), "not of type 'integer'"),
    Broken("usage-count-float", "pattern", _set(usage_count=1.5), "not of type 'integer'"),
    Broken("usage-count-zero", "pattern", _set(usage_count=0), "less than the minimum of 1"),
    Broken("tags-string", "pattern", _set(tags="typescript"), "is not of type 'array'"),
    Broken("tags-numbers", "pattern", _set(tags=[1, 2]), "is not of type 'string'"),
    Broken("tags-duplicate", "pattern", _set(tags=["a", "a"]), "non-unique", False),  # dedups
    Broken("body-string", "pattern", _set(body="text"), "is not of type 'object'"),
    Broken("body-missing-part", "pattern", lambda v: v["body"].pop("why"), "'why' is a required"),
    Broken("body-unknown-part", "pattern", _body(how="x"), "'how' was unexpected"),
    Broken("pinned-string", "pattern", _set(pinned="yes"), "is not of type 'boolean'"),
    Broken("title-number", "pattern", _set(title=5), "is not of type 'string'"),
    Broken("title-empty", "pattern", _set(title=""), "should be non-empty", False),  # derived
    Broken("title-201-chars", "pattern", _set(title="t" * 201), "is too long"),
    Broken("title-missing", "pattern", _drop("title"), "'title' is a required property", False),
    Broken("unknown-field", "pattern", _set(colour="blue"), "'colour' was unexpected"),
    Broken("scope-bad-enum", "pattern", _set(scope="global"), "'global' is not one of"),
    Broken("type-bad-enum", "pattern", _set(type="weird"), "unknown record type 'weird'"),
    Broken("severity-bad-enum", "mistake", _set(severity="extreme"), "'extreme' is not one of"),
    Broken("occurrences-negative", "mistake", _set(occurrences=-1), "less than the minimum"),
    Broken("confidence-5", "learning", _set(confidence=5), "greater than the maximum of 1"),
    Broken("confidence-string", "learning", _set(confidence="high"), "not of type 'number'"),
    Broken("created-at-words", "pattern", _set(created_at="yesterday"), "does not match"),
    Broken("created-at-space", "pattern", _set(created_at="2024-01-20 15:00:00"), "does not match"),
    Broken("created-at-no-zone", "pattern", _set(created_at="2024-01-20T15:00:00"), "not match"),
    Broken("deleted-at-number", "pattern", _set(deleted_at=0), "is not of type"),
    Broken("revision-count-zero", "pattern", _set(revision_count=0), "less than the minimum of 1"),
    Broken("topic-key-spaces", "pattern", _set(topic_key="Not A Key"), "does not match"),
    Broken("source-unknown", "pattern", _set(source="root"), "does not match"),
    Broken("anchor-absolute", "pattern", _set(anchors=[{**ANCHOR, "path": "/etc/x"}]), "match"),
    Broken("anchor-dotdot", "pattern", _set(anchors=[{**ANCHOR, "path": "../x"}]), "match"),
    Broken("anchor-no-symbol", "pattern", _set(anchors=[{"path": "a", "hash": None}]), "symbol"),
    Broken("anchor-not-object", "pattern", _set(anchors=[5]), "is not of type 'object'"),
    Broken("description-60k", "pattern", _set(description="y" * 60_000), "is too long"),
    Broken("body-what-50001", "pattern", _body(what="w" * 50_001), "is too long"),
    Broken("example-2mb", "pattern", _set(example="e" * 2_000_000), "is too long"),
    Broken("id-traversal", "pattern", _set(id="../../etc/passwd"), "does not match"),
    Broken("id-uppercase", "pattern", _set(id="PAT_1"), "does not match"),
    Broken("id-file-name-mismatch", "pattern", _set(id="pat_other"), "the file name", False),
    Broken("mistake-in-patterns", "mistake", lambda v: None, "belongs in mistakes/", False),
]


def broken_value(case: Broken) -> dict[str, Any]:
    value = record(case.kind)
    case.change(value)
    return value


# -- running ----------------------------------------------------------------------------------
@dataclass
class Run:
    code: int
    out: str
    err: str
    seconds: float


def run_main(capsys: pytest.CaptureFixture[str], *argv: str) -> Run:
    """The real entry point in-process: error translation included."""
    capsys.readouterr()
    started = time.perf_counter()
    with pytest.raises(SystemExit) as info:
        main(list(argv))
    seconds = time.perf_counter() - started
    captured = capsys.readouterr()
    code = info.value.code
    return Run(code if isinstance(code, int) else 1, captured.out, captured.err, seconds)


def run_process(*argv: str) -> Run:
    started = time.perf_counter()
    done = subprocess.run([PMEM, *argv], capture_output=True, text=True, timeout=60)
    return Run(done.returncode, done.stdout, done.stderr, time.perf_counter() - started)


def snapshot(root: Path) -> dict[str, tuple[Any, ...]]:
    """Every path under ``root``: kind, size, mtime in ns and a content hash (for small files)."""
    found: dict[str, tuple[Any, ...]] = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = Path(folder) / name
            st = path.lstat()
            digest = None
            if path.is_file() and not path.is_symlink() and st.st_size < (1 << 20):
                digest = hashlib.sha256(path.read_bytes()).hexdigest()
            found[str(path.relative_to(root))] = (st.st_mode, st.st_size, st.st_mtime_ns, digest)
    return found


def make_tree(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    shutil.copytree(EXAMPLE, repo / ".planning")
    return repo


def check_validate(run: Run, rel: str, expect: str) -> None:
    """Exit 1, one or more finding lines, each naming ``rel``; ``expect`` among them."""
    text = run.out + run.err
    assert "Traceback" not in text and "internal error" not in text, text
    assert run.code == 1, text
    assert run.err == ""
    *findings, summary = run.out.splitlines()
    assert summary.endswith(f"{len(findings)} problems"), run.out
    assert findings, run.out
    for line in findings:
        assert line.startswith(f"{rel}:") or line.startswith(f"{rel} "), (rel, line)
        assert len(line) < 500, line
    assert expect in run.out, (expect, run.out)


def check_import(run: Run, file: Path, expect: str) -> None:
    """Exit 4, exactly one line on stderr naming ``file`` and the problem, nothing on stdout."""
    text = run.out + run.err
    assert "Traceback" not in text and "internal error" not in text, text
    assert run.code == 4, text
    assert run.out == ""
    lines = run.err.splitlines()
    assert len(lines) == 1, run.err
    assert lines[0].startswith(f"pmem: error: {file}"), lines[0]
    assert expect in lines[0], (expect, lines[0])
    assert len(lines[0]) < 500, lines[0]


def validate_case(capsys: pytest.CaptureFixture[str], repo: Path, rel: str, expect: str) -> float:
    before = snapshot(repo)
    run = run_main(capsys, "validate", str(repo))
    check_validate(run, rel, expect)
    assert snapshot(repo) == before, "validate wrote something"
    return run.seconds


def import_case(capsys: pytest.CaptureFixture[str], repo: Path, file: Path, expect: str) -> float:
    before = snapshot(repo)
    worst = 0.0
    for extra in ([], ["--dry-run"]):
        run = run_main(capsys, "-C", str(repo), "import", str(file), *extra)
        check_import(run, file, expect)
        assert snapshot(repo) == before, f"import {extra} wrote something"
        worst = max(worst, run.seconds)
    return worst


# -- validate ---------------------------------------------------------------------------------
@pytest.mark.parametrize("place", sorted(PLACES))
@pytest.mark.parametrize("name", sorted(SYNTAX))
def test_validate_syntax(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, place: str
) -> None:
    make, expect = SYNTAX[name]
    repo = make_tree(tmp_path)
    target = repo / ".planning" / PLACES[place]
    target.write_bytes(make())
    validate_case(capsys, repo, f".planning/{PLACES[place]}", expect)


@pytest.mark.parametrize("case", SHAPES, ids=lambda c: c.name)
def test_validate_shape(tmp_path: Path, capsys: pytest.CaptureFixture[str], case: Shape) -> None:
    repo = make_tree(tmp_path)
    (repo / ".planning" / PLACES[case.kind]).write_bytes(case.data())
    validate_case(capsys, repo, f".planning/{PLACES[case.kind]}", case.expect)


@pytest.mark.parametrize("case", BROKEN, ids=lambda c: c.name)
def test_validate_broken_record(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], case: Broken
) -> None:
    repo = make_tree(tmp_path)
    folder = {"pattern": "patterns", "mistake": "mistakes", "learning": "learnings"}[case.kind]
    if case.name == "mistake-in-patterns":
        folder = "patterns"
    rel = f"{LT}/{folder}/{record(case.kind)['id']}.json"
    (repo / ".planning" / rel).write_bytes(raw(broken_value(case)))
    validate_case(capsys, repo, f".planning/{rel}", case.expect)


def _dir_as_record(planning: Path) -> str:
    rel = f"{LT}/patterns/pat_dir.json"
    (planning / rel).mkdir()
    return rel


def _dir_as_preferences(planning: Path) -> str:
    rel = f"{LT}/preferences.json"
    (planning / rel).unlink()
    (planning / rel).mkdir()
    return rel


def _dir_as_config(planning: Path) -> str:
    (planning / "memory-config.json").unlink()
    (planning / "memory-config.json").mkdir()
    return "memory-config.json"


def _big_file(planning: Path) -> str:
    rel = f"{LT}/patterns/pat_big.json"
    with open(planning / rel, "wb") as fh:
        fh.truncate(BIG_FILE)  # sparse: instant, no disk used
    return rel


def _symlink_out(planning: Path) -> str:
    outside = planning.parent.parent / "outside.json"
    outside.write_bytes(raw(record("pattern", id="pat_link", title="sk-live-secret")))
    rel = f"{LT}/patterns/pat_link.json"
    os.symlink(outside, planning / rel)
    return rel


def _dangling_symlink(planning: Path) -> str:
    rel = f"{LT}/patterns/pat_gone.json"
    os.symlink(planning / "nowhere.json", planning / rel)
    return rel


def _stray_file(planning: Path) -> str:
    rel = "memory/short-term/notes.json"
    (planning / rel).write_bytes(b"{}")
    return rel


FILE_SYSTEM: dict[str, tuple[Callable[[Path], str], str]] = {
    "directory-as-record": (_dir_as_record, "is a directory"),
    "directory-as-preferences": (_dir_as_preferences, "is a directory"),
    "directory-as-config": (_dir_as_config, "is a directory"),
    "file-100mb": (_big_file, "over the"),
    "symlink-out-of-tree": (_symlink_out, "outside the memory tree"),
    "dangling-symlink": (_dangling_symlink, "no such file"),
    "stray-file": (_stray_file, "unexpected file in the memory tree"),
}


@pytest.mark.parametrize("name", sorted(FILE_SYSTEM))
def test_validate_file_system(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    setup, expect = FILE_SYSTEM[name]
    repo = make_tree(tmp_path)
    rel = setup(repo / ".planning")
    validate_case(capsys, repo, f".planning/{rel}", expect)
    if name == "symlink-out-of-tree":
        assert "sk-live-secret" not in capsys.readouterr().out


# -- import -----------------------------------------------------------------------------------
@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_tree(tmp_path)


def _input(tmp_path: Path, name: str, data: bytes) -> Path:
    folder = tmp_path / "input"
    folder.mkdir(exist_ok=True)
    path = folder / name
    path.write_bytes(data)
    return path


@pytest.mark.parametrize("name", sorted(SYNTAX))
def test_import_syntax(
    tmp_path: Path, repo: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    make, expect = SYNTAX[name]
    file = _input(tmp_path, f"{name}.json", make())
    import_case(capsys, repo, file, expect)


@pytest.mark.parametrize("case", [s for s in SHAPES if s.import_data], ids=lambda c: c.name)
def test_import_shape(
    tmp_path: Path, repo: Path, capsys: pytest.CaptureFixture[str], case: Shape
) -> None:
    assert case.import_data is not None
    file = _input(tmp_path, "memory.json", case.import_data())
    import_case(capsys, repo, file, case.import_expect)


@pytest.mark.parametrize("case", [b for b in BROKEN if b.in_import], ids=lambda c: c.name)
def test_import_broken_record(
    tmp_path: Path, repo: Path, capsys: pytest.CaptureFixture[str], case: Broken
) -> None:
    expect = case.expect
    if case.name.startswith("id-"):
        expect = "invalid id"
    elif case.name == "type-bad-enum":
        expect = "unknown record type 'weird'"
    file = _input(tmp_path, "memory.json", _wrap(case.kind, broken_value(case)))
    import_case(capsys, repo, file, expect)


def test_import_a_directory_a_missing_file_and_a_100mb_file(
    tmp_path: Path, repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "a-folder.json"
    folder.mkdir()
    import_case(capsys, repo, folder, "is a directory")
    import_case(capsys, repo, tmp_path / "missing.json", "no such file")
    big = tmp_path / "big.json"
    with open(big, "wb") as fh:
        fh.truncate(BIG_FILE)
    import_case(capsys, repo, big, "over the")


# -- a sample as real processes ---------------------------------------------------------------
VALIDATE_SAMPLE = ["truncated-half", "utf8-bom", "duplicate-key-top", "conflict-block"]
IMPORT_SAMPLE = ["invalid-utf8-ff", "nan", "deep-arrays-1e5", "huge-integer", "lone-surrogate"]


@pytest.mark.slow
def test_a_sample_through_the_pmem_process(tmp_path: Path) -> None:
    repo = make_tree(tmp_path)
    rel = f".planning/{PLACES['pattern']}"
    target = repo / rel
    times = []
    for name in VALIDATE_SAMPLE:
        make, expect = SYNTAX[name]
        target.write_bytes(make())
        before = snapshot(repo)
        run = run_process("validate", str(repo))
        check_validate(run, rel, expect)
        assert snapshot(repo) == before
        times.append(run.seconds)
    target.unlink()
    before = snapshot(repo)
    for i, name in enumerate(IMPORT_SAMPLE):
        make, expect = SYNTAX[name]
        file = _input(tmp_path, f"{name}.json", make())
        run = run_process("-C", str(repo), "import", str(file), *(["--dry-run"] * (i % 2)))
        check_import(run, file, expect)
        assert snapshot(repo) == before
        times.append(run.seconds)
    big = tmp_path / "big.json"
    with open(big, "wb") as fh:
        fh.truncate(BIG_FILE)
    run = run_process("-C", str(repo), "import", str(big))
    check_import(run, big, "over the")
    times.append(run.seconds)
    big_rel = _big_file(repo / ".planning")
    before = snapshot(repo)
    run = run_process("validate", str(repo))
    check_validate(run, f".planning/{big_rel}", "over the")
    assert snapshot(repo) == before
    times.append(run.seconds)
    # a figure, not a timed assertion (a loaded machine would fail it): bench/ times commands
    print(f"\n{len(times)} pmem processes on bad input: max {max(times):.3f} s")


def test_case_count() -> None:
    """At least 50 malformed files and 200 malformed inputs in all."""
    validate_inputs = len(SYNTAX) * len(PLACES) + len(SHAPES) + len(BROKEN) + len(FILE_SYSTEM)
    import_inputs = (
        len(SYNTAX) + sum(1 for s in SHAPES if s.import_data) + sum(b.in_import for b in BROKEN) + 3
    )
    print(f"\nmalformed inputs: {validate_inputs} to validate, {import_inputs} to import")
    assert validate_inputs >= 200
    assert import_inputs >= 50


# -- the compiled schema check agrees with jsonschema ------------------------------------------
def full_valid(name: str, value: Any) -> bool:
    return not list(schema.validator(name).iter_errors(value))


@pytest.mark.parametrize("case", BROKEN, ids=lambda c: c.name)
def test_fast_check_rejects_every_broken_record(case: Broken) -> None:
    value = broken_value(case)
    name = {"pattern": "pattern", "mistake": "mistake"}.get(case.kind, "learning")
    fast = schema.fast_check(name)
    assert fast is not None
    assert fast(value) == full_valid(name, value)


EXAMPLE_FILES = sorted(EXAMPLE.rglob("*.json"))


def _schema_of(path: Path, value: Any) -> str:
    kind = kind_of(path)
    if kind == "long-term":
        return {"pattern": "pattern", "mistake": "mistake"}.get(value.get("type"), "learning")
    assert kind is not None, path
    return kind


@pytest.mark.parametrize("path", EXAMPLE_FILES, ids=lambda p: str(p.relative_to(EXAMPLE)))
def test_fast_check_passes_every_example_file(path: Path) -> None:
    value = codec.loads(path.read_bytes())
    fast = schema.fast_check(_schema_of(path, value))
    assert fast is not None and fast(value) is True


SCALARS = [None, True, False, 0, 1, -1, 1.0, 0.5, 2, 10**9, "", "x", "pat_001", "UPPER", "../x"]
STRINGS = ["2024-01-20T15:00:00Z", "a/b", "project", "high", "pattern", "t" * 201]
CONTAINERS = [[], {}, ["a", "a"], ["a"], [1], {"a": 1}, {"path": "a", "symbol": None, "hash": None}]
MUTANTS = st.sampled_from([*SCALARS, *STRINGS, *CONTAINERS])


@settings(max_examples=200, deadline=None)
@given(
    file_index=st.integers(min_value=0, max_value=len(EXAMPLE_FILES) - 1),
    picks=st.lists(st.tuples(st.integers(0, 10_000), st.integers(0, 2), MUTANTS), max_size=3),
)
def test_fast_check_never_passes_what_jsonschema_fails(
    file_index: int, picks: list[tuple[int, int, Any]]
) -> None:
    path = EXAMPLE_FILES[file_index]
    value = codec.loads(path.read_bytes())
    name = _schema_of(path, value)
    for where, how, new in picks:
        _mutate(value, where, how, copy.deepcopy(new))
    fast = schema.fast_check(name)
    assert fast is not None
    if fast(value):  # the contract is one-sided: a "no" may be conservative (if/then)
        assert full_valid(name, value)


def _mutate(value: Any, where: int, how: int, new: Any) -> None:
    """Replace, delete or add at the ``where``-th container slot of ``value``."""
    slots: list[tuple[Any, Any]] = []
    stack = [value]
    while stack:
        item = stack.pop()
        keys = list(item) if isinstance(item, dict) else range(len(item))
        for key in keys:
            slots.append((item, key))
            if isinstance(item[key], dict | list):
                stack.append(item[key])
    if not slots:
        return
    parent, key = slots[where % len(slots)]
    if how == 0:
        parent[key] = new
    elif how == 1:
        del parent[key]
    elif isinstance(parent, dict):
        parent[f"extra_{where % 3}"] = new
    else:
        parent.append(new)


@pytest.mark.parametrize(
    "field, value",
    [("created_at", "2024-01-20T15:00:00Z\n"), ("topic_key", "auth/login\n")],
)
def test_a_trailing_newline_breaks_a_pattern(field: str, value: str) -> None:
    assert not full_valid("pattern", record("pattern", **{field: value}))


# -- bounds the schema alone missed --------------------------------------------------------------
def _first_record(repo: Path, folder: str) -> Path:
    return sorted((repo / ".planning" / LT / folder).glob("*.json"))[0]


@pytest.mark.parametrize(
    ("rel", "change", "expect"),
    [
        (None, {"usage_count": 1e30}, "greater than the maximum"),
        (None, {"usage_count": 10**12}, "greater than the maximum"),
        ("config", {"chunkOverlap": 600, "chunkSize": 500}, "chunkOverlap 600 must be smaller"),
        ("config", {"chunkOverlap": 500, "chunkSize": 500}, "must be smaller than chunkSize"),
        ("timezone", {"timezone": "Mars/Olympus_Mons"}, "unknown timezone 'Mars/Olympus_Mons'"),
    ],
)
def test_validate_rejects_values_out_of_bounds(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    rel: str | None,
    change: dict[str, Any],
    expect: str,
) -> None:
    repo = make_tree(tmp_path)
    if rel is None:
        path = _first_record(repo, "patterns")
        value = codec.loads(path.read_bytes())
        value.update(change)
        path.write_text(json.dumps(value))
    else:
        path = repo / ".planning" / "memory-config.json"
        value = codec.loads(path.read_bytes())
        section = "contextual" if rel == "config" else "shortTerm"
        value["memory"][section].update(change)
        path.write_text(json.dumps(value))
    validate_case(capsys, repo, str(path.relative_to(repo)), expect)
    if rel is not None:  # every other command refuses the config too, in one line
        run = run_main(capsys, "-C", str(repo), "show")
        assert run.code == 2 and expect in run.err and len(run.err.splitlines()) == 1, run.err


# -- command arguments ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("argv", "code", "expect"),
    [
        (["save", "   "], 4, "the title is blank"),
        (["save", ""], 4, "the title is blank"),
        (["context", "task", "--budget", "0"], 2, "0 is not in the range 100<=x<=20000"),
        (["context", "task", "--budget", "99999"], 2, "not in the range"),
        (["resolve", "/etc/passwd"], 4, "not a file of this repository's memory tree"),
    ],
)
def test_bad_arguments_are_refused_in_one_line_and_write_nothing(
    repo: Path, capsys: pytest.CaptureFixture[str], argv: list[str], code: int, expect: str
) -> None:
    before = snapshot(repo)
    run = run_main(capsys, "-C", str(repo), *argv)
    assert run.code == code, run.err
    assert expect in run.err, run.err
    assert "clean" not in run.out
    assert snapshot(repo) == before


def _plant_broken(repo: Path) -> list[Path]:
    first = _first_record(repo, "patterns")
    value = codec.loads(first.read_bytes())
    value["tags"] = 5
    first.write_text(json.dumps(value))
    fifo = repo / ".planning" / LT / "mistakes" / "mis_fifo.json"
    os.mkfifo(fifo)
    return [first, fifo]


@pytest.mark.parametrize(
    "argv",
    [["patterns"], ["mistakes"], ["show"], ["context", "zod"], ["reindex"], ["search", "zod"]],
)
def test_reading_commands_warn_once_per_broken_file_and_go_on(
    repo: Path, capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    broken = _plant_broken(repo)
    run = run_main(capsys, "-C", str(repo), *argv)
    assert run.code == 0, run.err
    assert "Traceback" not in run.err
    for path in broken:
        folder = path.parent.name
        naming = [line for line in run.err.splitlines() if path.name in line]
        if argv[0] in ("patterns", "mistakes") and folder != argv[0]:
            continue
        assert len(naming) == 1, (path.name, run.err)
        assert naming[0].startswith("pmem: warning: ") and "skipped" in naming[0]


def test_export_refuses_broken_records_unless_told_to_skip_them(
    repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = _plant_broken(repo)
    out = tmp_path / "export.json"
    run = run_main(capsys, "-C", str(repo), "export", "-o", str(out))
    assert run.code == 4, run.err
    assert "2 broken memory file(s)" in run.err and "--skip-broken" in run.err
    assert len(run.err.splitlines()) == 3  # one warning per file, then the error
    assert not out.exists()
    run = run_main(capsys, "-C", str(repo), "export", "-o", str(out), "--skip-broken")
    assert run.code == 0, run.err
    ids = {r["id"] for r in json.loads(out.read_text())["longTerm"]["patterns"]}
    assert broken[0].stem not in ids and ids


def test_export_never_overwrites_a_file_unless_forced_nor_writes_inside_the_tree(
    repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = repo / ".planning" / "memory-config.json"
    before = snapshot(repo)
    for target in (config, repo / ".planning" / "new.json"):
        for force in ([], ["--force"]):
            run = run_main(capsys, "-C", str(repo), "export", "-o", str(target), *force)
            assert run.code == 4 and "never writes inside the memory tree" in run.err, run.err
    assert snapshot(repo) == before
    mine = tmp_path / "mine.json"
    mine.write_text("precious")
    run = run_main(capsys, "-C", str(repo), "export", "-o", str(mine))
    assert run.code == 4 and "file exists" in run.err and "--force" in run.err
    assert mine.read_text() == "precious"
    run = run_main(capsys, "-C", str(repo), "export", "-o", str(mine), "--force")
    assert run.code == 0 and json.loads(mine.read_text())["longTerm"]


def test_import_of_a_fifo_is_refused_at_once(
    repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fifo = tmp_path / "memory.json"
    os.mkfifo(fifo)
    import_case(capsys, repo, fifo, "is a FIFO")
