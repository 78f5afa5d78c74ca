"""A pruned clone: a partial clone whose working tree leaves archive/ out.

Pruning (ops/archive.py) makes the clone fetch from the archive remote on demand and takes
archive/ out of the working tree with a cone-mode sparse checkout and a sparse index: the index
holds archive/ as one entry however many memories it has, so a commit, `git status` and every
hook cost what the live memories cost (bench/scale.py). The questions every layer asks of such
a clone (is it pruned? which blobs does it not hold?) are answered here.
"""

from __future__ import annotations

import os

from strata_git.gitio import packindex
from strata_git.gitio.git import Repo

# What versions before the sparse index wrote (non-cone: every index entry stays); still read,
# and replaced by the cone on the next archive run (ops/archive.py).
LEGACY_PATTERNS = ("/*", "!/archive/")
CONE_HEAD = ("/*", "!/*/")  # how git begins a cone-mode file: top-level files, no folder but those listed
ALWAYS = ("active", "cooled", ".strata")  # checked out even before a first memory makes them


def _lines(repo: Repo) -> list[str]:
    try:
        with open(os.path.join(repo.git_dir, "info", "sparse-checkout"), encoding="utf-8") as f:
            return f.read().split()
    except (OSError, UnicodeDecodeError):
        return []


def is_pruned(repo: Repo) -> bool:
    """Whether archive/ is kept out of this clone's working tree."""
    lines = _lines(repo)
    return lines == list(LEGACY_PATTERNS) or (lines[:2] == list(CONE_HEAD) and "/archive/" not in lines)


def cone(repo: Repo) -> list[str]:
    """The folders a pruned clone checks out: every top-level folder of HEAD but archive/."""
    top = repo.ls_tree("HEAD", recursive=False, check=False) if repo.head() else {}
    return sorted({*ALWAYS, *(path for path, e in top.items() if e.type == "tree" and path != "archive")})


def is_current(repo: Repo) -> bool:
    """Whether this clone keeps archive/ out through the sparse index, with every other top-level
    folder of HEAD checked out (a sync may have brought a new one)."""
    lines = _lines(repo)
    wanted = [*CONE_HEAD, *(f"/{folder}/" for folder in cone(repo))]
    return sorted(lines) == sorted(wanted) and repo.git(
        "config", "--get", "index.sparse", check=False).decode().strip() == "true"


def prune_checkout(repo: Repo) -> None:
    """Keep archive/ out of the working tree, collapsed to one entry of a sparse index."""
    repo.git("sparse-checkout", "set", "--cone", "--sparse-index", "--", *cone(repo))


