"""Regenerate the gitleaks part of ``planning_memory/core/secret_rules.py`` from gitleaks' config.

Run: .venv/bin/python bench/gen_secret_rules.py PATH/TO/gitleaks.toml
(``config/gitleaks.toml`` of github.com/gitleaks/gitleaks, at the tag named in
``docs/privacy.md``). Rewrites the block between the ``# BEGIN gitleaks`` and ``# END gitleaks``
lines of ``secret_rules.py``: a line naming the config's SHA-256, then one row per rule, its
regex translated from Go's RE2 dialect to Python's (``(?i)`` in mid-pattern becomes a scoped
``(?i:...)``, ``\\z`` becomes ``\\Z``, POSIX classes are spelled out). The rules the detector
covers in its own way are left out (``SKIPPED``); a few are loosened (``STANDALONE``). Checks
that every row compiles. The same config gives the same file, byte for byte.
"""

from __future__ import annotations

import hashlib
import re
import sys
import tomllib
from pathlib import Path

TARGET = Path(__file__).resolve().parent.parent / "planning_memory" / "core" / "secret_rules.py"
# generic-api-key: the detector's own entropy-checked assignment rule; pkcs12-file: a file name
# rule (no content); private-key: the detector's own PEM block rule (spans lines).
SKIPPED = frozenset({"generic-api-key", "pkcs12-file", "private-key"})
# A rule's regex that needs a word its keyword does not give: the keyword's line must hold it.
# (Lob's keywords are "test_" and "live_", which start many words of test code.)
CONTEXT = {"kubernetes-secret-yaml": "secret", "lob-api-key": "lob", "lob-pub-api-key": "lob"}
# Rules whose match spans lines: how many lines around a keyword's line to search.
WINDOWS = {"kubernetes-secret-yaml": (12, 12), "curl-auth-header": (0, 5), "curl-auth-user": (0, 5)}
# Keywords that occur inside a token rather than at its start (the detector looks for keywords
# at word starts): replaced by one that starts the match.
KEYWORDS = {
    "openai-api-key": ("sk-",),
    "kubernetes-secret-yaml": ("kind:",),  # with "secret" on its line (CONTEXT)
    "twilio-api-key": (),  # "sk" starts too many words; the regex starts with a literal
    # any quoted password: the detector's own password assignment rule covers it (and more)
    "hashicorp-tf-password": ("administrator_login_password",),
}
# Rules whose secret starts with its provider's own prefix, which gitleaks matches only after
# the provider's name (``NEW_RELIC_API_KEY=NRAK-...``): here the secret alone is enough, in the
# form gitleaks gives its other prefixed tokens (``\b(NRAK-...)`` and the usual ending).
STANDALONE = frozenset({"new-relic-user-api-key"})
# where the secret's group starts in gitleaks' "semi-generic" regex (name, operator, value)
_SEMI_GENERIC_VALUE = "[\\x60'\"\\s=]{0,5}("


def _scope_inline_flags(pattern: str) -> str:
    """``a(?i)b`` -> ``a(?i:b)``: Python allows global flags only at the start."""
    while True:
        pos = pattern.find("(?i)", 1)
        if pos < 0:
            return pattern
        end = _group_end(pattern, pos + 4)
        pattern = pattern[:pos] + "(?i:" + pattern[pos + 4 : end] + ")" + pattern[end:]


def _group_end(pattern: str, pos: int) -> int:
    """The index of the ``)`` closing the group that holds ``pos`` (or the pattern's end)."""
    depth = 0
    in_class = False
    while pos < len(pattern):
        ch = pattern[pos]
        if ch == "\\":
            pos += 2
            continue
        if in_class:
            in_class = ch != "]"
        elif ch == "[":
            in_class = True
            if pattern[pos + 1 : pos + 2] == "]":
                pos += 1
        elif ch == "(":
            depth += 1
        elif ch == ")":
            if depth == 0:
                return pos
            depth -= 1
        pos += 1
    return pos


# gitleaks ends a token at a quote, a space, ";" or an escaped line break; a redaction ends it
# at any character that cannot be part of it (``]`` of ``[MEMORIZE: ...]``, ``)``, ``,``).
SUFFIX = "(?:[\\x60'\"\\s;]|\\\\[nr]|$)"
WIDE_SUFFIX = "(?:[^\\w+/=-]|$)"


def standalone(pattern: str) -> str:
    """gitleaks' ``NAME ... = (SECRET)END`` regex as ``\\b(SECRET)END``, flags kept."""
    start = pattern.index(_SEMI_GENERIC_VALUE) + len(_SEMI_GENERIC_VALUE)
    end = _group_end(pattern, start)
    flags = "(?i)" if pattern.startswith("(?i)") else ""
    return f"{flags}\\b({pattern[start:end]}){pattern[end + 1 :]}"


def translate(pattern: str) -> str:
    pattern = pattern.replace("[[:alnum:]]", "[A-Za-z0-9]").replace("\\z", "\\Z")
    return _scope_inline_flags(pattern.replace(SUFFIX, WIDE_SUFFIX))


def rows(config: dict[str, object]) -> list[str]:
    out = []
    for rule in config["rules"]:  # type: ignore[attr-defined]
        if rule["id"] in SKIPPED:
            continue
        regex = standalone(rule["regex"]) if rule["id"] in STANDALONE else rule["regex"]
        pattern = translate(regex)
        re.compile(pattern)
        keywords = KEYWORDS.get(rule["id"], tuple(rule.get("keywords", ())))
        allow = tuple(
            translate(rx) for a in rule.get("allowlists", ()) for rx in a.get("regexes", ())
        )
        for rx in allow:
            re.compile(rx)
        kind = rule["id"].replace("-", "_")
        before, after = WINDOWS.get(rule["id"], (0, 0))
        fields = [
            repr(kind),
            repr(tuple(keywords)),
            _raw(pattern),
            str(rule.get("secretGroup", -1)),
            str(float(rule.get("entropy", 0.0))),
            f"({before}, {after})",
            repr(allow) if allow else "()",
        ]
        if rule["id"] in CONTEXT:
            fields.append(repr(CONTEXT[rule["id"]]))
        out.append("    Rule(" + ", ".join(fields) + "),")
    return out


def _raw(pattern: str) -> str:
    for quote in ('r"', "r'", 'r"""', "r'''"):
        q = quote[1:]
        if q not in pattern and not pattern.endswith("\\"):
            return f"{quote}{pattern}{q}"
    return repr(pattern)


def main(path: str) -> None:
    source = Path(path).read_bytes()
    config = tomllib.loads(source.decode("utf-8"))
    text = TARGET.read_text("utf-8")
    head, rest = text.split("# BEGIN gitleaks\n", 1)
    _old, tail = rest.split("# END gitleaks\n", 1)
    found = rows(config)
    origin = f"# from gitleaks' config/gitleaks.toml, SHA-256 {hashlib.sha256(source).hexdigest()}"
    block = "\n".join([origin, *found])
    TARGET.write_text(f"{head}# BEGIN gitleaks\n{block}\n# END gitleaks\n{tail}", "utf-8")
    print(f"{len(found)} gitleaks rules written to {TARGET}")


if __name__ == "__main__":
    main(sys.argv[1])
