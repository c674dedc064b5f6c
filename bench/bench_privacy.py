"""Benchmark of planning_memory.core.privacy: redact() on 50,000-character texts, and the
detector's false positives on real code.

Run: .venv/bin/python bench/bench_privacy.py [--fp-only] [--show N]
Prints, for each kind of text, the best and the median time of ``redact`` (CPU time of this
process, so other load on the machine inflates the figures less); then ``find_secrets`` over
every source file of the Python standard library, of the packages installed beside this
checkout (its venv's site-packages) and of the repositories cached under
``bench/.cache/corpora``: lines, findings, findings per 10,000 lines, and (``--show``) the
first findings of each kind, so each can be judged. Real public code holds no live secret, so
every finding counts as a false positive (a test's sample password included).
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import statistics
import sys
import sysconfig
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from planning_memory.core.privacy import MAX_FIELD_CHARS, find_secrets, redact
from planning_memory.search.repo_documents import LANGUAGES

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "secrets"
CORPORA = Path(__file__).resolve().parent / ".cache" / "corpora"
SKIP_DIRS = {".git", "node_modules", "__pycache__", "site-packages", "vendor", "target"}


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


def _source_files(root: Path, python_only: bool) -> list[Path]:
    found = []
    for folder, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS)
        for name in sorted(names):
            ext = os.path.splitext(name)[1].lower()
            if (ext == ".py") if python_only else ext in LANGUAGES:
                found.append(Path(folder) / name)
    return found


def _scan(files: list[Path], show: int) -> tuple[int, collections.Counter[str], float]:
    lines = 0
    kinds: collections.Counter[str] = collections.Counter()
    start = time.process_time()
    for path in files:
        try:
            text = path.read_text("utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        lines += text.count("\n") + 1
        for hit in find_secrets(text):
            kinds[hit.kind] += 1
            if kinds[hit.kind] <= show:
                line = text.count("\n", 0, hit.start) + 1
                shown = text[max(0, hit.start - 30) : hit.end + 5]
                print(f"      {hit.kind}: {path}:{line}: {shown!r}"[:200])
    return lines, kinds, time.process_time() - start


def false_positives(show: int) -> None:
    print("find_secrets() on real code (every finding counted as a false positive)")
    roots = [
        ("python stdlib", Path(sysconfig.get_paths()["stdlib"]), True),
        ("site-packages", Path(sysconfig.get_paths()["purelib"]), False),
    ]
    if CORPORA.is_dir():
        roots += [(p.name, p, False) for p in sorted(CORPORA.iterdir()) if p.is_dir()]
    total_lines, total = 0, 0
    for name, root, python_only in roots:
        lines, kinds, cpu = _scan(_source_files(root, python_only), show)
        count = sum(kinds.values())
        total_lines, total = total_lines + lines, total + count
        rate = count / max(lines, 1) * 10_000
        detail = ", ".join(f"{k} {n}" for k, n in kinds.most_common())
        print(
            f"  {name:<20} {lines:>9,} lines {count:>4} findings {rate:5.2f} per 10k lines"
            f"  {cpu:5.1f} s  {detail}"
        )
    rate = total / max(total_lines, 1) * 10_000
    print(f"  {'all':<20} {total_lines:>9,} lines {total:>4} findings {rate:5.2f} per 10k lines")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--fp-only", action="store_true", help="only the false-positive run")
    parser.add_argument("--show", type=int, default=0, help="print N findings of each kind")
    args = parser.parse_args()
    if not args.fp_only:
        print(f"redact() on {MAX_FIELD_CHARS:,}-character texts (CPU ms: best / median of 40)")
        for name, text in _cases().items():
            redact(text)
            best, median = _time(text, 40)
            found = len(find_secrets(text))
            print(f"  {name:<30} {best * 1000:6.2f} / {median * 1000:6.2f} ms   findings: {found}")
    false_positives(args.show)


if __name__ == "__main__":
    main()
