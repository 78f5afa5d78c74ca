"""Trees edited in place: a new root tree from an old one and a few changed paths.

Reading a commit's whole tree into an index (`read-tree`) costs one entry per file, a million
for a large archive; a janitor cycle changes a few hundred paths. `edit()` reads only the trees
on the way to a changed path (one `cat-file --batch` per depth), writes only those it changed
(one `git mktree --batch`), and shares every other tree with the old commit, as git itself
would. `entries()` looks up paths the same way.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Protocol

from strata_git.errors import GitFailed


class Repo(Protocol):
    """What of gitio.git.Repo this module uses (which calls in here: it cannot be imported)."""

    def objects(self, names: list[str]) -> list[bytes | None]: ...
    def git(self, *args: str, input: bytes | None = None, check: bool = True,
            env: dict[str, str] | None = None) -> bytes: ...

TREE_MODE = "40000"


class _Node:
    """A folder on the way to a changed path: its entries as read, its changed files, its
    changed subfolders."""

    __slots__ = ("entries", "files", "folders", "oid")

    def __init__(self) -> None:
        self.oid: str | None = None  # the folder's tree in the old tree (None: it did not exist)
        self.entries: dict[bytes, tuple[str, str]] = {}  # name -> (mode, oid), as read
        self.files: dict[bytes, tuple[str, str] | None] = {}  # name -> new (mode, oid), None: deleted
        self.folders: dict[bytes, _Node] = {}


def parse(raw: bytes, size: int = 20) -> dict[bytes, tuple[str, str]]:
    """A tree object's entries: {name: (mode, oid)} (mode as git writes it: "40000" for a tree);
    `size` is the object ids' length in bytes (20, or 32 in a SHA-256 repository)."""
    found: dict[bytes, tuple[str, str]] = {}
    pos = 0
    while pos < len(raw):
        space = raw.index(b" ", pos)
        nul = raw.index(b"\0", space)
        end = nul + 1 + size
        found[raw[space + 1:nul]] = (raw[pos:space].decode("ascii"), raw[nul + 1:end].hex())
        pos = end
    return found


def _sort_key(item: tuple[bytes, tuple[str, str]]) -> bytes:
    name, (mode, _) = item
    return name + b"/" if mode == TREE_MODE else name  # git orders a folder as if its name ended in "/"


def _object_id(entries: Mapping[bytes, tuple[str, str]], algo: str) -> tuple[str, bytes]:
    import hashlib  # here: its import (OpenSSL's) costs 5 ms that most commands, a sync's among them, never need

    body = b"".join(b"%s %s\0%s" % (mode.encode(), name, bytes.fromhex(oid))
                    for name, (mode, oid) in sorted(entries.items(), key=_sort_key))
    return hashlib.new(algo, b"tree %d\0%s" % (len(body), body)).hexdigest(), body


def _mktree_line(name: bytes, mode: str, oid: str) -> bytes:
    kind = "tree" if mode == TREE_MODE else "commit" if mode == "160000" else "blob"
    if any(c < 0x20 or c in b'"\\' or c >= 0x7F for c in name):  # mktree unquotes a C-quoted name
        name = b'"' + b"".join(b"\\%03o" % c if c < 0x20 or c in b'"\\' or c >= 0x7F else bytes([c])
                               for c in name) + b'"'
    return b"%s %s %s\t%s\n" % (mode.encode(), kind.encode(), oid.encode(), name)


