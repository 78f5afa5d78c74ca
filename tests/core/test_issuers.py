"""issuers.py's rules, table-tested as secrets.py runs them (a literal of the rule in the line,
then `re.search`). Each finds a token of its issuer's shape, assembled at run time from the
public prefix and random characters of the right alphabet and length (a fixed seed), so this
file holds no token; and no rule finds a near miss: a prefix alone, a token cut short, a
documentation placeholder, ordinary text."""

from __future__ import annotations

import random
import re
import string
import time
import uuid

import pytest

from strata_git.core import issuers

HEX = "0123456789abcdef"
DIGITS = string.digits
LETTERS = string.ascii_letters
ALNUM = LETTERS + DIGITS
UPPER = string.ascii_uppercase + DIGITS
LOWER = string.ascii_lowercase + DIGITS
URLSAFE = ALNUM + "-_"
B64 = ALNUM + "+/"
B32 = string.ascii_uppercase + "234567"
UUID = "uuid"  # a part: a random UUID (version 4)

# rule: examples, each (text before the token, the token's parts: plain text, or (alphabet, length)
# drawn at run time, or UUID). The text before it is context the match leaves out.
EXAMPLES: dict[str, list[tuple[str, tuple]]] = {
    "aws-session-token": [("", ("IQoJb3JpZ2lu", (B64, 300))), ("", ("FwoGZXIvYXdz", (B64, 200)))],
    "aws-access-key-a3t": [("", ("A3T", (UPPER, 1), (B32, 16)))],
    "aws-bedrock-key": [("", ("ABSKQmVkcm9ja0FQSUtleS", (B64, 110))),
                        ("", ("bedrock-api-key-YmVkcm9jay5hbWF6b25hd3MuY29t", (B64, 600)))],
    "google-oauth-client-secret": [("", ("GOCSPX-", (URLSAFE, 28)))],
    "google-oauth-refresh-token": [("", ("1//0", (URLSAFE, 99)))],
    "google-oauth-access-token": [("", ("ya29.", (URLSAFE, 150)))],
    "slack-config-token": [("", ("xoxe.xoxp-1-", (ALNUM, 164))), ("", ("xoxe-1-", (ALNUM, 146)))],
    "slack-app-token": [("", ("xapp-1-A", (UPPER, 10), "-", (DIGITS, 13), "-", (HEX, 64)))],
    "slack-workflow-webhook": [("https://", ("hooks.slack.com/workflows/T", (UPPER, 10), "/A", (UPPER, 10), "/",
                                             (DIGITS, 18), "/", (ALNUM, 10)))],
    "azure-ad-client-secret": [("", ((ALNUM, 3), (DIGITS, 1), "Q~", (ALNUM + "_~.-", 33), (ALNUM, 1)))],
    "azure-sas-token": [("https://acme.blob.core.windows.net/exports/report.csv?",
                         ("sv=2022-11-02&ss=b&srt=co&sp=rl&se=2026-12-31T23:59:59Z&spr=https&sig=", (ALNUM, 43),
                          "%3D"))],
    "azure-connection-key": [("DefaultEndpointsProtocol=https;AccountName=acme;AccountKey=", ((B64, 86), "==")),
                             ("Endpoint=sb://acme.servicebus.windows.net/;SharedAccessKeyName=Root;SharedAccessKey=",
                              ((B64, 43), "="))],
    "teams-webhook": [("", ("https://acme.webhook.office.com/webhookb2/", UUID, "@", UUID, "/IncomingWebhook/",
                            (HEX, 32), "/", UUID))],
    "newrelic-key": [("", ("NRAK-", (UPPER, 27))), ("", ("NRII-", (URLSAFE, 31), (ALNUM, 1))),
                     ("", ("NRJS-", (HEX, 19)))],
    "newrelic-license-key": [("", ((HEX, 36), "NRAL")), ("", ("eu01xx", (HEX, 30), "NRAL"))],
    "sentry-token": [("", ("sntryu_", (HEX, 64))), ("", ("sntrys_eyJpYXQiO", (B64, 120), "_", (B64, 43)))],
    "grafana-api-key": [("", ("eyJrIjoi", (ALNUM, 90)))],
    "dynatrace-token": [("", ("dt0c01.", (UPPER, 24), ".", (UPPER, 64)))],
    "cloudflare-origin-ca-key": [("", ("v1.0-", (HEX, 24), "-", (HEX, 146)))],
    "heroku-key": [("", ("HRKU-AA", (URLSAFE, 57), (ALNUM, 1)))],
    "alibaba-access-key": [("", ("LTAI", (ALNUM, 20)))],
    "flyio-token": [("", ("fo1_", (URLSAFE, 42), (ALNUM, 1))), ("", ("fm2_", (B64, 180)))],
    "scalingo-token": [("", ("tk-us-", (URLSAFE, 47), (ALNUM, 1)))],
    "openshift-token": [("", ("sha256~", (URLSAFE, 42), (ALNUM, 1)))],
    "vault-legacy-token": [("", ("s.", (ALNUM, 21), "k7Q"))],
    "onepassword-token": [("", ("ops_eyJ", (B64, 300)))],
    "onepassword-secret-key": [("", ("A3-", (UPPER, 6), "-", (UPPER, 11), "-", (UPPER, 5), "-", (UPPER, 5), "-",
                                     (UPPER, 5)))],
    "yandex-key": [("", ("AQVN", (URLSAFE, 35), (ALNUM, 1))), ("", ("YC", (ALNUM, 35), "a7B")),
                   ("", ("t1.", (URLSAFE, 40), ".", (URLSAFE, 85), (ALNUM, 1)))],
    "defined-networking-key": [("", ("dnkey-", (ALNUM, 26), "-", (ALNUM, 52)))],
    "huggingface-org-token": [("", ("api_org_", (LETTERS, 34)))],
    "perplexity-key": [("", ("pplx-", (ALNUM, 48)))],
    "groq-key": [("", ("gsk_", (ALNUM, 52)))],
    "replicate-token": [("", ("r8_", (ALNUM, 37)))],
    "xai-key": [("", ("xai-", (ALNUM, 80)))],
    "langsmith-key": [("", ("lsv2_pt_", (HEX, 32), "_", (HEX, 10))), ("", ("lsv2_sk_", (HEX, 32), "_", (HEX, 10)))],
    "pypi-token": [("", ("pypi-AgEIcHlwaS5vcmc", (URLSAFE, 160)))],
    "rubygems-key": [("", ("rubygems_", (HEX, 48)))],
    "nuget-key": [("", ("oy2", (LOWER, 43)))],
    "clojars-token": [("", ("CLOJARS_", (LOWER, 60)))],
    "artifactory-key": [("", ("AKCp", (ALNUM, 69))), ("", ("cmVmd", (ALNUM, 59)))],
    "dockerhub-token": [("", ("dckr_pat_", (URLSAFE, 26), (ALNUM, 1)))],
    "sonarqube-token": [("", ("squ_", (HEX, 40)))],
    "sourcegraph-token": [("", ("sgp_", (HEX, 16), "_", (HEX, 40))), ("", ("sgp_", (HEX, 40)))],
    "octopus-key": [("", ("API-", (UPPER, 25), "7"))],
    "infracost-key": [("", ("ico-", (ALNUM, 32)))],
    "prefect-key": [("", ("pnu_", (ALNUM, 36)))],
    "readme-key": [("", ("rdme_", (LOWER, 70)))],
    "harness-token": [("", ("pat.", (URLSAFE, 22), ".", (ALNUM, 24), ".", (ALNUM, 20)))],
    "buildkite-token": [("", ("bkua_", (HEX, 40)))],
    "circleci-token": [("", ("CCIPAT_", (ALNUM, 22), "_", (HEX, 40)))],
    "netlify-token": [("", ("nfp_", (ALNUM, 36)))],
    "clickhouse-key": [("", ("4b1d", (ALNUM, 38)))],
    "settlemint-token": [("", ("sm_pat_", (ALNUM, 16)))],
    "intra42-secret": [("", ("s-s4t2ud-", (HEX, 64)))],
    "adobe-client-secret": [("", ("p8e-", (ALNUM, 32)))],
    "authress-key": [("", ("sc_", (ALNUM, 12), ".", (ALNUM, 5), ".acc_", (LOWER, 20), ".", (B64, 60)))],
    "gitlab-other-token": [("", ("glft-", (URLSAFE, 19), (ALNUM, 1))), ("", ("gloas-", (URLSAFE, 63), (ALNUM, 1))),
                           ("", ("glagent-", (URLSAFE, 49), (ALNUM, 1))), ("", ("GR1348941", (ALNUM, 20))),
                           ("", ("glcbt-", (ALNUM, 2), "_", (ALNUM, 20))), ("", ("glimt-", (ALNUM, 25)))],
    "gitlab-session-cookie": [("_gitlab_session=", ((LOWER, 32),))],
    "sendgrid-key": [("", ("SG.", (URLSAFE, 22), ".", (URLSAFE, 42), (ALNUM, 1)))],
    "brevo-key": [("", ("xkeysib-", (HEX, 64), "-", (ALNUM, 16)))],
    "mailgun-signing-key": [("", ((HEX, 32), "-", (HEX, 8), "-", (HEX, 8)))],
    "mailchimp-key": [("", ((HEX, 32), "-us", (DIGITS, 2)))],
    "twilio-api-key": [("", ("SK", (HEX, 32)))],
    "telegram-bot-token": [("", ((DIGITS, 10), ":AA", (URLSAFE, 32), (ALNUM, 1)))],
    "discord-webhook": [("https://", ("discord.com/api/webhooks/", (DIGITS, 19), "/", (URLSAFE, 67), (ALNUM, 1)))],
    "postman-key": [("", ("PMAK-", (HEX, 24), "-", (HEX, 34)))],
    "trello-token": [("", ("ATTA", (HEX, 64), (HEX.upper(), 8)))],
    "bitbucket-app-password": [("", ("ATBB", (ALNUM, 32)))],
    "asana-token": [("", ("2/", (DIGITS, 16), "/", (DIGITS, 16), ":", (HEX, 32)))],
    "airtable-token": [("", ("pat", (ALNUM, 14), ".", (HEX, 64)))],
    "typeform-token": [("", ("tfp_", (URLSAFE, 44), "_", (ALNUM, 14)))],
    "hubspot-token": [("", ("pat-na1-", UUID))],
    "contentful-token": [("", ("CFPAT-", (URLSAFE, 42), (ALNUM, 1)))],
    "okta-token": [("Authorization: SSWS ", ("00", (URLSAFE, 39), (ALNUM, 1)))],
    "launchdarkly-key": [("", ("sdk-", UUID)), ("", ("api-", UUID)), ("", ("mob-", UUID))],
    "frameio-token": [("", ("fio-u-", (URLSAFE, 63), (ALNUM, 1)))],
    "dropbox-token": [("", ("sl.", (URLSAFE, 135)))],
    "mapbox-secret-token": [("", ("sk.eyJ", (URLSAFE, 60), ".", (URLSAFE, 21), (ALNUM, 1)))],
    "twitter-bearer-token": [("", ("A" * 22, (ALNUM + "%", 80)))],
    "maxmind-key": [("", ((ALNUM, 6), "_", (ALNUM, 29), "_mmk"))],
    "stripe-webhook-secret": [("", ("whsec_", (ALNUM, 32)))],
    "square-token": [("", ("EAAA", (URLSAFE, 59), (ALNUM, 1))), ("", ("sq0atp-", (URLSAFE, 21), (ALNUM, 1))),
                     ("", ("sq0csp-", (URLSAFE, 42), (ALNUM, 1)))],
    "braintree-token": [("", ("access_token$production$", (LOWER, 16), "$", (HEX, 32)))],
    "plaid-token": [("", ("access-sandbox-", UUID))],
    "flutterwave-key": [("", ("FLWSECK-", (HEX, 32), "-X")), ("", ("FLWPUBK_TEST-", (HEX, 32), "-X"))],
    "shippo-token": [("", ("shippo_live_", (HEX, 40)))],
    "easypost-key": [("", ("EZAK", (ALNUM, 54)))],
    "duffel-token": [("", ("duffel_test_", (URLSAFE, 42), (ALNUM, 1)))],
    "lob-key": [("", ("live_", (HEX, 35)))],
    "laravel-app-key": [("", ("base64:", (B64, 43), "="))],
    "django-secret-key": [("", ("django-insecure-", (string.ascii_lowercase + DIGITS + "!@#$%^&*(-_=+)", 50)))],
    "jwt-base64": [("", ("ZXlKaGJHY2lPaU", (B64, 120)))],
}

