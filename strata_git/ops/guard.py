"""The pre-commit guard: what a commit may not contain.

`problems()` is pure: it gets the staged changes, the staged paths and a way to
read a blob, and returns every problem found (file, line, reason, fix). The hook
entry (`check_staged`) gathers those inputs with three or four git calls (and this
clone's allowlist of secret false positives, store/allowlist.py), and imports the
YAML parser only when a staged memory brings frontmatter text this clone has not
validated before (the memo in the catalog).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple

from strata_git.core import config as config_mod
from strata_git.core import contract, names, secrets
from strata_git.core.config import Config
from strata_git.errors import StrataError, too_large
from strata_git.gitio.git import Repo
from strata_git.store import allowlist

if TYPE_CHECKING:
    from strata_git.core.memory import Memo

_LINK_MODES = ("120000", "160000")


class Change(NamedTuple):
    status: str  # A, M, T or D
    path: str
    mode: str
    oid: str
    size: int = 0


class Problem(NamedTuple):
    message: str  # "path[:line]: what is wrong"
    fix: str

    def __str__(self) -> str:
        return f"{self.message} ({self.fix})"


def _path_problems(change: Change) -> list[Problem]:
    """What is wrong with a staged path itself (added or changed; deletions are checked apart)."""
    if change.mode in _LINK_MODES:
        return [Problem(f"{change.path}: symlinks and submodules are not allowed in a memory repository "
                        "(git-strata never follows links)", "commit a regular file or folder instead")]
    if change.path in names.TIERS:
        return [Problem(f"{change.path}: it must be a folder",
                        f"move the file aside and restore the {change.path}/ folder")]
    tier, name = names.split_path(change.path) or ("", "")
    if not tier:
        return [Problem(f"{change.path}: its name looks like {f.what} (rule {f.rule}); "
                        "names are committed and pushed", "rename it") for f in secrets.scan(change.path)[:1]]
    if tier != "active":
        return [Problem(f"{change.path}: {tier} memories are read-only and change only through git-strata",
                        f"run `git strata recall {names.display(name)}` and edit it in active/; "
                        f"unstage with `git restore --staged {change.path}`")]
    folder, _, leaf = name.rpartition("/")
    if leaf == contract.PLACEHOLDER:
        name = folder  # a folder's placeholder: its folder must be a valid name
        if not name:
            return []
    elif not name.endswith(names.SUFFIX):
        return [Problem(f"{change.path}: only Markdown (.md) memories belong in the tier folders",
                        "rename it to .md or keep it outside active/")]
    try:
        names.normalize(name)
    except StrataError as e:
        return [Problem(f"{change.path}: {e.message}", e.hint)]
    return []


def _deletion_problems(changes: list[Change]) -> list[Problem]:
    """A memory may leave cooled/ or archive/ only by moving to another tier in the same commit
    (as `git revert` of a migration does); deleting it there is an edit git-strata refuses."""
    added = {where[1] for where in (names.split_path(c.path) for c in changes if c.status != "D") if where}
    found = []
    for change in changes:
        where = names.split_path(change.path)
        if change.status == "D" and where and where[0] != "active" and where[1] not in added \
                and where[1].rsplit("/", 1)[-1] != contract.PLACEHOLDER:
            found.append(Problem(f"{change.path}: {where[0]} memories are not deleted by hand",
                                 f"bring it back with `git strata recall {names.display(where[1])}`, then "
                                 f"`git strata forget` it; unstage with `git restore --staged {change.path}`"))
    return found


def _content_problems(change: Change, data: bytes, cfg: Config, memo: Memo | None,
                      allow: frozenset[str]) -> list[Problem]:
    from strata_git.core import memory

    where = change.path
    try:
        if names.split_path(where) and where.endswith(names.SUFFIX):
            memory.parse(data, where, memo)
        elif b"\0" in data or not _is_utf8(data):
            return [Problem(f"{where}: it is binary (not UTF-8 text)",
                            "keep binary files out of the memory repository")]
        elif where == config_mod.CONFIG_PATH:
            import tomllib

            config_mod.parse(tomllib.loads(data.decode("utf-8")), where)
    except StrataError as e:
        return [Problem(e.message, e.hint)]
    except ValueError as e:  # TOML or UTF-8 errors in the config
        return [Problem(f"{where}: not valid TOML ({e})", "fix the syntax")]
    if not cfg.check_secrets:
        return []
    return [Problem(f"{where}:{f.line}: looks like {f.what} (rule {f.rule}); the commit would publish it",
                    "remove it, rotate the credential, and commit again; "
                    f"mark a false positive with '{secrets.ALLOW_MARKER}' on that line, "
                    f"or allow it in this clone with `git strata scan --allow {f.fingerprint}`")
            for f in allowlist.check(data.decode("utf-8", "replace"), allow)]


def _is_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _duplicate_problems(staged_paths: list[str]) -> list[Problem]:
    seen: dict[str, list[str]] = defaultdict(list)
    spellings: dict[str, set[str]] = defaultdict(set)
    for path in staged_paths:
        where = names.split_path(path)
        if where and where[1].endswith(names.SUFFIX):
            seen[names.collision_key(where[1])].append(path)
        for folder in names.folders(where[1]) if where else ():
            spellings[names.collision_key(folder)].add(folder)
    found = [Problem(" and ".join(paths) + ": the same memory name is in more than one place "
                     "(names differing only by tier, case or accents collide)",
                     f"keep one: `git rm --cached {paths[-1]}`")
             for paths in seen.values() if len(paths) > 1]
    found += [Problem(" and ".join(sorted(folders)) + ": folder names differ only by case or accents",
                      "use one spelling for the folder")
              for folders in spellings.values() if len(folders) > 1]
    return found


def problems(changes: list[Change], staged_paths: list[str], read_blob: Callable[[str], bytes],
             cfg: Config, memo: Memo | None = None, allow: frozenset[str] = frozenset()) -> list[Problem]:
    """Everything wrong with a commit of `changes` whose resulting index holds `staged_paths`;
    `allow`: the fingerprints of secret false positives this clone allows (allowlist.load)."""
    found: list[Problem] = []
    for change in changes:
        if change.status == "D" and change.path == config_mod.CONFIG_PATH:
            found.append(Problem(f"{change.path}: deleting it would turn git-strata's checks off in this repository",
                                 "keep it; to stop using git-strata here run `git strata uninstall-hooks` first"))
        if change.status == "D":
            continue
        if change.path == contract.INDEX_MD:
            found.append(Problem(f"{contract.INDEX_MD}: it is generated by git-strata and never committed",
                                 f"unstage it with `git rm --cached {contract.INDEX_MD}`"))
            continue
        found += _path_problems(change)
        if change.mode in _LINK_MODES:
            continue
        if change.size > cfg.max_memory_bytes:
            error = too_large(change.path, change.size, cfg.max_memory_bytes)
            found.append(Problem(error.message, error.hint))
            continue
        found += _content_problems(change, read_blob(change.oid), cfg, memo, allow)
    found += _deletion_problems(changes)
    # A name can only start to collide when a file is added to a tier.
    if any(c.status == "A" and names.split_path(c.path) for c in changes):
        found += _duplicate_problems(staged_paths)
    return [Problem(secrets.redact(p.message), p.fix) for p in found]  # a path may hold a secret too


def _staged_changes(repo: Repo) -> list[Change]:
    out = repo.git("diff", "--cached", "--raw", "-z", "--no-renames", "--no-abbrev")
    fields = out.decode("utf-8", "surrogateescape").split("\0")
    changes = []
    for meta, path in zip(fields[0::2], fields[1::2], strict=False):  # a trailing "" after the last NUL
        _, new_mode, _, new_oid, status = meta.lstrip(":").split(" ")
        changes.append(Change(status[0], path, new_mode, new_oid))
    return changes


def _sizes(repo: Repo, oids: list[str]) -> dict[str, int]:
    if not oids:
        return {}
    out = repo.git("cat-file", "--batch-check=%(objectname) %(objectsize)",
                   input="".join(f"{o}\n" for o in oids).encode())
    return {oid: int(size) for oid, size in (line.split(" ") for line in out.decode().splitlines())}


def check_staged(repo: Repo, cfg: Config, memo: Memo | None = None) -> tuple[list[Problem], list[Change]]:
    """Problems with what is staged for the commit in progress, and the staged changes."""
    changes = _staged_changes(repo)
    readable = sorted({c.oid for c in changes if c.status != "D" and c.mode not in _LINK_MODES})
    sizes = _sizes(repo, readable)
    changes = [c._replace(size=sizes.get(c.oid, 0)) for c in changes]
    small = [oid for oid in readable if sizes[oid] <= cfg.max_memory_bytes]
    blobs = {oid: data for oid, data in zip(small, repo.objects(small), strict=True) if data is not None}
    staged: list[str] = []
    added = [c.path for c in changes if c.status == "A" and names.split_path(c.path)]
    if added:
        from strata_git.ops import locate

        staged = locate.tracked(repo, added)
    allow = allowlist.load(repo) if cfg.check_secrets else frozenset()
    return problems(changes, staged, blobs.__getitem__, cfg, memo, allow), changes
