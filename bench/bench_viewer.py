"""Benchmark: the viewer's pages, server time, at 10k records and a code map of 100k files
(the target: every page's p95 at most 200 ms, its first visit after a cold start included).

The tree: 10k records (as ``bench_validate`` writes them; 40 of them anchored to one file of
the map and its functions, some to code changed since), 40 sessions, and a code map written
straight as shards (5,000 folders of 20 files, two functions each), and no search index (the
first search builds it). The viewer starts in this process as ``pmem ui`` starts it (the
records read in the background at once), and each page is asked for right away: its "first"
figure. A page whose data is not ready within the viewer's wait answers with a progress line;
"ready" is how long after that first visit the page first answered without one (the long work
done in the background). Then ``--runs`` warm visits each, and one after a record was saved
(the cached records re-read: only the changed file). Each figure is the server's own time for
the page (its ``Server-Timing`` header); p50 and p95 are over every visit of the page (first,
warm and after a save).

    .venv/bin/python bench/bench_viewer.py [--records N] [--folders N] [--runs N] [--index]
"""

from __future__ import annotations

import argparse
import gc
import http.client
import json
import math
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench_validate import build_tree, machine

from planning_memory import Memory
from planning_memory.core import codec
from planning_memory.viewer import ViewerServer

TARGET_MS = 200
FILES_PER_FOLDER = 20


def build_code_map(mem: Memory, folders: int) -> tuple[str, str, str]:
    """``folders`` shards of ``FILES_PER_FOLDER`` files (two functions each) and 30 areas; a
    folder, a file and a function key to look at."""
    base = mem.layout.entity / "files"
    for d in range(folders):
        directory = f"src/pkg{d // 100}/mod{d}"
        files, functions = {}, {}
        for f in range(FILES_PER_FOLDER):
            path, after = f"{directory}/file{f}.ts", (f + 1) % FILES_PER_FOLDER
            files[path] = {
                "hash": f"{d:08x}{f:08x}",
                "imports": {f"./file{after}": f"{directory}/file{after}.ts"},
                "language": "typescript",
                "lines": 40 + f,
                "type": "module",
                "exports": [f"run{f}", f"helper{f}"],
            }
            for name in (f"run{f}", f"helper{f}"):
                functions[f"{path}::{name}"] = {
                    "calls": [f"helper{f}"] if name.startswith("run") else [],
                    "called_by": [f"{path}::run{f}"] if name.startswith("helper") else [],
                    "kind": "function",
                    "lines": [1, 20],
                    "exported": True,
                    "hash": f"{d:06x}{f:04x}{len(name):06x}",
                }
        folder = base.joinpath(*directory.split("/"))
        folder.mkdir(parents=True, exist_ok=True)
        doc = {"directory": directory, "files": files, "functions": functions, "version": 1}
        (folder / "_shard.json").write_text(json.dumps(doc), "utf-8")
    areas = {
        f"area{a}": {
            "paths": [f"src/pkg{a}"],
            "files": [],
            "file_count": FILES_PER_FOLDER * 100,
            "entry": f"src/pkg{a}/mod{a * 100}/file0.ts",
            "depends_on": [f"area{(a + 1) % 30}", f"area{(a + 7) % 30}"],
            "components": [],
        }
        for a in range(30)
    }
    (mem.layout.entity / "relationships.json").write_text(json.dumps({"areas": areas}), "utf-8")
    pick = min(300, folders - 1)
    directory = f"src/pkg{pick // 100}/mod{pick}"
    return directory, f"{directory}/file7.ts", f"{directory}/file7.ts::run7"


