"""``python -m planning_memory``: the ``pmem`` command line."""

from __future__ import annotations

from planning_memory.cli import main

if __name__ == "__main__":
    main()
