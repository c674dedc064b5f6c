"""The in-memory bitmaps (``live.Live``) pick exactly the records ``may_reach`` keeps."""

from __future__ import annotations

import random

import pytest

from planning_memory.longterm import similarity
from planning_memory.longterm.live import Live

VOCABULARY = [
    "cache",
    "retry",
    "index",
    "query",
    "schema",
    "token",
    "branch",
    "merge",
    "render",
    "hook",
    "props",
    "fixture",
    "pnpm",
    "zod",
    "`useEffect`",
    "console.log",
    "tsc",
    "api_client",
    "timeout",
    "logger",
    "config",
    "env",
    "database",
    "migration",
    "transaction",
    "commit",
    "rebase",
    "review",
    "test",
    "mock",
    "redis",
    "cookie",
    "header",
    "session",
    "state",
    "style",
]


def _text(rng: random.Random) -> str:
    words = rng.sample(VOCABULARY, rng.randint(1, 12))
    if rng.random() < 0.3:  # a typo or a word form: trigrams shared, words not
        words = [w + rng.choice(["s", "ed", "x", ""]) for w in words]
    return " ".join(words)


def _row(rid: int, scope: str, text: str) -> tuple[int, str, int, int, int, bytes, str]:
    words, code, grams = similarity.profile(text)
    mask = similarity.gram_mask(grams).to_bytes(similarity.MASK_BITS // 8, "little")
    return rid, scope, len(words), len(code), len(grams), mask, " ".join(sorted(words))


def _expected(
    rows: dict[int, tuple[int, str, int, int, int, bytes, str]],
    scope: str,
    mine: similarity.Profile,
    threshold: float,
) -> set[int]:
    """Every record tried with ``may_reach`` (those sharing a word at the ceiling or above)."""
    test = similarity.may_reach(mine, threshold - 1e-9)
    found = set()
    for rid, where, nwords, ncode, ngrams, mask, words in rows.values():
        shared = len(mine[0] & set(words.split()))
        if where != scope or (threshold >= 1 - similarity.TOKEN_WEIGHT and not shared):
            continue
        if test(shared, nwords, ncode, ngrams, int.from_bytes(mask, "little")):
            found.add(rid)
    return found


@pytest.mark.parametrize(("seed", "direct_below"), [(0, 0), (1, 0), (2, 0), (3, 10**6)])
def test_live_reaching_equals_trying_every_record(seed: int, direct_below: int) -> None:
    rng = random.Random(seed)
    texts = [_text(rng) for _ in range(150)]
    rows = {
        rid: _row(rid, rng.choice(["project", "project", "personal"]), text)
        for rid, text in enumerate(texts)
    }
    live = Live()
    live.direct_below = direct_below  # 0: always the bitmaps; a million: never below 0.5
    live.build([rows[rid] for rid in range(100)])
    for rid in range(100, 150):
        _rid, scope, nwords, ncode, ngrams, mask, words = rows[rid]
        live.add(rid, scope, (nwords, ncode, ngrams), mask, words)
    for rid in rng.sample(range(150), 40):  # removed, some put back with a new text
        live.drop(rid)
        del rows[rid]
        if rng.random() < 0.5:
            rows[rid] = _row(rid, "project", _text(rng))
            _rid, scope, nwords, ncode, ngrams, mask, words = rows[rid]
            live.add(rid, scope, (nwords, ncode, ngrams), mask, words)
    tried = 0
    for _ in range(60):
        mine = similarity.profile(rng.choice([_text(rng), rng.choice(texts)]))
        for threshold in (0.0, 0.3, 0.45, 0.5, 0.55, 0.62, 0.8, 1.0):
            for scope in ("project", "personal"):
                want = _expected(rows, scope, mine, threshold)
                got = live.reaching(scope, mine, threshold, threshold - 1e-9)
                assert got == want, (threshold, scope, sorted(mine[0]))
                tried += len(want)
    assert tried > 1000  # the bounds kept many: the test compared real answers


def test_a_record_sharing_only_its_trigrams_is_kept_below_the_ceiling() -> None:
    live = Live()
    live.direct_below = 0
    live.build([_row(1, "project", "bbb"), _row(2, "project", "cache")])
    mine = similarity.profile("bb bbbb")
    assert live.reaching("project", mine, 0.45, 0.45 - 1e-9) == {1}
    assert live.reaching("project", mine, 0.5, 0.5 - 1e-9) == set()  # the catalog's SQL adds it
