"""The secret rules at the doors a user meets: `git strata write` refuses, a plain `git commit`
through the installed pre-commit hook refuses, and nothing reaches history. Cases from formats
the rules once let through (issue 20); values are assembled at run time, so this file holds none."""

from __future__ import annotations

import pytest

from conftest import commit_count, git, strata

pytestmark = pytest.mark.slow

HEX = "9f86d081884c7d659a2feaa0c55ad015"
MIXED = "9n8Ow6dbDqI0EuHj" + "xq1sndWOEcb6gf36q+TJMIjj"
PASSWORD = "Tr0" + "ub4dor&3x"
CASES = {
    "stripe webhook secret in backticks": "run `export STRIPE_WEBHOOK_SECRET=whsec_"
                                          + MIXED[:32].replace("+", "a") + "`",
    "aws secret key in prose": f"the secret is {MIXED}",
    "google oauth client secret": "GOCSPX-" + MIXED[:28].replace("+", "_"),
    "datadog key in an export": f"export DD_API_KEY={HEX}",
    "mysql password": f"mysql -u root -p{PASSWORD} -e 'show databases'",
    "redis url": f"REDIS_URL=redis://:{PASSWORD}@cache.internal:6379",
    "sshpass": f"sshpass -p '{PASSWORD}' ssh deploy@db",
    "api key in a url": f"https://api.example.com/v1/feed?api_key={HEX}&units=metric",
    "password in prose": f"the root password on the new box is {PASSWORD}",
    "okta": "curl -H \"Authorization: SSWS 00" + MIXED[:40].replace("+", "-") + "\" https://acme.okta.com/api/v1/users",
    "docker config auth": '{"auths": {"ghcr.io": {"auth": "ZGVwbG95OmRja3JfcGF0X18zYWZQNFJU'
                          + 'OW05cHlsOEJ3WFVySEczaVg1Xw=="}}}',
    "key block body": "-----BEGIN OPENSSH " + "PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n"
                      + "-----END OPENSSH " + "PRIVATE KEY-----",
}


@pytest.mark.parametrize("kind", sorted(CASES))
def test_write_and_the_commit_hook_refuse_it_and_nothing_is_committed(mem, kind: str):
    text = CASES[kind]
    before = commit_count(mem)
    proc = strata(mem, "write", "notes/x", f"--message={text}")
    assert proc.returncode == 1 and b"refusing to store it" in proc.stderr, proc.stderr
    assert commit_count(mem) == before and not (mem / "active/notes/x.md").exists()
    (mem / "active/notes").mkdir(parents=True, exist_ok=True)
    (mem / "active/notes/y.md").write_text(f"# Note\n\n{text}\n")
    git(mem, "add", "active/notes/y.md")
    commit = git(mem, "commit", "-q", "-m", "note", check=False)
    assert commit.returncode != 0 and b"the commit would publish it" in commit.stderr, commit.stderr
    assert commit_count(mem) == before


@pytest.mark.parametrize("text", ["DATABASE_URL=postgres://USER:PASSWORD@HOST:5432/db",
                                  "export OPENAI_API_KEY=<your-api-key>",
                                  "Rotate the db password every 90 days; it's in 1Password under prod-db.",
                                  f"md5 of the nightly export is {HEX}, same as yesterday's."])
def test_ordinary_notes_near_secret_words_are_written(mem, text: str):
    assert strata(mem, "write", "notes/ok", f"--message={text}").returncode == 0
