"""The detector's breadth: the provider shapes of gitleaks and detect-secrets, the issue's
misses, entropy-checked assignments, and the code they must leave alone."""

from __future__ import annotations

import json
import re
import string
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from planning_memory.core import secret_rules, secret_table
from planning_memory.core.privacy import find_secrets, redact

FIXTURES = Path(__file__).parents[1] / "fixtures" / "secrets"


def _kinds() -> list[tuple[str, str, str]]:
    rows = []
    for line in (FIXTURES / "kinds.txt").read_text("utf-8").splitlines():
        if line and not line.startswith("#"):
            kind, secret, sentence = line.split("\t")
            rows.append((kind, secret, json.loads(sentence) if sentence[0] == '"' else sentence))
    return rows


KINDS = _kinds()


# The kinds that used to reach disk raw, by their label in kinds.txt.
ADDED_KINDS = (
    "new_relic_user_key", "sentry_dsn", "braintree", "okta_ssws", "notion_integration",
    "supabase", "netrc",
)  # fmt: skip


def test_corpus_has_many_kinds() -> None:
    labels = {kind for kind, _, _ in KINDS}
    assert len(labels) >= 75
    assert set(ADDED_KINDS) <= labels


@pytest.mark.parametrize(("kind", "secret", "sentence"), KINDS, ids=[k for k, _, _ in KINDS])
def test_every_kind_is_redacted(kind: str, secret: str, sentence: str) -> None:
    clean = redact(sentence)
    assert secret not in clean
    assert "[REDACTED" in clean
    assert redact(clean) == clean
    assert find_secrets(sentence)


# The shapes the issue found undetected: each of these leaked before.
ISSUE_MISSES = {
    "gitlab pat with - and _": "pushed with glpat-Xq3_vR8-kL2mN9_pQ4sT to the mirror",
    "sendgrid": "mail key 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",
    "azure storage": "DefaultEndpointsProtocol=https;AccountName=prod;AccountKey="
    + "q8Xk2LmN0pRtV4wYz6Ab9CdE1fG3hJ5kL7mN9pQ2rS4tU6vW8xY0zA3bC5dE7fG9h"
    + "J1kL3mN5pQ7rS9tU1vW3xY5zA7bC9d+/A==",
    "azure sas": "https://a.blob.core.windows.net/c/f?sv=2022-11-02&sp=r"
    + "&sig=Zx8%2Bq3LmN0pRtV4wYz6Ab9CdE1fG3hJ5kL7mN9pQ%3D",
    "digitalocean": "doctl auth init -t dop_v1_" + "3f9a" * 16,
    "hugging face": "pulled the model with 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 yesterday",
    "twilio api key": "TWILIO_KEY=SK" + "0a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d",
    "twilio sid": "sid AC" + "9f8e7d6c5b4a39281706f5e4d3c2b1a0",
    "mailgun": 'mg = Mailgun(key="key-' + "3a9f0c7e1b2d4f6a8c0e2b4d6f8a0c1e" + '")',
    "pypi": "upload with pypi-AgEIcHlwaS5vcmc"
    + "Q2xhdWRlIGNvZGUgaXMgbm90IGEgcmVhbCB0b2tlbiBhdCBhbGwgb2s" * 2,
    "discord": "bot.run('MTA4NzY1NDMyMTA5ODc2NTQz.GxYz12.AbCdEfGhIjKlMnOpQrStUvWxYz0123456')",
    "telegram": "TeleBot('5829304710:AAH9xKq2LmN0pRtV4wYz6Ab9CdE1fG3hJ5k')",
    "shopify": "X-Shopify-Access-Token: shpat_" + "a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6",
    "bare base64 key": "storage_key: q8Xk2LmN0pRtV4wYz6Ab9CdE1fG3hJ5kL7mN9pQ2rS4=",
    "bare base64 key, camelCase": "const hmacKey = 'Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MGFiY2RlZg4K9z';",
    "password with its own word": "password=Passw0rd!2024",
    "password with its own word, yaml": "db_password: MyPassword#77",
}


