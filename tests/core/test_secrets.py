"""Secret rules, table-tested. Tokens are assembled at run time so this file holds none."""

from __future__ import annotations

import pytest

from helpers.tokens import BODY
from strata_git.core import secrets

R = "Q7rZ2mPlX4nB8kDwT1yH"  # random-looking filler


SECRETS = {
    "private-key": "-----BEGIN OPENSSH " + "PRIVATE KEY-----",
    "aws-access-key": "id = AKIA" + "Q7RZ2MPLX4NB8KDW",
    "github-token": "ghp_" + R + R[:16],
    "gitlab-token": "glpat-" + R,
    "slack-token": "xoxb-" + "1234567890-" + R,
    "anthropic-key": "sk-ant-api03-" + R * 3,
    "openai-key": "sk-proj-" + R * 3,
    "jwt": "eyJhbGciOiJIUzI1NiJ9" + ".eyJzdWIiOiIxMjM0NTY3ODkwIn0" + ".dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    "url-password": "https://deploy:" + "s3cr3tPa55" + "@git.example.com/repo",
    "generic-secret": "api_key = \"" + R + "9f\"",
}

HARMLESS = [
    "we talked about the token budget for the agent",
    "password = changeme-please-now-ok",
    "api_key = <your key here, 32 characters>",
    "https://user:${PASSWORD}@example.com",
    "token: aaaaaaaaaaaaaaaaaaaaaaaa",
    "see https://example.com/path@v2",
    "the AKIA prefix marks AWS keys",
    # names of secrets, not secrets (ordinary code and config people keep notes about)
    "const token = process.env.GITHUB_TOKEN;",
    "api_key = settings.OPENAI_API_KEY_PRODUCTION",
    '"tokenizer": "bert-base-multilingual-cased"',
    "Secretary: Margaret-Thompson-Whitfield",
    "  secretKeyRef: database-credentials-production",
    "token_path: /var/run/secrets/kubernetes.io/serviceaccount/token",
    "passwd_file=/etc/nginx/htpasswd-production",
    "api_key_header: X-Api-Key-For-Partner-Integration",
    "password = your_password_here",
    "令牌 token：这是一个关于记忆的笔记，没有秘密",
]

# Shapes the generic rule used to wave through because they start like a placeholder word.
MISSED_BEFORE = [
    "api_key = MyS3cr3tK3yWithHighEntropy9f8a7s6d",
    "password: Example9fA7s6D5f4G3h2J1k0",
]


@pytest.mark.parametrize("rule", sorted(SECRETS))
def test_each_rule_finds_its_secret_on_the_right_line(rule: str):
    found = secrets.scan(f"harmless first line\n{SECRETS[rule]}\n")
    assert [(f.rule, f.line) for f in found][:1] == [(rule, 2)]


@pytest.mark.parametrize("text", HARMLESS)
def test_harmless_text_is_not_flagged(text: str):
    assert secrets.scan(text) == []


@pytest.mark.parametrize("text", MISSED_BEFORE)
def test_high_entropy_values_are_caught_whatever_word_they_start_with(text: str):
    assert [f.rule for f in secrets.scan(text)] in (["generic-secret"], ["password"])


def test_allow_marker_skips_a_line():
    assert secrets.scan(SECRETS["aws-access-key"] + "  # strata:allow-secret (documented example)") == []


def test_findings_never_carry_the_secret():
    found = secrets.scan(SECRETS["github-token"])[0]
    assert SECRETS["github-token"] not in repr(found)


# -- issue 15: what the rules used to miss, and what they used to flag ---------------------------------

A = "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8s9T0"  # filler of the shape tokens have
MISSED_BEFORE_15 = {  # what an adversarial probe found `write` and the hook let through
    "stripe live": "sk_" + "live_" + A[:28],
    "stripe restricted": "rk_" + "live_" + A[:24],
    "stripe test": "sk_" + "test_" + A[:24],
    "google": "AI" + "za" + "SyD-" + A[:31],
    "azure storage": "DefaultEndpointsProtocol=https;AccountName=x;AccountKey=" + (A * 3)[:86] + "==;",
    "hugging face": "hf_" + "".join(c for c in A * 2 if c.isalpha())[:34],
    "npm": "npm_" + A[:36],
    "sendgrid": "SG." + A[:22] + "." + (A * 2)[:43],
    "twilio": "SK" + "0123456789abcdef" * 2,
    "password with symbols": "password = 'Xk9#mQ2$" + "vL7@pR4!'",
    "aws split by a zero-width space": "AKIA" + "\u200b" + "Q7RZ2MPLX4NB8KDW",
}
FLAGGED_BEFORE_15 = [
    "token_id = 3f2504e0-4f89-11d3-9a0c-0305e82c3301",
    "token_hash: 9e107d9d372bb6826bd81d3542a419d6",
    "The AWS docs use AKIA" + "IOSFODNN7EXAMPLE as the example key.",
    "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCY" + "EXAMPLEKEY",
]


