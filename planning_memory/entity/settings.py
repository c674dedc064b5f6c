"""Scanner settings from ``memory.entity`` in ``memory-config.json``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from planning_memory.errors import ConfigError

DEFAULT_MAX_FILE_BYTES = 1_000_000
DEFAULT_PARALLEL_THRESHOLD = 200


@dataclass(frozen=True)
class Settings:
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES
    coverage_reports: tuple[str, ...] | None = None
    workers: int = 0  # 0: one per CPU
    parallel_threshold: int = DEFAULT_PARALLEL_THRESHOLD
    use_git: bool = True

    @classmethod
    def from_config(cls, config: dict[str, Any] | None) -> Settings:
        memory = (config or {}).get("memory", {})
        entity = memory.get("entity", {}) if isinstance(memory, dict) else {}
        if not isinstance(entity, dict):
            raise ConfigError("memory.entity must be an object", json_path="$.memory.entity")
        reports = entity.get("coverageReports")
        return cls(
            include=_strings(entity, "includePatterns"),
            exclude=_strings(entity, "excludePatterns"),
            max_file_bytes=_int(entity, "maxFileBytes", DEFAULT_MAX_FILE_BYTES),
            coverage_reports=None if reports is None else _strings(entity, "coverageReports"),
            workers=_int(entity, "scanWorkers", 0),
            parallel_threshold=_int(entity, "parallelThreshold", DEFAULT_PARALLEL_THRESHOLD),
            use_git=bool(entity.get("useGit", True)),
        )


def _strings(entity: dict[str, Any], key: str) -> tuple[str, ...]:
    value = entity.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{key} must be a list of strings", json_path=f"$.memory.entity.{key}")
    return tuple(value)


def _int(entity: dict[str, Any], key: str, default: int) -> int:
    value = entity.get(key, default)
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ConfigError(
            f"{key} must be a non-negative integer", json_path=f"$.memory.entity.{key}"
        )
    return value


# -- functions and components, loaded per folder on demand --------------------------------
