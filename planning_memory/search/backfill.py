"""The vectors a command left to compute: ``python -m planning_memory.search.backfill TREE``.

A search or context call embeds at most ``upkeep.EMBED_PER_CALL`` new texts (a ``git pull`` of
thousands of records must not hold a command for minutes); when more are waiting it starts
this, detached (``background``), to embed the rest. One at a time per index (the index's
build lock): a second one finds the first at work and leaves.
"""

from __future__ import annotations

import sys
from pathlib import Path

from planning_memory.core import Layout
from planning_memory.search import upkeep
from planning_memory.search.database import Index


def main(tree: str) -> int:
    """Embed every text of ``tree``'s index still without a vector; 1 when another process
    holds the index's build lock."""
    with Index.open(Layout(Path(tree))) as index, index.build_guard() as mine:
        if not mine:
            return 1
        upkeep.embed(index, None)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
