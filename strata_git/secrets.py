"""Secret detection for everything that would enter a commit.

Rules follow gitleaks and detect-secrets (see reliability.md §5.1). A finding names
the rule and the line, never the secret. A line containing `strata:allow-secret`
is skipped, for the rare false positive.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from typing import NamedTuple

ALLOW_MARKER = "strata:allow-secret"

_RULES: tuple[tuple[str, str, re.Pattern[str]], ...] = (
    ("private-key", "a private key block",
     re.compile(r"-----BEGIN[ A-Z0-9]*PRIVATE KEY( BLOCK)?-----")),
    ("aws-access-key", "an AWS access key id",
     re.compile(r"\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b")),
    ("github-token", "a GitHub token",
     re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{60,})\b")),
    ("gitlab-token", "a GitLab token",
     re.compile(r"\bgl(?:pat|ptt|dt|rt)-[A-Za-z0-9_-]{20,}")),
    ("slack-token", "a Slack token or webhook",
     re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}|hooks\.slack\.com/services/T[A-Za-z0-9]+/B[A-Za-z0-9]+/[A-Za-z0-9]+")),
    ("anthropic-key", "an Anthropic API key",
     re.compile(r"\bsk-ant-[a-z]+\d*-[A-Za-z0-9_-]{32,}")),
    ("openai-key", "an OpenAI API key",
     re.compile(r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{16,}T3BlbkFJ[A-Za-z0-9_-]{16,}"
                r"|\bsk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{40,}")),
    ("jwt", "a JSON Web Token",
     re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}")),
    ("url-password", "a URL with a password",
     re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s/:@]+:(?P<value>[^\s/@]{3,})@[^\s/@]+")),
)

_ASSIGNMENT = re.compile(
    r"(?i)(?:api[_-]?key|apikey|secret|token|passw(?:or)?d|access[_-]?key|auth[_-]?key|private[_-]?key|credential)"
    r"[\w-]*[\"']?\s*[:=]\s*[\"']?(?P<value>[A-Za-z0-9_\-+/=.~]{16,})")
_PLACEHOLDER = re.compile(r"^(?:x+|\*+|<.*>|\$\{.*\}|\{\{.*\}\}|(?:your|my|example|changeme|password|redacted).*)$", re.I)
ENTROPY_THRESHOLD = 3.5


class Finding(NamedTuple):
    rule: str
    what: str
    line: int


def entropy(value: str) -> float:
    """Shannon entropy in bits per character."""
    counts = Counter(value)
    return -sum(c / len(value) * math.log2(c / len(value)) for c in counts.values())


def _line_findings(line: str, number: int) -> list[Finding]:
    found = []
    for rule, what, pattern in _RULES:
        match = pattern.search(line)
        if match and not (rule == "url-password" and _PLACEHOLDER.match(match.group("value"))):
            found.append(Finding(rule, what, number))
    match = _ASSIGNMENT.search(line)
    if match and not found:
        value = match.group("value")
        if not _PLACEHOLDER.match(value) and entropy(value) >= ENTROPY_THRESHOLD:
            found.append(Finding("generic-secret", "a high-entropy secret assigned to a key, token or password", number))
    return found


def scan(text: str) -> list[Finding]:
    """Every secret-looking line in `text` (at most one finding per rule per line)."""
    findings: list[Finding] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if ALLOW_MARKER not in line:
            findings.extend(_line_findings(line, number))
    return findings
