"""Benchmark: render and sync the Markdown views with 10k records (issue 6).

Builds a tree of realistic records (the generator of bench_validate.py), then times
``pmem render`` (first render of patterns.md, mistakes.md, CLAUDE.md), a no-op ``render``,
``render --check``, and ``sync`` after one hand edit of patterns.md. Prints the figures and
writes them into docs/bench-markdown.md.

    .venv/bin/python bench/bench_markdown.py [--records N] [--no-write]
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_validate import build_tree, machine, run_timed

PMEM = str(Path(sys.executable).parent / "pmem")
DOC = Path(__file__).resolve().parent.parent / "docs" / "bench-markdown.md"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--no-write", action="store_true", help="do not update the docs")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="pm-bench-md-") as tmp:
        root = Path(tmp)
        layout = build_tree(root, args.records)
        (layout.planning / "patterns.md").unlink(missing_ok=True)
        rows = []
        wall, cpu, _ = run_timed([PMEM, "-C", tmp, "render"])
        rows.append(("first render (3 views)", wall, cpu))
        sizes = {p.name: p.stat().st_size for p in layout.planning.glob("*.md")}
        wall, cpu, _ = run_timed([PMEM, "-C", tmp, "render"])
        rows.append(("render, nothing changed", wall, cpu))
        wall, cpu, _ = run_timed([PMEM, "-C", tmp, "render", "--check"])
        rows.append(("render --check", wall, cpu))
        path = layout.patterns_md
        text = path.read_text("utf-8")
        heading = re.search(r"^## (.+?) <!-- id:", text, re.M)
        assert heading is not None
        path.write_text(text.replace(heading.group(0), "## Edited by hand <!-- id:", 1))
        wall, cpu, out = run_timed([PMEM, "-C", tmp, "sync"])
        assert "imported 1 change" in out, out
        rows.append(("sync after one hand edit (import + re-render)", wall, cpu))
    lines = [
        f"records: {args.records:,}; views: "
        + ", ".join(f"{k} {v / 1e6:.1f} MB" for k, v in sorted(sizes.items()))
    ]
    lines += [f"{name:<48} wall {w:6.2f} s  CPU {c:6.2f} s" for name, w, c in rows]
    lines.append(f"machine: {machine()}")
    print("\n".join(lines))
    if not args.no_write:
        stamp = datetime.now(UTC).strftime("%Y-%m-%d")
        DOC.write_text(
            "# Markdown view benchmarks\n\nMeasured "
            + stamp
            + " by `bench/bench_markdown.py` (processes, start-up included).\n\n```\n"
            + "\n".join(lines)
            + "\n```\n",
            "utf-8",
        )


if __name__ == "__main__":
    main()
