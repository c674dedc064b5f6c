"""Run the package as pip installs it: with its bytecode written.

`pip install` compiles every module, so an installed `pmem` never compiles one at start-up. A
shell with ``PYTHONDONTWRITEBYTECODE`` set (or a checkout whose sources just changed) would make
every new process compile the modules it imports, and a benchmark would time the compiler.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import planning_memory


def as_installed() -> None:
    """Write the package's bytecode now and let the processes this one starts reuse it."""
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    package = Path(planning_memory.__file__).resolve().parent
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(package)], check=True)
