"""Which memory a name means: the tier that holds it, and the refusals that keep one name from
meaning two memories (names differing only by case or accents, a memory where a folder goes).

Every operation that takes a name asks here, so the CLI, the MCP server and the API agree.
"""

from __future__ import annotations

from strata_git.core import names
from strata_git.errors import BadName, NotFound
from strata_git.gitio import safefs
from strata_git.gitio.git import Repo

# ({collision key: [(tier, name)]}, {collision key: folder}): every memory tracked or on disk
Known = tuple[dict[str, list[tuple[str, str]]], dict[str, str]]


def tracked(repo: Repo, like: list[str] | None = None, flags: tuple[str, ...] = ()) -> list[str]:
    """The paths in the index under the tiers (`git ls-files FLAGS`), never expanding a sparse
    index: a pruned clone's archive/ files are read from HEAD's tree instead, all of them, or with
    `like` (tier paths) only those that differ from one of `like` at most by tier, case or accents
    (and the folders on their way, ending in "/"), reading only the folders that could hold them."""
    entries, collapsed = repo.tracked(*names.TIERS, flags=flags)
    head = repo.head() if collapsed else None
    if head is None:
        return entries
    if like is None:
        return entries + [p for p in repo.ls_tree(head, *collapsed) if p.split("/", 1)[0] in names.TIERS]
    from strata_git.gitio import trees

    wanted = [f"{folder}{path.split('/', 1)[1]}" for folder in collapsed for path in like if "/" in path]
    # (alike() also finds the collapsed folders themselves, "archive/": they name no memory)
    return entries + [p for p in trees.alike(repo, repo.tree_of(head), wanted, names.collision_key)
                      if "/" in p.rstrip("/")]


def known(repo: Repo, like: list[str] | None = None) -> Known:
    """Every memory tracked or on disk, by collision key, and every folder holding one; ignored
    files included (a name must not collide with a file git ignores either). With `like` (names),
    only what those names could collide with: the keys of the names and of the folders above them
    (a pruned clone's archive/ read only as far as it could hold them, see tracked()), each as the
    whole listing would give it."""
    around = None if like is None else [names.tier_path(tier, name) for name in like for tier in names.TIERS]
    listed = tracked(repo, around, flags=("-c", "-o"))
    wanted = None if like is None else {names.collision_key(n) for name in like
                                        for n in (name, *names.folders(name))}
    held: dict[str, list[tuple[str, str]]] = {}
    folders: dict[str, str] = {}
    first: dict[str, str] = {}  # a folder's first path in path order (its chain is the same for every one)
    matched: list[tuple[str, tuple[str, str]]] = []
    for path in set(listed):
        where = names.split_path(path)
        if where and where[1].endswith((names.SUFFIX, "/")):  # (a folder tracked() found ends in "/")
            if not where[1].endswith("/") and (wanted is None or names.collision_key(where[1]) in wanted):
                matched.append((path, where))
            parent = where[1][:-1] if where[1].endswith("/") else where[1].rpartition("/")[0]
            if parent:
                first[parent] = min(path, first.get(parent, path))
    for _, where in sorted(matched):
        held.setdefault(names.collision_key(where[1]), []).append(where)
    for _, parent in sorted((path, parent) for parent, path in first.items()):
        for folder in names.folders(parent + "/"):
            key = names.collision_key(folder)
            if wanted is None or key in wanted:
                folders.setdefault(key, folder)
    return held, folders


def locate(repo: Repo, name: str, known_names: Known | None = None) -> tuple[str | None, str]:
    """(tier holding the memory or None, normalized name); refuses near-collisions.
    `known_names` is a known() result to reuse when locating many names at once."""
    norm = names.normalize(name)
    held, folders = known_names or known(repo, [norm])
    holders = held.get(names.collision_key(norm), [])
    exact = [tier for tier, other in holders if other == norm]
    if exact:
        return exact[0], norm
    if holders:
        tier, other = holders[0]
        raise BadName(f"bad memory name {name!r}: it differs only by case or accents from "
                      f"the existing {tier}/{other}", f"use the existing name {names.display(other)!r}")
    for folder in names.folders(norm):
        key = names.collision_key(folder)
        if key in held:
            raise BadName(f"bad memory name {name!r}: {folder!r} is a memory, not a folder",
                          "choose another folder name")
        if folders.get(key, folder) != folder:
            raise BadName(f"bad memory name {name!r}: the folder {folder!r} differs only by case or accents "
                          f"from the existing {folders[key]!r}", f"use the folder {folders[key]!r}")
    return None, norm


def find(repo: Repo, name: str) -> tuple[str | None, str]:
    """`locate`, with a fast path for what nearly every read is: the exact file exists."""
    norm = names.normalize(name)
    tier = next((t for t in names.TIERS if safefs.kind(repo.root, names.tier_path(t, norm)) == "file"), None)
    return (tier, norm) if tier else locate(repo, name)


def not_found(repo: Repo, norm: str) -> NotFound:
    """The error for a name no memory has, suggesting the closest one."""
    import difflib  # only on this path: it costs start-up time every command would pay

    candidates = [n for held in known(repo)[0].values() for _, n in held]
    close = difflib.get_close_matches(norm, candidates, n=1)
    hint = (f"did you mean {names.display(close[0])!r}?" if close else
            "see `git strata list`, or `git strata search WORDS` to find it by what it says")
    return NotFound(f"no memory named {names.display(norm)!r}", hint)


def exact_tiers(repo: Repo, items: list[str]) -> dict[str, str]:
    """{item: tier} for the items that are exactly a memory's name (one git call for all);
    the rest go through locate(), which also refuses near-collisions."""
    paths = {}
    for item in items:
        try:
            norm = names.normalize(item)
        except BadName:
            continue
        paths.update({names.tier_path(t, norm): item for t in names.TIERS})
    if not paths:
        return {}
    # The whole listing, filtered here: git matches N literal pathspecs against every index entry.
    held = set(tracked(repo, list(paths)))
    found: dict[str, str] = {}
    for path, item in paths.items():  # in TIERS order for each item: active wins, then cooled
        if path in held:
            found.setdefault(item, path.partition("/")[0])
    return found