def anchor_records(mem: Memory, file: str, count: int = 40) -> None:
    """Anchor ``count`` records to ``file``: the whole file (unchanged since), its ``run7``
    (unchanged) and its ``helper7`` (changed since: another hash kept)."""
    current = {a["symbol"]: a["hash"] for a in _anchors(mem, file)}
    done = 0
    for folder in mem.layout.record_dirs():
        for path in sorted(folder.glob("*.json"))[: count // 3 + 1]:
            if done == count:
                return
            record = json.loads(path.read_text("utf-8"))
            symbol = (None, "run7", "helper7")[done % 3]
            digest = current[symbol] if symbol != "helper7" else "0" * 16
            record["anchors"] = [{"path": file, "symbol": symbol, "hash": digest}]
            path.write_bytes(codec.dump_bytes(record))
            done += 1


def _anchors(mem: Memory, file: str) -> list[dict[str, object]]:
    return mem.code.complete_anchors([f"{file}", f"{file}::run7", f"{file}::helper7"])


def build_sessions(mem: Memory, count: int) -> str:
    sid = ""
    for i in range(count):
        sid = str(mem.sessions.start(f"bench session {i}: wire the login form")["id"])
        for j in range(12):
            mem.sessions.append(sid, "user" if j % 2 == 0 else "assistant", f"message {j} of {i}")
    return sid


def visit(port: int, path: str) -> tuple[float, float, bool]:
    """The server's wall and CPU milliseconds for ``path`` (its ``Server-Timing``), and
    whether the page answered with a progress line (its data still being worked out)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        conn.request("GET", path, headers={"Host": f"127.0.0.1:{port}"})
        response = conn.getresponse()
        body = response.read()
        assert response.status == 200, (path, response.status, body[-300:])
        timing = dict(
            part.strip().split(";dur=")
            for part in response.getheader("Server-Timing", "").split(",")
        )
        return float(timing["app"]), float(timing["cpu"]), b'data-job="' in body
    finally:
        conn.close()


def percentile(values: list[float], share: float) -> float:
    """The nearest-rank percentile."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(share * len(ordered)) - 1)]


def ready_after(port: int, paths: list[str], since: float) -> dict[str, float]:
    """Seconds from ``since`` until each of ``paths`` first answers without a progress
    line (asked in turn, every 0.2 s)."""
    ready: dict[str, float] = {}
    while len(ready) < len(paths):
        for path in paths:
            if path not in ready and not visit(port, path)[2]:
                ready[path] = time.perf_counter() - since
        time.sleep(0.2)
    return ready


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--folders", type=int, default=5_000)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--index", action="store_true", help="build the search index first")
    parser.add_argument(
        "--no-vectors",
        action="store_true",
        help="contextual.embeddingModel off: the index without the records' vectors (BM25)",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="pm-bench-viewer-", ignore_cleanup_errors=True) as tmp:
        root = Path(tmp)
        started = time.perf_counter()
        build_tree(root, args.records)
        if args.no_vectors:
            config_path = root / ".planning" / "memory-config.json"
            config = json.loads(config_path.read_text("utf-8"))
            config["memory"]["contextual"]["embeddingModel"] = "off"
            config_path.write_text(json.dumps(config, indent=2), "utf-8")
        mem = Memory.open(root)
        folder, file, function = build_code_map(mem, args.folders)
        anchor_records(mem, file)
        sid = build_sessions(mem, 40)
        record = mem.records("mistake")[0]["id"]
        if args.index:
            mem.reindex(code=False)
        print(
            f"tree: {args.records} records, {args.folders * FILES_PER_FOLDER} files in the code "
            f"map, 40 sessions, {'a' if args.index else 'no'} search index"
            f"{' (no vectors)' if args.no_vectors else ''}; built in "
            f"{time.perf_counter() - started:.0f} s; {machine()}"
        )
        gc.collect()
        server = ViewerServer(Memory.open(root), "127.0.0.1", 0)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        server.reads.warm()  # as ``serve`` does
        pages = [
            "/",
            "/records",
            "/records?type=mistake&severity=high",
            "/records?page=100",
            "/records?q=fetch+error+handling",
            f"/record?id={record}",
            "/sessions",
            f"/session?id={sid}",
            "/context?task=add+password+reset+to+the+login+form",
            "/code",
            "/code?page=80",
            "/code?find=helper7",
            f"/code/folder?dir={folder}",
            f"/code/file?path={file}",
            f"/code/name?q={function}",
            f"/code/name?q={file}",
            "/code/name?q=run7",
            "/code/name?q=area3",
        ]
        cold = time.perf_counter()
        first = {p: visit(server.port, p) for p in pages}  # right after the start
        ready = ready_after(server.port, [p for p in pages if first[p][2]], cold)
        print("\nserver time per page, ms (wall; CPU of the request's thread in brackets)")
        print(f"{'page':44} {'first':>7} {'ready':>7} {'p50':>14} {'p95':>14} {'after a save':>14}")
        worst = 0.0
        for page in pages:
            runs = [visit(server.port, page) for _ in range(args.runs)]
            mem.save(f"bench change before {page}", "learning")
            after = visit(server.port, page)
            every = [first[page], *runs, after]
            walls, cpus = [v[0] for v in every], [v[1] for v in every]
            worst = max(worst, percentile(walls, 0.95))
            waited = f"{ready[page]:6.1f}s" if page in ready else f"{'-':>7}"
            print(
                f"{page[:44]:44} {first[page][0]:7.1f} {waited} "
                f"{percentile(walls, 0.5):6.1f} ({percentile(cpus, 0.5):5.1f}) "
                f"{percentile(walls, 0.95):6.1f} ({percentile(cpus, 0.95):5.1f}) "
                f"{after[0]:6.1f} ({after[1]:5.1f})"
            )
        server.shutdown()
        server.server_close()
        print(f"\nworst page p95: {worst:.1f} ms wall (target {TARGET_MS} ms); {machine()}")


if __name__ == "__main__":
    main()
