"""``python -m planning_memory.cli.run``: the same as the ``pmem`` console script."""

from __future__ import annotations

from planning_memory.cli import main

if __name__ == "__main__":
    main()