@pytest.mark.parametrize("text", ISSUE_MISSES.values(), ids=ISSUE_MISSES.keys())
def test_issue_misses_are_redacted(text: str) -> None:
    clean = redact(text)
    assert "[REDACTED" in clean, clean
    # nothing of the secret's body is left: its longest token is gone
    longest = max(re.findall(r"[A-Za-z0-9_+/%!#-]{12,}", text), key=len)
    assert longest not in clean, clean


# Each of these reached disk raw: the marker's kind, and every piece that must go.
_DSN_KEY, _DSN_SECRET = "9e7db4e91a82dbef27f1d4a647cf93ad", "6c3b776f162c03fa8dd1d8341efc7c8a"
_BT = "$production$4wsks8vlil3kvy8p$8dc85dbbba117b72b16735d8b9994068"
ADDED_SHAPES = {
    "new relic user key, alone": (
        "new_relic_user_api_key",
        "nerdgraph: NRAK-ULRH0XCL8LN31C6YV5OWMUA97BQ",
        ["NRAK-ULRH0XCL8LN31C6YV5OWMUA97BQ"],
    ),
    "new relic user key, gitleaks' form": (
        "new_relic_user_api_key",
        "NEW_RELIC_API_KEY: NRAK-PHTF67AS727DF306RASEI29PR9F",
        ["NRAK-PHTF67AS727DF306RASEI29PR9F"],
    ),
    "sentry dsn": (
        "sentry_dsn",
        f"dsn: https://{_DSN_KEY}@o450123.ingest.sentry.io/5512345",
        [_DSN_KEY],
    ),
    "sentry dsn, self-hosted": (
        "sentry_dsn",
        f"SENTRY_DSN=https://{_DSN_SECRET}@sentry.acme.internal:9000/7",
        [_DSN_SECRET],
    ),
    "sentry dsn, key and secret": (
        "url_password",  # the secret half is a URL password too, and that kind comes first
        f"sentry_sdk.init('https://{_DSN_KEY}:{_DSN_SECRET}@sentry.io/1')",
        [_DSN_KEY, _DSN_SECRET],
    ),
    "braintree production": (
        "braintree_access_token",
        f"Paste access_token{_BT} into the PayPal SDK settings.",
        [_BT[1:]],
    ),
    "braintree sandbox": (
        "braintree_access_token",
        "BT=access_token$sandbox$UEDI7ary1c8ys7ne$ba02fa6764ac2981ed4904b46ca46b60",
        ["ba02fa6764ac2981ed4904b46ca46b60", "UEDI7ary1c8ys7ne"],
    ),
    "okta ssws header": (
        "okta_access_token",
        "Authorization: SSWS 00q6dlzPK4yRalIFAlfDCMPKE7qq3Gf4t791MeFxcU",
        ["00q6dlzPK4yRalIFAlfDCMPKE7qq3Gf4t791MeFxcU"],
    ),
    "notion secret_": (
        "notion_api_token",
        "The Notion integration secret is secret_N8sAp8FqT5IAFdfhBO7NYuupGtZeJK3DJU9KWtehu2p.",
        ["N8sAp8FqT5IAFdfhBO7NYuupGtZeJK3DJU9KWtehu2p"],
    ),
    "notion ntn_": (
        "notion_api_token",
        'Client(auth="ntn_TLxNn0lWr0wz0LOgNLVXHkKgIAqohTQXFvRklFelXPKFUL")',
        ["TLxNn0lWr0wz0LOgNLVXHkKgIAqohTQXFvRklFelXPKFUL"],
    ),
    "supabase": (
        "supabase_access_token",
        "supabase login --token sbp_c5537912bc98d00264f6e07f783d1ba4b6eda586",
        ["c5537912bc98d00264f6e07f783d1ba4b6eda586"],
    ),
    "netrc, one line": (
        "netrc_password",
        "machine api.heroku.com login dev@acme.io password QpAcFgPZBdvvLD36",
        ["QpAcFgPZBdvvLD36"],
    ),
    "netrc, lines": (
        "netrc_password",
        "machine github.com\n  login octocat\n  password fuYhSdE6XXeDY7\n\nmachine b\n",
        ["fuYhSdE6XXeDY7"],
    ),
    "netrc, account, password before login": (
        "netrc_password",
        'machine ftp.acme.io account ops password "Yk p9!Mo" login deploy',
        ["Yk p9!Mo"],
    ),
    "netrc, escaped line breaks": (
        "netrc_password",
        "printf 'machine ftp.acme.io\\nlogin deploy\\npassword YKP9MYODiGtG\\n' > ~/.netrc",
        ["YKP9MYODiGtG"],
    ),
}