def _objects_in_packs(repo: Repo) -> int:
    """About how many objects the packs hold, from the sizes of their indexes (28 bytes an object
    in a version 2 index, after a 1,072-byte header and trailer); no pack is opened."""
    folder = os.path.join(repo.git_dir, "objects", "pack")
    try:
        sizes = [e.stat().st_size for e in os.scandir(folder) if e.name.endswith(".idx")]
    except OSError:
        return 0
    return sum(max(0, size - 1072) // 28 for size in sizes)


def held_blobs(repo: Repo) -> dict[str, int]:
    """{blob id: size} of every blob this clone holds, listed from the object store (as `absent`
    does), so that a blob a pruned clone left on its remote is never fetched by asking."""
    out = repo.git("cat-file", "--batch-all-objects", "--unordered",
                   "--batch-check=%(objectname) %(objecttype) %(objectsize)")
    return {oid: int(size) for oid, kind, size in (line.split(" ") for line in out.decode().splitlines())
            if kind == "blob"}


LISTED_UP_TO = 75_000  # objects in the store up to which listing them all costs less than libgit2's import
# An id looked up in the packs' indexes costs about 45 µs with 41 packs (libgit2 asked about an
# object no pack holds rereads the pack folder first: about 35 µs), where git lists 40 objects.
LISTED_PER_ASKED = 40


def absent(repo: Repo, blobs: list[str]) -> list[str]:
    """Which of `blobs` this clone does not hold. Asking git about a missing promised object either
    fetches it or fails, so the store is listed (about 1 µs an object), unless it is large (a
    million archived memories keep some three million objects) and the blobs few next to it: then
    each is looked up in the loose objects' folders and the packs' indexes (packindex)."""
    if not blobs:
        return []
    objects = _objects_in_packs(repo)
    if len(blobs) * LISTED_PER_ASKED < objects:
        # (where the indexes cannot tell, libgit2 is asked once its import costs less than a listing)
        held = repo.held(blobs) if objects > LISTED_UP_TO else packindex.held(repo.git_dir, blobs)
        if held is not None:
            return [b for b in blobs if b not in held]
    wanted = {b.encode("ascii", "replace") for b in blobs}
    listed = repo.items("cat-file", "--batch-all-objects", "--unordered", "--batch-check=%(objectname)",
                        sep=b"\n", lead=True)
    found = {oid for oid in listed if oid in wanted}  # (streamed: three million ids are never held)
    return [b for b in blobs if b.encode("ascii", "replace") not in found]


def objects(repo: Repo) -> str | None:
    """The object store's folder, or None where it cannot be said from here (packindex.store)."""
    return packindex.store(repo.git_dir)


def packs(repo: Repo) -> tuple[str, ...] | None:
    """The names of the store's packs, sorted: a pack's name is the hash of what it holds, so the
    packed objects are the same while these are. None where that cannot be said (see objects())."""
    folder = objects(repo)
    try:
        return tuple(sorted(e.name for e in os.scandir(os.path.join(folder, "pack")) if e.name.endswith(".pack"))) \
            if folder else None
    except OSError:
        return None


def loose(repo: Repo) -> list[str] | None:
    """The ids of the store's loose objects (objects/xx/yyyy...), listed from the folders."""
    folder = objects(repo)
    if folder is None:
        return None
    found = []
    for prefix in (f"{i:02x}" for i in range(256)):
        try:
            with os.scandir(os.path.join(folder, prefix)) as entries:
                found += [prefix + e.name for e in entries if len(e.name) in (38, 62)]
        except FileNotFoundError:
            continue
        except OSError:
            return None
    return found


def in_packs(repo: Repo, ids: list[str], among: list[str] | tuple[str, ...] | None = None) -> set[str] | None:
    """Which of `ids` some pack holds (of `among`, default all), looked up in the packs' indexes
    (packindex.in_packs); None if an index cannot be read here."""
    folder = objects(repo)
    if folder is None:
        return None
    return packindex.in_packs(folder, among if among is not None else packs(repo) or (), ids)


def held_among(repo: Repo, ids: list[str]) -> int:
    """How many of `ids` the store holds. Many ids are looked up in the packs' indexes and the
    loose objects' names, read whole (at a million archived memories, three million ids in about
    a second, where git lists them in ten); else, or where those cannot be read here, absent()."""
    if not ids:
        return 0
    folder, names, lying = objects(repo), packs(repo), loose(repo)
    if len(ids) < LISTED_UP_TO or folder is None or names is None or lying is None:
        return len(ids) - len(absent(repo, ids))
    wanted = {bytes.fromhex(i) for i in ids}
    width = len(next(iter(wanted)))
    held = wanted.intersection(bytes.fromhex(i) for i in lying if len(i) == 2 * width)
    for name in names:
        idx = packindex.read(folder, name)
        if idx is None:
            return len(ids) - len(absent(repo, ids))
        held.update(wanted.intersection(packindex.names(idx, width)))
    return len(held)


def pack_ids(repo: Repo, name: str, width: int = 20) -> list[str] | None:
    """Every id pack `name` holds, from its index; None if it cannot be read here."""
    folder = objects(repo)
    idx = packindex.read(folder, name) if folder else None
    if idx is None:
        return None
    return [oid.hex() for oid in packindex.names(idx, width)]
