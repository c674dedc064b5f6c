"""Tests of planning_memory.core.privacy: private blocks, secret redaction, field limits."""

from __future__ import annotations

import json
import string
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from planning_memory.core import privacy, secret_table
from planning_memory.core.privacy import (
    MAX_FIELD_CHARS,
    PRIVATE_MARKER,
    TRUNCATION_MARKER,
    Finding,
    check_field_length,
    find_secrets,
    redact,
    redact_value,
    secret_key_kind,
    truncate_field,
)
from planning_memory.errors import InputError, LimitError

FIXTURES = Path(__file__).parents[1] / "fixtures" / "secrets"
CANARY = "CANARY-7f3a9c2e-never-store-me"


def _lines(name: str) -> list[str]:
    text = (FIXTURES / name).read_text(encoding="utf-8")
    return [line for line in text.splitlines() if line and not line.startswith("#")]


def _secret_samples() -> list[tuple[str, str, str]]:
    samples = []
    for line in _lines("secrets.txt"):
        kind, secret, sentence = line.split("\t")
        if sentence.startswith('"'):
            sentence = json.loads(sentence)
        samples.append((kind, secret, sentence))
    return samples


SECRETS = _secret_samples()
BENIGN = _lines("benign.txt")
BENIGN_HOLDOUT = _lines("benign_holdout.txt")


def _false_positive_rate(lines: list[str]) -> tuple[float, list[str]]:
    changed = [line for line in lines if redact(line) != line]
    return len(changed) / len(lines), changed


# --- corpora -------------------------------------------------------------------------------


def test_corpora_are_big_enough() -> None:
    assert len(SECRETS) >= 60
    assert len({kind for kind, _, _ in SECRETS}) >= 15
    assert len(BENIGN) >= 200
    for _, secret, sentence in SECRETS:
        assert secret in sentence


@pytest.mark.parametrize(("kind", "secret", "sentence"), SECRETS, ids=[s[0] for s in SECRETS])
def test_every_secret_sample_is_redacted(kind: str, secret: str, sentence: str) -> None:
    out = redact(sentence)
    assert secret not in out
    assert f"[REDACTED:{kind}]" in out


def test_false_positive_rate_on_benign_corpus() -> None:
    rate, changed = _false_positive_rate(BENIGN)
    holdout_rate, holdout_changed = _false_positive_rate(BENIGN_HOLDOUT)
    total = (len(changed) + len(holdout_changed)) / (len(BENIGN) + len(BENIGN_HOLDOUT))
    print(
        f"\nprivacy false positives: tuned corpus {len(changed)}/{len(BENIGN)} ({rate:.1%}), "
        f"held-out {len(holdout_changed)}/{len(BENIGN_HOLDOUT)} ({holdout_rate:.1%}), "
        f"all {total:.1%}"
    )
    for line in changed + holdout_changed:
        print("  changed:", line)
    assert rate < 0.02
    assert total < 0.02


def test_redaction_is_idempotent_on_corpora() -> None:
    for text in [s for _, _, s in SECRETS] + BENIGN + BENIGN_HOLDOUT:
        once = redact(text)
        assert redact(once) == once


def test_whole_corpus_in_one_text() -> None:
    text = "\n".join(sentence for _, _, sentence in SECRETS)
    out = redact(text)
    for _, secret, _ in SECRETS:
        assert secret not in out


# --- <private> ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        f"before <private>{CANARY}</private> after",
        f"<PRIVATE>{CANARY}</Private>",
        f"line one\n<private>\nmulti\n{CANARY}\nline\n</private>\nline two",
        f"unclosed <private> runs to the end {CANARY} and beyond",
        f"<private>a</private> b <private>{CANARY}",
        f"<private><private>inner</private>{CANARY}</private>",
        f'<private reason="personal">{CANARY}</private>',
        f"<private>{CANARY}</private >",
        f"token=<private>{CANARY}</private>",
        f'"password": "<private>{CANARY}</private>"',
        f"https://ana:<private>{CANARY}</private>@example.com",
    ],
)
def test_private_canary_never_survives(text: str) -> None:
    out = redact(text)
    assert CANARY not in out
    assert PRIVATE_MARKER in out
    assert redact(out) == out


def test_private_block_keeps_surrounding_text() -> None:
    assert redact("a <private>x\ny</private> b") == "a [REDACTED] b"
    assert redact("a <private> b") == "a [REDACTED]"
    assert redact("stray </private> tag") == "stray </private> tag"


def test_private_finding_spans_the_block() -> None:
    text = "keep <private>drop</private> keep"
    assert find_secrets(text) == [Finding("private", 5, 28)]


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow])
@given(before=st.text(max_size=40), after=st.text(max_size=40), inner=st.text(max_size=40))
def test_canary_in_private_block_never_survives(before: str, after: str, inner: str) -> None:
    out = redact(f"{before}<private>{inner}{CANARY}{inner}</private>{after}")
    assert CANARY not in out


# --- specific shapes ------------------------------------------------------------------------