@pytest.mark.parametrize(("kind", "text", "pieces"), ADDED_SHAPES.values(), ids=ADDED_SHAPES.keys())
def test_added_shapes_are_redacted(kind: str, text: str, pieces: list[str]) -> None:
    clean = redact(text)
    assert f"[REDACTED:{kind}]" in clean, clean
    assert [piece for piece in pieces if piece in clean] == [], clean
    assert redact(clean) == clean


def test_a_dsn_keeps_its_host_and_a_netrc_its_names() -> None:
    assert redact(f"https://{_DSN_KEY}@o450123.ingest.sentry.io/5512345") == (
        "https://[REDACTED:sentry_dsn]@o450123.ingest.sentry.io/5512345"
    )
    assert redact("machine h.io\nlogin bob\npassword p4ss-w0rd\n") == (
        "machine h.io\nlogin bob\npassword [REDACTED:netrc_password]\n"
    )
    assert redact('VALUE = "machine h.io login bob password p4ss"') == (
        'VALUE = "machine h.io login bob password [REDACTED:netrc_password]"'
    )


# Prose that names secrets, machines and passwords, and stand-ins in the shapes' places.
PROSE = [
    "Never paste a password or a secret into a commit message.",
    "The machine learning team rotated the staging password yesterday.",
    "Each machine has its own login and password, kept in the team's secret store.",
    "Log in to the machine with your password, then open the secret settings.",
    "Reset the machine admin password before the audit.",
    "On the CI machine login password changes are audited.",
    "A .netrc entry names the machine, the login and the password.",
    "machine <host> login <user> password <secret>",
    "machine example.com login user password secret",
    "machine {hostname} login token password {auth_token}",  # a format string (awscli's)
    "machine ftp.example.com login anonymous password pass",
    'machine ftp.example.com login anonymous password ""',
    "The secret_key setting and the SSWS scheme are documented in the wiki.",
    "Notion tokens start with secret_ or ntn_, Supabase ones with sbp_, New Relic's with NRAK-.",
    "The Sentry DSN lives in the environment: https://<key>@o0.ingest.sentry.io/0",
    "Braintree reads access_token$production$... from the vault.",
    "La contraseña de la máquina de staging es secreta y nunca se guarda en el repositorio.",
    "El secreto compartido y la password del servidor se rotan cada mes.",
    "Guarda el secret en la bóveda; la machine de CI lo lee al arrancar.",
    "Para entrar en la máquina, usa tu login y tu contraseña de siempre.",
]


@pytest.mark.parametrize("text", PROSE)
def test_prose_about_secrets_is_left_alone(text: str) -> None:
    assert redact(text) == text
    assert find_secrets(text) == []


NOT_SECRETS = [
    "password = None",
    "password = os.environ['DB_PASSWORD']",
    "api_key = os.environ.get('API_KEY')",
    'secret = "${SECRET}"',
    "password: <your-password>",
    "token = get_token()",
    "password=user_password",
    "token=refresh_token",
    'ERROR_ID_TOKEN = "ErrorIdToken"',
    "cache_key = f'user:{user_id}'",
    'idempotency_key = "550e8400-e29b-41d4-a716-446655440000"',
    "key: PKCS12PrivateKeyTypes | None",
    'publishable_key = "pk_live_51HxYzAbCdEfGhIjKlMnOpQrStUv012345"',
    "sort_key = lambda item: item.name",
    "primary_key = True",
    "token = -1",
    'Token: "#ddd0c0"',
    "The sig= parameter of a SAS URL is its signature.",
    "Skip the sk_test_... example key in the docs.",
    "commit 3f9a0c7e1b2d4f6a8c0e2b4d6f8a0c1e3f9a0c7e fixed it",
]


