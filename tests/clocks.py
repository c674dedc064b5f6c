"""A clock for tests: it gives ``now``, which a test moves by hand (``clock.advance(hours=1)``,
``clock.now = ...``), or, with a ``tick``, moves by that much before each reading."""

from __future__ import annotations

from datetime import datetime, timedelta


class Clock:
    def __init__(self, now: datetime, tick: timedelta = timedelta(0)) -> None:
        self.now = now
        self.tick = tick

    def __call__(self) -> datetime:
        self.now += self.tick
        return self.now

    def advance(self, **delta: float) -> None:
        self.now += timedelta(**delta)
