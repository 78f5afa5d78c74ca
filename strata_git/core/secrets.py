"""Secret detection for everything that would enter a commit.

Two sets of rules, run on every line:

- **detect-secrets' own** (the maintained package, a dependency): the regular expressions of its
  pattern plugins (AWS, Azure storage, GitHub, GitLab, Slack, Stripe, SendGrid, Twilio, npm,
  PyPI, OpenAI, Discord, Telegram, Mailchimp, Square, JWT, private keys and more), read from the
  installed package the first time and kept in a per-user cache keyed by its files, so a commit
  hook does not pay the package's ~100 ms import. Left out: its public-IP rule (an IP address is
  not a secret), its URL-password rule (ours tells placeholders apart), and its entropy and
  keyword plugins, which flag every hash and UUID a note holds.
- **ours**, where it falls short: formats it does not know (Google, Hugging Face, Shopify,
  DigitalOcean, Databricks, Vault, Sentry DSNs, age keys and a dozen more), Stripe keys of any
  length and test keys, bearer and basic-auth headers, and values assigned to a key, token,
  secret or password (with symbols, when quoted) that look random.

Before matching, zero-width and soft-hyphen characters are taken out of a line, so a key split
by one is still found. AWS's documented example keys (`...EXAMPLE`) are not secrets. A finding
names the rule and the line, never the secret. A line containing `strata:allow-secret` is
skipped, for the rare false positive.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any, NamedTuple

ALLOW_MARKER = "strata:allow-secret"
# Every token detect-secrets' patterns find is a run of 12 or more characters without a space or a
# slash (or a key block's header): a line without one, such as most names, needs none of them,
# and a command that only reads a name does not load them at all.
_TOKENISH = re.compile(r"[^\s/]{12,}")
_INVISIBLE = re.compile("[\u00ad\u180e\u200b-\u200f\u2060-\u2064\ufeff]")

# (rule, what it is, literals one of which must appear in the line, pattern). The literal
# prefilter (as gitleaks does with keywords) means a pattern is compiled and run only when it
# could match: compiling all of them costs ~8 ms, which every commit's hook would pay.
_RULES: tuple[tuple[str, str, tuple[str, ...], str], ...] = (
    ("private-key", "a private key block", ("PRIVATE KEY",),
     r"-----BEGIN[ A-Z0-9]*PRIVATE KEY( BLOCK)?-----"),
    ("putty-key", "a PuTTY private key", ("PuTTY-User-Key-File-",), r"PuTTY-User-Key-File-\d+:"),
    ("aws-access-key", "an AWS access key id", ("AKIA", "ASIA", "ABIA", "ACCA"),
     r"\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b"),
    ("github-token", "a GitHub token", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
     r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{60,})\b"),
    ("gitlab-token", "a GitLab token", ("glpat-", "glptt-", "gldt-", "glrt-"),
     r"\bgl(?:pat|ptt|dt|rt)-[A-Za-z0-9_-]{20,}(?:\.[0-9a-z]{2}\.[0-9a-z]{5,12}\b)?"),
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
     r"\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s/:@]{0,128}:(?P<value>[^\s/]{3,256}?)@[\w.-]+(?=[:/?#\s\"'`]|$)"),
    ("url-query-secret", "a secret in a URL's query", ("=",),
     r"(?i)[?&;](?:api[_-]?key|apikey|app[_-]?id|app[_-]?key|access[_-]?(?:token|key)|auth[_-]?token|private[_-]?token"
     r"|secret[_-]?key|token|key|secret"
     r"|client[_-]?secret|sig|signature|password|pwd|passwd|auth)=(?P<value>[^&\s#\"'<>`]{8,1024})"),
    ("stripe-key", "a Stripe secret or restricted key", ("k_live_", "k_test_"),
     r"\b[rs]k_(?:live|test)_[0-9a-zA-Z]{20,247}\b"),
    ("google-api-key", "a Google API key", ("AIza",), r"\bAIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])"),
    ("huggingface-token", "a Hugging Face token", ("hf_",), r"\bhf_[A-Za-z]{34}\b"),
    ("npm-token", "an npm token", ("npm_",), r"\bnpm_[A-Za-z0-9]{36}\b"),
    ("shopify-token", "a Shopify token", ("shpat_", "shpca_", "shppa_", "shpss_"),
     r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b"),
    ("digitalocean-token", "a DigitalOcean token", ("_v1_",), r"\bdo[por]_v1_[a-f0-9]{64}\b"),
    ("databricks-token", "a Databricks token", ("dapi",), r"\bdapi[a-f0-9]{32}(?:-\d)?\b"),
    ("linear-key", "a Linear API key", ("lin_api_",), r"\blin_api_[A-Za-z0-9]{40}\b"),
    ("notion-token", "a Notion integration token", ("secret_", "ntn_"),
     r"\bsecret_[A-Za-z0-9]{43}\b|\bntn_[A-Za-z0-9]{46}\b"),
    ("doppler-token", "a Doppler token", ("dp.",), r"\bdp\.(?:st|ct|sa|scim|audit|pt)\.[A-Za-z0-9_.-]{40,}"),
    ("grafana-token", "a Grafana token", ("glsa_", "glc_"),
     r"\bglsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}\b|\bglc_[A-Za-z0-9+/]{32,}={0,2}"),
    ("vault-token", "a HashiCorp Vault token", ("hvs.", "hvb."), r"\bhv[sb]\.[A-Za-z0-9_-]{24,}"),
    ("terraform-token", "a Terraform Cloud token", ("atlasv1",),
     r"\b[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,}"),
    ("sentry-dsn", "a Sentry DSN with its key", ("sentry.io",),
     r"\bhttps?://[a-f0-9]{32}(?::[a-f0-9]{32})?@[\w.-]*sentry\.io/\d+"),
    ("mailgun-key", "a Mailgun API key", ("key-",), r"\bkey-[a-f0-9]{32}\b"),
    ("age-secret-key", "an age secret key", ("AGE-SECRET-KEY-",),
     r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}"),
    ("atlassian-token", "an Atlassian API token", ("ATATT3",), r"\bATATT3[A-Za-z0-9_=-]{40,}"),
    ("facebook-token", "a Facebook access token", ("EAA",), r"\bEAA[A-Z][A-Za-z0-9]{80,}"),
    ("planetscale-token", "a PlanetScale token", ("pscale_",), r"\bpscale_(?:tkn|pw|oauth)_[A-Za-z0-9_.-]{32,64}"),
    ("pulumi-token", "a Pulumi token", ("pul-",), r"\bpul-[a-f0-9]{40}\b"),
    ("supabase-token", "a Supabase token", ("sbp_",), r"\bsbp_[a-f0-9]{40}\b"),
    ("bearer-token", "a bearer token", ("earer", "EARER"), r"(?i)\bbearer[ \t]+[A-Za-z0-9_\-.~+/]{20,}=*"),
    ("basic-auth-header", "a basic-auth header", ("asic", "ASIC"),
     r"(?i)\bauthorization:[ \t]*basic[ \t]+[A-Za-z0-9+/]{12,}={0,2}"),
)
# Whole values that are obviously not secrets; and AWS's documented example keys.
_PLACEHOLDER = (r"^(?:x{3,}|\*{3,}|<[^>]*>|\$\{[^}]*\}|\{\{[^}]*\}\}|changeme|password|redacted|none|null"
                r"|(?:your|my|an?|the|example|sample|dummy|fake|test)[-_]?(?:api[-_]?)?"
                r"(?:key|token|secret|password|pass)(?:[-_]?here)?|user|username|pass|pw|pwd|passwd|secret)$")
# Words after which a value can hold a credential: the context rules (credentials.py) run only
# on lines holding one, or a flag they know.
_CONTEXT_WORDS = ("pass", "pwd", "pw", "secret", "token", "key", "cred", "auth", "bearer", "seed", "psk", "sig",
                  "licen", "webhook", "dsn", "pat", "salt", "otp", "2fa", "mfa", "sas", "ppk", "login", " -", "--")
_VALUED = ("url-password", "url-query-secret")  # rules whose `value` group is the secret
_CONTEXT = {"generic-secret": "a high-entropy secret named a key, token or secret",
            "password": "a password", "aws-secret-key": "an AWS secret access key"}


class Finding(NamedTuple):
    rule: str
    what: str
    line: int


def _placeholder(value: str) -> bool:
    return re.match(_PLACEHOLDER, value, re.IGNORECASE) is not None or "EXAMPLE" in value \
        or re.search(r"(?i)x{6,}|\*{4,}", value) is not None


_Rule = tuple[str, str, tuple[str, ...], str]  # (rule, what it is, literals, pattern), as issuers.RULES
_all: tuple[_Rule, ...] | None = None
_rule_literals: list[tuple[str, int]] = []  # (literal, its rule's index in _rules()) of every rule


def _rules() -> tuple[_Rule, ...]:
    """git-strata's own prefix rules, then the issuers' (issuers.py)."""
    global _all, _rule_literals
    if _all is None:
        from strata_git.core import issuers

        _all = _RULES + issuers.RULES
        _rule_literals = [(literal, i) for i, rule in enumerate(_all) for literal in rule[2]]
    return _all


def _candidates(line: str) -> list[_Rule]:
    """The rules one of whose literals is in `line`, in table order. One pass over a flat list of
    the ~190 literals: 2-4 times faster at every line length than a test of each rule's literals
    (a generator per rule) or one search of an alternation of them all."""
    rules = _rules()
    return [rules[i] for i in sorted({i for literal, i in _rule_literals if literal in line})]


def _line_findings(line: str, number: int) -> list[Finding]:
    found = []
    for rule, what, _literals, pattern in _candidates(line):
        match = re.search(pattern, line)  # re caches compiled patterns
        if match and _counts(rule, match):
            found.append(Finding(rule, what, number))
            break
    if not found and (_TOKENISH.search(line) or "PRIVATE KEY" in line or "PuTTY" in line):
        lowered = line.lower()
        for rule, what, literals, lazy in _maintained_rules():
            if literals and not any(literal in (lowered if lazy.ignores_case else line) for literal in literals):
                continue
            match = lazy.search(line)
            if match and _real(rule, match.group()):
                found.append(Finding(rule, what, number))
                break
    if not found:
        context = next(_in_context(line), None)
        if context:
            found.append(Finding(context[2], _CONTEXT[context[2]], number))
    return found


_WORDLIKE = ("artifactory-credentials", "twilio-api-key")  # their patterns also match plain words and ids


def _real(rule: str, token: str) -> bool:
    """Whether a maintained rule's match is a credential: not AWS's example, and for the rules
    whose shape ordinary words take too (`APEXintegration`), random enough to hold a digit."""
    return not _placeholder(token) and (rule not in _WORDLIKE or any(c.isdigit() for c in token))


def _in_context(line: str) -> Iterator[tuple[int, int, str]]:
    """(start, end, rule) of each value `line` gives a credential by its name (credentials.py, imported
    only for a line that could hold one: ~3 ms of patterns to compile)."""
    lowered = line.lower()
    if any(word in lowered for word in _CONTEXT_WORDS) or _FORTY.search(line) or line.count(":") >= 4:
        from strata_git.core import credentials

        yield from credentials.values(line)


_FORTY = re.compile(r"(?<![A-Za-z0-9/+])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])")  # AWS's secret key shape


# A line is matched in pieces of at most PIECE characters, each overlapping the next by OVERLAP,
# and with runs of spaces shortened: some patterns take quadratic or cubic time in a line's
# length (or in a run of spaces), and a memory may be one 1 MiB line. A token is far shorter.
PIECE = 1024
OVERLAP = 256
_SPACES = re.compile(r"[ \t]{3,}")


def _pieces(line: str) -> list[str]:
    line = _SPACES.sub("  ", _INVISIBLE.sub("", line))
    if len(line) <= PIECE:
        return [line]
    return [line[i:i + PIECE] for i in range(0, len(line) - OVERLAP, PIECE - OVERLAP)]


def redact(text: str, mark: str = "[{rule}]") -> str:
    """`text` with every secret replaced by `mark` naming its rule: a token whole (zero-width
    characters taken out first, so a split key is replaced whole), an assigned value by itself.
    A line over PIECE characters that holds one is replaced whole."""
    out = []
    compiled: list[tuple[str, str, re.Pattern]] | None = None  # detect-secrets' rules, compiled once if needed
    text = _INVISIBLE.sub("", text)
    if "PRIVATE KEY" in text or "PuTTY-User-Key-File-" in text:
        text = _blocks(text, mark)
    for line in text.split("\n"):
        if len(line) > PIECE or _SPACES.search(line):
            found = _line_findings(line, 0) if len(line) <= PIECE else [f for p in _pieces(line)
                                                                          for f in _line_findings(p, 0)]
            out.append(mark.format(rule=found[0].rule) if found else line)
            continue
        compiled = compiled if compiled is not None or not _TOKENISH.search(line) else maintained()
        for start, end, rule in reversed(_merged(_spans(line, compiled or []))):
            line = line[:start] + mark.format(rule=rule) + line[end:]
        out.append(line)
    return "\n".join(out)


def _spans(line: str, compiled: list[tuple[str, str, re.Pattern[str]]]) -> list[tuple[int, int, str]]:
    """(start, end, rule) of every secret in `line`, by every rule, all read from the line as it is."""
    found: list[tuple[int, int, str]] = []
    for rule, _, _literals, pattern in _candidates(line):
        found += [(*m.span("value" if rule in _VALUED else 0), rule) for m in re.finditer(pattern, line)
                  if _counts(rule, m)]
    for rule, _, regex in compiled:
        found += [(*m.span(), rule) for m in regex.finditer(line) if _real(rule, m.group())]
    return found + list(_in_context(line))


def _merged(spans: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """Overlapping spans as one (the rule of the first), in order."""
    out: list[tuple[int, int, str]] = []
    for start, end, rule in sorted(spans):
        if out and start < out[-1][1]:
            out[-1] = (out[-1][0], max(end, out[-1][1]), out[-1][2])
        else:
            out.append((start, end, rule))
    return out


_BLOCK = re.compile(r"-----BEGIN[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----|PuTTY-User-Key-File-\d+:")
_BLOCK_END = re.compile(r"-----END[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----|Private-MAC: *[0-9a-fA-F]{0,128}")
# What follows a key's header line: base64, armour headers (`Proc-Type: ...`, `Comment: ...`), blank lines.
_KEY_MATERIAL = re.compile(r"[ \t]*(?:[A-Za-z0-9+/=]{16,}|[A-Za-z][\w-]{0,30}: .{0,200}|=[A-Za-z0-9+/]{4}|)[ \t]*")
BLOCK_BYTES = 64 * 1024  # a footer further than this from its header is not looked for


def _blocks(text: str, mark: str) -> str:
    """`text` with each private key block replaced whole by one mark: from its header to its footer,
    on the same line (a JSON string, a summary's one line) or a later one; with no footer, the rest
    of the header's line and the lines of key material under it."""
    out, at = [], 0
    for start in _BLOCK.finditer(text):
        if start.start() < at:
            continue  # inside a block already replaced
        rule = "putty-key" if start.group().startswith("PuTTY") else "private-key"
        end = _BLOCK_END.search(text, start.end(), start.end() + BLOCK_BYTES)
        if end:
            stop = end.end()
        else:
            stop = text.find("\n", start.end())
            stop = len(text) if stop == -1 else stop
            while stop < len(text):
                following = text.find("\n", stop + 1)
                following = len(text) if following == -1 else following
                if not _KEY_MATERIAL.fullmatch(text, stop + 1, following):
                    break
                stop = following
        out += [text[at:start.start()], mark.format(rule=rule)]
        at = stop
    return "".join(out) + text[at:]


def _counts(rule: str, match: re.Match[str]) -> bool:
    """Whether a rule's match is a secret: not a placeholder; for a URL's query, random-looking."""
    if rule not in _VALUED:
        return not _placeholder(match.group())
    from strata_git.core import credentials

    value = match.group("value")
    if rule == "url-password":  # `guest:guest@`, `admin:admin@`: a local default, not a secret
        user = match.group()[match.group().index("://") + 3: match.start("value") - match.start() - 1]
        return not _placeholder(value) and value.lower() not in (user.lower(), "guest", "admin", "root", "test")
    return not _placeholder(value) and credentials.looks_random(value, "credential")


def scan(text: str) -> list[Finding]:
    """Every secret-looking line in `text` (at most one finding per line)."""
    findings: list[Finding] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if ALLOW_MARKER not in line:
            for piece in _pieces(line):
                found = _line_findings(piece, number)
                if found:
                    findings.extend(found)
                    break
    return findings


# -- detect-secrets' rules ------------------------------------------------------------------------

_LEFT_OUT = ("Public IP (ipv4)", "Basic Auth Credentials")
_RULES_VERSION = 2  # of how git-strata reads them (the cache is kept per version)


class _Maintained(NamedTuple):
    rule: str
    what: str
    literals: list[str]
    pattern: _Lazy  # compiled once first needed


_maintained: list[_Maintained] | None = None


def maintained() -> list[tuple[str, str, re.Pattern[str]]]:
    """(rule, what it is, compiled pattern) of detect-secrets' pattern plugins ([] without it)."""
    return [(item.rule, item.what, _compiled(item)) for item in _maintained_rules()]


def _maintained_rules() -> list[_Maintained]:
    """The rules as scan uses them: a pattern is compiled only when a line holds one of its
    literals (the strings any match starts with, told from the pattern when it is read), as for
    our own rules: compiling all of them would cost every commit hook ~4 ms."""
    global _maintained
    if _maintained is None:
        _maintained = [_Maintained(rule, what, literals, _Lazy(pattern, flags))
                       for rule, what, pattern, flags, literals in _patterns()]
    return _maintained


class _Lazy:
    """A pattern compiled on its first search."""

    __slots__ = ("pattern", "flags", "ignores_case", "compiled")

    def __init__(self, pattern: str, flags: int) -> None:
        self.pattern, self.flags = pattern, flags
        self.compiled: re.Pattern[str] | None = None
        self.ignores_case = bool(flags & re.IGNORECASE)

    def search(self, line: str) -> re.Match[str] | None:
        if self.compiled is None:
            self.compiled = re.compile(self.pattern, self.flags)
        return self.compiled.search(line)


def _compiled(item: _Maintained) -> re.Pattern[str]:
    lazy = item.pattern
    if lazy.compiled is None:
        lazy.compiled = re.compile(lazy.pattern, lazy.flags)
    return lazy.compiled


def _literals(pattern: str, flags: int) -> list[str]:
    """Strings one of which every match of `pattern` starts with ([] when that cannot be told;
    lower-cased for a pattern that ignores case)."""
    from re import _constants as c  # type: ignore[attr-defined]  # typeshed has only the deprecated sre_*
    from re import _parser  # type: ignore[attr-defined]

    try:
        parsed = _parser.parse(pattern, flags)
    except re.error:
        return []

    def lead(items: list[tuple[Any, Any]], i: int = 0) -> list[str]:
        """The prefixes a match of items[i:] starts with ("" where nothing more can be told)."""
        if i == len(items):
            return [""]
        op, arg = items[i]
        if op is c.LITERAL:
            return [chr(arg) + rest for rest in lead(items, i + 1)]
        if op is c.AT:
            return lead(items, i + 1)
        if op is c.IN and len(arg) <= 4 and all(o is c.LITERAL for o, _ in arg):
            return [chr(a) + rest for _, a in arg for rest in lead(items, i + 1)][:16]
        if op is c.BRANCH:
            return [p for alternative in arg[1] for p in lead(list(alternative))][:16]
        if op is c.SUBPATTERN:
            return lead(list(arg[3]))
        return [""]

    found = lead(list(parsed))
    if flags & re.IGNORECASE:  # then looked for in the lower-cased line
        found = [p.lower() for p in found]
    return found if all(len(p) >= 2 for p in found) and len(found) < 16 else []


def _patterns() -> list[list[Any]]:
    """detect-secrets' patterns, from the per-user cache when it matches the installed package's
    plugin files (name, size, mtime), else read from the package (~100 ms) and cached."""
    import importlib.util
    import json
    import os
    import zlib

    spec = importlib.util.find_spec("detect_secrets")
    if spec is None or not spec.submodule_search_locations:
        return []
    plugins = os.path.join(list(spec.submodule_search_locations)[0], "plugins")
    try:
        files = sorted((e.name, e.stat().st_size, e.stat().st_mtime_ns) for e in os.scandir(plugins)
                       if e.name.endswith(".py"))
    except OSError:
        return []
    key = f"{zlib.crc32(json.dumps([_RULES_VERSION, _LEFT_OUT, plugins, files]).encode()):08x}"
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    cache = os.path.join(base, "git-strata", f"secret-rules-{key}.json")
    try:
        with open(cache, encoding="utf-8") as f:
            found = json.load(f)
        if isinstance(found, list) and all(isinstance(p, list) and len(p) == 5 for p in found):
            return found
    except (OSError, ValueError):
        pass
    found = _from_detect_secrets()
    try:
        os.makedirs(os.path.dirname(cache), exist_ok=True)
        tmp = f"{cache}.{os.getpid()}.tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(found, f)
        os.replace(tmp, cache)
    except OSError:
        pass  # a read-only home: read from the package again next time
    return found


def _from_detect_secrets() -> list[list[Any]]:
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
    from detect_secrets.plugins.base import BasePlugin, RegexBasedDetector

    # annotated here: the package's own return type, a bare type variable, reads as "no class"
    plugins: Mapping[str, type[BasePlugin]] = get_mapping_from_secret_type_to_class()
    found = []
    for what, plugin in sorted(plugins.items()):
        if what in _LEFT_OUT or not issubclass(plugin, RegexBasedDetector):
            continue
        rule = re.sub(r"[^a-z0-9]+", "-", what.lower()).strip("-")
        found += [[rule, what, p.pattern, p.flags, _literals(p.pattern, p.flags)] for p in plugin().denylist]
    return found
