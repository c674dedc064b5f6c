# ruff: noqa: E501
"""The table of provider secret shapes that ``privacy`` looks for (pure data: nothing compiles here).

Each ``Rule`` names a kind, the keywords that must start a word of the lower-cased text for the
rule to be tried (a rule without keywords runs on the whole text, or near its ``anchor``), a Python regex (run on the original text, on the lines around each keyword),
the group that holds the secret (-1: the first group that matched, else the whole match), the
Shannon entropy the secret must reach, how many lines around the keyword's line to search, and
regexes that clear a secret (a documented example key).

``GITLEAKS`` is generated from gitleaks' default config (``bench/gen_secret_rules.py``; gitleaks
v8.30.1, 219 of its 222 rules: the generic assignment, private key blocks and a file name rule are
``privacy``'s own). ``EXTRA`` is kept by hand: the shapes of detect-secrets' plugins that gitleaks
lacks or matches only next to a provider's name, a few that gitleaks' regexes cut short, and the
shapes neither tool has (Sentry DSNs, Braintree and Supabase tokens, Okta's ``SSWS`` header,
Notion's ``secret_`` tokens, ``.netrc`` passwords).
"""

from __future__ import annotations

from typing import NamedTuple


class Rule(NamedTuple):
    kind: str
    keywords: tuple[str, ...]
    pattern: str
    group: int = -1
    entropy: float = 0.0
    window: tuple[int, int] = (0, 0)  # lines before and after the keyword's line
    allow: tuple[str, ...] = ()
    context: str = ""  # lower-case text the keyword's line must also hold
    anchor: str = ""  # for a rule without keywords: a regex (starting with a literal) whose
    # matches stand for keywords, so the rule's own regex runs near them only


# gitleaks' global allowlist: a secret that matches one of these is a stand-in, not a secret.
# (Its stopwords are left out: a redaction may cover a sample key, never leave a real one.)
ALLOW = (
    r"^(?i:true|false|null)$",
    r"^(?i:a+|b+|c+|d+|e+|f+|g+|h+|i+|j+|k+|l+|m+|n+|o+|p+|q+|r+|s+|t+|u+|v+|w+|x+|y+|z+|\*+|\.+)$",
    r"^\$(?:\d+|\{\d+\})$",
    r"^\$(?:[A-Z_]+|[a-z_]+)$",
    r"^\$\{(?:[A-Z_]+|[a-z_]+)\}$",
    r"^\{\{[ \t]*[\w ().|]+[ \t]*\}\}$",
    r"^%(?:[A-Z_]+|[a-z_]+)%$",
    r"^\{\d{0,2}\}$",
    r"^@(?:[A-Z_]+|[a-z_]+)@$",
)

_END = r"(?:[\x60'\"\s;,)\]}]|\\[nr]|$)"

# .netrc: ``machine HOST [account A] [port P] login USER ... password SECRET`` on one line or
# several (a line break may be escaped: ``\n`` in a JSON string), or ``password`` before
# ``login``. ``machine`` and ``login`` are both required: prose ("log in to the machine with
# your password") holds no such sequence. A bare password neither starts nor ends with a quote.
_GAP = r"(?:[ \t\r\n]|\\[nrt])+"
_WORD = r"(?:[^\s\\]|\\(?![nrt]))+"
_PAIRS = rf"(?:{_GAP}(?:account|port){_GAP}{_WORD})*"
_NETRC_SECRET = (
    r"""("[^"\n]+"|(?!["'\x60])(?:[^\s\\"'\x60]|\\(?![nrt"'])|["'\x60](?![\s\\,;)\]}]|$))+)"""
)
_NETRC = (
    rf"\bmachine{_GAP}{_WORD}{_PAIRS}{_GAP}(?:"
    rf"login{_GAP}{_WORD}{_PAIRS}{_GAP}password{_GAP}{_NETRC_SECRET}"
    rf"|password{_GAP}{_NETRC_SECRET}{_PAIRS}{_GAP}login{_GAP}{_WORD})"
)
# a password that is a stand-in: a template or a mask, or a word for one (as ``privacy`` reads
# ``password = "pass"``)
_NETRC_STAND_INS = (
    r"^[\"']?(?:<[^<>]*>|\{[^{}]*\}|\$\{?\w+\}?|%\w+%|\*+|x{3,}|\.{3}|…)[\"']?$",
    r"^[\"']?(?i:pass|password|passwd|pwd|secret|token|changeme|example|dummy|fake|placeholder|redacted|none|null)[\"']?$",
)

# fmt: off
EXTRA: tuple[Rule, ...] = (
    # detect-secrets plugins
    Rule("azure_storage_key", ("accountkey=",), r"(?i:AccountKey)=([A-Za-z0-9+/]{86,88}={0,2})"),
    Rule("azure_storage_key", ("sharedaccesskey=",), r"(?i:SharedAccessKey)=([A-Za-z0-9+/]{40,}={0,2})"),
    Rule("azure_sas_token", ("sig=",), r"[?&;]sig=((?:[A-Za-z0-9+/]|%2[BbFf]){30,}(?:=|%3[Dd]){0,2})", entropy=3.0),
    Rule("sendgrid_api_token", ("sg.",), r"\bSG\.[\w-]{16,32}\.[\w-]{16,64}"),
    Rule("digitalocean_pat", ("dop_v1_", "doo_v1_", "dor_v1_"), r"\bdo[opr]_v1_[a-f0-9]{64}"),
    Rule("gitlab_token", ("glpat-", "gldt-", "glft-", "glsoat-", "glrt-", "glcbt-", "glimt-", "glptt-", "glagent-", "gloas-", "gr1348941"), r"\b(?:glpat|gldt|glft|glsoat|glrt|glcbt|glimt|glptt|glagent|gloas)-[\w-]{20,}|\bGR1348941[\w-]{20,}"),
    Rule("huggingface_token", ("hf_",), r"\bhf_[A-Za-z0-9]{30,40}\b", entropy=3.0),
    Rule("pypi_token", ("pypi-ag",), r"\bpypi-AgE(?:IcHlwaS5vcmc|NdGVzdC5weXBpLm9yZw)[\w-]{50,}"),
    Rule("twilio_account_sid", (), r"AC[a-z0-9]{32}\b", entropy=3.0),
    Rule("twilio_api_key", (), r"SK[0-9a-fA-F]{32}\b", entropy=3.0),
    Rule("mailgun_api_key", ("key-", "pubkey-"), r"\b(?:pub)?key-[a-f0-9]{32}\b"),
    Rule("mailchimp_api_key", ("-us",), r"\b[0-9a-f]{32}-us[0-9]{1,2}\b"),
    Rule("telegram_bot_token", (":aa",), r"\b[0-9]{8,10}:AA[\w-]{33}(?![\w-])"),
    Rule("discord_bot_token", (), r"[MNO][\w-]{23,25}\.[\w-]{6}\.[\w-]{27,38}(?![\w-])", entropy=3.5, anchor=r"\.[\w-]{6}\.[\w-]{27}"),
    Rule("discord_webhook", ("discord",), r"https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/[0-9]+/([\w-]{60,})"),
    Rule("artifactory_token", (), r"AKC(?=[a-zA-Z]*[0-9])[a-zA-Z0-9]{10,}(?!\w)", entropy=3.0),
    Rule("artifactory_password", (), r"AP[0-9A-F](?=[a-zA-Z]*[0-9])[a-zA-Z0-9]{8,}(?=[\s\"']|$)", entropy=3.0),
    Rule("square_oauth_secret", ("sq0csp-",), r"\bsq0csp-[0-9A-Za-z_-]{43}"),
    Rule("aws_secret_access_key", ("aws",), r"(?i:aws).{0,20}?(?i:key|pwd|pw|password|pass|token).{0,20}?['\"]([0-9a-zA-Z/+]{40})['\"]"),
    Rule("cloudant_password", ("cloudant",), r"https?://[\w-]+:([0-9a-f]{64}|[a-z]{24})@[\w-]+\.cloudant\.com"),
    Rule("softlayer_api_key", ("api.softlayer.com",), r"https?://api\.softlayer\.com/soap/v3(?:\.1)?/([a-z0-9]{64})"),
    Rule("putty_private_key", ("private-lines:",), r"Private-Lines: *[0-9]+\r?\n((?:[A-Za-z0-9+/=]+\r?\n?)+)", window=(0, 80)),
    Rule("ssh2_private_key", ("---- begin ssh2",), r"---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----[\s\S]*?(?:---- END SSH2 ENCRYPTED PRIVATE KEY ----|\Z)", window=(0, 80)),
    # shapes every provider-specific regex misses
    Rule("curl_auth_user", ("curl",), r"\bcurl\b.*?\s(?:-u|--user)[= ]['\"]?[^\s:'\"]+:([^\s'\"@]{3,})", entropy=2.0, allow=(r"^\$", r"^(?:change(?:it|me)|pass(?:word)?|pwd|test|token|\*+|x+)$")),
    Rule("shopify_token", ("shpat_", "shpca_", "shppa_", "shpss_"), r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}"),
    # shapes gitleaks lacks (its Okta rule wants "okta" before the token, its Notion rule only
    # the ``ntn_`` tokens that start with 11 digits)
    Rule("sentry_dsn", ("sentry",), r"https?://([0-9a-f]{32}(?::[0-9a-f]{32})?)@(?:[\w-]+\.)*sentry(?:\.[\w-]+)+(?::[0-9]+)?/", entropy=3.0),
    Rule("braintree_access_token", ("access_token$production$", "access_token$sandbox$"), r"\baccess_token\$(?:production|sandbox)\$[0-9a-zA-Z]{16}\$[0-9a-f]{32}"),
    Rule("okta_access_token", ("ssws",), r"\b(?i:SSWS)[ \t]+(00[\w-]{40})(?![\w-])", entropy=4.0),
    Rule("notion_api_token", ("secret_", "ntn_"), r"\b(?:secret_[A-Za-z0-9]{43}|ntn_[A-Za-z0-9]{46})\b", entropy=4.0),
    Rule("supabase_access_token", ("sbp_",), r"\bsbp_[0-9a-f]{40}\b", entropy=3.0),
    Rule("netrc_password", ("machine",), _NETRC, window=(0, 5), allow=_NETRC_STAND_INS),
)