# Ordinary text that shares a prefix or a shape with a token.
ORDINARY = [
    "t1.micro instances are enough for the demo",
    "import os; s.environ is not a thing, os.environ is",
    "API-GATEWAY-ENDPOINT-CONFIGURATION-FILE is the setting's name",
    "the spec writes sha256~ before the token, see sl.No 4 and v1.0-beta",
    "split it 1/2 and 2/3, the batch of 2/12/2024 was late",
    "SKIPPED: 4 tests, SKU-1234 out of stock",
    "AccountKey=<your-account-key>;EndpointSuffix=core.windows.net",
    "https://acme.blob.core.windows.net/c/f?sv=2022-11-02&sig=<signature>",
    "Authorization: SSWS {{ okta_token }}",
    "APP_KEY=base64:aGVsbG8gd29ybGQ=",
    "request api-3fa85f64 failed; see sdk-docs and mob-app",
    "pat-na1 is HubSpot's US region; pattern.match(line)",
    "export NEW_RELIC_LICENSE_KEY=$NEW_RELIC_LICENSE_KEY  # NRAL suffix",
    "curl -H 'Authorization: Bearer " + "A" * 24 + "' https://api.twitter.com/2/tweets",
    "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "go.sum: h1:oq+qUmD3CcnZEJeh0+D0xi+0U4hpuQmfhHS4CqR1pnQ=",
    "trace 00-90468e8f89921665e7ab091d0f151dea-607512894fc344a7-01",
    "event 77c52a045d7a5455984060827eba1ace-1a2b3c4d in Sentry",
    "--dt0c01 is the Dynatrace prefix, ATTA the Trello one, ATBB Bitbucket's",
]


