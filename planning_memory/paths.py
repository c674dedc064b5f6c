"""Paths under a memory tree: staying inside it, and reading only regular files.

A cloned repository may carry a symbolic link that points at ``~/.bashrc``, a FIFO that would
block a reader, or ``/dev/zero``: ``inside_tree`` is the one check for every path opened under
a tree (no ``..`` out, no link out), ``read_regular`` reads a regular file only (never
blocking, never past a size limit), ``open_inside`` opens one in place without following a
link, ``check_database`` vouches for a SQLite file and its journals, and ``writable`` says
whether a folder may be written (a read-only checkout may only be read). ``Store`` uses them
for every file it touches; the index and the scanners use them directly.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from planning_memory.core import PLANNING_DIR, Layout, codec
from planning_memory.errors import InputError, LimitError, UnsafePathError, printable


def read_regular(path: Path | str, max_bytes: int = codec.MAX_BYTES) -> bytes | None:
    """The bytes of the regular file ``path`` (None if it does not exist), read without ever
    blocking or reading more than ``max_bytes``: the file is opened non-blocking and checked
    with ``fstat`` before a byte is read, so a FIFO, a device or a socket is refused with an
    ``InputError`` and ``/dev/zero`` cannot fill memory."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY)
    except FileNotFoundError:
        return None
    except OSError as exc:  # a socket (ENXIO), no permission, a loop of symlinks...
        raise InputError(f"cannot open: {exc.strerror}", path=str(path)) from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise InputError(f"is {file_kind(st.st_mode)}, expected a regular file", path=str(path))
        if st.st_size > max_bytes:
            raise LimitError(
                f"file is {st.st_size:,} bytes, over the {max_bytes:,}-byte limit", path=str(path)
            )
        chunks = [os.read(fd, st.st_size + 1)]  # not max_bytes: that would allocate max_bytes
        size = len(chunks[0])
        while size > st.st_size and size <= max_bytes:  # it grew since the fstat
            chunk = os.read(fd, min(1 << 20, max_bytes + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    finally:
        os.close(fd)
    if size > max_bytes:
        raise LimitError(f"file is over the {max_bytes:,}-byte limit", path=str(path))
    return b"".join(chunks)


def regular_size(path: Path | str) -> int | None:
    """The size of the regular file ``path``, None when there is none or it is another kind
    of file (``read_regular`` then says what is wrong with it)."""
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return st.st_size if stat.S_ISREG(st.st_mode) else None


# -- staying inside the tree: the one check for every path opened under it ---------------------
def inside_tree(tree: Path | str, path: Path | str) -> Path:
    """``path`` if it lies in the memory tree ``tree`` and nothing on the way leads out.

    Each part of ``path`` below ``tree`` that exists is looked at with ``lstat``: a symbolic
    link must resolve inside the tree (a link out is refused with ``UnsafePathError`` naming
    it, so a cloned repository's ``.planning/.lock -> ~/.bashrc`` is never opened), and a
    repository's ``.planning`` may not be a link out of the repository. The walk ends at the
    first part that does not exist: what is made there (a folder, a temp file renamed into
    place, a file opened with ``O_CREAT | O_NOFOLLOW``) is real. A path with ``..`` or not
    under ``tree`` is resolved whole with ``realpath``."""
    root = os.fspath(tree)
    text = os.fspath(path)
    check_root(root)
    if text == root:
        return Path(path)
    parts = text[len(root) + 1 :].split(os.sep) if text.startswith(root + os.sep) else [".."]
    if ".." in parts:
        real_root = os.path.realpath(root)
        if not _is_within(os.path.realpath(text), real_root):
            raise UnsafePathError(
                "path resolves outside the memory tree",
                path=text,
                hint="ids and paths may not contain '..', absolute parts or symlinks out",
            )
        return Path(path)
    here = root
    for part in parts:
        here += os.sep + part
        try:
            mode = os.lstat(here).st_mode
        except OSError:  # absent (or under a file): nothing further to follow
            break
        if stat.S_ISLNK(mode):
            link_inside(root, here)
    return Path(path)


def check_root(root: str) -> None:
    """A repository's ``.planning`` that is a symlink must stay inside the repository."""
    if os.path.basename(root) != PLANNING_DIR:
        return  # the personal store, or a copy of a tree named on the command line
    try:
        if not stat.S_ISLNK(os.lstat(root).st_mode):
            return
    except OSError:
        return
    real = os.path.realpath(root)
    if not _is_within(real, os.path.realpath(os.path.dirname(root))):
        raise link_out(root, real, os.path.dirname(root), "the repository")


def link_inside(root: str, link: str) -> None:
    """Refuse the symlink ``link`` unless it resolves inside the tree ``root``."""
    real = os.path.realpath(link)
    if not _is_within(real, os.path.realpath(root)):
        raise link_out(link, real, os.path.dirname(root), "the memory tree")


def _is_within(real: str, folder: str) -> bool:
    return real == folder or real.startswith(folder.rstrip(os.sep) + os.sep)


def link_out(link: str, real: str, repo: str, what: str) -> UnsafePathError:
    name = Layout(Path(repo) / PLANNING_DIR).relative(Path(link))
    return UnsafePathError(
        f"is a symbolic link that leads outside {what} (to {printable(real)}); pmem never "
        "reads or writes through one",
        path=name,
        hint=f"a cloned repository may carry one: remove it with `rm {printable(name)}`, "
        "then run the command again",
    )


def open_inside(path: Path, flags: int, mode: int, *, name: str) -> int:
    """``os.open`` of a path ``inside_tree`` vouched for, never through a symlink and never
    blocking (a FIFO), for a regular file only; errors name the file as ``name``."""
    flags |= os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK | os.O_NOCTTY
    try:
        fd = os.open(path, flags, mode)
    except FileNotFoundError:
        raise
    except OSError as exc:  # a symlink (ELOOP), a folder, no permission...
        if exc.errno == errno.ELOOP:
            raise UnsafePathError(
                "is a symbolic link; pmem never opens this file through one",
                path=name,
                hint=f"remove it with `rm {printable(name)}`, then run the command again",
            ) from None
        if exc.errno == errno.EISDIR:
            raise InputError(
                "is a directory, expected a regular file",
                path=name,
                hint="pmem keeps a file there: move the folder away, then run the command again",
            ) from None
        raise InputError(f"cannot open: {exc.strerror}", path=name) from None
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise InputError(
            f"is {file_kind(st.st_mode)}, expected a regular file",
            path=name,
            hint=f"remove it with `rm {printable(name)}`, then run the command again",
        )
    return fd


DATABASE_FILES = ("", "-wal", "-shm", "-journal")  # SQLite's file and the journals beside it


def check_database(path: Path, *, name: str) -> Path:
    """``path`` (checked by ``inside_tree``) for ``sqlite3.connect``: SQLite opens the file
    and its journals by name and follows symlinks, so each of them must be a regular file or
    absent (``UnsafePathError`` / ``InputError`` naming it); a FIFO would block it."""
    for suffix in DATABASE_FILES:
        try:
            mode = os.lstat(f"{path}{suffix}").st_mode
        except FileNotFoundError:
            continue
        if stat.S_ISREG(mode):
            continue
        what = "a symbolic link" if stat.S_ISLNK(mode) else file_kind(mode)
        raise (UnsafePathError if stat.S_ISLNK(mode) else InputError)(
            f"is {what}; pmem keeps a database there and opens it only as a regular file",
            path=name + suffix,
            hint=f"remove it with `rm {printable(name + suffix)}`: it is derived and rebuilt",
        )
    return path


# -- a tree this process may only read ---------------------------------------------------------
def writable(folder: Path | str) -> bool:
    """Whether this process may make files in ``folder``: asked of the nearest part of it that
    exists (a missing folder is made by the writer), by ``access`` (file modes, ACLs, a
    read-only mount). False in a checkout owned by another user or mounted read-only, where
    reading commands keep their derived databases in memory instead (``readonly``)."""
    here = os.path.abspath(folder)  # a relative path climbs to the working folder, not to ""
    while not os.path.lexists(here):
        parent = os.path.dirname(here)
        if parent == here:
            return False
        here = parent
    return os.access(here, os.W_OK | os.X_OK)


def valid_name(name: str) -> bool:
    """Whether ``name`` (a file name or path as ``os.listdir`` or git gives it) is valid
    UTF-8: the bytes of one that is not come as lone surrogates, which JSON, SQLite and a
    terminal refuse (``errors.printable`` shows them as ``\\xe9``)."""
    if name.isascii():
        return True
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def file_kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"
