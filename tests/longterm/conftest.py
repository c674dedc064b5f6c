"""The long-term tests' memory: a fresh tree on a clock the test moves by hand."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from clocks import Clock

from planning_memory.memory import Memory

T0 = datetime(2024, 1, 20, 15, 0, 0, tzinfo=UTC)


@pytest.fixture
def clock() -> Clock:
    return Clock(T0)


@pytest.fixture
def mem(tmp_path: Path, clock: Clock) -> Memory:
    Memory.init(tmp_path)
    return Memory(tmp_path, clock=clock)
