"""Benchmark of planning_memory.core.privacy: redact() on 50,000-character texts.

Run: .venv/bin/python bench/bench_privacy.py
Prints, for each kind of text, the best and the median time of ``redact`` (CPU time of this
process, so other load on the machine inflates the figures less).
"""

from __future__ import annotations

import json
import statistics
import time
from pathlib import Path

from planning_memory.core.privacy import MAX_FIELD_CHARS, find_secrets, redact

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "secrets"


def _lines(name: str) -> list[str]:
    text = (FIXTURES / name).read_text(encoding="utf-8")
    return [line for line in text.splitlines() if line and not line.startswith("#")]


def _secret_sentences() -> list[str]:
    out = []
    for line in _lines("secrets.txt"):
        sentence = line.split("\t")[2]
        out.append(json.loads(sentence) if sentence.startswith('"') else sentence)
    return out


def _fill(lines: list[str]) -> str:
    text = "\n".join(lines)
    return (text * (MAX_FIELD_CHARS // len(text) + 1))[:MAX_FIELD_CHARS]


def _cases() -> dict[str, str]:
    benign = _lines("benign.txt") + _lines("benign_holdout.txt")
    secrets = _secret_sentences()
    prose = "The quick brown fox jumps over the lazy dog while the build runs. "
    return {
        "prose (no secret words)": _fill([prose]),
        "benign code and config": _fill(benign),
        "one secret per 10 lines": _fill([*benign[:90], *secrets[:10]]),
        "secret-dense (every line)": _fill(secrets),
        'adversarial: token=" x7000': ('token="' * 8000)[:MAX_FIELD_CHARS],
    }


def _time(text: str, rounds: int) -> tuple[float, float]:
    times = []
    for _ in range(rounds):
        start = time.process_time()
        redact(text)
        times.append(time.process_time() - start)
    return min(times), statistics.median(times)


def main() -> None:
    print(f"redact() on {MAX_FIELD_CHARS:,}-character texts (CPU ms: best / median of 40)")
    for name, text in _cases().items():
        redact(text)
        best, median = _time(text, 40)
        found = len(find_secrets(text))
        print(f"  {name:<30} {best * 1000:6.2f} / {median * 1000:6.2f} ms   findings: {found}")


if __name__ == "__main__":
    main()
