"""One unit of scanner work, run in a worker process: read a file, hash it, extract its facts.

A job names a repository path and its absolute location. The file is opened without following
symbolic links; one larger than ``max_bytes`` is not read (``large``), one with a NUL byte in
its first 8 KB is not parsed (``binary``). The content hash is git's blob id (SHA-1 of
``blob <size>\\0<content>``), so a hash from ``git ls-files -s`` and one computed here agree.
When the hash equals ``known`` the file is reported ``same`` and not parsed.
A Python file whose PEP 263 coding cookie names another encoding is parsed as decoded with it.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
from typing import Any, NotRequired, TypedDict

from planning_memory.core import privacy
from planning_memory.entity import entities, resolve, sideeffects
from planning_memory.entity.facts import FileFacts
from planning_memory.entity.languages import EXTRACTORS, python

BINARY_PROBE = 8192
CONFIG_FILE_LIMIT = 1_000_000

_context: resolve.Context | None = None  # set by ``prepare`` in each worker


def prepare(root: str, sources: frozenset[str]) -> None:
    """Give this process what import resolution needs: the repository root and the set of
    source files the scan will end with (a pool initializer, or called once in-process)."""
    global _context
    _context = resolve.build_context(sources, lambda rel: read_config(root, rel))


def read_config(root: str, rel: str) -> bytes | None:
    """A small config file (tsconfig.json, go.mod) of the repository, links not followed."""
    status, data = read_source(os.path.join(root, rel), CONFIG_FILE_LIMIT)
    return data if status == "ok" else None


def resolved(entity: dict[str, Any], path: str, context: resolve.Context) -> dict[str, Any]:
    """``entity`` with its ``imports`` mapped to repository paths and ``packages`` listed."""
    language = str(entity.get("language"))
    imports: dict[str, str | None] = {}
    packages: set[str] = set()
    for module in entity.get("imports", {}):
        found, package = resolve.resolve(module, path, language, context)
        imports[module] = found
        if package is not None:
            packages.add(package)
    updated = {**entity, "imports": imports, "packages": sorted(packages)}
    for key in ("imports", "packages"):
        if not updated[key]:
            del updated[key]
    return updated


class Job(TypedDict):
    path: str
    location: str
    language: str
    git_hash: str | None  # blob id vouched for by git, if any
    known: str | None  # hash stored by the last scan
    max_bytes: int


class Parsed(TypedDict):
    path: str
    status: str  # ok | same | binary | large | gone | error
    hash: NotRequired[str]
    file: NotRequired[dict[str, Any]]  # stored file entity, no annotations yet
    functions: NotRequired[dict[str, dict[str, Any]]]
    components: NotRequired[dict[str, dict[str, Any]]]
    error: NotRequired[str]


def blob_id(data: bytes) -> str:
    digest = hashlib.sha1(b"blob %d\0" % len(data), usedforsecurity=False)
    digest.update(data)
    return digest.hexdigest()


def read_source(location: str, max_bytes: int) -> tuple[str, bytes]:
    """``(status, data)``: ``ok`` with the bytes, or ``large``/``gone`` with none. What is not
    a regular file (a FIFO, a device, a socket, a link) is ``gone``: it is opened without
    blocking and never read, so a FIFO cannot hang the scan."""
    try:
        fd = os.open(location, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError as exc:
        missing = (errno.ENOENT, errno.ELOOP, errno.ENOTDIR, errno.ENXIO)
        return ("gone" if exc.errno in missing else "error"), b""
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return "gone", b""
        size = info.st_size
        if size > max_bytes:
            return "large", b""
        chunk = os.read(fd, size + 1)  # a buffer of the file's size: small files stay cheap
        if len(chunk) <= size:  # the whole file in one read (the common case: no second call)
            return "ok", chunk
        chunks = [chunk]
        while chunk:  # the file grew while being read
            if sum(len(c) for c in chunks) > max_bytes:
                return "large", b""
            chunk = os.read(fd, max(size + 1, 65536))
            chunks.append(chunk)
        return "ok", b"".join(chunks)
    finally:
        os.close(fd)


def run(job: Job) -> Parsed:
    """Do ``job``; never raises for a bad file (the status says what happened)."""
    path = job["path"]
    status, data = read_source(job["location"], job["max_bytes"])
    if status != "ok":
        return {"path": path, "status": status}
    if b"\0" in data[:BINARY_PROBE]:
        return {"path": path, "status": "binary"}
    digest = job["git_hash"] or blob_id(data)
    if digest == job["known"]:
        return {"path": path, "status": "same", "hash": digest}
    language = job["language"]
    if language == "python":  # a PEP 263 coding cookie says how to decode it
        data = python.utf8_source(data)
    try:
        facts = _redacted(EXTRACTORS[language](data, path), data)
    except Exception as exc:  # a grammar bug must not stop a scan of 100k files
        return {"path": path, "status": "error", "hash": digest, "error": repr(exc)[:200]}
    lines = data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)
    effects = [sideeffects.classify(f.get("written_calls", f["calls"])) for f in facts["functions"]]
    entity = entities.file_entity(path, language, digest, lines, facts, _is_utf8(data))
    if _context is not None:
        entity = resolved(entity, path, _context)
    return {
        "path": path,
        "status": "ok",
        "hash": digest,
        "file": entity,
        "functions": entities.function_entities(path, facts, effects),
        "components": entities.component_entities(path, facts),
    }


def _redacted(facts: FileFacts, data: bytes) -> FileFacts:
    """``facts`` with secrets redacted when the source holds any (function hashes kept)."""
    if not (found := privacy.find_secrets(text := data.decode("utf-8", "replace"))):
        return facts
    hashes = [f["hash"] for f in facts["functions"]]
    clean = privacy.redact_known(facts, text, found)  # also a secret cut short in a summary
    for function, digest in zip(clean["functions"], hashes, strict=True):
        function["hash"] = digest
    return clean


def run_batch(jobs: list[Job]) -> list[Parsed]:
    return [run(job) for job in jobs]


def _is_utf8(data: bytes) -> bool:
    if data.isascii():
        return True
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True
