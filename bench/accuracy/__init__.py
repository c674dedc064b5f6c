"""The accuracy harness' parts (bench/bench_accuracy.py runs them).

``corpora`` pins and fetches the code and the tools; ``codemap`` scans a corpus and reads its
code map; ``definitions``, ``components``, ``imports`` and ``calls`` each score one kind of
fact against an independent tool (or hand labels); ``timing`` measures the yardsticks;
``report`` renders the tables and the document.
"""
