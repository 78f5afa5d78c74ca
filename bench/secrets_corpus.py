"""A labelled corpus for bench/secrets.py: notes that hold a secret, and ordinary technical notes
that hold things that look like one (hashes, UUIDs, example keys, base64 images, placeholders).

Every value is generated from a seeded random source in the shape its issuer documents (prefix,
alphabet, length), so nothing here is a real credential and the corpus is the same on every run.
A secret is set in a sentence, a config line, a shell export, JSON or a URL, and now and then
split by an invisible character (zero-width space or joiner, word joiner, soft hyphen), as
text copied out of a chat or a web page can be.
"""

from __future__ import annotations

import base64
import random
import string
import uuid
from collections.abc import Callable
from typing import NamedTuple

ALNUM = string.ascii_letters + string.digits
LOWER_ALNUM = string.ascii_lowercase + string.digits
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "-_"
BECH32 = "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L"
INVISIBLE = ["\u200b", "\u200c", "\u200d", "\u2060", "\u00ad"]


class Sample(NamedTuple):
    kind: str  # the format (secrets), or the look-alike (ordinary notes)
    text: str
    secret: bool


def r(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


# format: a function of the random source giving one value in the issuer's shape
FORMATS: dict[str, Callable[[random.Random], str]] = {
    "aws-access-key-id": lambda g: "AKIA" + r(g, string.ascii_uppercase + "234567", 16),
    "aws-session-key-id": lambda g: "ASIA" + r(g, string.ascii_uppercase + "234567", 16),
    "aws-secret-access-key": lambda g: "aws_secret_access_key = " + r(g, B64, 40),
    "github-classic": lambda g: "ghp_" + r(g, ALNUM, 36),
    "github-oauth": lambda g: "gho_" + r(g, ALNUM, 36),
    "github-app": lambda g: "ghs_" + r(g, ALNUM, 36),
    "github-fine-grained": lambda g: "github_pat_" + r(g, ALNUM, 22) + "_" + r(g, ALNUM, 59),
    "gitlab-pat": lambda g: "glpat-" + r(g, URLSAFE, 20),
    "slack-bot": lambda g: f"xoxb-{r(g, string.digits, 12)}-{r(g, string.digits, 13)}-{r(g, ALNUM, 24)}",
    "slack-webhook": lambda g: (f"https://hooks.slack.com/services/T{r(g, ALNUM, 8)}/B{r(g, ALNUM, 10)}/"
                                f"{r(g, ALNUM, 24)}"),
    "stripe-live": lambda g: "sk_live_" + r(g, ALNUM, 99),
    "stripe-restricted": lambda g: "rk_live_" + r(g, ALNUM, 24),
    "stripe-test": lambda g: "sk_test_" + r(g, ALNUM, 24),
    "google-api-key": lambda g: "AIza" + r(g, URLSAFE, 35),
    "azure-storage": lambda g: ("DefaultEndpointsProtocol=https;AccountName=notes" + r(g, LOWER_ALNUM, 6)
                                + ";AccountKey=" + r(g, B64, 86) + "==;EndpointSuffix=core.windows.net"),
    "huggingface": lambda g: "hf_" + r(g, string.ascii_letters, 34),
    "npm": lambda g: "npm_" + r(g, ALNUM, 36),
    "sendgrid": lambda g: f"SG.{r(g, URLSAFE, 22)}.{r(g, URLSAFE, 43)}",
    "twilio-api-key": lambda g: "SK" + r(g, HEX, 32),
    "twilio-account": lambda g: "AC" + r(g, HEX, 32),
    "openai-project": lambda g: f"sk-proj-{r(g, URLSAFE, 40)}T3BlbkFJ{r(g, URLSAFE, 40)}",
    "openai-legacy": lambda g: f"sk-{r(g, ALNUM, 20)}T3BlbkFJ{r(g, ALNUM, 20)}",
    "anthropic": lambda g: "sk-ant-api03-" + r(g, URLSAFE, 93) + "AA",
    "jwt": lambda g: ("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9." + base64.urlsafe_b64encode(
        f'{{"sub":"{r(g, string.digits, 10)}","name":"{r(g, string.ascii_letters, 8)}"}}'.encode()).decode().rstrip("=")
        + "." + r(g, URLSAFE, 43)),
    "rsa-private-key": lambda g: ("-----BEGIN RSA PRIVATE KEY-----\n" + r(g, B64, 64)
                                  + "\n-----END RSA PRIVATE KEY-----"),
    "openssh-private-key": lambda g: "-----BEGIN OPENSSH PRIVATE KEY-----\n" + r(g, B64, 70),
    "ec-private-key": lambda g: "-----BEGIN EC PRIVATE KEY-----\n" + r(g, B64, 64),
    "postgres-url": lambda g: f"postgres://app:{r(g, ALNUM, 18)}@db.internal:5432/notes",
    "mongodb-url": lambda g: f"mongodb+srv://svc:{r(g, ALNUM, 20)}@cluster0.{r(g, LOWER_ALNUM, 5)}.mongodb.net/",
    "password-symbols": lambda g: "password = '" + "".join(g.choice(ALNUM + "#$@!%^&*") for _ in range(16)) + "'",
    "password-yaml": lambda g: 'db_password: "' + r(g, ALNUM, 6) + "#" + r(g, ALNUM, 6) + '!"',
    "generic-api-key": lambda g: 'api_key = "' + r(g, ALNUM, 32) + '"',
    "generic-secret-env": lambda g: "export APP_SECRET=" + r(g, ALNUM, 40),
    "discord-bot": lambda g: f"M{r(g, ALNUM, 23)}.{r(g, URLSAFE, 6)}.{r(g, URLSAFE, 27)}",
    "telegram-bot": lambda g: f"{r(g, string.digits, 9)}:AA{r(g, URLSAFE, 33)}",
    "mailchimp": lambda g: r(g, HEX, 32) + "-us" + str(g.randint(1, 20)),
    "pypi": lambda g: "pypi-AgEIcHlwaS5vcmc" + r(g, URLSAFE, 80),
    "square-token": lambda g: "sq0csp-" + r(g, URLSAFE, 43),
    "shopify": lambda g: "shpat_" + r(g, HEX, 32),
    "digitalocean": lambda g: "dop_v1_" + r(g, HEX, 64),
    "databricks": lambda g: "dapi" + r(g, HEX, 32),
    "linear": lambda g: "lin_api_" + r(g, ALNUM, 40),
    "notion": lambda g: "secret_" + r(g, ALNUM, 43),
    "doppler": lambda g: "dp.st.prd." + r(g, ALNUM, 43),
    "grafana": lambda g: "glsa_" + r(g, ALNUM, 32) + "_" + r(g, HEX, 8),
    "vault": lambda g: "hvs." + r(g, URLSAFE, 90),
    "sentry-dsn": lambda g: (f"https://{r(g, HEX, 32)}@o{r(g, string.digits, 6)}.ingest.sentry.io/"
                             f"{r(g, string.digits, 7)}"),
    "mailgun": lambda g: "key-" + r(g, HEX, 32),
    "age": lambda g: "AGE-SECRET-KEY-1" + r(g, BECH32, 58),
    "atlassian": lambda g: "ATATT3xFfGF0" + r(g, URLSAFE, 180),
    "facebook": lambda g: "EAAB" + r(g, ALNUM, 120),
    "planetscale": lambda g: "pscale_tkn_" + r(g, URLSAFE, 43),
    "pulumi": lambda g: "pul-" + r(g, HEX, 40),
    "supabase": lambda g: "sbp_" + r(g, HEX, 40),
    "terraform": lambda g: r(g, ALNUM, 14) + ".atlasv1." + r(g, URLSAFE, 67),
    "bearer-header": lambda g: "Authorization: Bearer " + r(g, URLSAFE, 40),
    "basic-header": lambda g: "Authorization: Basic " + base64.b64encode(f"ci:{r(g, ALNUM, 16)}".encode()).decode(),
    "artifactory": lambda g: "AKC" + r(g, ALNUM, 70),
}

CONTEXTS = [
    "Note to self: the key is {} (rotate it after the demo).",
    "{}",
    "config:\n  token: {}\n",
    "export TOKEN={}",
    '{{"credential": "{}"}}',
    "Pasted from the vendor chat: {} - works now.",
]


def secrets(rng: random.Random, per_format: int = 2, split_share: float = 0.15) -> list[Sample]:
    """`per_format` notes for each format; some with the value split by an invisible character."""
    out = []
    for kind, make in FORMATS.items():
        for _ in range(per_format):
            value = make(rng)
            if rng.random() < split_share and "\n" not in value:
                at = rng.randint(4, len(value) - 2)
                value = value[:at] + rng.choice(INVISIBLE) + value[at:]
                kind_shown = f"{kind} (split)"
            else:
                kind_shown = kind
            context = rng.choice(CONTEXTS) if "\n" not in value and "=" not in value[:30] else "{}"
            out.append(Sample(kind_shown, context.format(value), True))
    return out


def _png(rng: random.Random) -> str:
    raw = b"\x89PNG\r\n\x1a\n" + bytes(rng.randrange(256) for _ in range(rng.randint(60, 300)))
    return base64.b64encode(raw).decode()


ORDINARY: dict[str, Callable[[random.Random], str]] = {
    "git-sha": lambda g: f"Fixed in commit {r(g, HEX, 40)} (see the PR).",
    "short-sha": lambda g: f"Reverted {r(g, HEX, 12)} because the cache went stale.",
    "md5": lambda g: f"token_hash: {r(g, HEX, 32)}",
    "sha256": lambda g: f"sha256 of the release tarball: {r(g, HEX, 64)}",
    "docker-digest": lambda g: f"image: ghcr.io/acme/notes@sha256:{r(g, HEX, 64)}",
    "npm-integrity": lambda g: '"integrity": "sha512-' + r(g, B64, 86) + '=="',
    "uuid": lambda g: f"token_id = {uuid.UUID(int=g.getrandbits(128))}",
    "request-id": lambda g: f"The failing request id was {uuid.UUID(int=g.getrandbits(128))}.",
    "session-uuid": lambda g: f"session_id: {uuid.UUID(int=g.getrandbits(128))}",
    "aws-example": lambda g: "The AWS docs use AKIAIOSFODNN7EXAMPLE as the example access key id.",
    "aws-example-secret": lambda g: "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "base64-image": lambda g: f"![chart](data:image/png;base64,{_png(g)})",
    "env-placeholder": lambda g: "password: ${DB_PASSWORD}",
    "env-reference": lambda g: "api_key = os.environ['OPENAI_API_KEY']",
    "function-call": lambda g: "token = get_token(user_id, scope='read')",
    "angle-placeholder": lambda g: 'api_key = "<your key here>"',
    "xxx-placeholder": lambda g: "STRIPE_SECRET_KEY=sk_live_xxxxxxxxxxxxxxxx",
    "url-no-password": lambda g: f"https://github.com/acme/{r(g, string.ascii_lowercase, 8)}/pull/{g.randint(1, 9999)}",
    "url-placeholder-password": lambda g: "postgres://user:password@localhost:5432/dev",
    "semver": lambda g: f"Upgraded to v{g.randint(0, 9)}.{g.randint(0, 30)}.{g.randint(0, 99)}; changelog is fine.",
    "pgp-fingerprint": lambda g: "Signing key fingerprint: " + " ".join(r(g, "0123456789ABCDEF", 4) for _ in range(10)),
    "ip-address": lambda g: f"The staging box is at 10.{g.randint(0, 255)}.{g.randint(0, 255)}.{g.randint(1, 254)}",
    "file-path": lambda g: f"Logs are in /var/log/{r(g, string.ascii_lowercase, 6)}/{r(g, LOWER_ALNUM, 10)}.log",
    "camel-identifier": lambda g: "Call TokenRefreshSchedulerFactoryBean.createSecretManagerInstance() first.",
    "settings-path": lambda g: "secret_key = settings.SECRET_KEY",
    "env-name": lambda g: "token: GITHUB_TOKEN",
    "prose-keywords": lambda g: "We rotate the API key and the webhook secret every 90 days; the password policy "
                                "requires 12 characters.",
    "k8s-secret-path": lambda g: "token_path: /var/run/secrets/kubernetes.io/serviceaccount/token",
    "ssh-public-key": lambda g: "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI" + r(g, B64, 43) + " ci@build",
    "checksum-line": lambda g: f"{r(g, HEX, 64)}  notes-{g.randint(1, 9)}.{g.randint(0, 9)}.tar.gz",
    "timestamp-hash": lambda g: f"build {g.randint(20260101, 20261231)}-{r(g, HEX, 7)} passed",
    "base64-config": lambda g: ("The CA bundle (base64): "
                                + base64.b64encode(bytes(g.randrange(256) for _ in range(48))).decode()),
    "log-line": lambda g: (f"2026-11-{g.randint(10, 28)}T10:{g.randint(10, 59)}:00Z INFO "
                           f"user={r(g, string.ascii_lowercase, 6)} latency_ms={g.randint(1, 900)} status=200"),
    "cjk-note": lambda g: "部署脚本在周五运行，密钥存放在保险库中（不在笔记里）。",
    "markdown-table": lambda g: "| service | port |\n|---|---|\n| notes | 8080 |\n| search | 9200 |",
    "test-vector": lambda g: f"expected = '{r(g, HEX, 40)}'  # sha1 of the fixture",
    "emoji-note": lambda g: "Shipped 🎉 — the token refresh bug is fixed.",
    "passwordless": lambda g: "We moved to passwordless login; password = None in the old config.",
}


def ordinary(rng: random.Random, count: int) -> list[Sample]:
    kinds = sorted(ORDINARY)
    return [Sample(kinds[i % len(kinds)], ORDINARY[kinds[i % len(kinds)]](rng), False) for i in range(count)]
