"""Call edges: recall and precision against a type-aware tool of each language's own ecosystem.

The reference resolves every call of a corpus to the definition it reaches, knowing the
types: Go ``callgraph -algo=static`` (golang.org/x/tools, Debian's
``golang-golang-x-tools``: calls of functions and of methods on concrete types; a call
through an interface is dynamic and not in it), javac's attribution (``refs/CallEdges.java``,
method calls, ``super(...)``/``this(...)`` and ``new X(...)``), the TypeScript compiler's
checker (``refs/ts_calls.mjs``, ``getResolvedSignature`` of each call, ``new`` and tagged
template) and jedi's ``goto`` (``refs/jedi_calls.py``, in its own venv; a class called is its
``__init__``). No reference for Rust: rust-analyzer is not packaged in Debian bookworm, and
``rustup component add`` needs a host the machines do not reach.

Each reference edge is a call site (file, line) and the callee's definition (file and line
span, or for Go the package and qualified name). The caller is the innermost function of the
code map around the call site (anonymous functions are transparent there too); the callee is
the innermost function of that name whose span overlaps the definition. An edge either end of
which the map has no function for (a call at module level, a Go closure, a Java default
constructor, a class without ``__init__``) is left out and counted as unmapped. The map's
edges are those of ``called_by`` whose two ends are in files the reference analysed (Go's
``./...`` leaves out ``_example/`` and ``testdata/``). Recall is the reference's edges the map
has, precision the map's edges the reference has, per language.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from accuracy.codemap import CodeMap
from accuracy.corpora import CACHE, FetchError, checked, run

REFS = Path(__file__).resolve().parent / "refs"
JEDI = "jedi==0.19.2"
TOOLS = {
    "go": "callgraph -algo=static (golang.org/x/tools, Debian golang-golang-x-tools)",
    "java": "javac (OpenJDK) attribution",
    "typescript": "TypeScript compiler's checker",
    "python": f"jedi goto ({JEDI})",
}
SUFFIXES = {
    "go": (".go",),
    "java": (".java",),
    "typescript": (".ts", ".tsx", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs"),
    "python": (".py",),
}
EXAMPLES = 8


@dataclass(frozen=True)
class Reference:
    language: str
    files: frozenset[str]
    # (caller file, call line, callee file or Go package folder, first line, last line, name)
    edges: list[tuple[str, int, str, int, int, str]]
    seconds: float


@dataclass
class EdgeScore:
    language: str
    tool: str
    reference: int = 0  # the reference's edges, both ends mapped to the map's functions
    unmapped: int = 0  # reference call sites left out (see the module's docstring)
    ours: int = 0
    both: int = 0
    seconds: float = 0.0
    missed: list[tuple[str, str]] = field(default_factory=list)
    extra: list[tuple[str, str]] = field(default_factory=list)

    @property
    def precision(self) -> float | None:
        return self.both / self.ours if self.ours else None

    @property
    def recall(self) -> float | None:
        return self.both / self.reference if self.reference else None


def _parse(output: str) -> tuple[set[str], list[tuple[str, int, str, int, int, str]]]:
    files: set[str] = set()
    edges = []
    for line in output.splitlines():
        parts = line.split("\t")
        if parts[0] == "F" and len(parts) == 2:
            files.add(parts[1])
        elif parts[0] == "E" and len(parts) == 7:
            edges.append(
                (parts[1], int(parts[2]), parts[3], int(parts[4]), int(parts[5]), parts[6])
            )
    return files, edges


def _timed(cmd: list[str], what: str, cwd: Path | None = None, **env: str) -> tuple[str, float]:
    started = os.times()
    done = subprocess.run(
        cmd, cwd=cwd, text=True, capture_output=True, env={**os.environ, **env}, check=False
    )
    spent = os.times()
    if done.returncode != 0 and not done.stdout:
        tail = done.stderr.strip().splitlines()[-5:]
        raise FetchError(f"{what} failed: `{' '.join(cmd)}`\n  " + "\n  ".join(tail))
    cpu = spent.children_user - started.children_user
    return done.stdout, round(cpu + spent.children_system - started.children_system, 2)


def java(root: Path) -> Reference:
    if not shutil.which("javac"):
        raise FetchError("javac is not on PATH: apt-get install openjdk-17-jdk-headless")
    output, cpu = _timed(["java", str(REFS / "CallEdges.java"), str(root)], "javac")
    files, edges = _parse(output)
    return Reference("java", frozenset(files), edges, cpu)


def typescript(root: Path, node_modules: Path) -> Reference:
    output, cpu = _timed(["node", str(REFS / "ts_calls.mjs"), str(root), str(node_modules)], "tsc")
    files, edges = _parse(output)
    return Reference("typescript", frozenset(files), edges, cpu)


def jedi_python() -> str:
    """The venv (under the cache) that runs the jedi reference."""
    venv = CACHE / "jedi-venv"
    python = venv / "bin" / "python"
    if run([str(python), "-c", f"import jedi; assert jedi.__version__ == '{JEDI[6:]}'"]).returncode:
        checked([sys.executable, "-m", "venv", "--clear", str(venv)], "python -m venv (jedi)")
        checked([str(python), "-m", "pip", "install", "--quiet", JEDI], f"pip install {JEDI}")
    return str(python)


def python(root: Path) -> Reference:
    output, cpu = _timed([jedi_python(), str(REFS / "jedi_calls.py"), str(root)], "jedi")
    files, edges = _parse(output)
    return Reference("python", frozenset(files), edges, cpu)


def go_tools() -> None:
    if not (shutil.which("go") and shutil.which("callgraph")):
        checked(
            ["apt-get", "install", "-y", "golang-go", "golang-golang-x-tools"],
            "apt-get install golang-go golang-golang-x-tools",
        )


_GO_METHOD = re.compile(r"^\(\*?(?P<pkg>.+)\.(?P<type>[^.]+)\)\.(?P<name>[^.]+)$")
_GO_FUNC = re.compile(r"^(?P<pkg>.+?)\.(?P<name>[^./]+)$")


def go(root: Path) -> Reference:
    go_tools()
    env = {
        "GOFLAGS": "-mod=mod",
        "GOPROXY": "off",
        "GOTOOLCHAIN": "local",
        "GOPATH": str(CACHE / "gopath"),
        "GOCACHE": str(CACHE / "gocache"),
    }
    module = (root / "go.mod").read_text().split("\n", 1)[0].split()[1]
    listed, _ = _timed(
        ["go", "list", "-test=false", "-f",
         '{{$d := .Dir}}{{range .GoFiles}}{{$d}}/{{.}}\n{{end}}'
         '{{range .TestGoFiles}}{{$d}}/{{.}}\n{{end}}{{range .XTestGoFiles}}{{$d}}/{{.}}\n{{end}}',
         "./..."],
        "go list", root, **env,
    )  # fmt: skip
    files = {str(Path(p).relative_to(root)) for p in listed.split() if p}
    template = "{{.Caller}}\t{{.Filename}}\t{{.Line}}\t{{.Callee}}"
    output, cpu = _timed(
        ["callgraph", "-algo=static", "-test", f"-format={template}", "./..."],
        "callgraph", root, **env,
    )  # fmt: skip
    edges = []
    prefix = str(root) + "/"
    for line in output.splitlines():
        _, filename, number, callee = line.split("\t")
        if not filename.startswith(prefix) or "$" in callee:
            continue
        callee = re.sub(r"\[[^\]]*\]", "", callee)
        found = _GO_METHOD.match(callee) or _GO_FUNC.match(callee)
        if found is None or not found["pkg"].removesuffix("_test").startswith(module):
            continue
        folder = found["pkg"].removesuffix("_test")[len(module) :].strip("/")
        name = (
            f"{found['type']}.{found['name']}" if "type" in found.re.groupindex else found["name"]
        )
        edges.append((filename[len(prefix) :], int(number), folder, 0, 0, name))
    return Reference("go", frozenset(files), edges, cpu)


def reference(language: str, root: Path, node_modules: Path) -> Reference:
    if language == "go":
        return go(root)
    if language == "java":
        return java(root)
    if language == "typescript":
        return typescript(root, node_modules)
    if language == "python":
        return python(root)
    raise ValueError(f"no call-edge reference for {language}")


class _Spans:
    """The code map's functions by file, for call site -> caller and definition -> callee."""

    def __init__(self, code: CodeMap) -> None:
        self.by_file: dict[str, list[tuple[int, int, str, str, str]]] = defaultdict(list)
        self.by_folder: dict[tuple[str, str], list[str]] = defaultdict(list)
        for key, fn in code.functions.items():
            start, end = fn["lines"]
            self.by_file[fn["file"]].append((start, end, fn["name"], fn["qualified_name"], key))
            folder = os.path.dirname(fn["file"])
            self.by_folder[(folder, fn["qualified_name"])].append(key)

    def enclosing(self, path: str, line: int) -> str | None:
        around = [s for s in self.by_file.get(path, ()) if s[0] <= line <= s[1]]
        return max(around, key=lambda s: (s[0], -s[1]))[4] if around else None

    def defined(self, path: str, first: int, last: int, name: str) -> str | None:
        if first == 0:  # Go: the package folder and the qualified name
            keys = self.by_folder.get((path, name), [])
            return keys[0] if len(keys) == 1 else None
        overlapping = [
            s for s in self.by_file.get(path, ()) if s[2] == name and s[0] <= last and first <= s[1]
        ]
        return max(overlapping, key=lambda s: (s[0], -s[1]))[4] if overlapping else None