def _draw(rng: random.Random, part) -> str:
    if part == UUID:
        return str(uuid.UUID(int=rng.getrandbits(128), version=4))
    return part if isinstance(part, str) else "".join(rng.choice(part[0]) for _ in range(part[1]))


def _placeholder(part) -> str:
    """A part as documentation writes it: random runs as x's (or zeros where x is no character)."""
    if part == UUID:
        return "00000000-0000-0000-0000-000000000000"
    if isinstance(part, str):
        return part
    alphabet, n = part
    return ("x" if "x" in alphabet else "X" if "X" in alphabet else "0") * n


def _token(rule: str, i: int, parts: tuple) -> str:
    rng = random.Random(f"{rule}-{i}")  # a fixed seed for each example
    return "".join(_draw(rng, part) for part in parts)


def _rule(rule: str) -> tuple[str, str, tuple[str, ...], str]:
    return next(r for r in issuers.RULES if r[0] == rule)


def _search(rule: tuple[str, str, tuple[str, ...], str], line: str) -> re.Match | None:
    """As secrets.py runs a rule: only on a line holding one of its literals."""
    _, _, literals, pattern = rule
    return re.search(pattern, line) if any(literal in line for literal in literals) else None


def _any_rule(line: str) -> list[str]:
    return [r[0] for r in issuers.RULES if _search(r, line)]


