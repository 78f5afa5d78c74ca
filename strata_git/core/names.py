"""Memory names: untrusted text in, a safe tier-relative path out.

A name is the path of a memory relative to its tier folder, without or with the
`.md` suffix: `projects/koda` and `projects/koda.md` both mean
`active/projects/koda.md` while the memory is active. Everything here is pure:
no file system, no git. Whether a name collides with an existing memory is
decided by `collision_key`, which callers compare against the names they hold.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from typing import NamedTuple

from strata_git.core.contract import SUFFIX, TIERS
from strata_git.errors import BadName

MAX_NAME_BYTES = 512
MAX_COMPONENT_BYTES = 200

# Characters that are pathspec magic, glob syntax, Windows-reserved or shell-hostile.
_FORBIDDEN_CHARS = set('\\:*?[]"<>|')
# Git for Windows ignores trailing spaces and extensions when it checks device names (compat/mingw.c).
_WINDOWS_RESERVED = re.compile(r"^(con|prn|aux|nul|conin\$|conout\$|com[0-9¹²³]|lpt[0-9¹²³]) *(\..*)?$", re.IGNORECASE)
_GIT_ALIASES = re.compile(r"^(\.git|git~\d+)[. ]*$", re.IGNORECASE)


def _refuse(name: str, why: str, hint: str = "use a plain relative name such as projects/koda") -> BadName:
    return BadName(f"bad memory name {name!r}: {why}", hint)


def _check_char(name: str, ch: str) -> None:
    category = unicodedata.category(ch)
    if ch == "\0":
        raise _refuse(name, "it contains a NUL byte")
    if ch in "\n\r":
        raise _refuse(name, "it contains a line break")
    if category == "Cc":
        raise _refuse(name, f"it contains the control character U+{ord(ch):04X}")
    if category in ("Cf", "Cs", "Co", "Cn", "Zl", "Zp"):
        raise _refuse(name, f"it contains the invisible or unassigned character U+{ord(ch):04X}")
    if ch in _FORBIDDEN_CHARS:
        raise _refuse(name, f"the character {ch!r} is not allowed (pathspec, glob or Windows-reserved)")


def _check_component(name: str, part: str) -> None:
    if part in ("", ".", ".."):
        what = "an empty folder" if part == "" else f"a {part!r} component"
        raise _refuse(name, f"it has {what}")
    if _GIT_ALIASES.match(part):
        raise _refuse(name, "it names git's own folder")
    if part.startswith("."):
        raise _refuse(name, f"the component {part!r} starts with '.', which is reserved for git and git-strata")
    if part.startswith("-"):
        raise _refuse(name, f"the component {part!r} starts with '-', which git would read as an option")
    if part != part.strip() or part.endswith("."):
        raise _refuse(name, f"the component {part!r} starts or ends with a space or ends with a dot")
    stem = part[: -len(SUFFIX)] if part.endswith(SUFFIX) else part
    if _WINDOWS_RESERVED.match(stem) or _WINDOWS_RESERVED.match(part):
        raise _refuse(name, f"{part!r} is a reserved device name on Windows")
    if len(part.encode("utf-8")) > MAX_COMPONENT_BYTES:
        raise _refuse(name, f"a component is longer than {MAX_COMPONENT_BYTES} bytes")


def normalize(name: str) -> str:
    """Validate an untrusted name and return it with the `.md` suffix.

    Raises BadName naming the first problem found.
    """
    if not isinstance(name, str) or name == "":
        raise _refuse(str(name), "it is empty")
    if name.startswith("/") or re.match(r"^[A-Za-z]:", name):
        raise _refuse(name, "it is an absolute path", "names are relative to the tier, e.g. projects/koda")
    for ch in name:
        _check_char(name, ch)
    if unicodedata.normalize("NFC", name) != name:
        raise _refuse(name, "it is not in Unicode NFC form", "type the composed form of the accented letters")
    if len(name.encode("utf-8")) > MAX_NAME_BYTES:
        raise _refuse(name, f"it is longer than {MAX_NAME_BYTES} bytes")
    parts = name.split("/")
    for part in parts:
        _check_component(name, part)
    if len(parts) > 1 and parts[0] in TIERS:
        raise _refuse(name, f"it starts with the tier folder {parts[0]!r}",
                      f"names are relative to the tier: use {'/'.join(parts[1:])!r}")
    from strata_git.core import secrets

    for finding in secrets.scan(name):  # the message shows the name with the secret masked
        raise BadName(f"bad memory name {secrets.redact(name)!r}: it looks like {finding.what} "
                      f"(rule {finding.rule}); names are committed and pushed", "choose a name without the credential")
    if not name.endswith(SUFFIX):
        name += SUFFIX
        _check_component(name, name.rsplit("/", 1)[-1])
    if name == SUFFIX:
        raise _refuse(name, "it is empty")
    last = name.rsplit("/", 1)[-1][: -len(SUFFIX)]
    if last.lower().endswith(SUFFIX):  # `plan.md.md` would be listed as `plan.md`, which reads as `plan`
        raise _refuse(name, f"its last part still ends in {SUFFIX} once the {SUFFIX} suffix is taken off",
                      f"name it {name[: -2 * len(SUFFIX)]!r}: the {SUFFIX} is added for you")
    return name


def refusal(name: str) -> str | None:
    """Why `write` would refuse `name` (with .md: a file that came in through git or a sync), or None."""
    try:
        return None if normalize(name) == name else "it is not in the form git-strata writes"
    except BadName as e:
        return e.message.removeprefix("bad memory name ")


_CONFUSABLE = {"LATIN", "CYRILLIC", "GREEK", "ARMENIAN", "CHEROKEE", "COPTIC"}


def mixed_scripts(name: str) -> list[str]:
    """The scripts mixed within one part of `name` among those whose letters look alike (Latin,
    Cyrillic, Greek, ...): `kоda` with a Cyrillic о looks exactly like `koda`. [] when none are."""
    if name.isascii():  # (its letters are all Latin: `git strata status` asks this of every memory)
        return []
    for part in name.split("/"):
        found = {unicodedata.name(c, "").partition(" ")[0] for c in part if c.isalpha()} & _CONFUSABLE
        if len(found) > 1:
            return sorted(found)
    return []


def display(name: str) -> str:
    """The name as users type it: without the `.md` suffix."""
    return name[: -len(SUFFIX)] if name.endswith(SUFFIX) else name


def tier_path(tier: str, name: str) -> str:
    """Repository-relative path of a normalized name in a tier."""
    return f"{tier}/{name}"


def split_path(path: str) -> tuple[str, str] | None:
    """(tier, name) for a repository path inside a tier folder, else None."""
    tier, sep, rest = path.partition("/")
    if sep and tier in TIERS and rest:
        return tier, rest
    return None


def folders(name: str) -> list[str]:
    """Every folder above a name: `a/b/c.md` -> ['a', 'a/b']."""
    parts = name.split("/")[:-1]
    return ["/".join(parts[: i + 1]) for i in range(len(parts))]


def collision_key(name: str) -> str:
    """Names with equal keys differ only by case or Unicode normalization."""
    if name.isascii():  # (no decomposition, and casefold is lower: the same key, ten times faster)
        return name.lower()
    return unicodedata.normalize("NFC", unicodedata.normalize("NFKD", name).casefold())


class Spellings(NamedTuple):
    """What a set of names (a pruned archive's) says of itself to the name checks: the names that mix
    scripts, the groups equal but for case or Unicode form, and every non-ASCII name by its
    collision key. An ASCII name's key is its lower case, which SQLite's lower() computes alike, so
    those are looked up by key where the names are kept (store/tally.py), not carried here."""
    mixed: list[str]  # names that mix lookalike scripts, sorted
    twice: list[list[str]]  # names sharing a collision key, each group sorted, groups by their first name
    odd: dict[str, list[str]]  # collision key -> the non-ASCII names with it


def spellings(found: list[str]) -> Spellings:
    """Spellings of `found`, in time linear in it (a million names: about a second, mostly C's: an
    ASCII name's key is str.lower, and only the keys met twice are grouped)."""
    plain = [n for n in found if n.isascii()]
    fancy = [n for n in found if not n.isascii()] if len(plain) < len(found) else []
    odd: dict[str, list[str]] = {}
    for name in fancy:
        odd.setdefault(collision_key(name), []).append(name)
    keys = list(map(str.lower, plain))
    counts = Counter(keys)
    many = {k for k, n in counts.items() if n > 1} | {k for k, group in odd.items() if len(group) > 1 or k in counts}
    groups: dict[str, list[str]] = {k: list(odd.get(k, ())) for k in many}
    if many:
        for key, name in zip(keys, plain, strict=True):
            if key in many:
                groups[key].append(name)
    return Spellings(mixed=sorted(n for n in fancy if mixed_scripts(n)),
                     twice=sorted(sorted(g) for g in groups.values()), odd={k: sorted(g) for k, g in odd.items()})
