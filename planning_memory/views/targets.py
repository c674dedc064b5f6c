"""Render targets turned on or off: the repository's own CLAUDE.md or AGENTS.md block.

They are ``render.targets`` in ``memory-config.json``; the views render the blocks turned on.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from planning_memory.core import Layout
from planning_memory.store import Store
from planning_memory.views.state import TARGETS


def set_target(layout: Layout, store: Store, name: str, on: bool) -> bool:
    """Set the target ``name`` (``CLAUDE.md``, ``AGENTS.md``) to ``on`` in the tree's config;
    False when the config already said so. The caller holds the store's lock."""
    key = {file: key for key, file in TARGETS.items()}[name]
    config = store.read_json(layout.config) if layout.config.is_file() else {}
    targets = config.setdefault("memory", {}).setdefault("render", {}).setdefault("targets", {})
    if bool(targets.get(key)) == on:
        return False
    targets[key] = on
    store.write_json(layout.config, config)
    return True


def turn_target(
    layout: Layout, store: Store, name: str, on: bool, render: Callable[[], Any]
) -> bool:
    """``set_target`` under the store's lock; when it turned a block on, ``render()`` (which
    reads the config again and renders the views: the block is written)."""
    with store.lock():
        if not set_target(layout, store, name, on):
            return False
        if on:
            render()
    return True
