"""A part's API, imported on first use: the package's one lazy-import mechanism (PEP 562).

Each part's ``__init__`` names what it offers and the module that defines it::

    if TYPE_CHECKING:
        from planning_memory.entity.scanner import ScanReport, scan
    else:
        __getattr__, __dir__, __all__ = exports(__name__, {"scan": "scanner", ...})

so ``from planning_memory import entity`` costs nothing until ``entity.scan`` is read, and a
short command (``pmem --help``, a hook) never loads tree-sitter, SQLite or the MCP SDK. The
``TYPE_CHECKING`` branch gives type checkers the real names; a test keeps the two lists equal.
"""

from __future__ import annotations

import importlib
import sys

TYPE_CHECKING = False  # typing itself is not imported: every hook would pay for it
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any


def exports(
    package: str, names: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]], list[str]]:
    """``__getattr__``, ``__dir__`` and ``__all__`` for ``package``, whose public ``names``
    each live in the named submodule (``"scanner"`` -> ``package.scanner``). ``"records:save"``
    offers ``package.records.save`` under the public name; ``"."`` offers the submodule of that
    name itself (``{"codec": "."}``: ``package.codec``)."""

    def __getattr__(name: str) -> Any:
        where = names.get(name)
        if where is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        if where == ".":
            return importlib.import_module(f"{package}.{name}")
        module, _, attr = where.partition(":")
        return getattr(importlib.import_module(f"{package}.{module}"), attr or name)

    def __dir__() -> list[str]:
        return sorted({*names, *vars(sys.modules[package])})

    return __getattr__, __dir__, sorted(names)
