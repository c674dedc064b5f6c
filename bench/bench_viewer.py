"""Benchmark: the viewer's pages, server time, at 10k records and a code map of 100k files
(the target: every page under 200 ms).

The tree: 10k records (as ``bench_validate`` writes them), 40 sessions, and a code map written
straight as shards (5,000 folders of 20 files, two functions each). The viewer runs in this
process; each figure is the server's own time for the page (its ``Server-Timing`` header),
median and worst of the warm runs, and the first answer after a record was saved (the cached
records re-read: only the changed file).

    .venv/bin/python bench/bench_viewer.py [--records N] [--folders N] [--runs N]
"""

from __future__ import annotations

import argparse
import http.client
import json
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench_validate import build_tree, machine

from planning_memory import Memory
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
    return "src/pkg3/mod300", "src/pkg3/mod300/file7.ts", "src/pkg3/mod300/file7.ts::run7"


def build_sessions(mem: Memory, count: int) -> str:
    sid = ""
    for i in range(count):
        sid = str(mem.sessions.start(f"bench session {i}: wire the login form")["id"])
        for j in range(12):
            mem.sessions.append(sid, "user" if j % 2 == 0 else "assistant", f"message {j} of {i}")
    return sid


def server_ms(port: int, path: str) -> tuple[float, float]:
    """The server's wall and CPU milliseconds for ``path`` (its ``Server-Timing``)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        conn.request("GET", path, headers={"Host": f"127.0.0.1:{port}"})
        response = conn.getresponse()
        response.read()
        assert response.status == 200, (path, response.status)
        timing = dict(
            part.strip().split(";dur=")
            for part in response.getheader("Server-Timing", "").split(",")
        )
        return float(timing["app"]), float(timing["cpu"])
    finally:
        conn.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--folders", type=int, default=5_000)
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="pm-bench-viewer-") as tmp:
        root = Path(tmp)
        started = time.perf_counter()
        build_tree(root, args.records)
        mem = Memory.open(root)
        folder, file, function = build_code_map(mem, args.folders)
        sid = build_sessions(mem, 40)
        record = mem.records("mistake")[0]["id"]
        mem.reindex(code=False)
        print(
            f"tree: {args.records} records, {args.folders * FILES_PER_FOLDER} files in the code "
            f"map, 40 sessions; built in {time.perf_counter() - started:.0f} s; {machine()}"
        )
        server = ViewerServer(Memory.open(root), "127.0.0.1", 0)
        threading.Thread(target=server.serve_forever, daemon=True).start()
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
            f"/code/folder?dir={folder}",
            f"/code/file?path={file}",
            f"/code/name?q={function}",
            "/code/name?q=area3",
        ]
        first = {p: server_ms(server.port, p)[0] for p in pages}  # fills the caches
        print("\nserver time per page, ms (wall; CPU of the request's thread in brackets)")
        print(f"{'page':50} {'first':>7} {'median':>14} {'worst':>14} {'after a save':>14}")
        worst = {"wall": 0.0, "cpu": 0.0}
        for page in pages:
            runs = [server_ms(server.port, page) for _ in range(args.runs)]
            mem.save(f"bench change before {page}", "learning")
            after = server_ms(server.port, page)
            walls, cpus = [w for w, _ in runs], [c for _, c in runs]
            worst["wall"] = max(worst["wall"], *walls, after[0])
            worst["cpu"] = max(worst["cpu"], *cpus, after[1])
            print(
                f"{page[:50]:50} {first[page]:7.1f} "
                f"{statistics.median(walls):6.1f} ({statistics.median(cpus):5.1f}) "
                f"{max(walls):6.1f} ({max(cpus):5.1f}) {after[0]:6.1f} ({after[1]:5.1f})"
            )
        server.shutdown()
        server.server_close()
        print(
            f"\nworst page, warm or after a save: {worst['wall']:.1f} ms wall, "
            f"{worst['cpu']:.1f} ms CPU (target {TARGET_MS} ms)"
        )


if __name__ == "__main__":
    main()
