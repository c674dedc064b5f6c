"""Temporal context text: the current date, time and timezone, and the inactivity notice.

The one home of the time-zone lookup (``timezone_of``): the configured IANA name, else the
system's zone. It may read ``$TZ`` and the ``/etc/localtime`` link; nothing here writes a file
or reads the clock (``now`` is passed in). Seed 001: the date and time are given in the user's
timezone so relative words ("tomorrow", "last night") can be read correctly, and a notice says
how many whole days passed when the gap since the last message is over 24 hours.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, tzinfo
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from planning_memory.core.model import effective_config
from planning_memory.errors import ConfigError

GAP_THRESHOLD = timedelta(hours=24)


def gap_notice(days: int | None) -> str | None:
    """ "Notice: 3 days have passed since the last message." (None without a gap)."""
    if days is None:
        return None
    unit = "day has" if days == 1 else "days have"
    return f"Notice: {days} {unit} passed since the last message."


@dataclass(frozen=True)
class TemporalContext:
    """What an agent is told about time before it answers."""

    local_time: datetime  # ``now`` in the chosen timezone
    timezone: str  # an IANA name (``America/Sao_Paulo``) or the zone's abbreviation
    gap_days: int | None  # whole days since the last message, only when over 24 h

    @property
    def clock_line(self) -> str:
        t = self.local_time
        return (
            f"Current date & time: {t.strftime('%A, %Y-%m-%d %H:%M:%S %z')}. "
            f"Timezone: {self.timezone}."
        )

    @property
    def notice(self) -> str | None:
        return gap_notice(self.gap_days)

    def lines(self) -> list[str]:
        notice = self.notice
        return [self.clock_line] if notice is None else [self.clock_line, notice]

    def text(self) -> str:
        return "\n".join(self.lines())

    def as_dict(self) -> dict[str, object]:
        return {
            "date": self.local_time.strftime("%Y-%m-%d"),
            "time": self.local_time.strftime("%H:%M:%S"),
            "weekday": self.local_time.strftime("%A"),
            "utc_offset": self.local_time.strftime("%z"),
            "timezone": self.timezone,
            "gap_days": self.gap_days,
            "text": self.text(),
        }


def zone(name: str) -> ZoneInfo:
    """The IANA timezone ``name`` (``Europe/Madrid``); ConfigError if it is unknown."""
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ConfigError(
            f"unknown timezone {name!r}",
            json_path="$.memory.shortTerm.timezone",
            hint="use an IANA name such as Europe/Madrid or America/Sao_Paulo",
        ) from None


def timezone_of(config: Mapping[str, Any] | None, now: datetime) -> tzinfo:
    """The zone to tell the time in: the config's ``memory.shortTerm.timezone`` (an IANA
    name) when set, else the system's zone (``system_zone``)."""
    name = effective_config(config)["memory"]["shortTerm"].get("timezone")
    return zone(str(name)) if name else system_zone(now)


def system_zone(now: datetime) -> tzinfo:
    """The system's zone as the C library sees it: the IANA zone ``$TZ`` names
    (``Europe/Madrid``, ``:Europe/Madrid`` or a path into a zoneinfo folder), else, when
    ``$TZ`` is unset, the zone ``/etc/localtime`` links to; failing both, the C library's
    fixed offset at ``now`` (its abbreviation, such as ``CET``, becomes the zone's name)."""
    env = os.environ.get("TZ")
    key = _zone_key(env.lstrip(":") if env is not None else _localtime_link())
    if key:
        try:
            return ZoneInfo(key)
        except (ZoneInfoNotFoundError, ValueError):
            pass
    return now.astimezone().tzinfo or UTC


def _zone_key(text: str) -> str:
    """``Europe/Madrid`` from itself or from ``/usr/share/zoneinfo/Europe/Madrid``; else ``""``."""
    if "zoneinfo/" in text:
        return text.rsplit("zoneinfo/", 1)[1]
    return "" if text.startswith("/") else text


def _localtime_link() -> str:
    try:
        return os.readlink("/etc/localtime")
    except OSError:
        return ""


def zone_name(tz: tzinfo, at: datetime) -> str:
    """The IANA key of ``tz`` when it has one, else its abbreviation at ``at`` (``CET``)."""
    key = getattr(tz, "key", None)
    if isinstance(key, str) and key:
        return key
    return tz.tzname(at) or "UTC"


def gap_days(now: datetime, last_message_at: datetime | None) -> int | None:
    """Whole days since ``last_message_at`` when the gap is over 24 h, else None."""
    if last_message_at is None:
        return None
    gap = now - last_message_at
    if gap <= GAP_THRESHOLD:
        return None
    return int(gap / timedelta(days=1))


def temporal_context(
    now: datetime, tz: tzinfo, last_message_at: datetime | None = None
) -> TemporalContext:
    """The temporal context at ``now`` (aware) in ``tz``, given the last message's time."""
    if now.tzinfo is None:
        raise ValueError("now must be timezone-aware")
    local = now.astimezone(tz)
    return TemporalContext(local, zone_name(tz, local), gap_days(now, last_message_at))
