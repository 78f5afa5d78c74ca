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

# (rule, what it is, literals one of which must appear in the line, pattern). The literal
# prefilter (as gitleaks does with keywords) means a pattern is compiled and run only when it
# could match: compiling all of them costs ~8 ms, which every commit's hook would pay.
_RULES: tuple[tuple[str, str, tuple[str, ...], str], ...] = (
    ("private-key", "a private key block", ("PRIVATE KEY",),
     r"-----BEGIN[ A-Z0-9]*PRIVATE KEY( BLOCK)?-----"),
    ("aws-access-key", "an AWS access key id", ("AKIA", "ASIA", "ABIA", "ACCA"),
     r"\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b"),
    ("github-token", "a GitHub token", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
     r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{60,})\b"),
    ("gitlab-token", "a GitLab token", ("glpat-", "glptt-", "gldt-", "glrt-"),
     r"\bgl(?:pat|ptt|dt|rt)-[A-Za-z0-9_-]{20,}"),
    ("slack-token", "a Slack token or webhook", ("xox", "hooks.slack.com"),
     r"\bxox[abposr]-[A-Za-z0-9-]{10,}|hooks\.slack\.com/services/T[A-Za-z0-9]+/B[A-Za-z0-9]+/[A-Za-z0-9]+"),
    ("anthropic-key", "an Anthropic API key", ("sk-ant-",),
     r"\bsk-ant-[a-z]+\d*-[A-Za-z0-9_-]{32,}"),
    ("openai-key", "an OpenAI API key", ("T3BlbkFJ", "sk-proj-", "sk-svcacct-", "sk-admin-"),
     r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{16,}T3BlbkFJ[A-Za-z0-9_-]{16,}"
     r"|\bsk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{40,}"),
    ("jwt", "a JSON Web Token", ("eyJ",),
     r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
    ("url-password", "a URL with a password", ("://",),
     r"\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s/:@]+:(?P<value>[^\s/@]{3,})@[^\s/@]+"),
)
_KEYWORDS = ("key", "secret", "token", "passw", "pwd", "credential")
# keyword, a few more name characters, `=` or `:`, then a value that is one whole token.
# Quantifiers are bounded so that no line can make the search quadratic.
_ASSIGNMENT = (
    r"(?i)(?:api[_-]?key|apikey|secret|token|passw(?:or)?d|access[_-]?key|auth[_-]?key|private[_-]?key|credential)"
    r"[\w-]{0,24}[\"']?\s{0,4}[:=]\s{0,4}[\"']?(?P<value>[A-Za-z0-9_\-+/=.~]{16,256})(?=[\"'\s,;)]|$)")
# Whole values that are obviously not secrets.
_PLACEHOLDER = (r"^(?:x{3,}|\*{3,}|<[^>]*>|\$\{[^}]*\}|\{\{[^}]*\}\}|changeme|password|redacted|none|null"
                r"|(?:your|my|an?|the|example|sample|dummy|fake|test)[-_]?(?:api[-_]?)?"
                r"(?:key|token|secret|password|pass)(?:[-_]?here)?)$")
# Values that name something rather than hold it: dotted paths (settings.API_KEY),
# environment-variable names, file paths.
_NOT_A_VALUE = r"^(?:[A-Za-z_][\w-]*(?:\.[A-Za-z_][\w-]*)+|[A-Z][A-Z0-9_]*|[./~].*)$"
ENTROPY_THRESHOLD = 3.5


class Finding(NamedTuple):
    rule: str
    what: str
    line: int


def entropy(value: str) -> float:
    """Shannon entropy in bits per character."""
    counts = Counter(value)
    return -sum(c / len(value) * math.log2(c / len(value)) for c in counts.values())


def _placeholder(value: str) -> bool:
    return re.match(_PLACEHOLDER, value, re.IGNORECASE) is not None


def _line_findings(line: str, number: int) -> list[Finding]:
    found = []
    for rule, what, literals, pattern in _RULES:
        if not any(literal in line for literal in literals):
            continue
        match = re.search(pattern, line)  # re caches compiled patterns
        if match and not (rule == "url-password" and _placeholder(match.group("value"))):
            found.append(Finding(rule, what, number))
    lowered = line.lower()
    if not found and any(k in lowered for k in _KEYWORDS):
        for match in re.finditer(_ASSIGNMENT, line):
            if _secret_like(match.group("value")):
                found.append(Finding("generic-secret", "a high-entropy secret assigned to a key, token or password",
                                     number))
                break
    return found


def _secret_like(value: str) -> bool:
    """A random-looking credential: letters and digits, high entropy, not a name or a placeholder."""
    return (any(c.isdigit() for c in value) and any(c.isalpha() for c in value)
            and entropy(value) >= ENTROPY_THRESHOLD and not _placeholder(value)
            and re.match(_NOT_A_VALUE, value) is None)


def redact(text: str, mark: str = "[{rule}]") -> str:
    """`text` with every token-shaped secret replaced by `mark` naming its rule."""
    for rule, _, literals, pattern in _RULES:
        if any(literal in text for literal in literals):
            text = re.sub(pattern, mark.format(rule=rule).replace("\\", "\\\\"), text)
    return text


def scan(text: str) -> list[Finding]:
    """Every secret-looking line in `text` (at most one finding per rule per line)."""
    findings: list[Finding] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if ALLOW_MARKER not in line:
            findings.extend(_line_findings(line, number))
    return findings
