"""Modules imported on first use, so that a short command (``pmem context``, a hook) does not
pay for the parts it never touches.

    if TYPE_CHECKING:
        from planning_memory.views import sync
    else:
        sync = lazy("planning_memory.views.sync")
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any


class LazyModule:
    """Stands for a module until an attribute is read; then imports it."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._module: ModuleType | None = None

    def __getattr__(self, attr: str) -> Any:
        if self._module is None:
            self._module = importlib.import_module(self._name)
        return getattr(self._module, attr)

    def __repr__(self) -> str:
        return f"<lazy module {self._name!r}>"


def lazy(name: str) -> Any:
    return LazyModule(name)