CASES = [(rule, i, lead, parts) for rule, examples in EXAMPLES.items() for i, (lead, parts) in enumerate(examples)]


def test_the_table_has_the_shape_secrets_py_runs():
    rules = [r[0] for r in issuers.RULES]
    assert len(rules) == len(set(rules))
    assert sorted(rules) == sorted(EXAMPLES)
    for rule, what, literals, pattern in issuers.RULES:
        assert re.fullmatch(r"[a-z0-9]+(?:-[a-z0-9]+)*", rule), rule
        assert re.match(r"an? [A-Za-z0-9]", what), rule
        assert isinstance(literals, tuple) and literals and all(isinstance(x, str) and x for x in literals), rule
        re.compile(pattern)


@pytest.mark.parametrize(("rule", "i", "lead", "parts"), CASES, ids=[f"{c[0]}-{c[1]}" for c in CASES])
def test_each_rule_finds_a_token_of_its_shape_and_only_the_token(rule, i, lead, parts):
    token = _token(rule, i, parts)
    for line in (f"{lead}{token}", f'the key is {lead}{token} (rotated monthly)', f'  value: "{lead}{token}",'):
        match = _search(_rule(rule), line)
        assert match is not None, (rule, line)
        assert match.group() == token, (rule, match.group())


@pytest.mark.parametrize(("rule", "i", "lead", "parts"), CASES, ids=[f"{c[0]}-{c[1]}" for c in CASES])
def test_no_rule_finds_a_token_cut_short_or_a_placeholder(rule, i, lead, parts):
    token = _token(rule, i, parts)
    prefix = parts[0] if isinstance(parts[0], str) else ""
    short = token[:len(prefix) + 6]
    placeholder = "".join(_placeholder(part) for part in parts)
    for line in (f"key: {lead}{short}", f"key: {lead}{short} and more words", f"key: {lead}{placeholder}"):
        assert _any_rule(line) == [], line


def test_no_rule_finds_a_prefix_alone():
    for _, _, literals, _ in issuers.RULES:
        for literal in literals:
            for line in (literal, f"the {literal} prefix", f"{literal}{literal}{literal}", f'"{literal}"'):
                assert _any_rule(line) == [], line


@pytest.mark.parametrize("line", ORDINARY)
def test_no_rule_finds_ordinary_text(line: str):
    assert _any_rule(line) == []


@pytest.mark.slow
def test_a_long_line_of_a_prefix_is_searched_in_linear_time():
    """No pattern backtracks: a 256 KiB line of each literal repeated (alone, with a separator,
    with a near-token after it) takes milliseconds, where a quadratic pattern would take minutes."""
    n = 1 << 18
    for rule, _, literals, pattern in issuers.RULES:
        compiled = re.compile(pattern)
        lines = ["A" * n] + [(text * (n // len(text) + 1))[:n]
                             for literal in literals for text in (literal, literal + "+", literal + "a" * 30 + " ")]
        for line in lines:
            started = time.process_time()
            compiled.search(line)
            assert time.process_time() - started < 0.25, (rule, line[:20])
