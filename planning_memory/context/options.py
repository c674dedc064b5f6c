"""The options ``Memory.search`` and ``Memory.context`` pass on to ``Contextual``, typed.

Read by type checkers; nothing imports this module at run time unless it asks for the names.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypedDict


class SearchOptions(TypedDict, total=False):
    """``search``'s options, as ``Memory.search`` passes them on."""

    sources: Sequence[str]
    types: Sequence[str]
    scope: str | None
    tags: Sequence[str]
    limit: int
    threshold: float
    match: str
    semantic: bool | None
    warnings: list[str] | None
    all_projects: bool
    remember: bool


class ContextOptions(TypedDict, total=False):
    """``context``'s options, as ``Memory.context`` passes them on."""

    budget: int | None
    fmt: str
    agent: str | None
    quick: bool
