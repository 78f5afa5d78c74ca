"""A value beside the name of a credential: the secrets no issuer's prefix gives away.

Most credentials are told by where they stand, not by their shape: `DD_API_KEY=...`,
`password: ...`, `-H "X-Api-Key: ..."`, `mysql -p...`, `sshpass -p ...`, "the Datadog API key we
use in prod is ...", "use ... as the client secret". A line is cut into candidate values (runs of
printable ASCII without spaces or quotes), each with its **label**: the name it is assigned to
(`NAME=value`, `name: value`, a flag, a header), else the nearest naming word before it in the
sentence (up to eight words back), else one after it ("... as the client secret",
"> /etc/wireguard/private.key"). A label names a credential when its last word is one
(`password`, `secret`, `token`, `key`, `pat`, `seed`, `psk`, ...) and not an identifier or a digest
(`token_id`, `token_hash`, `key fingerprint`, `secretKeyRef`, `sha256`).

A value then counts when it looks random for what its label promises: after a password's name,
six characters of two kinds (`hunter22`) or a long run of one; after a key's or a token's name,
sixteen characters of two kinds (or eight of three) with some entropy, or a long hex run; after
a one-letter flag (`-p`, `-a`, `-w`, `-t`), only values that would pass as a key's. Never a
placeholder (`<your key>`, `${VAR}`, `xxxx`, `changeme`, AWS's `...EXAMPLE`), a variable or
setting name, a path, a URL, an e-mail address, a number, a version, a date or a digest
(`sha256:...`).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterator

# Words (of a label cut at non-letters and camelCase) that name a credential ...
CREDENTIAL = frozenset({
    "password", "passwd", "passphrase", "passcode", "pass", "pwd", "pw", "secret", "secrets", "token", "key",
    "apikey", "credential", "credentials", "creds", "auth", "bearer", "seed", "psk", "sig", "signature",
    "license", "dsn", "pat", "salt", "totp", "otp", "2fa", "mfa", "accesskey", "privatekey", "sas",
    "ppk", "login", "authorization"})
PASSWORD = frozenset({"password", "passwd", "passphrase", "passcode", "pass", "pwd", "pw", "psk", "2fa"})
# ... and words that name something else about it: an id, a digest, where it is kept, its rules.
NOT_A_VALUE = frozenset({
    "id", "ids", "uuid", "hash", "sha", "sha1", "sha256", "sha384", "sha512", "md5", "digest", "checksum",
    "fingerprint", "integrity", "commit", "rev", "revision", "version", "public", "pub", "arn", "event",
    "request", "trace", "traceparent", "build", "ref", "name", "path", "file", "dir", "env", "var", "header",
    "field", "type", "format", "length", "policy", "rotation", "expiry", "expires", "ttl", "url", "uri", "host",
    "prefix", "hint", "scope", "scopes", "endpoint", "region", "count", "size", "algorithm",
    "stdin", "prompt", "manager", "store", "vault", "rotate", "reset", "mode", "strength", "change"})
# Words that make the rest public: a public key, a certificate.
PUBLIC = frozenset({"public", "pub", "cert", "certificate", "certificates"})
# Flags of one or two letters that take a password or a token in the commands people paste.
SHORT_FLAGS = {"p": "password", "pw": "password", "ap": "password", "w": "password", "a": "flag", "t": "flag",
               "k": "flag"}
# Flags that pass a value on for the name before them: `gh secret set NAME --body VALUE`.
PASSING = frozenset({"body", "value", "data", "from-literal", "literal"})
NEAR = 2  # an id's or a digest's name this close before a value names it (`request id was <uuid>`)
LOOKBACK = 8  # words
_VALUE = re.compile(r"[A-Za-z0-9_\-+/=.~!@#$%^&*?:()\[\]{}|\\']{6,4096}")
_WORD = re.compile(r"[A-Za-z0-9]+")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_NAME_EQ = re.compile(r"(-{0,2}[A-Za-z_][\w./\-]{0,80})=(?=[^=])")
_PLACEHOLDER = re.compile(
    r"^(?:x{3,}|\*{3,}|\.{3,}|<[^>]*>?|\$\{[^}]*\}?|\$\(.*|\$[A-Za-z_]\w*|%[A-Za-z_]\w*%|\{\{.*|changeme\w*|password\w*"
    r"|redacted|none|null|true|false|undefined|hunter2|secret|foobar|placeholder|dummy|sample|example"
    r"|(?:your|my|an?|the|example|sample|dummy|fake|test)[-_]?(?:api[-_]?)?(?:key|token|secret|password|pass)"
    r"(?:[-_]?here)?)$", re.IGNORECASE)
_MASKED = re.compile(r"(?i)x{6,}|\*{4,}|\.{4,}|0{8,}|123456789|abcdefgh")
# Code, paths and image names: `hashlib.sha256).hexdigest()`, `secret/prod/db`, `acme/web:4.0.6`, `HKLM\SOFTWARE`.
_CODE = re.compile(r"[A-Za-z_]{3,}\.[A-Za-z_]{3,}\w*\(|[A-Za-z_]{4,}\(\w*\)|\)\.[a-z]|[A-Za-z_]{3,}[\[{(][\w'\"\])}]"
                   r"|[\]})][.\[]"
                   r"|\{[A-Za-z_][\w.:\[\]'\"]*\}|\b[a-z_]{2,}\.[a-z_]{2,}\b|\[\^?[\w\\]-[\w\\]|\(\.\*"
                   r"|^[A-Za-z0-9]{1,12}(?:-[A-Za-z]{2,12})+$"
                   r"|^(?:[a-z][a-z0-9_.@-]*|[a-z0-9_.@-]{1,8})(?:/(?:[a-z][a-z0-9_.@-]*|[a-z0-9_.@-]{1,8}))+(?::[\w.-]+)?/?$"
                   r"|\\[A-Za-z]{2,}")
_ENV_NAME = re.compile(r"^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$|^[A-Z]{1,12}$")
_DOTTED = re.compile(r"^[A-Za-z_](?:[A-Za-z_-]|\d(?!(?:\D*\d){3})){0,60}(?:\.[A-Za-z_](?:[A-Za-z_-]|\d(?!(?:\D*\d){3}))"
                     r"{0,60})+(?:\(\))?$")
_NUMBERISH = re.compile(r"^[v#]?[\d.,:_/+-]+[a-z]{0,3}$")
_EMAIL = re.compile(r"^[\w.+-]+@[\w-]+(?:\.[\w-]+)+$")
_DIGEST = re.compile(r"^(?:sha\d{1,3}|md5|h1|blake2b?)[:\-=]", re.IGNORECASE)
_HEX = re.compile(r"^[0-9a-fA-F-]{20,}$")
_EDGES = "\"'`()[]{}<>,;:.!?|\\"


def entropy(value: str) -> float:
    """Shannon entropy in bits per character."""
    counts = Counter(value)
    return -sum(c / len(value) * math.log2(c / len(value)) for c in counts.values())


def words(label: str) -> list[str]:
    """The lower-case words of a label: `AWS_SECRET_ACCESS_KEY` and `awsSecretAccessKey` alike."""
    return [w.lower() for part in _WORD.findall(label) for w in _CAMEL.split(part) if w]


def kind(label_words: list[str]) -> str:
    """What a label names: "password", "credential", "flag", or "" (nothing secret, or an id)."""
    if not label_words or any(w in PUBLIC for w in label_words):
        return ""
    last = label_words[-1]
    if last in NOT_A_VALUE or last.startswith(("sha", "md5", "trace")):
        # `private_key_id` of a service account key file travels with the key: kept out too
        return "credential" if label_words[-3:] == ["private", "key", "id"] else ""
    # the credential's word is the last, or followed by one that qualifies it (`API_TOKEN_PROD`)
    named = label_words[-2:] if last in QUALIFIERS else label_words[-1:]
    if any(w in PASSWORD or "passw" in w for w in named):
        return "password"
    if any(w in CREDENTIAL or w.endswith(("token", "secret", "passwd", "password", "apikey")) for w in named):
        return "credential"
    return ""


QUALIFIERS = frozenset({"prod", "production", "dev", "development", "staging", "stage", "test", "qa", "live", "value",
                        "str", "b64", "base64", "hex", "raw", "base", "new", "old", "current", "v1", "v2", "1", "2",
                        "override", "local", "default", "encoded", "plain", "cleartext"})


def looks_random(value: str, label: str, strict: bool = False) -> bool:
    """Whether `value`, named by a label of kind `label`, looks like a credential; `strict` when the
    name was read from a sentence rather than given by an assignment, a flag or a header."""
    if len(value) < 6 or _PLACEHOLDER.match(value) or _MASKED.search(value) or "EXAMPLE" in value \
            or _ENV_NAME.match(value) or _DOTTED.match(value) or _NUMBERISH.match(value) or _EMAIL.match(value) \
            or _DIGEST.match(value) or "://" in value or _CODE.search(value) \
            or value.startswith(("/", "~", "./", "../", "@")) or re.match(r"--?[A-Za-z][A-Za-z-]*$", value) \
            or max(Counter(value).values()) > len(value) / 2:
        return False
    lower, upper, digit = (any(c.islower() for c in value), any(c.isupper() for c in value),
                           any(c.isdigit() for c in value))
    symbol = any(not c.isalnum() and c not in "-_." for c in value)
    kinds = lower + upper + digit + symbol
    separated = any(c in "-_." for c in value)
    bits = entropy(value)
    short = 8 if strict else 6
    if not digit and not symbol and _identifier(value):
        return False
    if label == "password":
        return (len(value) >= short and kinds >= 2 and (digit or symbol or len(value) >= 10 and not strict)
                and bits >= 2.5) \
            or (len(value) >= (14 if strict else 12) and not separated and bits >= 3.0)
    if _HEX.match(value) and sum(c.isdigit() for c in value) >= 4:
        return True
    if len(value) >= 16 and kinds >= 2 and digit and bits >= 3.3:
        return True
    if label == "flag" or strict:
        return len(value) >= 12 and kinds >= 3 and bits >= 3.2
    return (len(value) >= 8 and kinds >= 3 and bits >= 2.8) \
        or (len(value) >= 16 and not separated and kinds >= 2 and bits >= 3.3) \
        or (len(value) >= 24 and kinds >= 2 and bits >= 3.8)


_MIXED = re.compile(r"[^A-Za-z]|.[A-Z]")


def _identifier(value: str) -> bool:
    """Whether a value of letters alone reads as a name: `adminPasswordKey`, `db_credentials`."""
    parts = [p for w in re.split(r"[-_.]", value) for p in _CAMEL.split(w) if p]
    return len(parts) >= 2 and all(len(p) >= 3 and re.search(r"[aeiouyAEIOUY]", p) for p in parts)


def values(line: str) -> Iterator[tuple[int, int, str]]:
    """(start, end, rule) of each value `line` gives a credential (see the module's rules)."""
    pgpass = PGPASS.match(line)
    if pgpass and looks_random(pgpass.group(1), "password"):
        yield pgpass.start(1), pgpass.end(1), "password"
        return
    for match in _VALUE.finditer(line):
        token, offset = _trimmed(match.group())
        start = match.start() + offset
        label, at = "", 0
        while True:  # NAME=value, --flag=NAME=value
            named = _NAME_EQ.match(token, at)
            if not named:
                break
            label, at = named.group(1), named.end()
        value, offset = _trimmed(token[at:]) if at else (token, 0)
        if len(value) < 6 or len(value) < 12 and not _MIXED.search(value):
            continue  # a plain short word: nothing a name could make a credential (the common case)
        after = start + at + offset + len(value)
        colon = after + (line[after:after + 1] in ("'", '"'))
        if line[colon:colon + 1] == ":" and line[colon + 1:colon + 2] in ("", " ", "\t"):
            continue  # `name:` of a YAML mapping or a sentence: a name, never a value
        found = _judged(line, start + at + offset, value, label)
        if found:
            yield found


# ~/.pgpass: host:port:database:user:password
PGPASS = re.compile(r"^\s*[\w.*-]+:(?:\d+|\*):[\w.*-]+:[\w.*@-]+:(\S{6,128})\s*$")


def _trimmed(text: str) -> tuple[str, int]:
    """`text` without the quotes, brackets and punctuation around it, and how much went at its start."""
    if text[:1] == "'" and "'" in text[1:]:  # a quoted value is taken whole, `!` and all
        return text[1:text.index("'", 1)], 1
    core = text.strip(_EDGES)
    return core, text.find(core) if core else 0


def _judged(line: str, at: int, value: str, label: str) -> tuple[int, int, str] | None:
    """(start, end, rule) of `value` (standing at `at` in `line`) when it is a credential."""
    if len(value) < 6:
        return None
    before = line[max(0, at - 160):at].rstrip("'\"`")
    if ":" in value and [t.strip("'\"`") for t in before.split()[-2:]][-1:] in (["-u"], ["--user"]):
        user, _, password = value.partition(":")  # curl -u name:password, or -u KEY: (the key as the name)
        if password:
            return _judged(line, at + len(user) + 1, password, "password")
        return (at, at + len(user), "generic-secret") if looks_random(user, "credential") else None
    if label.startswith("-") and label.lstrip("-") in SHORT_FLAGS:
        named = SHORT_FLAGS[label.lstrip("-")]
    else:
        named = kind(words(label)) if label else _before(before) or _after(line[at + len(value):at + len(value) + 80])
    if named and looks_random(value, named, strict=not label and not _flagged(before)):
        return at, at + len(value), "password" if named == "password" else "generic-secret"
    if not label and value.startswith("-p") and len(value) > 7 and looks_random(value[2:], "password", strict=True):
        return at + 2, at + len(value), "password"  # mysql -pSECRET
    if not named and _AWS_SECRET.match(value) and _random_bytes(value):
        return at, at + len(value), "aws-secret-key"  # 40 characters of base64 from nowhere: AWS's shape
    return None


def _flagged(before: str) -> bool:
    """Whether the value is given right after a flag or a key's name (`--token V`, `KEY: V`, `-p V`)."""
    last = before.split()[-1:]
    return bool(last) and (last[0].startswith("-") or last[0].rstrip("\"'`").endswith((":", "=")))


_AWS_SECRET = re.compile(r"^(?=.*[a-z])(?=.*[A-Z])(?=.*\d)[A-Za-z0-9/+]{40}$")


def _random_bytes(value: str) -> bool:
    """Whether base64 `value` is random, not text encoded (`ZmVhdHVyZSBmbGFncw...`)."""
    import base64
    import binascii

    if entropy(value) < 4.3:
        return False
    try:
        decoded = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return True
    return sum(32 <= b < 127 for b in decoded) < len(decoded) * 0.9


def _before(text: str) -> str:
    """The kind of the nearest naming word before a value: a flag, a key, a header, a sentence's noun."""
    tokens = text.split()[-LOOKBACK:]
    if tokens and tokens[-1].lower() in _ELSEWHERE:
        return ""  # "it's in 1Password", "through Vault": where it is kept, not what it is
    for distance, token in enumerate(reversed(tokens), start=1):
        ahead = tokens[-distance - 1] if distance < len(tokens) else ""
        bare = token.strip(_EDGES)
        if bare.startswith(("/", "~", "./")) or bare.lower() in _PROSE_VERBS:
            continue  # a path, or "pass" as in "once the checks pass": not a name
        found = kind(words(token))
        if len(token) > 80 or (not found or len(token) >= 32) and looks_random(token.strip(_EDGES), "credential"):
            continue  # another value, not a name
        flag = token.lstrip("-").rstrip("=")
        if token.startswith("-") and flag in SHORT_FLAGS:
            return SHORT_FLAGS[flag] if distance == 1 else ""
        if token.startswith("-") and flag in PASSING:
            continue
        if found:
            return "" if any(w in PUBLIC for w in words(ahead)) else found  # "PUBLIC KEY", "public key:"
        if token.startswith("-") or distance <= NEAR and any(w in NOT_A_VALUE or w.startswith(("sha", "md5"))
                                                              for w in words(token)):
            return ""  # the value is another flag's, or an id's
    return ""


_PROSE_VERBS = frozenset({"pass", "passes"})
_ELSEWHERE = frozenset({"in", "into", "under", "through", "via", "from", "with", "using", "at", "on", "to", "by"})


_AS_THE = re.compile(r"^\W{0,3}\s+(?:as|is)\s+(?:the|our|my|an?|your)\s")


def _after(text: str) -> str:
    """The kind a value is given after it: "... as the client secret", "> ~/.ssh/private.key"."""
    lead = _AS_THE.match(text)
    if lead:
        return kind(_last_naming(text[lead.end():]))
    parts = text.split()
    if len(parts) > 1 and parts[0] == ">":
        return kind(words(parts[1]))
    return ""


def _last_naming(text: str) -> list[str]:
    """The words of the noun phrase after "as the": up to the first word that is not part of it."""
    out = []
    for w in words(" ".join(text.split()[:6])):
        out.append(w)
        if w in CREDENTIAL or w in NOT_A_VALUE:
            break
    return out
