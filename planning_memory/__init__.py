"""planning-memory: git-native memory for AI coding agents.

    from planning_memory import Memory

    mem = Memory.open()                    # the repository containing the working directory
    mem.save("Use zod for validation", "pattern", description="...")
    print(mem.context("add a signup form").text)

``Memory`` and the error classes load on first use, so ``pmem --help`` and the agent hooks stay
fast. Everything else is reached through ``Memory``; see docs/design.md for the parts.
"""

from __future__ import annotations

from planning_memory.core.exports import exports

__version__ = "0.1.0"

_ERRORS = (
    "AlreadyInitializedError",
    "ConfigError",
    "ConflictError",
    "DecodeError",
    "ExternalCommandError",
    "InputError",
    "LimitError",
    "LockError",
    "NotFoundError",
    "NotInitializedError",
    "PlanningMemoryError",
    "SchemaError",
    "UnsafePathError",
)

TYPE_CHECKING = False  # without importing typing (a hook starts fast)
if TYPE_CHECKING:
    from planning_memory.errors import AlreadyInitializedError as AlreadyInitializedError
    from planning_memory.errors import ConfigError as ConfigError
    from planning_memory.errors import ConflictError as ConflictError
    from planning_memory.errors import DecodeError as DecodeError
    from planning_memory.errors import ExternalCommandError as ExternalCommandError
    from planning_memory.errors import InputError as InputError
    from planning_memory.errors import LimitError as LimitError
    from planning_memory.errors import LockError as LockError
    from planning_memory.errors import NotFoundError as NotFoundError
    from planning_memory.errors import NotInitializedError as NotInitializedError
    from planning_memory.errors import PlanningMemoryError as PlanningMemoryError
    from planning_memory.errors import SchemaError as SchemaError
    from planning_memory.errors import UnsafePathError as UnsafePathError
    from planning_memory.memory import Memory as Memory
else:
    __getattr__, __dir__, _names = exports(
        __name__, {"Memory": "memory", **dict.fromkeys(_ERRORS, "errors")}
    )

__all__ = ["Memory", "__version__", *_ERRORS]
