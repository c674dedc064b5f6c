"""Score the code map against independent tools on real open-source code nobody here wrote.

Thirteen pinned corpora (bench/accuracy/corpora.py): react-native-paper,
@react-navigation/elements and react-hot-toast (their npm tarballs' src/), rich, attrs and
click (PyPI sdists), and chi, ripgrep, javapoet, the react-redux RealWorld app, toml,
commons-cli and ky (GitHub commits). For each: a cold `pmem scan`,
then

1. definitions against universal-ctags (function recall and precision per language, class
   recall, names that do not occur in their file);
2. React components and props against the TypeScript compiler (bench/ts_components.mjs);
3. relative and alias imports against ts.resolveModuleName, and imports resolved to the
   importing file itself (every language);
4. call edges: recall and precision per language against a type-aware tool of that
   language's ecosystem (Go callgraph, javac, the TypeScript checker, jedi) on four corpora
   chosen for it (toml, commons-cli, ky, click), and precision from the hand labels in
   bench/labels/call_edges.tsv on rich and chi;
5. time: the cold scan, `ctags -R`, tree-sitter parsing the same files in 2 processes, and
   aider's repo map (aider-chat in its own venv) when it installs.

Everything is fetched into ~/.cache/pmem-bench/ (PMEM_BENCH_CACHE) the first time. Prints the
tables and writes docs/bench-accuracy.md (not with --only or --no-write).

    .venv/bin/python bench/bench_accuracy.py [--only CORPUS ...] [--no-write] [--no-aider]
        [--sample-edges] [--repeat 3]
"""

from __future__ import annotations

import argparse
import inspect
import os
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from accuracy import (
    callref,
    calls,
    codemap,
    components,
    corpora,
    definitions,
    imports,
    report,
    timing,
)
from accuracy.corpora import CORPORA, Corpus, FetchError

DOC = REPO / "docs" / "bench-accuracy.md"
COMMAND = ".venv/bin/python bench/bench_accuracy.py"


def measure(corpus: Corpus, tools: corpora.Tools, args: argparse.Namespace) -> dict:
    root = corpora.fetch(corpus)
    print(f"\n== {corpus.name} ({corpus.spec})", flush=True)
    code = codemap.scan(root, args.repeat)
    files = sorted(p for p in code.files if Path(p).suffix in definitions.LANGUAGES)
    tags, ctags_wall = definitions.run_ctags(tools.ctags, root, args.repeat)
    missing = codemap.not_verbatim(root, code)
    result: dict[str, Any] = {
        "name": corpus.name,
        "files": len(files),
        "kb": round(sum((root / p).stat().st_size for p in files) / 1024),
        "definitions": definitions.compare(tags, code),
        "not_verbatim_list": missing,
        "not_verbatim": _count_by_language(missing),
        "self_imports": imports.self_imports(code),
    }
    if corpus.react:
        view = components.typescript_view(root, tools.node_modules)
        result["components"] = components.compare(view, code)
        result["imports"] = imports.compare(view, code)
    if corpus.call_sample:
        if args.sample_edges:
            todo = calls.write_sample(corpus.name, root, code, corpus.call_sample)
            print(f"call edge sample written to {calls.LABELS}: {todo} rows to label")
        result["calls"] = calls.score(corpus.name, code, corpus.call_sample)
        result["edges"] = len(calls.edges(code))
    if corpus.reference:
        result["call_edges"] = callref.measure(code, root, corpus.reference, tools.node_modules)
    result["timing"] = {
        "scan_wall": code.wall,
        "scan_seconds": code.seconds,
        "ctags": ctags_wall,
        "tree_sitter": timing.tree_sitter_floor(root, files, args.repeat),
        "aider": timing.aider_map(root, files, args.repeat) if args.aider else None,
    }
    print(f"{len(files)} files, {len(code.functions)} functions, scan {code.wall} s", flush=True)
    return result


def _count_by_language(found: list[tuple[str, str, str]]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for _, path, _ in found:
        lang = definitions.language(path)
        counts[lang] = counts.get(lang, 0) + 1
    return counts


def pins() -> str:
    rows = [
        [c.name, c.source, f"`{c.spec}`" + (f" at `{c.commit[:12]}`" if c.commit else "")]
        for c in CORPORA
    ]
    return report.table(["corpus", "from", "pinned"], rows)


def tools_line(tools: corpora.Tools, aider: str | None) -> str:
    versions = ", ".join(f"{k} {v}" for k, v in corpora.NODE_PACKAGES.items())
    return (
        f"ctags: {tools.ctags_version}. TypeScript and the type packages the React corpora "
        f"import (npm, into the cache): {versions}. aider: "
        + (aider or f"`{timing.AIDER}` in its own venv under the cache.")
    )


def method() -> str:
    parts = [definitions, components, imports, callref, calls, timing, codemap]
    return "\n\n".join(
        f"### {m.__name__.split('.')[-1]}\n\n{inspect.cleandoc(m.__doc__ or '')}" for m in parts
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", action="append", choices=[c.name for c in CORPORA])
    parser.add_argument("--no-write", action="store_true", help="do not write the doc")
    parser.add_argument("--no-aider", action="store_true", help="skip aider's repo map")
    parser.add_argument(
        "--sample-edges", action="store_true", help="add the call-edge sample's new edges"
    )
    parser.add_argument("--repeat", type=int, default=3, help="timed runs (fastest kept)")
    args = parser.parse_args()
    chosen = [c for c in CORPORA if not args.only or c.name in args.only]
    try:
        tools = corpora.tools()
        aider_problem = None if args.no_aider else timing.aider_ready()
        if aider_problem:
            print(f"aider: {aider_problem}", file=sys.stderr)
        args.aider = not args.no_aider and aider_problem is None
        load = os.getloadavg()
        print(f"cpus: {os.cpu_count()}, load at start: {load}", flush=True)
        results = [measure(c, tools, args) for c in chosen]
    except FetchError as error:
        print(f"bench_accuracy: {error}", file=sys.stderr)
        return 2
    print("\n" + report.tables(results) + "\n\n" + report.examples(results))
    if args.only or args.no_write:
        print(f"\n(not written to {DOC.relative_to(REPO)}: --only or --no-write)")
        return 0
    DOC.write_text(
        report.document(
            results, pins(), tools_line(tools, aider_problem), method(), COMMAND, load
        ).rstrip()
        + "\n"
    )
    print(f"\nwrote {DOC.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
