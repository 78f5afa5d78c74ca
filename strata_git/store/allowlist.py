"""This clone's allowlist of secret false positives: fingerprints, never the text.

A finding's fingerprint is a short sha256 of its rule and its line (stripped), so one false
positive repeated in many commits and files is one entry, and an entry does not give the line
away. The list is `<git dir>/strata/secrets-allow`, one fingerprint a line with an optional
`# comment`: this clone's own, never committed and never synced, since allowing a secret is
a decision about this machine's copy. It is read as untrusted input: a line that is not a
fingerprint is skipped with a warning (which never repeats the line: it may be a pasted secret).

Everything that looks for secrets before text is committed (the pre-commit guard, write,
edit, sync's local edits) and `git strata scan` goes through `check()` here, with the list
read once per command by `load()`.
"""

from __future__ import annotations

import os
import re
import time
from typing import NamedTuple

from strata_git.core import contract, secrets, untrusted
from strata_git.errors import StrataError
from strata_git.gitio.git import Repo

FINGERPRINT = re.compile(r"[0-9a-f]{16}")
MAX_BYTES = 1024 * 1024  # far above any real list; the rest of a larger file is not read
_DOMAIN = "git-strata secret v1"  # fingerprints of another tool's (or version's) never match ours


class Flagged(NamedTuple):
    """A secret secrets.scan found, with its fingerprint."""

    rule: str
    what: str
    line: int
    fingerprint: str


def fingerprint(rule: str, line: str) -> str:
    """16 hex digits of sha256 over the rule and the line: the same false positive anywhere has
    one fingerprint, and it cannot be turned back into the line (which holds a random token)."""
    import hashlib  # here: the commit hook needs it only when something was flagged

    text = f"{_DOMAIN}\0{rule}\0{line.strip()}"
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def check(text: str, allow: frozenset[str] = frozenset()) -> list[Flagged]:
    """Every secret in `text` (secrets.scan's rules) whose fingerprint `allow` does not hold."""
    found = secrets.scan(text)
    if not found:
        return []
    lines = text.splitlines()  # as secrets.scan numbers them
    flagged = [Flagged(f.rule, f.what, f.line, fingerprint(f.rule, lines[f.line - 1])) for f in found]
    return [f for f in flagged if f.fingerprint not in allow]


def path(repo: Repo) -> str:
    return os.path.join(repo.state_dir(), contract.SECRETS_ALLOW)


def load(repo: Repo) -> frozenset[str]:
    """The fingerprints this clone allows (none without the file)."""
    where = path(repo)
    try:
        with open(where, encoding="utf-8", errors="replace") as f:
            return parse(f.read(MAX_BYTES), f".git/strata/{contract.SECRETS_ALLOW}")
    except FileNotFoundError:
        return frozenset()
    except OSError as e:
        untrusted.warn(where, f"cannot read it ({e.strerror}); no secret is allowed")
        return frozenset()


def parse(text: str, where: str) -> frozenset[str]:
    """The fingerprints in `text`; a line that holds something else is skipped with a warning."""
    found = set()
    for number, line in enumerate(text.splitlines(), start=1):
        entry = line.split("#", 1)[0].strip()
        if FINGERPRINT.fullmatch(entry):
            found.add(entry)
        elif entry:
            untrusted.warn(f"{where}:{number}", "not a fingerprint (16 hex digits, as `git strata scan` "
                                                "prints them); line skipped")
    return frozenset(found)


def add(repo: Repo, fingerprints: list[str]) -> list[str]:
    """Append the `fingerprints` the list does not hold yet; those added."""
    for value in fingerprints:
        if not FINGERPRINT.fullmatch(value):
            raise StrataError("--allow takes a fingerprint: 16 hex digits (0-9, a-f), as `git strata scan` prints it",
                              "copy it from the report of `git strata scan` or from the refusal of a commit")
    held = load(repo)
    new = [v for v in dict.fromkeys(fingerprints) if v not in held]
    if new:
        day = time.strftime("%Y-%m-%d", time.gmtime())
        text = "".join(f"{v}  # allowed {day}\n" for v in new)
        fd = os.open(path(repo), os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            size = os.fstat(fd).st_size
            if size and os.pread(fd, 1, size - 1) != b"\n":
                text = "\n" + text  # a last line without its newline must not swallow the first one added
            os.write(fd, text.encode("ascii"))
        finally:
            os.close(fd)
    return new