def language_of(path: str) -> str | None:
    for language, suffixes in SUFFIXES.items():
        if path.endswith(suffixes):
            return language
    return None


def score(code: CodeMap, ref: Reference) -> EdgeScore:
    spans = _Spans(code)
    result = EdgeScore(ref.language, TOOLS[ref.language], seconds=ref.seconds)
    truth: set[tuple[str, str]] = set()
    for caller_file, line, callee_at, first, last, name in ref.edges:
        caller = spans.enclosing(caller_file, line)
        callee = spans.defined(callee_at, first, last, name)
        if caller is None or callee is None:
            result.unmapped += 1
            continue
        truth.add((caller, callee))
    ours = {
        (caller, key)
        for key, fn in code.functions.items()
        if fn["file"] in ref.files
        for caller in fn.get("called_by", [])
        if caller.split("::", 1)[0] in ref.files
    }
    result.reference, result.ours, result.both = len(truth), len(ours), len(truth & ours)
    result.missed = sorted(truth - ours)
    result.extra = sorted(ours - truth)
    return result


def measure(
    code: CodeMap, root: Path, languages: tuple[str, ...], node_modules: Path
) -> list[EdgeScore]:
    scores = []
    for language in languages:
        ref = reference(language, root, node_modules)
        scores.append(score(code, ref))
        s = scores[-1]
        print(
            f"call edges ({language}, {s.tool}): reference {s.reference:,}, map {s.ours:,}, "
            f"both {s.both:,} (unmapped {s.unmapped:,})",
            flush=True,
        )
    return scores
