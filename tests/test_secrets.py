"""Secret rules, table-tested. Tokens are assembled at run time so this file holds none."""

from __future__ import annotations

import pytest

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
    assert [f.rule for f in secrets.scan(text)] == ["generic-secret"]


def test_allow_marker_skips_a_line():
    assert secrets.scan(SECRETS["aws-access-key"] + "  # strata:allow-secret (documented example)") == []


def test_findings_never_carry_the_secret():
    found = secrets.scan(SECRETS["github-token"])[0]
    assert SECRETS["github-token"] not in repr(found)
