"""Temporal context text: the current date, time and timezone, and the inactivity notice.

Pure: the clock (``now``) and the timezone are passed in; nothing here reads the clock or the
system's timezone settings (``session.system_timezone`` does that in the shell). Seed 001: the
date and time are given in the user's timezone so relative words ("tomorrow", "last night")
can be read correctly, and a notice says how many whole days passed when the gap since the last
message is over 24 hours.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from planning_memory.errors import ConfigError

GAP_THRESHOLD = timedelta(hours=24)


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
        if self.gap_days is None:
            return None
        unit = "day has" if self.gap_days == 1 else "days have"
        return f"Notice: {self.gap_days} {unit} passed since the last message."

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
