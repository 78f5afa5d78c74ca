"""Which objects a clone holds, read from its loose objects' folders and its packs' indexes.

Asked about an object a partial clone left on its remote, git fetches it or fails (`cat-file`
stops at the first such object, after 3.4 s at 50,000 archived memories). libgit2 answers without
fetching, but importing pygit2 costs a fresh process about 50 ms: more than anything else a sync
round does in a pruned clone. A pack's index answers for a few ids in microseconds: in version 2,
a fan-out table of 256 counts (how many names start with each byte or a smaller one), then the
sorted 20-byte names (git's Documentation/gitformat-pack.txt).
"""

from __future__ import annotations

import mmap
import os
from collections.abc import Iterable, Iterator

MAGIC = b"\377tOc"
FANOUT = 8  # the fan-out table's offset: after the magic and the version
NAMES = FANOUT + 256 * 4  # the sorted names' offset


def store(git_dir: str) -> str | None:
    """The object store's folder (a linked worktree's is its main repository's), or None where it
    cannot be said from here: GIT_OBJECT_DIRECTORY set, or a store that borrows from another."""
    if os.environ.get("GIT_OBJECT_DIRECTORY"):
        return None
    common = git_dir
    try:
        with open(os.path.join(git_dir, "commondir"), encoding="utf-8") as f:
            common = os.path.normpath(os.path.join(git_dir, f.read().strip()))
    except FileNotFoundError:
        pass
    except (OSError, UnicodeDecodeError):
        return None
    folder = os.path.join(common, "objects")
    if not os.path.isdir(os.path.join(folder, "pack")) or os.path.exists(os.path.join(folder, "info", "alternates")):
        return None
    return folder


def held(git_dir: str, oids: Iterable[str]) -> set[str] | None:
    """Which of `oids` (ids of 40 or 64 lowercase hex digits, all as wide as the first; anything
    else is not held) the object store holds, loose or in a pack; nothing is fetched. None where
    this cannot tell: no store of its own (see store()), an index this does not read or that does
    not add up, or a pack that went away while it was read (a `git gc`)."""
    folder = store(git_dir)
    if folder is None:
        return None
    wanted = _wanted(oids)
    found = {oid for oid in wanted.values() if os.path.isfile(os.path.join(folder, oid[:2], oid[2:]))}
    rest = [oid for oid in wanted.values() if oid not in found]
    try:
        packs = [e.name for e in os.scandir(os.path.join(folder, "pack")) if e.name.endswith(".pack")] if rest else []
    except OSError:
        return None
    inside = in_packs(folder, packs, rest)
    return None if inside is None else found | inside


def _wanted(ids: Iterable[str]) -> dict[bytes, str]:
    """{id as bytes: id} of those `ids` that are ids: 40 (SHA-1) or 64 (SHA-256) lowercase hex
    digits, as wide as the first of them."""
    wanted: dict[bytes, str] = {}
    width = 0
    for oid in ids:
        if not isinstance(oid, str) or len(oid) not in (40, 64) or oid != oid.lower() or width and len(oid) != width:
            continue
        try:
            wanted[bytes.fromhex(oid)] = oid
        except ValueError:
            continue
        width = len(oid)
    return wanted


def in_packs(folder: str, packs: Iterable[str], ids: Iterable[str]) -> set[str] | None:
    """Which of `ids` (see _wanted) the named packs of the store `folder` hold, looked up in their
    indexes (the ids are sorted there: a binary search each). None where an index cannot be read,
    or is not one this reads."""
    wanted = _wanted(ids)
    found: set[str] = set()
    rest = sorted(wanted)
    for pack in packs:
        if not rest:
            break
        try:
            with open(_index_path(folder, pack), "rb") as f:
                size = os.fstat(f.fileno()).st_size
                if size < NAMES:
                    return None
                with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as index:
                    inside = _lookup(index, size, rest, len(rest[0]))
        except (OSError, ValueError):
            return None
        if inside is None:
            return None
        found.update(wanted[name] for name in inside)
        rest = [name for name in rest if name not in inside]
    return found


def _index_path(folder: str, pack: str) -> str:
    return os.path.join(folder, "pack", pack.removesuffix(".pack") + ".idx")


def read(folder: str, pack: str) -> bytes | None:
    """A pack's index, whole, if it is a version 2 one (only git before 1.5.2 wrote others): for
    reading every name it lists (names())."""
    try:
        with open(_index_path(folder, pack), "rb") as f:
            data = f.read()
    except OSError:
        return None
    return data if data[:4] == MAGIC and int.from_bytes(data[4:FANOUT], "big") == 2 and len(data) >= NAMES else None


def names(index: bytes, width: int) -> Iterator[bytes]:
    """The names a whole index (read()) lists, each `width` bytes, in order."""
    table = memoryview(index)[NAMES:NAMES + int.from_bytes(index[NAMES - 4:NAMES], "big") * width]
    return (table[i:i + width].tobytes() for i in range(0, len(table), width))


def _lookup(index: mmap.mmap, size: int, names: list[bytes], width: int) -> set[bytes] | None:
    """Those of `names` (`width` bytes each) a version 2 index lists; None for any other version,
    or an index whose size (for names of that width) or fan-out does not add up."""
    if index[:4] != MAGIC or int.from_bytes(index[4:FANOUT], "big") != 2:
        return None
    count = int.from_bytes(index[NAMES - 4:NAMES], "big")
    # the names, a CRC-32 and a 4-byte offset each, up to `count` 8-byte offsets, then two hashes
    least = NAMES + count * (width + 8) + 2 * width
    if not least <= size <= least + count * 8:
        return None
    inside = set()
    for name in names:
        first = name[0]
        lo = int.from_bytes(index[FANOUT + 4 * (first - 1):FANOUT + 4 * first], "big") if first else 0
        hi = int.from_bytes(index[FANOUT + 4 * first:FANOUT + 4 * first + 4], "big")
        if not lo <= hi <= count:
            return None
        while lo < hi:
            mid = (lo + hi) // 2
            at = NAMES + mid * width
            there = index[at:at + width]
            if there < name:
                lo = mid + 1
            elif there > name:
                hi = mid
            else:
                inside.add(name)
                break
    return inside
