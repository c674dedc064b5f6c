"""Time aider's repo map on a tree: run by the Python of aider's own venv, not ours.

    <aider venv>/bin/python bench/accuracy/aider_map.py ROOT FILE...

Prints {"seconds": ..., "cpu": ..., "map_chars": ...}. Cold: aider's tag cache
(.aider.tags.cache.v*) is removed first. Token counting is stubbed (4 characters a token)
because aider's tokenizer is downloaded on first use and nothing here may reach that host.
"""

from __future__ import annotations

import json
import shutil
import sys
import time
from pathlib import Path

from aider.io import InputOutput
from aider.repomap import RepoMap


class CharTokens:
    name = "bench-stub"

    def token_count(self, text: object) -> int:
        return len(str(text)) // 4


def main() -> None:
    root = Path(sys.argv[1]).resolve()
    files = [str(root / name) for name in sys.argv[2:]]
    for cache in root.glob(".aider.tags.cache.v*"):
        shutil.rmtree(cache)
    io = InputOutput(pretty=False, yes=True, fancy_input=False)
    started, cpu = time.perf_counter(), time.process_time()
    repo_map = RepoMap(map_tokens=4096, root=str(root), main_model=CharTokens(), io=io)
    text = repo_map.get_repo_map([], files) or ""
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    for cache in root.glob(".aider.tags.cache.v*"):
        shutil.rmtree(cache)
    print(json.dumps({"seconds": round(seconds, 3), "cpu": round(cpu, 3), "map_chars": len(text)}))


if __name__ == "__main__":
    main()
