"""One exception tree for everything git-strata refuses or fails to do.

Every error carries a one-line message (what is wrong) and a hint (what to do).
The CLI maps them to exit codes in one place (cli.main); the library never prints.
"""

from __future__ import annotations


class StrataError(Exception):
    """Base of every error git-strata raises on purpose."""

    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return self.message


class BadName(StrataError):
    """A memory name that is unsafe or ambiguous."""


class BadMemory(StrataError):
    """Content that is not a valid memory (encoding, frontmatter, size, secrets)."""


class BadConfig(StrataError):
    """`.strata/config.toml` has an unknown key or a bad value."""


class NotFound(StrataError):
    """No memory, repository or file by that name."""


class Refused(StrataError):
    """The operation is valid but the repository's state forbids it right now."""


class GitFailed(StrataError):
    """A git command failed; the message carries git's own last line."""


class Unavailable(StrataError):
    """Derived state cannot be read now without waiting for another process or rebuilding it
    (only for a reader that must answer at once: see catalog.impatient); `rebuild` says whether
    building it afresh would help."""

    def __init__(self, message: str, rebuild: bool = False) -> None:
        super().__init__(message, "run `git strata reindex`" if rebuild else "try again when that process is done")
        self.rebuild = rebuild


def too_large(where: str, size: int, limit: int) -> BadMemory:
    """The one wording of the size limit, wherever it is enforced."""
    return BadMemory(f"{where}: {size} bytes is over the {limit}-byte limit",
                     "split it, or raise limits.max_memory_bytes in .strata/config.toml (above 1 MiB only in "
                     "this clone's .git/strata/config.toml)")