def test_url_password_keeps_user_and_host() -> None:
    out = redact("postgres://app:s3cr3t-Pw@db.internal:5432/app")
    assert out == "postgres://app:[REDACTED:url_password]@db.internal:5432/app"


def test_assignment_keeps_key() -> None:
    assert redact('password = "hunter2"') == 'password = "[REDACTED:password]"'
    assert redact("api_key=abc123XYZ789") == "api_key=[REDACTED:secret]"
    assert redact("token: abc.def-123") == "token: [REDACTED:token]"


def test_stripe_publishable_key_is_not_a_secret() -> None:
    key = "pk_live_" + "51Habcdefghijklmnopqrstuvwxyz0123"
    assert redact(f"publishable_key: {key}") == f"publishable_key: {key}"
    assert "sk_test_" not in redact("sk_test_" + "51Habcdefghijklmnopqrstuvwxyz0123")


@pytest.mark.parametrize(
    "text",
    [
        "password == confirm_password",
        "token = get_token(session)",
        "api_key = os.environ['OPENAI_API_KEY']",
        "token: string;",
        "password=${DB_PASSWORD}",
        "password=<your-password>",
        "postgres://user:password@localhost/db",
        "Authorization: Bearer $TOKEN",
        "The bearer of bad news.",
    ],
)
def test_code_and_placeholders_are_left_alone(text: str) -> None:
    assert redact(text) == text


def test_find_secrets_reports_kind_and_offsets() -> None:
    key = "AKIA" + "Z" * 12 + "2345"
    text = f"key {key} and token=q8Zr4Lk2Vm"
    findings = find_secrets(text)
    assert [f.kind for f in findings] == ["aws_access_key_id", "token"]
    assert text[findings[0].start : findings[0].end] == key
    assert text[findings[1].start : findings[1].end] == "q8Zr4Lk2Vm"


def test_overlapping_findings_merge_to_the_specific_kind() -> None:
    token = "ghp_" + "a1B2" * 9
    assert redact(f"GITHUB_TOKEN={token}") == "GITHUB_TOKEN=[REDACTED:github_token]"


# --- redact_value ----------------------------------------------------------------------------


def test_redact_value_walks_json_and_keeps_keys() -> None:
    ghp = "ghp_" + "Q7" * 18
    value = {
        "title": f"uses {ghp}",
        "password": "hunter2",
        "token": "",
        "nested": [{"note": f"<private>{CANARY}</private>"}, 3, None, True],
        f"key {ghp}": "kept key",
        "count": 2,
    }
    out = redact_value(value)
    assert out["title"] == "uses [REDACTED:github_token]"
    assert out["password"] == "[REDACTED:password]"
    assert out["token"] == ""
    assert out["nested"] == [{"note": "[REDACTED]"}, 3, None, True]
    assert out[f"key {ghp}"] == "kept key"
    assert out["count"] == 2
    assert value["password"] == "hunter2"  # the input is not changed


def test_redact_value_on_scalars() -> None:
    assert redact_value("token=abcd1234efgh") == "token=[REDACTED:token]"
    assert redact_value(42) == 42
    assert redact_value(None) is None


@pytest.mark.parametrize(
    ("key", "kind"),
    [
        ("password", "password"),
        ("DB_PASSWORD", "password"),
        ("api_key", "secret"),
        ("clientSecret", "secret"),
        ("refresh_token", "token"),
        ("password_hint", None),
        ("max_tokens", None),
        ("title", None),
        ("primary_key", None),
    ],
)
def test_secret_key_kind(key: str, kind: str | None) -> None:
    assert secret_key_kind(key) == kind


# --- limits ----------------------------------------------------------------------------------


def test_truncate_field() -> None:
    assert truncate_field("short") == "short"
    long = "x" * (MAX_FIELD_CHARS + 10)
    out = truncate_field(long)
    assert len(out) == MAX_FIELD_CHARS
    assert out.endswith(TRUNCATION_MARKER)
    assert truncate_field("abcdefghij", limit=6, marker="~") == "abcde~"
    assert truncate_field("abcdefghij", limit=2, marker="[cut]") == "[c"


def test_check_field_length() -> None:
    check_field_length("body.what", "x" * MAX_FIELD_CHARS)
    with pytest.raises(LimitError) as caught:
        check_field_length("body.what", "x" * (MAX_FIELD_CHARS + 1))
    error = caught.value
    assert isinstance(error, InputError)
    assert error.json_path == "body.what"
    assert str(error).startswith("body.what: text field is 50,001 characters long")
    assert "50,000" in str(error)


# --- properties ------------------------------------------------------------------------------

