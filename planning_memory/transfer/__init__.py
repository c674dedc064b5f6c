"""Export and import: the combined document, single-file shapes and ``memoria/`` folders.

``plan`` converts and checks a document before anything is written; ``keep_new`` leaves out what
is already there; ``export_document`` writes the combined shape; ``write_memoria`` writes a
``memoria/`` folder back (``pmem export --to memoria``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from planning_memory.core.exports import exports

if TYPE_CHECKING:
    from planning_memory.transfer.level import Transfer as Transfer
    from planning_memory.transfer.memoria import LONG_TERM_FILE as MEMORIA_FILE
    from planning_memory.transfer.memoria import read_memoria as read_memoria
    from planning_memory.transfer.memoria_export import Exported as Exported
    from planning_memory.transfer.memoria_export import drop_known as drop_known
    from planning_memory.transfer.memoria_export import write_memoria as write_memoria
    from planning_memory.transfer.shapes import ImportResult as ImportResult
    from planning_memory.transfer.shapes import keep_new as keep_new
    from planning_memory.transfer.shapes import plan as plan
    from planning_memory.transfer.shapes import read_document as read_document
    from planning_memory.transfer.tree import apply_plan as apply_plan
    from planning_memory.transfer.tree import export_tree as export_tree

    __all__ = [
        "MEMORIA_FILE",
        "Exported",
        "ImportResult",
        "Transfer",
        "apply_plan",
        "drop_known",
        "export_tree",
        "keep_new",
        "plan",
        "read_document",
        "read_memoria",
        "write_memoria",
    ]
else:
    __getattr__, __dir__, __all__ = exports(
        __name__,
        {
            "Exported": "memoria_export",
            "ImportResult": "shapes",
            "MEMORIA_FILE": "memoria:LONG_TERM_FILE",
            "Transfer": "level",
            "apply_plan": "tree",
            "drop_known": "memoria_export",
            "export_tree": "tree",
            "keep_new": "shapes",
            "plan": "shapes",
            "read_document": "shapes",
            "read_memoria": "memoria",
            "write_memoria": "memoria_export",
        },
    )