@pytest.mark.parametrize("kind", sorted(MISSED_BEFORE_15))
def test_formats_the_probe_found_missing_are_caught(kind: str):
    assert secrets.scan(f"note\n{MISSED_BEFORE_15[kind]}\n"), kind


@pytest.mark.parametrize("text", FLAGGED_BEFORE_15)
def test_ids_digests_and_documented_examples_are_not_secrets(text: str):
    assert secrets.scan(text) == []


def test_detect_secrets_rules_are_in_use_and_cached(tmp_path, monkeypatch):
    """The maintained package's pattern plugins are read once and cached per user; a second
    process (here: a cleared module state) loads them from the cache."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(secrets, "_maintained", None)
    rules = {rule for rule, _, _ in secrets.maintained()}
    assert {"sendgrid-api-key", "twilio-api-key", "azure-storage-account-access-key"} <= rules
    assert "public-ip-ipv4" not in rules
    cached = list((tmp_path / "git-strata").glob("secret-rules-*.json"))
    assert len(cached) == 1
    monkeypatch.setattr(secrets, "_maintained", None)
    assert {rule for rule, _, _ in secrets.maintained()} == rules


def test_redact_replaces_a_split_key_whole():
    text = "use AKIA" + "\u200b" + "Q7RZ2MPLX4NB8KDW now"
    assert secrets.redact(text, "[redacted: {rule}]") == "use [redacted: aws-access-key] now"


@pytest.mark.slow
def test_a_secret_deep_in_a_long_line_is_found_and_hostile_lines_end():
    """A line is matched in overlapping pieces with runs of spaces shortened, so a 1 MiB line
    costs linear time and lines built to make a pattern backtrack (a run of spaces after `key`,
    thousands of slashes) end; a token anywhere in a long line is still found."""
    token = "ghp_" + R + R[:16]
    assert [f.rule for f in secrets.scan("x" * 5000 + " " + token + " " + "y" * 5000)] == ["github-token"]
    for hostile in ("key" + " " * 20000 + "!", "password" + " " * 20000 + "! " + "a" * 15, "/" * 50000 + " aaaa",
                    "sk-" * 20000):
        assert secrets.scan(hostile) == []
        assert secrets.redact(hostile) == hostile


def test_redact_takes_out_assigned_values_too():
    assert secrets.redact("notes/password=Xk9mQ2vL7pR4zT8wq1") == "notes/password=[password]"
    assert secrets.redact("db: password = 'Xk9#mQ2$vL7@pR4!' ok") == "db: password = '[password]' ok"


@pytest.mark.parametrize("text", ["APEXintegration is our product", "We use APACHEKAFKA for queues",
                                  "see AKCcontrollers now"])
def test_words_shaped_like_artifactory_keys_are_not_secrets(text: str):
    assert secrets.scan(text) == [] and secrets.redact(text) == text


# -- issue 20: a value beside a credential's name, key blocks, one pass over every rule ------------------

P = "Tr0" + "ub4dor&3x"  # a password-shaped filler
H = "9f86d081884c7d659a2feaa0c55ad015"  # 32 hex digits (a sha256 prefix of "test")
B64 = "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYzQ8rT4nL2vKx"  # 40 characters in AWS's secret key shape
AWS = "9n8Ow6dbDqI0EuHj" + "xq1sndWOEcb6gf36q+TJMIjj"  # the same shape, as random as a real one
NAMED = {  # (text, the part that must go)
    "prose, after the name": (f"For the record, the Datadog API key we use in prod is {H}", H),
    "prose, before the name": (f"Use {P}9 as the LDAP bind password when asked.", P + "9"),
    "password in prose": (f"the root password on the new box is {P}", P),
    "export in backticks": (f"`export DD_API_KEY={H}`", H),
    "header": (f'curl -H "X-Api-Key: {H}" https://api.example.com', H),
    "flag": (f"vercel deploy --token {H[:24]}Q", H[:24] + "Q"),
    "mysql -p": (f"mysql -u root -p{P} -e 'show databases'", P),
    "sshpass": (f"sshpass -p '{P}' ssh deploy@db", P),
    "curl --user": (f"curl --user 'admin:{P}' https://ci.example.com", P),
    "json key": (f'{{"awsSessionToken": "{B64}{B64}"}}', B64 + B64),
    "yaml key": (f"  SMTP_PASSWORD: \"{P}\"", P),
    "ini": (f"ansible_password={P}", P),
    "url query": (f"https://api.example.com/v1?api_key={H}&units=metric", H),
    "redis url": (f"redis://:{P}@cache.internal:6379/0", P),
    "postgres url with @": (f"postgres://app:@{P}@db.internal:5432/app", "@" + P),
    "aws secret from nowhere": (f"got it from the on-call, it's {AWS} - keep it off chat", AWS),
    "pgpass": (f"db.internal:5432:app:app:{P}", P),
}
NOT_NAMED = [
    "Rotate the db password every 90 days; it's in 1Password under prod-db.",
    "mongosh --username admin --password --authenticationDatabase admin",
    "vault kv get -field=password secret/prod/db",
    "Webhook evt_6VOJpN2T5f3Yb39qxX5lrMIX arrived twice; idempotency key fixed it.",
    "docker build --secret id=npm,src=$HOME/.npmrc -t acme/web:4.0.6 .",
    "ED25519 key fingerprint is SHA256:ZSrjYR17Npsp6araW62j3N7ypfKFEwt1BineQ+7ZaK7.",
    f"md5 of the nightly export is {H}, same as yesterday's.",
    "report_access_id: e8e4df51-2054-49b0-ab1c-516ac95c691d",
    "echo ZmVhdHVyZSBmbGFnczogZGFyayBtb2RlIG9u | base64 -d",
    "amqp://guest:guest@localhost:5672/ (the default local RabbitMQ)",
    "GITHUB_TOKEN=ghp_" + "x" * 36,
    "    kept = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:cap]",
    "Once the checks pass, a later sync commits that edit beside the memory",
    "the usual AWS credentials, or `AWS_ENDPOINT_URL` for an S3-compatible store",
    "for key in (\"uploadpack.allowFilter\", \"uploadpack.allowAnySHA1InWant\"):",
    "hmac.new(key, msg, hashlib.sha256).hexdigest()",
    # multi-line configs as capture puts them on one line
    "auth: existingSecret: db-credentials secretKeys: adminPasswordKey: postgres-password",
    "env: - name: DB_PASSWORD valueFrom: secretKeyRef: name: db key: password",
    "jwks signing cert (public): -----BEGIN PUBLIC KEY----- MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA7wAcAs"
    "BSA3tuubSZJLIL J09payaWZm/rBFNmbY+B3Y+1Q+BuNR10/mQZQg6t1U+sEtAaB3Y5tQFornyHdnDR -----END PUBLIC KEY-----",
    "(`password: ...`, `\"awsSessionToken\": \"...\"`, a header `X-Api-Key: ...`)",
]


@pytest.mark.parametrize("kind", sorted(NAMED))
def test_a_value_beside_a_credentials_name_is_found_and_redacted(kind: str):
    text, secret = NAMED[kind]
    assert secrets.scan(text), kind
    redacted = secrets.redact(text, "[redacted: {rule}]")
    assert secret not in redacted and "[redacted: " in redacted, redacted


@pytest.mark.parametrize("text", NOT_NAMED)
def test_names_ids_paths_code_and_placeholders_near_a_credentials_name_are_not_secrets(text: str):
    assert secrets.scan(text) == [] and secrets.redact(text) == text


@pytest.mark.parametrize("shape", ["lines", "indented", "json string", "one line", "no footer"])
def test_a_private_key_block_is_removed_whole(shape: str):
    head, foot = "-----BEGIN RSA " + "PRIVATE KEY-----", "-----END RSA " + "PRIVATE KEY-----"
    text = {"lines": "here is the key:\n" + "\n".join([head, *BODY, foot]) + "\nthanks",
            "indented": "tls:\n  key: |\n" + "\n".join("    " + x for x in [head, *BODY, foot]) + "\nport: 1",
            "json string": '{"private_key": "' + "\\n".join([head, *BODY, foot]) + '\\n", "x": 1}',
            "one line": "Asked: here is the key: " + " ".join([head, *BODY, foot]) + " thanks",
            "no footer": "\n".join([head, *BODY]) + "\n\nthat was all"}[shape]
    redacted = secrets.redact(text, "[redacted: {rule}]")
    assert not any(line[:20] in redacted for line in BODY) and "[redacted: private-key]" in redacted
    assert redacted.rstrip().endswith(("thanks", "port: 1", '"x": 1}', "that was all"))


def test_every_rule_reads_the_line_as_it_is_and_overlapping_finds_are_replaced_once():
    """A SID:token pair where one rule finds the SID and another the token: both go, in one mark
    each, as neither rule saw the other's replacement."""
    sid, token = "AC" + H, H[::-1]
    redacted = secrets.redact(f"curl -u {sid}:{token} https://api.example.com", "[x]")
    assert sid not in redacted and token not in redacted