PIECES = [
    *(s for _, s, _ in SECRETS[::5]),
    *BENIGN[::20],
    "<private>",
    "</private>",
    "token=",
    "password: ",
    'secret="',
    "'",
    '"',
    "=",
    ":",
    " ",
    "\n",
    "AKIA",
    "://",
    "@",
    "Bearer ",
    "[REDACTED]",
    "[REDACTED:token]",
    "api_key",
    "eyJ",
    "sk-",
    "_",
    "-----BEGIN RSA PRIVATE KEY-----",
    "-----END RSA PRIVATE KEY-----",
    "ghp_",
    "a1B2c3D4e5F6g7H8i9J0a1B2c3D4e5F6g7H8",
]


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(st.sampled_from(PIECES), st.text(max_size=8)), max_size=12))
def test_redact_is_idempotent(parts: list[str]) -> None:
    once = redact("".join(parts))
    assert redact(once) == once


@settings(max_examples=300)
@given(st.text(max_size=300))
def test_redact_never_raises(text: str) -> None:
    assert isinstance(redact(text), str)
    assert isinstance(find_secrets(text), list)


@settings(max_examples=300)
@given(st.text(alphabet=string.ascii_letters, max_size=200))
def test_innocent_letters_are_unchanged(text: str) -> None:
    # A letters-only word shaped like an AWS or Google key id is not innocent.
    assume(not text.startswith(("AKIA", "ASIA", "AIza")))
    out = redact(text)
    assert len(out) <= len(text)
    assert out == text


def test_fifty_thousand_characters_are_fast() -> None:
    """A loose guard against a regex gone quadratic; bench/bench_privacy.py has the figures."""
    text = ("\n".join(BENIGN + [s for _, _, s in SECRETS]) * 4)[:MAX_FIELD_CHARS]
    best = min(_time_redact(text) for _ in range(5))
    assert best < 0.05


def _time_redact(text: str) -> float:
    start = time.perf_counter()
    redact(text)
    return time.perf_counter() - start


# --- the prefix pre-check ------------------------------------------------------------------
def _may_hold(text: str) -> bool:
    lowered = privacy._lower(text)
    present = secret_table.literals(lowered, privacy._LITERALS).present
    return privacy._may_hold_secret(text, lowered, present)


def _any_shape(text: str) -> bool:
    lowered = privacy._lower(text)
    return any(rx.search(text) for rx in privacy._CASED_SHAPES) or any(
        rx.search(lowered) for rx in privacy._LOWER_SHAPES
    )


def test_prefix_precheck_agrees_with_the_shapes_on_the_corpora() -> None:
    texts = [s for _k, _s, s in SECRETS] + BENIGN + BENIGN_HOLDOUT
    source = Path(privacy.__file__).read_text(encoding="utf-8")  # code full of the shapes
    texts += [source[i : i + 700] for i in range(0, len(source), 350)]
    for text in texts:
        assert _may_hold(text) == _any_shape(text), text


_FRAGMENTS = st.sampled_from(
    [
        "AKIA", "ASIA", "AKIAIOSFODNN7EXAMPLE", "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
        "gh", "ghp_", "github_pat_", "sk-", "sk-ant-", "xox", "xoxb-", "xapp-",
        "sk_live_", "rk_test_", "whsec_", "AIza", "npm_", "eyJ", "://", "https://hooks.slack.com/",
        "-----BEGIN ", "PRIVATE KEY-----", "<private>", "</PRIVATE>", "secret", "Secret_Key",
        "aws", "bearer ", "Authorization: Basic ", "token", "TOKEN", "pass", "Passwd",
        "contraseña", "key", "API_KEY", " = ", ": ", "=", "'", '"', "\n", ".",
    ]
)  # fmt: skip
_FILLER = st.text(alphabet=string.ascii_letters + string.digits + "_-/+=.@:", max_size=45)


@settings(max_examples=600, deadline=None)
@given(st.lists(st.one_of(_FRAGMENTS, _FILLER), max_size=14))
def test_prefix_precheck_agrees_with_the_shapes(parts: list[str]) -> None:
    text = "".join(parts)
    assert _may_hold(text) == _any_shape(text)


@settings(max_examples=600, deadline=None)
@given(st.lists(st.one_of(_FRAGMENTS, _FILLER), max_size=14))
def test_shapes_skipped_by_the_pass_would_find_nothing(parts: list[str]) -> None:
    text = "".join(parts)
    lowered = privacy._lower(text)
    present = secret_table.literals(lowered, privacy._LITERALS).present
    every = set(privacy._LITERALS)  # as if every prefix occurred: every shape runs
    gated = list(privacy._secret_spans(text, lowered, present))
    assert gated == list(privacy._secret_spans(text, lowered, every))


@pytest.mark.parametrize("text", ["zod \udcff", "\udcff", "caf\udce9 password"])
def test_a_lone_surrogate_is_searched_like_any_character(text: str) -> None:
    """An undecodable command-line argument or file name reaches the check as a lone
    surrogate (Python's surrogateescape): nothing to redact, and no error."""
    assert privacy.redact(text) == text


def test_a_secret_beside_a_lone_surrogate_is_still_found() -> None:
    token = "ghp_" + "a1B2" * 9
    found = privacy.redact(f"token \udcff{token}\udcff here")
    assert token not in found and "\udcff" in found and "[REDACTED:" in found