def _load(repo: Repo, tree: str, paths: Iterable[str]) -> _Node:
    """The folders on the way to `paths`, each with its entries in `tree`, read a depth at a time."""
    root = _Node()
    root.oid = tree
    for path in paths:
        node = root
        *folders, _ = path.encode("utf-8", "surrogateescape").split(b"/")
        for folder in folders:
            node = node.folders.setdefault(folder, _Node())
    level = [root]
    while level:
        wanted = [node for node in level if node.oid]
        for node, raw in zip(wanted, repo.objects([node.oid for node in wanted if node.oid]), strict=True):
            if raw is None:
                raise GitFailed(f"tree {node.oid} is missing from this clone", "run `git fsck` to see what is wrong")
            node.entries = parse(raw, len(tree) // 2)
        below = []
        for node in level:
            for name, child in node.folders.items():
                mode, oid = node.entries.get(name, (TREE_MODE, ""))
                child.oid = oid if mode == TREE_MODE and oid else None
                below.append(child)
        level = below
    return root


def entries(repo: Repo, tree: str, paths: Iterable[str]) -> dict[str, tuple[str, str]]:
    """{path: (mode, oid)} of those of `paths` that `tree` holds (a file, link or folder), reading
    only the folders on the way to them."""
    paths = list(paths)
    root = _load(repo, tree, paths)
    found = {}
    for path in paths:
        node = root
        *folders, leaf = path.encode("utf-8", "surrogateescape").split(b"/")
        for folder in folders:
            node = node.folders[folder]
        if leaf in node.entries:
            found[path] = node.entries[leaf]
    return found


def edit(repo: Repo, tree: str, changes: Mapping[str, tuple[str, str] | None]) -> str:
    """The id of `tree` with `changes` made: {path: (mode, blob id)} to write, or None to delete.
    A folder left empty goes, as git drops it; a path through a file, or a file where a folder
    stands, is refused (GitFailed) with nothing written."""
    if not changes:
        return tree
    root = _load(repo, tree, changes)
    for path, new in changes.items():
        node = root
        *folders, leaf = path.encode("utf-8", "surrogateescape").split(b"/")
        for folder in folders:
            node = node.folders[folder]
        node.files[leaf] = new
    algo = "sha256" if len(tree) == 64 else "sha1"
    made: list[tuple[str, bytes]] = []  # (tree id, mktree input), children before their parent

    def build(node: _Node, where: str) -> str | None:
        merged = dict(node.entries)
        for name, new in node.files.items():  # deletions first: a file and a folder may swap places
            if new is None:
                merged.pop(name, None)
        for name, child in node.folders.items():
            if name in merged and merged[name][0] != TREE_MODE:
                raise GitFailed(f"cannot write under {where}{name.decode('utf-8', 'replace')}: a file stands there",
                                "move or delete that file first")
            oid = build(child, f"{where}{name.decode('utf-8', 'surrogateescape')}/")
            if oid is None:
                merged.pop(name, None)
            else:
                merged[name] = (TREE_MODE, oid)
        for name, new in node.files.items():
            if new is None:
                continue
            if merged.get(name, ("", ""))[0] == TREE_MODE:
                raise GitFailed(f"cannot write {where}{name.decode('utf-8', 'replace')}: a folder stands there",
                                "move or delete that folder first")
            merged[name] = new
        if not merged:
            return None
        oid, _ = _object_id(merged, algo)
        if oid != node.oid:
            made.append((oid, b"".join(_mktree_line(n, m, o) for n, (m, o) in merged.items())))
        return oid

    new_root = build(root, "")
    if new_root is None:  # everything deleted
        return repo.git("mktree", input=b"").decode().strip()
    if made:
        # --missing: a pruned clone holds none of the archived blobs (every id comes from a tree).
        out = repo.git("mktree", "--missing", "--batch", input=b"\n".join(text for _, text in made))
        written = out.decode().split()
        if written != [oid for oid, _ in made]:
            raise GitFailed("git wrote other trees than the ones computed; nothing was changed",
                            "report this as a bug in git-strata")
    return new_root


def alike(repo: Repo, tree: str, paths: Iterable[str], key: Callable[[str], str]) -> list[str]:
    """The paths in `tree` whose every part has the same `key` as the same part of one of `paths`
    (names that differ only by case or accents, say), and the folders on the way that matched:
    found by reading only those folders, never the whole tree."""
    keyed = [[key(part) for part in path.split("/")] for path in paths]
    level: list[tuple[str, str, int, list[list[str]]]] = [("", tree, 0, keyed)]  # (path, tree id, depth, candidates)
    found: list[str] = []
    size = len(tree) // 2
    while level:
        raws = repo.objects([oid for _, oid, _, _ in level])
        below = []
        for (where, _, depth, candidates), raw in zip(level, raws, strict=True):
            for name, (mode, oid) in parse(raw or b"", size).items():
                text = name.decode("utf-8", "surrogateescape")
                here = [c for c in candidates if len(c) > depth and c[depth] == key(text)]
                if not here:
                    continue
                path = f"{where}{text}"
                found.append(f"{path}/" if mode == TREE_MODE else path)  # a folder ends in "/"
                if mode == TREE_MODE and any(len(c) > depth + 1 for c in here):
                    below.append((f"{path}/", oid, depth + 1, here))
        level = below
    return found
