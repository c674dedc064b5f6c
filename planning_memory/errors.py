"""The exception tree of planning-memory.

Every error a user can cause is a ``PlanningMemoryError``; the CLI turns one into a single line
and the exit code given by ``exit_code``. Anything else is a bug.

    PlanningMemoryError
    ├── ConfigError                     bad memory-config.json or option value   (exit 2)
    ├── NotInitializedError             no .planning/ tree where one is needed   (exit 3)
    ├── AlreadyInitializedError         init over an existing tree               (exit 3)
    ├── InputError(ValueError)          bad data given to us                     (exit 4)
    │   ├── DecodeError                 unreadable JSON/UTF-8, with line/column
    │   ├── LimitError                  too large, too deep, text field too long
    │   ├── SchemaError                 valid JSON that breaks a schema, with json_path
    │   └── UnsafePathError             an id or path that would escape the root
    ├── NotFoundError(KeyError)         no record with that id                   (exit 5)
    ├── ConflictError                   the file changed under us; hand edit vs render (exit 6)
    ├── LockError(TimeoutError)         the memory lock could not be taken       (exit 7)
    ├── ExternalCommandError            a configured external command failed     (exit 8)
    └── StorageError(OSError)           a write refused: full, quota, read-only  (exit 74)

    BrokenFileWarning(UserWarning)      a broken file a reading command skipped (a warning)
    └── UnmappedFileWarning             a source file the code map leaves out
"""

from __future__ import annotations

import errno


class PlanningMemoryError(Exception):
    """Base of every error a user can cause. Fields locate the problem."""

    exit_code = 1

    def __init__(
        self,
        message: str,
        *,
        path: str | None = None,
        json_path: str | None = None,
        line: int | None = None,
        column: int | None = None,
        record_id: str | None = None,
        hint: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.path = path
        self.json_path = json_path
        self.line = line
        self.column = column
        self.record_id = record_id
        self.hint = hint

    def __str__(self) -> str:
        return self.one_line()

    def one_line(self) -> str:
        """``file:line:col: json-path: message (hint)`` with the parts that are known."""
        where = ""
        if self.path is not None:
            where = printable(self.path)
            if self.line is not None:
                where += f":{self.line}"
                if self.column is not None:
                    where += f":{self.column}"
        parts = [p for p in (where, self.json_path) if p]
        text = ": ".join([*parts, self.message])
        if self.hint:
            text += f" ({self.hint})"
        return text


def printable(path: str) -> str:
    """``path`` as it can be printed: the bytes of a file name that is not valid UTF-8 (which
    ``os.listdir`` gives as lone surrogates) shown as ``\\xe9`` escapes."""
    if path.isascii():
        return path
    try:
        return path.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:  # a surrogate no file name gives (from JSON text, say)
        return path.encode("utf-8", "backslashreplace").decode("utf-8")


class ConfigError(PlanningMemoryError):
    exit_code = 2


class NotInitializedError(PlanningMemoryError):
    exit_code = 3


class AlreadyInitializedError(PlanningMemoryError):
    exit_code = 3


class InputError(PlanningMemoryError, ValueError):
    exit_code = 4


class DecodeError(InputError):
    pass


class LimitError(InputError):
    pass


class SchemaError(InputError):
    pass


class UnsafePathError(InputError):
    pass


class NotFoundError(PlanningMemoryError, KeyError):
    exit_code = 5

    def __str__(self) -> str:  # KeyError would repr() the message
        return self.one_line()


class ConflictError(PlanningMemoryError):
    exit_code = 6


class LockError(PlanningMemoryError, TimeoutError):
    exit_code = 7


class ExternalCommandError(PlanningMemoryError):
    exit_code = 8


# SQLite's primary result codes that mean the disk refused a write
_SQLITE_READONLY = 8
_SQLITE_STORAGE = {
    _SQLITE_READONLY: "read-only database",
    10: "disk I/O error (a full disk?)",
    13: "database or disk is full",
}


class StorageError(PlanningMemoryError, OSError):
    """The file system refused a write: the disk is full, a quota is reached, the file system
    is read-only or failing, or this user may not write the tree (a checkout owned by another
    user: ``read_only``). Raised before the file it names changed (a write goes to a temp
    file first, a database rolls back), so running the command again once there is room
    finishes the job. ``of`` says whether an ``OSError`` or a SQLite error is one."""

    exit_code = 74  # EX_IOERR of sysexits.h
    ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS, errno.EIO})
    READ_ONLY = frozenset({errno.EROFS, errno.EACCES, errno.EPERM})
    HINT = "free some disk space or quota, then run the command again"
    READ_ONLY_HINT = (
        "reading commands work here; run this one as the tree's owner or in a writable clone"
    )

    @classmethod
    def read_only(cls, path: str | None) -> StorageError:
        """``path``, which this process may not write (a read-only mount, another user's
        checkout)."""
        return cls("cannot write: read-only", path=path, hint=cls.READ_ONLY_HINT)

    @classmethod
    def of(cls, exc: BaseException, path: str | None) -> StorageError | None:
        """The ``StorageError`` that ``exc``, met writing ``path``, stands for: an ``OSError``
        whose errno is one of ``ERRNOS``, or a ``sqlite3`` error whose primary code is
        SQLITE_FULL, SQLITE_IOERR or SQLITE_READONLY; None for any other error."""
        if isinstance(exc, StorageError):
            return exc
        if isinstance(exc, OSError):
            if exc.errno in cls.READ_ONLY:
                return cls.read_only(path)
            if exc.errno not in cls.ERRNOS:
                return None
            reason = exc.strerror or errno.errorcode.get(exc.errno or 0, "I/O error")
        else:
            code = getattr(exc, "sqlite_errorcode", None)  # sqlite3 is not imported here
            if not isinstance(code, int) or code & 0xFF not in _SQLITE_STORAGE:
                return None
            if code & 0xFF == _SQLITE_READONLY:
                return cls.read_only(path)
            reason = _SQLITE_STORAGE[code & 0xFF]
        return cls(f"cannot write: {reason}", path=path, hint=cls.HINT)


class BrokenFileWarning(UserWarning):
    """A broken memory file (unreadable JSON, a schema violation, a FIFO) that a reading
    command skipped and went on; the message is the file's one-line problem."""


class UnmappedFileWarning(BrokenFileWarning):
    """A source file the code map leaves out: its name is not valid UTF-8, so it could be
    stored neither in the entity JSON nor in the index (the message names it, escaped)."""
