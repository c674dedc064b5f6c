"""What ``pmem install`` created on this machine, so that ``pmem uninstall`` takes back that.

Per file (by its absolute path): whether the install created the file, the keys it added (a
JSON object or array such as ``mcpServers`` that was not there), the folders it made for the
file, and the text of a file that held nothing. Uninstalling takes back only these: an empty
``mcpServers`` or an empty ``.cursor/`` the user had stays. The ledger is
``$XDG_STATE_HOME/planning-memory/installs.json``, this machine's own, like the home folder's
files it also speaks of. A file it has no entry for (installed in another clone or by an
older pmem) is taken back as before: what is left empty goes.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from planning_memory.memory import Memory, remove_outside, write_outside

NAME = "installs.json"


@dataclass(frozen=True)
class Made:
    """What installing made in one file."""

    file: bool = False  # the file itself
    keys: tuple[str, ...] = ()  # JSON keys added, dotted (``hooks.Stop``)
    folders: tuple[str, ...] = ()  # folders made for the file, the outermost first
    blank: str | None = None  # the text of a file that held nothing (only white space)

    def added(self, key: str) -> bool:
        """Whether ``key`` (or an object it is in) was added by the install."""
        return any(key == k or key.startswith(k + ".") for k in self.keys)

    def merged(self, later: Made) -> Made:
        """This entry and a later install's into the same file."""
        return Made(
            self.file or later.file,
            tuple(dict.fromkeys([*self.keys, *later.keys])),
            tuple(dict.fromkeys([*self.folders, *later.folders])),
            self.blank if self.blank is not None else later.blank,
        )

    @classmethod
    def of(cls, data: Any) -> Made | None:
        if not isinstance(data, dict):
            return None
        return cls(
            bool(data.get("file")),
            tuple(str(k) for k in data.get("keys") or ()),
            tuple(str(f) for f in data.get("folders") or ()),
            data["blank"] if isinstance(data.get("blank"), str) else None,
        )


def where() -> Path:
    """The ledger file, beside the personal store (``$XDG_STATE_HOME/planning-memory/``)."""
    return Memory(Path.home(), personal=True).layout.planning.parent / NAME


def _key(path: Path) -> str:
    return str(path.absolute())


class Ledger:
    """The entries, read from and written back to the ledger file."""

    def __init__(self, path: Path, entries: dict[str, Made]) -> None:
        self.path = path
        self.entries = entries

    @classmethod
    def load(cls, path: Path | None = None) -> Ledger:
        """The ledger (empty when its file is missing or unreadable: a lost ledger only
        makes uninstall fall back to taking what is left empty)."""
        path = path or where()
        try:
            data = json.loads(path.read_text("utf-8"))
        except (OSError, ValueError):
            data = {}
        found = {k: Made.of(v) for k, v in data.items()} if isinstance(data, dict) else {}
        return cls(path, {k: v for k, v in found.items() if v is not None})

    def made(self) -> dict[Path, Made]:
        return {Path(k): v for k, v in self.entries.items()}

    def get(self, path: Path) -> Made | None:
        return self.entries.get(_key(path))

    def note(self, path: Path, made: Made) -> None:
        before = self.get(path)
        self.entries[_key(path)] = before.merged(made) if before else made

    def forget(self, path: Path) -> None:
        self.entries.pop(_key(path), None)

    def save(self) -> None:
        """Write the entries back (the file goes when none is left)."""
        if not self.entries:
            remove_outside(self.path)
            return
        data = {k: _plain(v) for k, v in sorted(self.entries.items())}
        text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
        write_outside(self.path, text.encode("utf-8"))


def _plain(made: Made) -> dict[str, Any]:
    return {k: v for k, v in asdict(made).items() if v not in (False, (), None)}