GITLEAKS: tuple[Rule, ...] = (
# BEGIN gitleaks
# from gitleaks' config/gitleaks.toml, SHA-256 e163e53b9e7e8a8511e77271e2b323ed057759542a6d988258afe3a1fa329caf
    Rule('1password_secret_key', ('a3-',), r"\bA3-[A-Z0-9]{6}-(?:(?:[A-Z0-9]{11})|(?:[A-Z0-9]{6}-[A-Z0-9]{5}))-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}\b", -1, 3.8, (0, 0), ()),
    Rule('1password_service_account_token', ('ops_',), r"ops_eyJ[a-zA-Z0-9+/]{250,}={0,3}", -1, 4.0, (0, 0), ()),
    Rule('adafruit_api_key', ('adafruit',), r"""(?i)[\w.-]{0,50}?(?:adafruit)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}([a-z0-9_-]{32})(?:[^\w+/=-]|$)""", -1, 0.0, (0, 0), ()),
    Rule('adobe_client_id', ('adobe',), r"""(?i)[\w.-]{0,50}?(?:adobe)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}([a-f0-9]{32})(?:[^\w+/=-]|$)""", -1, 2.0, (0, 0), ()),
    Rule('adobe_client_secret', ('p8e-',), r"\b(p8e-(?i:[a-z0-9]{32}))(?:[^\w+/=-]|$)", -1, 2.0, (0, 0), ()),
    Rule('age_secret_key', ('age-secret-key-1',), r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}", -1, 0.0, (0, 0), ()),
    Rule('airtable_api_key', ('airtable',), r"""(?i)[\w.-]{0,50}?(?:airtable)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}([a-z0-9]{17})(?:[^\w+/=-]|$)""", -1, 0.0, (0, 0), ()),
    Rule('airtable_personnal_access_token', ('airtable',), r"\b(pat[A-Za-z0-9]{14}\.[a-f0-9]{64})\b", -1, 0.0, (0, 0), ()),
    Rule('algolia_api_key', ('algolia',), r"""(?i)[\w.-]{0,50}?(?:algolia)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}([a-z0-9]{32})(?:[^\w+/=-]|$)""", -1, 0.0, (0, 0), ()),
    Rule('alibaba_access_key_id', ('ltai',), r"\b(LTAI(?i:[a-z0-9]{20}))(?:[^\w+/=-]|$)", -1, 2.0, (0, 0), ()),
    Rule('alibaba_secret_key', ('alibaba',), r"""(?i)[\w.-]{0,50}?(?:alibaba)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}([a-z0-9]{30})(?:[^\w+/=-]|$)""", -1, 2.0, (0, 0), ()),
    Rule('anthropic_admin_api_key', ('sk-ant-admin01',), r"\b(sk-ant-admin01-[a-zA-Z0-9_\-]{93}AA)(?:[^\w+/=-]|$)", -1, 0.0, (0, 0), ()),
    Rule('anthropic_api_key', ('sk-ant-api03',), r"\b(sk-ant-api03-[a-zA-Z0-9_\-]{93}AA)(?:[^\w+/=-]|$)", -1, 0.0, (0, 0), ()),
    Rule('artifactory_api_key', ('akcp',), r"\bAKCp[A-Za-z0-9]{69}\b", -1, 4.5, (0, 0), ()),
    Rule('artifactory_reference_token', ('cmvmd',), r"\bcmVmd[A-Za-z0-9]{59}\b", -1, 4.5, (0, 0), ()),
    Rule('asana_client_id', ('asana',), r"""(?i)[\w.-]{0,50}?(?:asana)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}([0-9]{16})(?:[^\w+/=-]|$)""", -1, 0.0, (0, 0), ()),
    Rule('asana_client_secret', ('asana',), r"""(?i)[\w.-]{0,50}?(?:asana)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}([a-z0-9]{32})(?:[^\w+/=-]|$)""", -1, 0.0, (0, 0), ()),
    Rule('atlassian_api_token', ('atlassian', 'confluence', 'jira', 'atatt3'), r"""(?i)[\w.-]{0,50}?(?:(?-i:ATLASSIAN|[Aa]tlassian)|(?-i:CONFLUENCE|[Cc]onfluence)|(?-i:JIRA|[Jj]ira))(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}([a-z0-9]{20}[a-f0-9]{4})(?:[^\w+/=-]|$)|\b(ATATT3[A-Za-z0-9_\-=]{186})(?:[^\w+/=-]|$)""", -1, 3.5, (0, 0), ()),
    Rule('authress_service_client_access_key', ('sc_', 'ext_', 'scauth_', 'authress_'), r"\b((?:sc|ext|scauth|authress)_(?i:[a-z0-9]{5,30}\.[a-z0-9]{4,6}\.(?-i:acc)[_-][a-z0-9-]{10,32}\.[a-z0-9+/_=-]{30,120}))(?:[^\w+/=-]|$)", -1, 2.0, (0, 0), ()),
    Rule('aws_access_token', ('a3t', 'akia', 'asia', 'abia', 'acca'), r"\b((?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16})\b", -1, 3.0, (0, 0), ('.+EXAMPLE$',)),
    Rule('aws_amazon_bedrock_api_key_long_lived', ('absk',), r"\b(ABSK[A-Za-z0-9+/]{109,269}={0,2})(?:[^\w+/=-]|$)", -1, 3.0, (0, 0), ()),
    Rule('aws_amazon_bedrock_api_key_short_lived', ('bedrock-api-key-',), r"bedrock-api-key-YmVkcm9jay5hbWF6b25hd3MuY29t", -1, 3.0, (0, 0), ()),
    Rule('azure_ad_client_secret', ('q~',), r"""(?:^|[\\'"\x60\s>=:(,)])([a-zA-Z0-9_~.]{3}\dQ~[a-zA-Z0-9_~.-]{31,34})(?:$|[\\'"\x60\s<),])""", -1, 3.0, (0, 0), ()),
    Rule('beamer_api_token', ('beamer',), r"""(?i)[\w.-]{0,50}?(?:beamer)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}(b_[a-z0-9=_\-]{44})(?:[^\w+/=-]|$)""", -1, 0.0, (0, 0), ()),
    Rule('bitbucket_client_id', ('bitbucket',), r"""(?i)[\w.-]{0,50}?(?:bitbucket)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}([a-z0-9]{32})(?:[^\w+/=-]|$)""", -1, 0.0, (0, 0), ()),
    Rule('bitbucket_client_secret', ('bitbucket',), r"""(?i)[\w.-]{0,50}?(?:bitbucket)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}([a-z0-9=_\-]{64})(?:[^\w+/=-]|$)""", -1, 0.0, (0, 0), ()),
    Rule('bittrex_access_key', ('bittrex',), r"""(?i)[\w.-]{0,50}?(?:bittrex)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}([a-z0-9]{32})(?:[^\w+/=-]|$)""", -1, 0.0, (0, 0), ()),
    Rule('bittrex_secret_key', ('bittrex',), r"""(?i)[\w.-]{0,50}?(?:bittrex)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}([a-z0-9]{32})(?:[^\w+/=-]|$)""", -1, 0.0, (0, 0), ()),
    Rule('cisco_meraki_api_key', ('meraki',), r"""[\w.-]{0,50}?(?i:[\w.-]{0,50}?(?:(?-i:[Mm]eraki|MERAKI))(?:[ \t\w.-]{0,20})[\s'"]{0,3})(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}([0-9a-f]{40})(?:[^\w+/=-]|$)""", -1, 3.0, (0, 0), ()),
    Rule('clickhouse_cloud_api_secret_key', ('4b1d',), r"\b(4b1d[A-Za-z0-9]{38})\b", -1, 3.0, (0, 0), ()),
    Rule('clojars_api_token', ('clojars_',), r"(?i)CLOJARS_[a-z0-9]{60}", -1, 2.0, (0, 0), ()),
    Rule('cloudflare_api_key', ('cloudflare',), r"""(?i)[\w.-]{0,50}?(?:cloudflare)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}([a-z0-9_-]{40})(?:[^\w+/=-]|$)""", -1, 2.0, (0, 0), ()),
    Rule('cloudflare_global_api_key', ('cloudflare',), r"""(?i)[\w.-]{0,50}?(?:cloudflare)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}([a-f0-9]{37})(?:[^\w+/=-]|$)""", -1, 2.0, (0, 0), ()),
    Rule('cloudflare_origin_ca_key', ('cloudflare', 'v1.0-'), r"\b(v1\.0-[a-f0-9]{24}-[a-f0-9]{146})(?:[^\w+/=-]|$)", -1, 2.0, (0, 0), ()),
    Rule('codecov_access_token', ('codecov',), r"""(?i)[\w.-]{0,50}?(?:codecov)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}([a-z0-9]{32})(?:[^\w+/=-]|$)""", -1, 0.0, (0, 0), ()),
    Rule('cohere_api_token', ('cohere', 'co_api_key'), r"""[\w.-]{0,50}?(?i:[\w.-]{0,50}?(?:cohere|CO_API_KEY)(?:[ \t\w.-]{0,20})[\s'"]{0,3})(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}([a-zA-Z0-9]{40})(?:[^\w+/=-]|$)""", -1, 4.0, (0, 0), ()),
    Rule('coinbase_access_token', ('coinbase',), r"""(?i)[\w.-]{0,50}?(?:coinbase)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}([a-z0-9_-]{64})(?:[^\w+/=-]|$)""", -1, 0.0, (0, 0), ()),
    Rule('confluent_access_token', ('confluent',), r"""(?i)[\w.-]{0,50}?(?:confluent)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}([a-z0-9]{16})(?:[^\w+/=-]|$)""", -1, 0.0, (0, 0), ()),
    Rule('confluent_secret_key', ('confluent',), r"""(?i)[\w.-]{0,50}?(?:confluent)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}([a-z0-9]{64})(?:[^\w+/=-]|$)""", -1, 0.0, (0, 0), ()),
    Rule('contentful_delivery_api_token', ('contentful',), r"""(?i)[\w.-]{0,50}?(?:contentful)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}([a-z0-9=_\-]{43})(?:[^\w+/=-]|$)""", -1, 0.0, (0, 0), ()),
    Rule('curl_auth_header', ('curl',), r"""\bcurl\b(?:.*?|.*?(?:[\r\n]{1,2}.*?){1,5})[ \t\n\r](?:-H|--header)(?:=|[ \t]{0,5})(?:"(?i:(?:Authorization:[ \t]{0,5}(?:Basic[ \t]([a-z0-9+/]{8,}={0,3})|(?:Bearer|(?:Api-)?Token)[ \t]([\w=~@.+/-]{8,})|([\w=~@.+/-]{8,}))|(?:(?:X-(?:[a-z]+-)?)?(?:Api-?)?(?:Key|Token)):[ \t]{0,5}([\w=~@.+/-]{8,}))"|'(?i:(?:Authorization:[ \t]{0,5}(?:Basic[ \t]([a-z0-9+/]{8,}={0,3})|(?:Bearer|(?:Api-)?Token)[ \t]([\w=~@.+/-]{8,})|([\w=~@.+/-]{8,}))|(?:(?:X-(?:[a-z]+-)?)?(?:Api-?)?(?:Key|Token)):[ \t]{0,5}([\w=~@.+/-]{8,}))')))(?:\B|\s|\Z)""", -1, 2.75, (0, 5), ()),
    Rule('curl_auth_user', ('curl',), r"""\bcurl\b(?:.*|.*(?:[\r\n]{1,2}.*){1,5})[ \t\n\r](?:-u|--user)(?:=|[ \t]{0,5})("(:[^"]{3,}|[^:"]{3,}:|[^:"]{3,}:[^"]{3,})"|'([^:']{3,}:[^']{3,})'|((?:"[^"]{3,}"|'[^']{3,}'|[\w$@.-]+):(?:"[^"]{3,}"|'[^']{3,}'|[\w${}@.-]+)))(?:\s|\Z)""", -1, 2.0, (0, 5), ('[^:]+:(?:change(?:it|me)|pass(?:word)?|pwd|test|token|\\*+|x+)', '[\'"]?<[^>]+>[\'"]?:[\'"]?<[^>]+>|<[^:]+:[^>]+>[\'"]?', '[^:]+:\\[[^]]+]', '[\'"]?[^:]+[\'"]?:[\'"]?\\$(?:\\d|\\w+|\\{(?:\\d|\\w+)})[\'"]?', '\\$\\([^)]+\\):\\$\\([^)]+\\)', '[\'"]?\\$?{{[^}]+}}[\'"]?:[\'"]?\\$?{{[^}]+}}[\'"]?')),
    Rule('databricks_api_token', ('dapi',), r"\b(dapi[a-f0-9]{32}(?:-\d)?)(?:[^\w+/=-]|$)", -1, 3.0, (0, 0), ()),
    Rule('datadog_access_token', ('datadog',), r"""(?i)[\w.-]{0,50}?(?:datadog)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}([a-z0-9]{40})(?:[^\w+/=-]|$)""", -1, 0.0, (0, 0), ()),
    Rule('defined_networking_api_token', ('dnkey',), r"""(?i)[\w.-]{0,50}?(?:dnkey)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}(dnkey-[a-z0-9=_\-]{26}-[a-z0-9=_\-]{52})(?:[^\w+/=-]|$)""", -1, 0.0, (0, 0), ()),
    Rule('digitalocean_access_token', ('doo_v1_',), r"\b(doo_v1_[a-f0-9]{64})(?:[^\w+/=-]|$)", -1, 3.0, (0, 0), ()),
    Rule('digitalocean_pat', ('dop_v1_',), r"\b(dop_v1_[a-f0-9]{64})(?:[^\w+/=-]|$)", -1, 3.0, (0, 0), ()),
    Rule('digitalocean_refresh_token', ('dor_v1_',), r"(?i)\b(dor_v1_[a-f0-9]{64})(?:[^\w+/=-]|$)", -1, 0.0, (0, 0), ()),
    Rule('discord_api_token', ('discord',), r"""(?i)[\w.-]{0,50}?(?:discord)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}([a-f0-9]{64})(?:[^\w+/=-]|$)""", -1, 0.0, (0, 0), ()),
    Rule('discord_client_id', ('discord',), r"""(?i)[\w.-]{0,50}?(?:discord)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}([0-9]{18})(?:[^\w+/=-]|$)""", -1, 2.0, (0, 0), ()),
    Rule('discord_client_secret', ('discord',), r"""(?i)[\w.-]{0,50}?(?:discord)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}([a-z0-9=_\-]{32})(?:[^\w+/=-]|$)""", -1, 2.0, (0, 0), ()),
    Rule('doppler_api_token', ('dp.pt.',), r"dp\.pt\.(?i:[a-z0-9]{43})", -1, 2.0, (0, 0), ()),
    Rule('droneci_access_token', ('droneci',), r"""(?i)[\w.-]{0,50}?(?:droneci)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}([a-z0-9]{32})(?:[^\w+/=-]|$)""", -1, 0.0, (0, 0), ()),
    Rule('dropbox_api_token', ('dropbox',), r"""(?i)[\w.-]{0,50}?(?:dropbox)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}([a-z0-9]{15})(?:[^\w+/=-]|$)""", -1, 0.0, (0, 0), ()),
    Rule('dropbox_long_lived_api_token', ('dropbox',), r"""(?i)[\w.-]{0,50}?(?:dropbox)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}([a-z0-9]{11}(AAAAAAAAAA)[a-z0-9\-_=]{43})(?:[^\w+/=-]|$)""", -1, 0.0, (0, 0), ()),
    Rule('dropbox_short_lived_api_token', ('dropbox',), r"""(?i)[\w.-]{0,50}?(?:dropbox)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}(sl\.[a-z0-9\-=_]{135})(?:[^\w+/=-]|$)""", -1, 0.0, (0, 0), ()),
    Rule('duffel_api_token', ('duffel_',), r"duffel_(?:test|live)_(?i:[a-z0-9_\-=]{43})", -1, 2.0, (0, 0), ()),
    Rule('dynatrace_api_token', ('dt0c01.',), r"dt0c01\.(?i:[a-z0-9]{24}\.[a-z0-9]{64})", -1, 4.0, (0, 0), ()),
    Rule('easypost_api_token', ('ezak',), r"\bEZAK(?i:[a-z0-9]{54}\b)", -1, 2.0, (0, 0), ()),
    Rule('easypost_test_api_token', ('eztk',), r"\bEZTK(?i:[a-z0-9]{54}\b)", -1, 2.0, (0, 0), ()),
    Rule('etsy_access_token', ('etsy',), r"""(?i)[\w.-]{0,50}?(?:(?-i:ETSY|[Ee]tsy))(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}([a-z0-9]{24})(?:[^\w+/=-]|$)""", -1, 3.0, (0, 0), ()),
    Rule('facebook_access_token', ('facebook',), r"(?i)\b(\d{15,16}(\||%)[0-9a-z\-_]{27,40})(?:[^\w+/=-]|$)", -1, 3.0, (0, 0), ()),
    Rule('facebook_page_access_token', ('eaam', 'eaac'), r"\b(EAA[MC](?i:[a-z0-9]{100,}))(?:[^\w+/=-]|$)", -1, 4.0, (0, 0), ()),
    Rule('facebook_secret', ('facebook',), r"""(?i)[\w.-]{0,50}?(?:facebook)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}([a-f0-9]{32})(?:[^\w+/=-]|$)""", -1, 3.0, (0, 0), ()),
    Rule('fastly_api_token', ('fastly',), r"""(?i)[\w.-]{0,50}?(?:fastly)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}([a-z0-9=_\-]{32})(?:[^\w+/=-]|$)""", -1, 0.0, (0, 0), ()),
    Rule('finicity_api_token', ('finicity',), r"""(?i)[\w.-]{0,50}?(?:finicity)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}([a-f0-9]{32})(?:[^\w+/=-]|$)""", -1, 0.0, (0, 0), ()),
    Rule('finicity_client_secret', ('finicity',), r"""(?i)[\w.-]{0,50}?(?:finicity)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}([a-z0-9]{20})(?:[^\w+/=-]|$)""", -1, 0.0, (0, 0), ()),
    Rule('finnhub_access_token', ('finnhub',), r"""(?i)[\w.-]{0,50}?(?:finnhub)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}([a-z0-9]{20})(?:[^\w+/=-]|$)""", -1, 0.0, (0, 0), ()),
    Rule('flickr_access_token', ('flickr',), r"""(?i)[\w.-]{0,50}?(?:flickr)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}([a-z0-9]{32})(?:[^\w+/=-]|$)""", -1, 0.0, (0, 0), ()),
    Rule('flutterwave_encryption_key', ('flwseck_test',), r"FLWSECK_TEST-(?i:[a-h0-9]{12})", -1, 2.0, (0, 0), ()),
    Rule('flutterwave_public_key', ('flwpubk_test',), r"FLWPUBK_TEST-(?i:[a-h0-9]{32}-X)", -1, 2.0, (0, 0), ()),
    Rule('flutterwave_secret_key', ('flwseck_test',), r"FLWSECK_TEST-(?i:[a-h0-9]{32}-X)", -1, 2.0, (0, 0), ()),
    Rule('flyio_access_token', ('fo1_', 'fm1', 'fm2_'), r"\b((?:fo1_[\w-]{43}|fm1[ar]_[a-zA-Z0-9+\/]{100,}={0,3}|fm2_[a-zA-Z0-9+\/]{100,}={0,3}))(?:[^\w+/=-]|$)", -1, 4.0, (0, 0), ()),
    Rule('frameio_api_token', ('fio-u-',), r"fio-u-(?i:[a-z0-9\-_=]{64})", -1, 0.0, (0, 0), ()),
    Rule('freemius_secret_key', ('secret_key',), r"""(?i)["']secret_key["']\s*=>\s*["'](sk_[\S]{29})["']""", -1, 0.0, (0, 0), ()),
    Rule('freshbooks_access_token', ('freshbooks',), r"""(?i)[\w.-]{0,50}?(?:freshbooks)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}([a-z0-9]{64})(?:[^\w+/=-]|$)""", -1, 0.0, (0, 0), ()),
    Rule('gcp_api_key', ('aiza',), r"\b(AIza[\w-]{35})(?:[^\w+/=-]|$)", -1, 4.0, (0, 0), ('AIzaSyabcdefghijklmnopqrstuvwxyz1234567', 'AIzaSyAnLA7NfeLquW1tJFpx_eQCxoX-oo6YyIs', 'AIzaSyCkEhVjf3pduRDt6d1yKOMitrUEke8agEM', 'AIzaSyDMAScliyLx7F0NPDEJi1QmyCgHIAODrlU', 'AIzaSyD3asb-2pEZVqMkmL6M9N6nHZRR_znhrh0', 'AIzayDNSXIbFmlXbIE6mCzDLQAqITYefhixbX4A', 'AIzaSyAdOS2zB6NCsk1pCdZ4-P6GBdi_UUPwX7c', 'AIzaSyASWm6HmTMdYWpgMnjRBjxcQ9CKctWmLd4', 'AIzaSyANUvH9H9BsUccjsu2pCmEkOPjjaXeDQgY', 'AIzaSyA5_iVawFQ8ABuTZNUdcwERLJv_a_p4wtM', 'AIzaSyA4UrcGxgwQFTfaI3no3t7Lt1sjmdnP5sQ', 'AIzaSyDSb51JiIcB6OJpwwMicseKRhhrOq1cS7g', 'AIzaSyBF2RrAIm4a0mO64EShQfqfd2AFnzAvvuU', 'AIzaSyBcE-OOIbhjyR83gm4r2MFCu4MJmprNXsw', 'AIzaSyB8qGxt4ec15vitgn44duC5ucxaOi4FmqE', 'AIzaSyA8vmApnrHNFE0bApF4hoZ11srVL_n0nvY')),
    Rule('github_app_token', ('ghu_', 'ghs_'), r"(?:ghu|ghs)_[0-9a-zA-Z]{36}", -1, 3.0, (0, 0), ()),
    Rule('github_fine_grained_pat', ('github_pat_',), r"github_pat_\w{82}", -1, 3.0, (0, 0), ()),
    Rule('github_oauth', ('gho_',), r"gho_[0-9a-zA-Z]{36}", -1, 3.0, (0, 0), ()),
    Rule('github_pat', ('ghp_',), r"ghp_[0-9a-zA-Z]{36}", -1, 3.0, (0, 0), ()),
    Rule('github_refresh_token', ('ghr_',), r"ghr_[0-9a-zA-Z]{36}", -1, 3.0, (0, 0), ()),
    Rule('gitlab_cicd_job_token', ('glcbt-',), r"glcbt-[0-9a-zA-Z]{1,5}_[0-9a-zA-Z_-]{20}", -1, 3.0, (0, 0), ()),
    Rule('gitlab_deploy_token', ('gldt-',), r"gldt-[0-9a-zA-Z_\-]{20}", -1, 3.0, (0, 0), ()),
    Rule('gitlab_feature_flag_client_token', ('glffct-',), r"glffct-[0-9a-zA-Z_\-]{20}", -1, 3.0, (0, 0), ()),
    Rule('gitlab_feed_token', ('glft-',), r"glft-[0-9a-zA-Z_\-]{20}", -1, 3.0, (0, 0), ()),
    Rule('gitlab_incoming_mail_token', ('glimt-',), r"glimt-[0-9a-zA-Z_\-]{25}", -1, 3.0, (0, 0), ()),
    Rule('gitlab_kubernetes_agent_token', ('glagent-',), r"glagent-[0-9a-zA-Z_\-]{50}", -1, 3.0, (0, 0), ()),
    Rule('gitlab_oauth_app_secret', ('gloas-',), r"gloas-[0-9a-zA-Z_\-]{64}", -1, 3.0, (0, 0), ()),
    Rule('gitlab_pat', ('glpat-',), r"glpat-[\w-]{20}", -1, 3.0, (0, 0), ()),
    Rule('gitlab_pat_routable', ('glpat-',), r"\bglpat-[0-9a-zA-Z_-]{27,300}\.[0-9a-z]{2}[0-9a-z]{7}\b", -1, 4.0, (0, 0), ()),
    Rule('gitlab_ptt', ('glptt-',), r"glptt-[0-9a-f]{40}", -1, 3.0, (0, 0), ()),
    Rule('gitlab_rrt', ('gr1348941',), r"GR1348941[\w-]{20}", -1, 3.0, (0, 0), ()),
    Rule('gitlab_runner_authentication_token', ('glrt-',), r"glrt-[0-9a-zA-Z_\-]{20}", -1, 3.0, (0, 0), ()),
    Rule('gitlab_runner_authentication_token_routable', ('glrt-',), r"\bglrt-t\d_[0-9a-zA-Z_\-]{27,300}\.[0-9a-z]{2}[0-9a-z]{7}\b", -1, 4.0, (0, 0), ()),
    Rule('gitlab_scim_token', ('glsoat-',), r"glsoat-[0-9a-zA-Z_\-]{20}", -1, 3.0, (0, 0), ()),
    Rule('gitlab_session_cookie', ('_gitlab_session=',), r"_gitlab_session=[0-9a-z]{32}", -1, 3.0, (0, 0), ()),
    Rule('gitter_access_token', ('gitter',), r"""(?i)[\w.-]{0,50}?(?:gitter)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}([a-z0-9_-]{40})(?:[^\w+/=-]|$)""", -1, 0.0, (0, 0), ()),
    Rule('gocardless_api_token', ('live_', 'gocardless'), r"""(?i)[\w.-]{0,50}?(?:gocardless)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}(live_(?i:[a-z0-9\-_=]{40}))(?:[^\w+/=-]|$)""", -1, 0.0, (0, 0), ()),
    Rule('grafana_api_key', ('eyjrijoi',), r"(?i)\b(eyJrIjoi[A-Za-z0-9]{70,400}={0,3})(?:[^\w+/=-]|$)", -1, 3.0, (0, 0), ()),
    Rule('grafana_cloud_api_token', ('glc_',), r"(?i)\b(glc_[A-Za-z0-9+/]{32,400}={0,3})(?:[^\w+/=-]|$)", -1, 3.0, (0, 0), ()),
    Rule('grafana_service_account_token', ('glsa_',), r"(?i)\b(glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8})(?:[^\w+/=-]|$)", -1, 3.0, (0, 0), ()),
    Rule('harness_api_key', ('pat.', 'sat.'), r"(?:pat|sat)\.[a-zA-Z0-9_-]{22}\.[a-zA-Z0-9]{24}\.[a-zA-Z0-9]{20}", -1, 0.0, (0, 0), ()),
    Rule('hashicorp_tf_api_token', ('atlasv1',), r"(?i)[a-z0-9]{14}\.(?-i:atlasv1)\.[a-z0-9\-_=]{60,70}", -1, 3.5, (0, 0), ()),
    Rule('hashicorp_tf_password', ('administrator_login_password',), r"""(?i)[\w.-]{0,50}?(?:administrator_login_password|password)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}("[a-z0-9=_\-]{8,20}")(?:[^\w+/=-]|$)""", -1, 2.0, (0, 0), ()),
    Rule('heroku_api_key', ('heroku',), r"""(?i)[\w.-]{0,50}?(?:heroku)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})(?:[^\w+/=-]|$)""", -1, 0.0, (0, 0), ()),
    Rule('heroku_api_key_v2', ('hrku-aa',), r"\b((HRKU-AA[0-9a-zA-Z_-]{58}))(?:[^\w+/=-]|$)", -1, 4.0, (0, 0), ()),
    Rule('hubspot_api_key', ('hubspot',), r"""(?i)[\w.-]{0,50}?(?:hubspot)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}([0-9A-F]{8}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{12})(?:[^\w+/=-]|$)""", -1, 0.0, (0, 0), ()),
    Rule('huggingface_access_token', ('hf_',), r"\b(hf_(?i:[a-z]{34}))(?:[^\w+/=-]|$)", -1, 2.0, (0, 0), ()),
    Rule('huggingface_organization_api_token', ('api_org_',), r"\b(api_org_(?i:[a-z]{34}))(?:[^\w+/=-]|$)", -1, 2.0, (0, 0), ()),
    Rule('infracost_api_token', ('ico-',), r"\b(ico-[a-zA-Z0-9]{32})(?:[^\w+/=-]|$)", -1, 3.0, (0, 0), ()),
    Rule('intercom_api_key', ('intercom',), r"""(?i)[\w.-]{0,50}?(?:intercom)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}([a-z0-9=_\-]{60})(?:[^\w+/=-]|$)""", -1, 0.0, (0, 0), ()),
    Rule('intra42_client_secret', ('intra', 's-s4t2ud-', 's-s4t2af-'), r"\b(s-s4t2(?:ud|af)-(?i:[abcdef0123456789]{64}))(?:[^\w+/=-]|$)", -1, 3.0, (0, 0), ()),
    Rule('jfrog_api_key', ('jfrog', 'artifactory', 'bintray', 'xray'), r"""(?i)[\w.-]{0,50}?(?:jfrog|artifactory|bintray|xray)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}([a-z0-9]{73})(?:[^\w+/=-]|$)""", -1, 0.0, (0, 0), ()),
    Rule('jfrog_identity_token', ('jfrog', 'artifactory', 'bintray', 'xray'), r"""(?i)[\w.-]{0,50}?(?:jfrog|artifactory|bintray|xray)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}([a-z0-9]{64})(?:[^\w+/=-]|$)""", -1, 0.0, (0, 0), ()),
    Rule('jwt', ('ey',), r"\b(ey[a-zA-Z0-9]{17,}\.ey[a-zA-Z0-9\/\\_-]{17,}\.(?:[a-zA-Z0-9\/\\_-]{10,}={0,2})?)(?:[^\w+/=-]|$)", -1, 3.0, (0, 0), ()),
    Rule('jwt_base64', ('zxlk',), r"\bZXlK(?:(?P<alg>aGJHY2lPaU)|(?P<apu>aGNIVWlPaU)|(?P<apv>aGNIWWlPaU)|(?P<aud>aGRXUWlPaU)|(?P<b64>aU5qUWlP)|(?P<crit>amNtbDBJanBi)|(?P<cty>amRIa2lPaU)|(?P<epk>bGNHc2lPbn)|(?P<enc>bGJtTWlPaU)|(?P<jku>cWEzVWlPaU)|(?P<jwk>cWQyc2lPb)|(?P<iss>cGMzTWlPaU)|(?P<iv>cGRpSTZJ)|(?P<kid>cmFXUWlP)|(?P<key_ops>clpYbGZiM0J6SWpwY)|(?P<kty>cmRIa2lPaUp)|(?P<nonce>dWIyNWpaU0k2)|(?P<p2c>d01tTWlP)|(?P<p2s>d01uTWlPaU)|(?P<ppt>d2NIUWlPaU)|(?P<sub>emRXSWlPaU)|(?P<svt>emRuUWlP)|(?P<tag>MFlXY2lPaU)|(?P<typ>MGVYQWlPaUp)|(?P<url>MWNtd2l)|(?P<use>MWMyVWlPaUp)|(?P<ver>MlpYSWlPaU)|(?P<version>MlpYSnphVzl1SWpv)|(?P<x>NElqb2)|(?P<x5c>NE5XTWlP)|(?P<x5t>NE5YUWlPaU)|(?P<x5ts256>NE5YUWpVekkxTmlJNkl)|(?P<x5u>NE5YVWlPaU)|(?P<zip>NmFYQWlPaU))[a-zA-Z0-9\/\\_+\-\r\n]{40,}={0,2}", -1, 2.0, (0, 0), ()),
    Rule('kraken_access_token', ('kraken',), r"""(?i)[\w.-]{0,50}?(?:kraken)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}([a-z0-9\/=_\+\-]{80,90})(?:[^\w+/=-]|$)""", -1, 0.0, (0, 0), ()),
    Rule('kubernetes_secret_yaml', ('kind:',), r"""(?i)(?:\bkind:[ \t]*["']?\bsecret\b["']?(?s:.){0,200}?\bdata:(?s:.){0,100}?\s+([\w.-]+:(?:[ \t]*(?:\||>[-+]?)\s+)?[ \t]*(?:["']?[a-z0-9+/]{10,}={0,3}["']?|\{\{[ \t\w"|$:=,.-]+}}|""|''))|\bdata:(?s:.){0,100}?\s+([\w.-]+:(?:[ \t]*(?:\||>[-+]?)\s+)?[ \t]*(?:["']?[a-z0-9+/]{10,}={0,3}["']?|\{\{[ \t\w"|$:=,.-]+}}|""|''))(?s:.){0,200}?\bkind:[ \t]*["']?\bsecret\b["']?)""", -1, 0.0, (12, 12), ('[\\w.-]+:(?:[ \\t]*(?:\\||>[-+]?)\\s+)?[ \\t]*(?:\\{\\{[ \\t\\w"|$:=,.-]+}}|""|\'\')', '(kind:(?s:.)+\\n---\\n(?s:.)+\\bdata:|data:(?s:.)+\\n---\\n(?s:.)+\\bkind:)'), 'secret'),
    Rule('kucoin_access_token', ('kucoin',), r"""(?i)[\w.-]{0,50}?(?:kucoin)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}([a-f0-9]{24})(?:[^\w+/=-]|$)""", -1, 0.0, (0, 0), ()),
    Rule('kucoin_secret_key', ('kucoin',), r"""(?i)[\w.-]{0,50}?(?:kucoin)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})(?:[^\w+/=-]|$)""", -1, 0.0, (0, 0), ()),
    Rule('launchdarkly_access_token', ('launchdarkly',), r"""(?i)[\w.-]{0,50}?(?:launchdarkly)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}([a-z0-9=_\-]{40})(?:[^\w+/=-]|$)""", -1, 0.0, (0, 0), ()),
    Rule('linear_api_key', ('lin_api_',), r"lin_api_(?i:[a-z0-9]{40})", -1, 2.0, (0, 0), ()),
    Rule('linear_client_secret', ('linear',), r"""(?i)[\w.-]{0,50}?(?:linear)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}([a-f0-9]{32})(?:[^\w+/=-]|$)""", -1, 2.0, (0, 0), ()),
    Rule('linkedin_client_id', ('linkedin', 'linked_in', 'linked-in'), r"""(?i)[\w.-]{0,50}?(?:linked[_-]?in)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}([a-z0-9]{14})(?:[^\w+/=-]|$)""", -1, 2.0, (0, 0), ()),
    Rule('linkedin_client_secret', ('linkedin', 'linked_in', 'linked-in'), r"""(?i)[\w.-]{0,50}?(?:linked[_-]?in)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}([a-z0-9]{16})(?:[^\w+/=-]|$)""", -1, 2.0, (0, 0), ()),
    Rule('lob_api_key', ('test_', 'live_'), r"""(?i)[\w.-]{0,50}?(?:lob)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}((live|test)_[a-f0-9]{35})(?:[^\w+/=-]|$)""", -1, 0.0, (0, 0), (), 'lob'),
    Rule('lob_pub_api_key', ('test_pub', 'live_pub', '_pub'), r"""(?i)[\w.-]{0,50}?(?:lob)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}((test|live)_pub_[a-f0-9]{31})(?:[^\w+/=-]|$)""", -1, 0.0, (0, 0), (), 'lob'),
    Rule('looker_client_id', ('looker',), r"""(?i)[\w.-]{0,50}?(?:looker)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}([a-z0-9]{20})(?:[^\w+/=-]|$)""", -1, 0.0, (0, 0), ()),
    Rule('looker_client_secret', ('looker',), r"""(?i)[\w.-]{0,50}?(?:looker)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}([a-z0-9]{24})(?:[^\w+/=-]|$)""", -1, 0.0, (0, 0), ()),
    Rule('mailchimp_api_key', ('mailchimp',), r"""(?i)[\w.-]{0,50}?(?:MailchimpSDK.initialize|mailchimp)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}([a-f0-9]{32}-us\d\d)(?:[^\w+/=-]|$)""", -1, 0.0, (0, 0), ()),
    Rule('mailgun_private_api_token', ('mailgun',), r"""(?i)[\w.-]{0,50}?(?:mailgun)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}(key-[a-f0-9]{32})(?:[^\w+/=-]|$)""", -1, 0.0, (0, 0), ()),
    Rule('mailgun_pub_key', ('mailgun',), r"""(?i)[\w.-]{0,50}?(?:mailgun)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}(pubkey-[a-f0-9]{32})(?:[^\w+/=-]|$)""", -1, 0.0, (0, 0), ()),
    Rule('mailgun_signing_key', ('mailgun',), r"""(?i)[\w.-]{0,50}?(?:mailgun)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}([a-h0-9]{32}-[a-h0-9]{8}-[a-h0-9]{8})(?:[^\w+/=-]|$)""", -1, 0.0, (0, 0), ()),
    Rule('mapbox_api_token', ('mapbox',), r"""(?i)[\w.-]{0,50}?(?:mapbox)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}(pk\.[a-z0-9]{60}\.[a-z0-9]{22})(?:[^\w+/=-]|$)""", -1, 0.0, (0, 0), ()),
    Rule('mattermost_access_token', ('mattermost',), r"""(?i)[\w.-]{0,50}?(?:mattermost)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}([a-z0-9]{26})(?:[^\w+/=-]|$)""", -1, 0.0, (0, 0), ()),
    Rule('maxmind_license_key', ('_mmk',), r"\b([A-Za-z0-9]{6}_[A-Za-z0-9]{29}_mmk)(?:[^\w+/=-]|$)", -1, 4.0, (0, 0), ()),
    Rule('messagebird_api_token', ('messagebird', 'message-bird', 'message_bird'), r"""(?i)[\w.-]{0,50}?(?:message[_-]?bird)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}([a-z0-9]{25})(?:[^\w+/=-]|$)""", -1, 0.0, (0, 0), ()),
    Rule('messagebird_client_id', ('messagebird', 'message-bird', 'message_bird'), r"""(?i)[\w.-]{0,50}?(?:message[_-]?bird)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})(?:[^\w+/=-]|$)""", -1, 0.0, (0, 0), ()),
    Rule('microsoft_teams_webhook', ('webhook.office.com', 'webhookb2', 'incomingwebhook'), r"https://[a-z0-9]+\.webhook\.office\.com/webhookb2/[a-z0-9]{8}-([a-z0-9]{4}-){3}[a-z0-9]{12}@[a-z0-9]{8}-([a-z0-9]{4}-){3}[a-z0-9]{12}/IncomingWebhook/[a-z0-9]{32}/[a-z0-9]{8}-([a-z0-9]{4}-){3}[a-z0-9]{12}", -1, 0.0, (0, 0), ()),
    Rule('netlify_access_token', ('netlify',), r"""(?i)[\w.-]{0,50}?(?:netlify)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}([a-z0-9=_\-]{40,46})(?:[^\w+/=-]|$)""", -1, 0.0, (0, 0), ()),
    Rule('new_relic_browser_api_token', ('nrjs-',), r"""(?i)[\w.-]{0,50}?(?:new-relic|newrelic|new_relic)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}(NRJS-[a-f0-9]{19})(?:[^\w+/=-]|$)""", -1, 0.0, (0, 0), ()),
    Rule('new_relic_insert_key', ('nrii-',), r"""(?i)[\w.-]{0,50}?(?:new-relic|newrelic|new_relic)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}(NRII-[a-z0-9-]{32})(?:[^\w+/=-]|$)""", -1, 0.0, (0, 0), ()),
    Rule('new_relic_user_api_id', ('new-relic', 'newrelic', 'new_relic'), r"""(?i)[\w.-]{0,50}?(?:new-relic|newrelic|new_relic)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}([a-z0-9]{64})(?:[^\w+/=-]|$)""", -1, 0.0, (0, 0), ()),
    Rule('new_relic_user_api_key', ('nrak',), r"(?i)\b(NRAK-[a-z0-9]{27})(?:[^\w+/=-]|$)", -1, 0.0, (0, 0), ()),
    Rule('notion_api_token', ('ntn_',), r"\b(ntn_[0-9]{11}[A-Za-z0-9]{32}[A-Za-z0-9]{3})(?:[^\w+/=-]|$)", -1, 4.0, (0, 0), ()),
    Rule('npm_access_token', ('npm_',), r"(?i)\b(npm_[a-z0-9]{36})(?:[^\w+/=-]|$)", -1, 2.0, (0, 0), ()),
    Rule('nuget_config_password', ('<add key=',), r'(?i)<add key=\"(?:(?:ClearText)?Password)\"\s*value=\"(.{8,})\"\s*/>', -1, 1.0, (0, 0), ('33f!!lloppa', 'hal\\+9ooo_da!sY', '^\\%\\S.*\\%$')),
    Rule('nytimes_access_token', ('nytimes', 'new-york-times', 'newyorktimes'), r"""(?i)[\w.-]{0,50}?(?:nytimes|new-york-times,|newyorktimes)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}([a-z0-9=_\-]{32})(?:[^\w+/=-]|$)""", -1, 0.0, (0, 0), ()),
    Rule('octopus_deploy_api_key', ('api-',), r"\b(API-[A-Z0-9]{26})(?:[^\w+/=-]|$)", -1, 3.0, (0, 0), ()),
    Rule('okta_access_token', ('okta',), r"""[\w.-]{0,50}?(?i:[\w.-]{0,50}?(?:(?-i:[Oo]kta|OKTA))(?:[ \t\w.-]{0,20})[\s'"]{0,3})(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}(00[\w=\-]{40})(?:[^\w+/=-]|$)""", -1, 4.0, (0, 0), ()),
    Rule('openai_api_key', ('sk-',), r"\b(sk-(?:proj|svcacct|admin)-(?:[A-Za-z0-9_-]{74}|[A-Za-z0-9_-]{58})T3BlbkFJ(?:[A-Za-z0-9_-]{74}|[A-Za-z0-9_-]{58})\b|sk-[a-zA-Z0-9]{20}T3BlbkFJ[a-zA-Z0-9]{20})(?:[^\w+/=-]|$)", -1, 3.0, (0, 0), ()),
    Rule('openshift_user_token', ('sha256~',), r"\b(sha256~[\w-]{43})(?:[^\w-]|\Z)", -1, 3.5, (0, 0), ()),
    Rule('perplexity_api_key', ('pplx-',), r"""\b(pplx-[a-zA-Z0-9]{48})(?:[\x60'"\s;]|\\[nr]|$|\b)""", -1, 4.0, (0, 0), ()),
    Rule('plaid_api_token', ('plaid',), r"""(?i)[\w.-]{0,50}?(?:plaid)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}(access-(?:sandbox|development|production)-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})(?:[^\w+/=-]|$)""", -1, 0.0, (0, 0), ()),
    Rule('plaid_client_id', ('plaid',), r"""(?i)[\w.-]{0,50}?(?:plaid)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}([a-z0-9]{24})(?:[^\w+/=-]|$)""", -1, 3.5, (0, 0), ()),
    Rule('plaid_secret_key', ('plaid',), r"""(?i)[\w.-]{0,50}?(?:plaid)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}([a-z0-9]{30})(?:[^\w+/=-]|$)""", -1, 3.5, (0, 0), ()),
    Rule('planetscale_api_token', ('pscale_tkn_',), r"\b(pscale_tkn_(?i:[\w=\.-]{32,64}))(?:[^\w+/=-]|$)", -1, 3.0, (0, 0), ()),
    Rule('planetscale_oauth_token', ('pscale_oauth_',), r"\b(pscale_oauth_[\w=\.-]{32,64})(?:[^\w+/=-]|$)", -1, 3.0, (0, 0), ()),
    Rule('planetscale_password', ('pscale_pw_',), r"(?i)\b(pscale_pw_(?i:[\w=\.-]{32,64}))(?:[^\w+/=-]|$)", -1, 3.0, (0, 0), ()),
    Rule('postman_api_token', ('pmak-',), r"\b(PMAK-(?i:[a-f0-9]{24}\-[a-f0-9]{34}))(?:[^\w+/=-]|$)", -1, 3.0, (0, 0), ()),
    Rule('prefect_api_token', ('pnu_',), r"\b(pnu_[a-zA-Z0-9]{36})(?:[^\w+/=-]|$)", -1, 2.0, (0, 0), ()),
    Rule('privateai_api_token', ('privateai', 'private_ai', 'private-ai'), r"""[\w.-]{0,50}?(?i:[\w.-]{0,50}?(?:private[_-]?ai)(?:[ \t\w.-]{0,20})[\s'"]{0,3})(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}([a-z0-9]{32})(?:[^\w+/=-]|$)""", -1, 3.0, (0, 0), ()),
    Rule('pulumi_api_token', ('pul-',), r"\b(pul-[a-f0-9]{40})(?:[^\w+/=-]|$)", -1, 2.0, (0, 0), ()),
    Rule('pypi_upload_token', ('pypi-ageichlwas5vcmc',), r"pypi-AgEIcHlwaS5vcmc[\w-]{50,1000}", -1, 3.0, (0, 0), ()),
    Rule('rapidapi_access_token', ('rapidapi',), r"""(?i)[\w.-]{0,50}?(?:rapidapi)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}([a-z0-9_-]{50})(?:[^\w+/=-]|$)""", -1, 0.0, (0, 0), ()),
    Rule('readme_api_token', ('rdme_',), r"\b(rdme_[a-z0-9]{70})(?:[^\w+/=-]|$)", -1, 2.0, (0, 0), ()),
    Rule('rubygems_api_token', ('rubygems_',), r"\b(rubygems_[a-f0-9]{48})(?:[^\w+/=-]|$)", -1, 2.0, (0, 0), ()),
    Rule('scalingo_api_token', ('tk-us-',), r"\b(tk-us-[\w-]{48})(?:[^\w+/=-]|$)", -1, 2.0, (0, 0), ()),
    Rule('sendbird_access_id', ('sendbird',), r"""(?i)[\w.-]{0,50}?(?:sendbird)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})(?:[^\w+/=-]|$)""", -1, 0.0, (0, 0), ()),
    Rule('sendbird_access_token', ('sendbird',), r"""(?i)[\w.-]{0,50}?(?:sendbird)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}([a-f0-9]{40})(?:[^\w+/=-]|$)""", -1, 0.0, (0, 0), ()),
    Rule('sendgrid_api_token', ('sg.',), r"\b(SG\.(?i:[a-z0-9=_\-\.]{66}))(?:[^\w+/=-]|$)", -1, 2.0, (0, 0), ()),
    Rule('sendinblue_api_token', ('xkeysib-',), r"\b(xkeysib-[a-f0-9]{64}\-(?i:[a-z0-9]{16}))(?:[^\w+/=-]|$)", -1, 2.0, (0, 0), ()),
    Rule('sentry_access_token', ('sentry',), r"""(?i)[\w.-]{0,50}?(?:sentry)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}([a-f0-9]{64})(?:[^\w+/=-]|$)""", -1, 3.0, (0, 0), ()),
    Rule('sentry_org_token', ('sntrys_eyjpyxqio',), r"\bsntrys_eyJpYXQiO[a-zA-Z0-9+/]{10,200}(?:LCJyZWdpb25fdXJs|InJlZ2lvbl91cmwi|cmVnaW9uX3VybCI6)[a-zA-Z0-9+/]{10,200}={0,2}_[a-zA-Z0-9+/]{43}(?:[^a-zA-Z0-9+/]|\Z)", -1, 4.5, (0, 0), ()),
    Rule('sentry_user_token', ('sntryu_',), r"\b(sntryu_[a-f0-9]{64})(?:[^\w+/=-]|$)", -1, 3.5, (0, 0), ()),
    Rule('settlemint_application_access_token', ('sm_aat',), r"\b(sm_aat_[a-zA-Z0-9]{16})(?:[^\w+/=-]|$)", -1, 3.0, (0, 0), ()),
    Rule('settlemint_personal_access_token', ('sm_pat',), r"\b(sm_pat_[a-zA-Z0-9]{16})(?:[^\w+/=-]|$)", -1, 3.0, (0, 0), ()),
    Rule('settlemint_service_access_token', ('sm_sat',), r"\b(sm_sat_[a-zA-Z0-9]{16})(?:[^\w+/=-]|$)", -1, 3.0, (0, 0), ()),
    Rule('shippo_api_token', ('shippo_',), r"\b(shippo_(?:live|test)_[a-fA-F0-9]{40})(?:[^\w+/=-]|$)", -1, 2.0, (0, 0), ()),
    Rule('shopify_access_token', ('shpat_',), r"shpat_[a-fA-F0-9]{32}", -1, 2.0, (0, 0), ()),
    Rule('shopify_custom_access_token', ('shpca_',), r"shpca_[a-fA-F0-9]{32}", -1, 2.0, (0, 0), ()),
    Rule('shopify_private_app_access_token', ('shppa_',), r"shppa_[a-fA-F0-9]{32}", -1, 2.0, (0, 0), ()),
    Rule('shopify_shared_secret', ('shpss_',), r"shpss_[a-fA-F0-9]{32}", -1, 2.0, (0, 0), ()),
    Rule('sidekiq_secret', ('bundle_enterprise__contribsys__com', 'bundle_gems__contribsys__com'), r"""(?i)[\w.-]{0,50}?(?:BUNDLE_ENTERPRISE__CONTRIBSYS__COM|BUNDLE_GEMS__CONTRIBSYS__COM)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}([a-f0-9]{8}:[a-f0-9]{8})(?:[^\w+/=-]|$)""", -1, 0.0, (0, 0), ()),
    Rule('sidekiq_sensitive_url', ('gems.contribsys.com', 'enterprise.contribsys.com'), r"(?i)\bhttps?://([a-f0-9]{8}:[a-f0-9]{8})@(?:gems.contribsys.com|enterprise.contribsys.com)(?:[\/|\#|\?|:]|$)", -1, 0.0, (0, 0), ()),
    Rule('slack_app_token', ('xapp',), r"(?i)xapp-\d-[A-Z0-9]+-\d+-[a-z0-9]+", -1, 2.0, (0, 0), ()),
    Rule('slack_bot_token', ('xoxb',), r"xoxb-[0-9]{10,13}-[0-9]{10,13}[a-zA-Z0-9-]*", -1, 3.0, (0, 0), ()),
    Rule('slack_config_access_token', ('xoxe.xoxb-', 'xoxe.xoxp-'), r"(?i)xoxe.xox[bp]-\d-[A-Z0-9]{163,166}", -1, 2.0, (0, 0), ()),
    Rule('slack_config_refresh_token', ('xoxe-',), r"(?i)xoxe-\d-[A-Z0-9]{146}", -1, 2.0, (0, 0), ()),
    Rule('slack_legacy_bot_token', ('xoxb',), r"xoxb-[0-9]{8,14}-[a-zA-Z0-9]{18,26}", -1, 2.0, (0, 0), ()),
    Rule('slack_legacy_token', ('xoxo', 'xoxs'), r"xox[os]-\d+-\d+-\d+-[a-fA-F\d]+", -1, 2.0, (0, 0), ()),
    Rule('slack_legacy_workspace_token', ('xoxa', 'xoxr'), r"xox[ar]-(?:\d-)?[0-9a-zA-Z]{8,48}", -1, 2.0, (0, 0), ()),
    Rule('slack_user_token', ('xoxp-', 'xoxe-'), r"xox[pe](?:-[0-9]{10,13}){3}-[a-zA-Z0-9-]{28,34}", -1, 2.0, (0, 0), ()),
    Rule('slack_webhook_url', ('hooks.slack.com',), r"(?:https?://)?hooks.slack.com/(?:services|workflows|triggers)/[A-Za-z0-9+/]{43,56}", -1, 0.0, (0, 0), ()),
    Rule('snyk_api_token', ('snyk',), r"""(?i)[\w.-]{0,50}?(?:snyk[_.-]?(?:(?:api|oauth)[_.-]?)?(?:key|token))(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})(?:[^\w+/=-]|$)""", -1, 0.0, (0, 0), ()),
    Rule('sonar_api_token', ('sonar',), r"""(?i)[\w.-]{0,50}?(?:sonar[_.-]?(login|token))(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}((?:squ_|sqp_|sqa_)?[a-z0-9=_\-]{40})(?:[^\w+/=-]|$)""", 2, 0.0, (0, 0), ()),
    Rule('sourcegraph_access_token', ('sgp_', 'sourcegraph'), r"(?i)\b(\b(sgp_(?:[a-fA-F0-9]{16}|local)_[a-fA-F0-9]{40}|sgp_[a-fA-F0-9]{40}|[a-fA-F0-9]{40})\b)(?:[^\w+/=-]|$)", -1, 3.0, (0, 0), ()),
    Rule('square_access_token', ('sq0atp-', 'eaaa'), r"\b((?:EAAA|sq0atp-)[\w-]{22,60})(?:[^\w+/=-]|$)", -1, 2.0, (0, 0), ()),
    Rule('squarespace_access_token', ('squarespace',), r"""(?i)[\w.-]{0,50}?(?:squarespace)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})(?:[^\w+/=-]|$)""", -1, 0.0, (0, 0), ()),
    Rule('stripe_access_token', ('sk_test', 'sk_live', 'sk_prod', 'rk_test', 'rk_live', 'rk_prod'), r"\b((?:sk|rk)_(?:test|live|prod)_[a-zA-Z0-9]{10,99})(?:[^\w+/=-]|$)", -1, 2.0, (0, 0), ()),
    Rule('sumologic_access_id', ('sumo',), r"""[\w.-]{0,50}?(?i:[\w.-]{0,50}?(?:(?-i:[Ss]umo|SUMO))(?:[ \t\w.-]{0,20})[\s'"]{0,3})(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}(su[a-zA-Z0-9]{12})(?:[^\w+/=-]|$)""", -1, 3.0, (0, 0), ()),
    Rule('sumologic_access_token', ('sumo',), r"""(?i)[\w.-]{0,50}?(?:(?-i:[Ss]umo|SUMO))(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}([a-z0-9]{64})(?:[^\w+/=-]|$)""", -1, 3.0, (0, 0), ()),
    Rule('telegram_bot_api_token', ('telegr',), r"""(?i)[\w.-]{0,50}?(?:telegr)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}([0-9]{5,16}:(?-i:A)[a-z0-9_\-]{34})(?:[^\w+/=-]|$)""", -1, 0.0, (0, 0), ()),
    Rule('travisci_access_token', ('travis',), r"""(?i)[\w.-]{0,50}?(?:travis)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}([a-z0-9]{22})(?:[^\w+/=-]|$)""", -1, 0.0, (0, 0), ()),
    Rule('twilio_api_key', (), r"SK[0-9a-fA-F]{32}", -1, 3.0, (0, 0), ()),
    Rule('twitch_api_token', ('twitch',), r"""(?i)[\w.-]{0,50}?(?:twitch)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}([a-z0-9]{30})(?:[^\w+/=-]|$)""", -1, 0.0, (0, 0), ()),
    Rule('twitter_access_secret', ('twitter',), r"""(?i)[\w.-]{0,50}?(?:twitter)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}([a-z0-9]{45})(?:[^\w+/=-]|$)""", -1, 0.0, (0, 0), ()),
    Rule('twitter_access_token', ('twitter',), r"""(?i)[\w.-]{0,50}?(?:twitter)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}([0-9]{15,25}-[a-zA-Z0-9]{20,40})(?:[^\w+/=-]|$)""", -1, 0.0, (0, 0), ()),
    Rule('twitter_api_key', ('twitter',), r"""(?i)[\w.-]{0,50}?(?:twitter)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}([a-z0-9]{25})(?:[^\w+/=-]|$)""", -1, 0.0, (0, 0), ()),
    Rule('twitter_api_secret', ('twitter',), r"""(?i)[\w.-]{0,50}?(?:twitter)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}([a-z0-9]{50})(?:[^\w+/=-]|$)""", -1, 0.0, (0, 0), ()),
    Rule('twitter_bearer_token', ('twitter',), r"""(?i)[\w.-]{0,50}?(?:twitter)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}(A{22}[a-zA-Z0-9%]{80,100})(?:[^\w+/=-]|$)""", -1, 0.0, (0, 0), ()),
    Rule('typeform_api_token', ('tfp_',), r"""(?i)[\w.-]{0,50}?(?:typeform)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}(tfp_[a-z0-9\-_\.=]{59})(?:[^\w+/=-]|$)""", -1, 0.0, (0, 0), ()),
    Rule('vault_batch_token', ('hvb.',), r"\b(hvb\.[\w-]{138,300})(?:[^\w+/=-]|$)", -1, 4.0, (0, 0), ()),
    Rule('vault_service_token', ('hvs.', 's.'), r"\b((?:hvs\.[\w-]{90,120}|s\.(?i:[a-z0-9]{24})))(?:[^\w+/=-]|$)", -1, 3.5, (0, 0), ('s\\.[A-Za-z]{24}',)),
    Rule('yandex_access_token', ('yandex',), r"""(?i)[\w.-]{0,50}?(?:yandex)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}(t1\.[A-Z0-9a-z_-]+[=]{0,2}\.[A-Z0-9a-z_-]{86}[=]{0,2})(?:[^\w+/=-]|$)""", -1, 0.0, (0, 0), ()),
    Rule('yandex_api_key', ('yandex',), r"""(?i)[\w.-]{0,50}?(?:yandex)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}(AQVN[A-Za-z0-9_\-]{35,38})(?:[^\w+/=-]|$)""", -1, 0.0, (0, 0), ()),
    Rule('yandex_aws_access_token', ('yandex',), r"""(?i)[\w.-]{0,50}?(?:yandex)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}(YC[a-zA-Z0-9_\-]{38})(?:[^\w+/=-]|$)""", -1, 0.0, (0, 0), ()),
    Rule('zendesk_secret_key', ('zendesk',), r"""(?i)[\w.-]{0,50}?(?:zendesk)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}([a-z0-9]{40})(?:[^\w+/=-]|$)""", -1, 0.0, (0, 0), ()),
# END gitleaks
)
# fmt: on
