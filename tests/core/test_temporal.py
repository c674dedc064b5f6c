"""Temporal context: clock line in the chosen timezone and the inactivity notice (seed 001)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from planning_memory.core import temporal
from planning_memory.errors import ConfigError

NOW = datetime(2026, 9, 28, 13, 15, 0, tzinfo=UTC)
PMEM = str(Path(sys.executable).parent / "pmem")


def test_clock_line_in_named_zone() -> None:
    ctx = temporal.temporal_context(NOW, temporal.zone("America/Sao_Paulo"))
    assert ctx.clock_line == (
        "Current date & time: Monday, 2026-09-28 10:15:00 -0300. Timezone: America/Sao_Paulo."
    )
    assert ctx.notice is None
    assert ctx.lines() == [ctx.clock_line]


@pytest.mark.parametrize(
    ("hours", "expected"),
    [
        (1, None),
        (23, None),
        (24, None),  # "over 24 hours": exactly a day is not yet a gap
        (25, "Notice: 1 day has passed since the last message."),
        (47, "Notice: 1 day has passed since the last message."),
        (49, "Notice: 2 days have passed since the last message."),
        (24 * 30 + 5, "Notice: 30 days have passed since the last message."),
    ],
)
def test_gap_notice(hours: int, expected: str | None) -> None:
    last = NOW - timedelta(hours=hours)
    ctx = temporal.temporal_context(NOW, UTC, last)
    assert ctx.notice == expected
    assert ctx.text().endswith(expected or "Timezone: UTC.")


def test_gap_days_without_last_message() -> None:
    assert temporal.gap_days(NOW, None) is None
    assert temporal.temporal_context(NOW, UTC, None).gap_days is None


def test_fixed_offset_zone_uses_its_abbreviation() -> None:
    tz = timezone(timedelta(hours=2), "CEST")
    ctx = temporal.temporal_context(NOW, tz)
    assert ctx.timezone == "CEST"
    assert ctx.local_time.hour == 15


def test_as_dict_fields() -> None:
    ctx = temporal.temporal_context(NOW, temporal.zone("Europe/Madrid"), NOW - timedelta(days=3))
    data = ctx.as_dict()
    assert data["date"] == "2026-09-28"
    assert data["time"] == "15:15:00"
    assert data["weekday"] == "Monday"
    assert data["utc_offset"] == "+0200"
    assert data["timezone"] == "Europe/Madrid"
    assert data["gap_days"] == 3
    assert "3 days have passed" in str(data["text"])


def test_unknown_zone_is_a_config_error() -> None:
    with pytest.raises(ConfigError) as info:
        temporal.zone("Mars/Olympus_Mons")
    assert info.value.json_path == "$.memory.shortTerm.timezone"
    with pytest.raises(ConfigError):
        temporal.zone("../../etc/passwd")


def test_naive_now_is_refused() -> None:
    with pytest.raises(ValueError, match="timezone-aware"):
        temporal.temporal_context(datetime(2026, 1, 1), UTC)


# -- the one time-zone lookup ------------------------------------------------------------------
def test_the_config_zone_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "Asia/Tokyo")
    config = {"memory": {"shortTerm": {"timezone": "America/Sao_Paulo"}}}
    assert temporal.zone_name(temporal.timezone_of(config, NOW), NOW) == "America/Sao_Paulo"
    assert temporal.zone_name(temporal.timezone_of(None, NOW), NOW) == "Asia/Tokyo"
    with pytest.raises(ConfigError):
        temporal.timezone_of({"memory": {"shortTerm": {"timezone": "Mars/Base"}}}, NOW)


@pytest.mark.parametrize(
    "value", ["Europe/Madrid", ":Europe/Madrid", "/usr/share/zoneinfo/Europe/Madrid"]
)
def test_system_zone_reads_tz_as_the_c_library_does(
    value: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TZ", value)
    assert temporal.zone_name(temporal.system_zone(NOW), NOW) == "Europe/Madrid"


def pmem(root: Path, *args: str) -> str:
    env = {**os.environ, "TZ": "Europe/Madrid"}
    done = subprocess.run(
        [PMEM, *args], cwd=root, env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_session_context_and_pmem_context_name_the_same_zone(tmp_path: Path) -> None:
    """Real processes, so that the C library reads ``$TZ`` too (it names the zone ``CET``)."""
    pmem(tmp_path, "init")
    pmem(tmp_path, "session", "start", "--goal", "check the clock")
    session = json.loads(pmem(tmp_path, "session", "context", "--json"))["temporal"]
    packed = json.loads(pmem(tmp_path, "context", "check the clock", "--format", "json"))
    packed = packed["memory_context"]["temporal_context"]
    assert session["timezone"] == packed["timezone"] == "Europe/Madrid"
    assert session["utc_offset"] == packed["utc_offset"]