@pytest.mark.parametrize("text", NOT_SECRETS)
def test_code_and_prose_are_left_alone(text: str) -> None:
    assert redact(text) == text
    assert find_secrets(text) == []


def test_rule_table_covers_gitleaks_and_detect_secrets() -> None:
    # 222 gitleaks rules less its generic assignment, PEM block and file-name rules, which
    # privacy handles in its own way; detect-secrets' plugins are in EXTRA.
    assert len(secret_rules.GITLEAKS) == 219
    kinds = set(secret_table.KINDS)
    for plugin_kind in (
        "azure_storage_key", "discord_bot_token", "telegram_bot_token", "twilio_api_key",
        "twilio_account_sid", "mailchimp_api_key", "pypi_token", "sendgrid_api_token",
        "square_oauth_secret", "artifactory_token", "cloudant_password", "softlayer_api_key",
    ):  # fmt: skip
        assert plugin_kind in kinds
    assert {kind for kind, _, _ in ADDED_SHAPES.values()} - {"url_password"} <= kinds
    (nrak,) = (rule for rule in secret_rules.GITLEAKS if rule.kind == "new_relic_user_api_key")
    assert nrak.pattern.startswith(r"(?i)\b(NRAK-")  # the key alone, not only after a name
    for rule in secret_table.RULES:
        re.compile(rule.pattern)
        assert all(word == word.lower() for word in rule.keywords), rule.kind
        assert all(len(word) >= 2 and word.isascii() for word in rule.keywords), rule.kind


def test_rules_compile_lazily(monkeypatch: pytest.MonkeyPatch) -> None:
    table = secret_table._Table()
    monkeypatch.setattr(secret_table, "_table", lambda: table)
    assert table.compiled == {}  # building the table compiles no rule
    redact("nothing to see here")
    assert table.compiled == {}  # no keyword, nor any unkeyed rule's leading literal
    redact("export DOPPLER_TOKEN=dp.pt." + "Ab3" * 15)
    assert 0 < len(table.compiled) <= 3  # only the rules of "dp.pt."


def _trie(words: list[str]) -> str:
    """One regex alternation for ``words``, shared prefixes factored out: at a place, the
    longest word that starts there."""
    root: dict[str, dict] = {}  # type: ignore[type-arg]
    for word in words:
        node = root
        for ch in word:
            node = node.setdefault(ch, {})
        node[""] = {}
    return _emit(root)


def _emit(node: dict[str, dict]) -> str:  # type: ignore[type-arg]
    alts = [re.escape(ch) + _emit(sub) for ch, sub in sorted(node.items()) if ch]
    if not alts:
        return ""
    body = alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"
    if "" in node:
        return f"(?:{body})?" if len(alts) == 1 else body + "?"
    return body


_KEYWORD_RX = re.compile(f"[^a-z0-9]({_trie(secret_table._table().words)})")


def _reference_keywords(lowered: str) -> list[tuple[int, str]]:
    """What ``secret_table.literals`` must find, the plain way: a regex for the keywords that
    start a word (the longest at each place; ``finditer`` resumes after each), then each
    keyword that starts with a punctuation mark at every place, found by substring search."""
    found = [(hit.start(1) - 1, hit.group(1)) for hit in _KEYWORD_RX.finditer(" " + lowered)]
    for word in secret_table._table().inner:
        pos = lowered.find(word)
        while pos >= 0:
            found.append((pos, word))
            pos = lowered.find(word, pos + 1)
    return found


def test_the_one_pass_finds_the_keywords_the_regex_finds() -> None:
    texts = [sentence for _, _, sentence in KINDS] + [*ISSUE_MISSES.values(), *NOT_SECRETS]
    source = Path(secret_table.__file__).read_text("utf-8")
    rules = Path(secret_rules.__file__).read_text("utf-8")  # full of the keywords
    texts += [source[i : i + 900] for i in range(0, len(source), 450)]
    texts += [rules[i : i + 900] for i in range(0, len(rules), 450)]
    for text in texts:
        lowered = text.lower()
        assert list(secret_table.literals(lowered).keywords) == _reference_keywords(lowered), text


_WORDS = st.sampled_from(sorted(secret_table._table().words + list(secret_table._table().inner)))
_GLUE = st.sampled_from(["", " ", "-", "_", ".", "x", "9", "\n", "é", "=", "sk", "a3-", "İ"])


@settings(max_examples=400, deadline=None)
@given(st.lists(st.one_of(_WORDS, _GLUE), max_size=20))
def test_the_one_pass_finds_the_keywords_the_regex_finds_in_any_text(parts: list[str]) -> None:
    lowered = "".join(parts)
    assert list(secret_table.literals(lowered).keywords) == _reference_keywords(lowered)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(_WORDS, _GLUE, st.sampled_from(["ac", "sk", "akc", "Ab"])), max_size=12))
def test_the_one_pass_tells_every_literal_it_was_given(parts: list[str]) -> None:
    lowered = "".join(parts).lower()
    also = ("ab", "sk", "lob", "x")  # "x": a single character is left to a substring test
    present = secret_table.literals(lowered, also).present
    for literal in (*secret_table._table().words, *secret_table._table().inner, *also):
        assert secret_table.occurs(literal, lowered, present) == (literal in lowered), literal


def test_keep_lines_keeps_line_numbers() -> None:
    key = "-----BEGIN RSA PRIVATE KEY-----\nAAA\n-----END RSA PRIVATE KEY-----"
    text = f"a\n<private>x\ny\n</private>\nb\n{key}\nc"
    clean = redact(text, keep_lines=True)
    assert clean.count("\n") == text.count("\n")
    assert clean.splitlines()[-1] == "c" and "AAA" not in clean and "x" not in clean.split("\n")[1]
    assert redact(clean, keep_lines=True) == clean


def test_marker_is_never_a_secret() -> None:
    once = redact(
        "curl -s --user 'api:key-3a9f0c7e1b2d4f6a8c0e2b4d6f8a0c1e' https://api.mailgun.net"
    )
    assert redact(once) == once  # a marker in a curl --user value is not redacted again


def test_entropy() -> None:
    assert secret_table.entropy("") == 0.0
    assert secret_table.entropy("aaaa") == 0.0
    assert secret_table.entropy("abcd") == pytest.approx(2.0)


_PIECES = st.sampled_from(
    [
        "glpat-", "SG.", ";AccountKey=", "&sig=", "dop_v1_", "hf_", "SK", "AC", "key-", "-us1",
        "pypi-AgEIcHlwaS5vcmc", "5829304710:AA", "shpat_", "storage_key: ", "hmacKey = '",
        "password=", "Passw0rd!", "curl -u a:", "[REDACTED:gitlab_token]", "[REDACTED]", "AKC",
        "MTA4NzY1NDMyMTA5ODc2NTQz.", "GxYz12.", "adafruit_key=", "\\\"", "'", '"', " ", "\n",
        "0a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d", "q8Xk2LmN0pRtV4wYz6Ab9CdE1fG3hJ5kL7mN9pQ2rS4=",
        "kind: Secret\ndata:\n  x: ", "Private-Lines: 2\n", "curl -H 'Authorization: Bearer ",
        "machine h login u password ", "\\npassword ", "https://", "@o1.ingest.sentry.io/2",
        "9e7db4e91a82dbef27f1d4a647cf93ad:", "access_token$sandbox$", "SSWS 00", "secret_",
        "ntn_", "sbp_", "NRAK-",
    ]
)  # fmt: skip
_FILL = st.text(alphabet=string.ascii_letters + string.digits + "_-/+=.:", max_size=40)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(_PIECES, _FILL), max_size=14))
def test_redact_is_idempotent_on_provider_shapes(parts: list[str]) -> None:
    once = redact("".join(parts))
    assert redact(once) == once
