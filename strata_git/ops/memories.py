"""Changing one memory: write, reject, edit, forget (reading one is reading.py).

Each change is one commit of exactly its paths (txn.commit), made under the repository lock
after the memory was located (locate.py) and checked: its name, its content (size, encoding,
frontmatter, secrets) and that nobody left uncommitted changes in the way (txn.require_clean).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable

from strata_git.core import contract, memory, names, projects
from strata_git.core.config import Config
from strata_git.errors import BadMemory, BadName, NotFound, Refused, StrataError, too_large
from strata_git.gitio import safefs
from strata_git.gitio.git import Repo
from strata_git.ops import locate, txn
from strata_git.ops.txn import Change
from strata_git.store import allowlist, index_md


def check_content(raw: bytes, where: str, cfg: Config, allow: frozenset[str] = frozenset()) -> memory.Memory:
    """Validate content about to become a memory: size, encoding, frontmatter, secrets (but for
    the false positives whose fingerprints `allow` holds: allowlist.load)."""
    if len(raw) > cfg.max_memory_bytes:
        raise too_large(where, len(raw), cfg.max_memory_bytes)
    if not raw.strip():
        raise BadMemory(f"{where}: the memory is empty", "give content with -m TEXT, --file PATH or stdin")
    parsed = memory.parse(raw, where)
    if cfg.check_secrets:
        from strata_git.core import secrets

        found = allowlist.check(raw.decode("utf-8"), allow)
        if found:
            f = found[0]
            raise BadMemory(f"{where}:{f.line}: looks like {f.what} (rule {f.rule}); refusing to store it",
                            "remove it (and rotate the credential); "
                            f"mark a false positive with '{secrets.ALLOW_MARKER}', "
                            f"or allow it in this clone with `git strata scan --allow {f.fingerprint}`")
    return parsed


def _trailers(action: str, norm: str, via: str) -> dict[str, str]:
    return {contract.ACTION: action, contract.NAME: names.display(norm), contract.VIA: via}


def _refresh_index(repo: Repo, cfg: Config, detail: str, paths: list[str] | None = None,
                   commit: str | None = None) -> str:
    """index.md after `commit`, which changed only `paths`: only their folders are examined again
    (a full rescan reads every archived memory's row in a pruned clone). Its failure is told,
    never fatal (the next command catches up)."""
    try:
        _follow(repo, cfg, paths, commit)
    except Exception as e:  # noqa: BLE001 - committed is done: index.md catches up on the next command
        return f"{detail} (index.md not refreshed: {e})"
    return detail


def _follow(repo: Repo, cfg: Config, paths: list[str] | None, commit: str | None) -> None:
    """index.md brought from `commit`'s parent to it through `paths` (a root commit: rescanned)."""
    before = repo.git("rev-parse", "-q", "--verify", f"{commit}^^{{tree}}", check=False).decode().strip() \
        if paths and commit else ""
    index_md.refresh(repo, cfg.max_memory_bytes, moved=(paths, before) if paths and before else None)


MODES = ("replace", "create", "append")


def write(repo: Repo, cfg: Config, name: str, content: bytes, *, title: str | None = None,
          tags: list[str] | None = None, type: str | None = None, via: str = "api", agent: str | None = None,
          mode: str = "replace", keep_types: tuple[str, ...] = (), project: str | None = None) -> Change:
    """Write an active memory from `content` (bytes kept exactly unless metadata is given, `project`
    included: a project name, checked, recorded as `project:` in its frontmatter). `mode`:
    replace (create, or replace what is there), create (refuse a name that exists, saying what
    replacing it would lose), append (add `content` to the end of its body; create if new). A
    memory of a type in `keep_types` is never changed (checked under the lock, so no writer can
    slip in between)."""
    if mode not in MODES:
        raise Refused(f"unknown write mode {mode!r}", f"use one of: {', '.join(MODES)}")
    project = None if project is None else projects.check(project)
    with txn.locked(repo):
        tier, norm = locate.locate(repo, name)
        path = names.tier_path("active", norm)
        shown = names.display(norm)
        if contract.CONFLICT_COPY.match(norm):  # sync's alone to make; `resolve` finishes them
            raise BadName(f"{shown} is a name sync gives to conflict copies",
                          "choose another name; a conflict is finished with "
                          f"`git strata resolve {shown} --keep current|copy|both`")
        if mode == "create" and tier is not None:
            raise Refused(f"{shown} already exists in {tier}/{_would_lose(repo, cfg, tier, norm)}",
                          "replace it with --replace (mode \"replace\" over MCP; history keeps the old version), "
                          "add to its end with --append (mode \"append\"), or choose another name")
        if keep_types and tier == "active" and _type_of(repo, cfg, path) in keep_types:
            raise Refused(f"{shown} is a {_type_of(repo, cfg, path)}; agents add those but do not change them",
                          f"write a new memory instead; a person can change it with `git strata edit {shown}`")
        if tier not in (None, "active"):
            raise Refused(f"{shown} is in {tier}/, which is read-only",
                          f"bring it back with `git strata recall {shown}`, then write it")
        existed = tier == "active"
        if mode == "append" and existed:
            content = _appended(safefs.read(repo.root, path, cfg.max_memory_bytes), content, path)
        if title is not None or tags is not None or type is not None or project is not None:
            text = memory.decode(content, path) if content.strip() else ""
            content = memory.compose(text, {"title": title, "tags": tags, "type": type, projects.KEY: project}, path)
        check_content(content, path, cfg, allowlist.load(repo))
        txn.require_clean(repo, path, "write")
        if existed and safefs.read(repo.root, path, cfg.max_memory_bytes) == content:
            return Change("write", norm, path, None, "unchanged")
        repo.require_identity()
        verb = ("append to" if mode == "append" else "update") if existed else "create"

        def stage() -> None:
            safefs.write(repo.root, path, content)
            repo.git("add", "--", path)

        commit = txn.commit(repo, [path], stage, f"strata: {verb} {shown}", _trailers(verb.split()[0], norm, via),
                            agent=agent)
        done = "appended to" if mode == "append" and existed else "updated" if existed else "created"
        return Change("write", norm, path, commit, _refresh_index(repo, cfg, done, [path], commit))


def _appended(old: bytes, more: bytes, path: str) -> bytes:
    """`old` with `more` added to the end of its body, a blank line between (CRLF kept if `old` has it)."""
    text = memory.decode(more, path)
    if text.startswith("---\n") or text.startswith("---\r\n"):
        raise BadMemory(f"{path}: --append adds text to the body, and this text opens with frontmatter",
                        "drop the frontmatter, and set --title, --tags or --type instead")
    newline = b"\r\n" if b"\r\n" in old else b"\n"
    body = text.replace("\r\n", "\n").strip("\n").encode("utf-8").replace(b"\n", newline)
    if not body:
        return old
    head = old.rstrip(b"\r\n")
    return (head + newline + newline if head.strip() else b"") + body + newline


def _would_lose(repo: Repo, cfg: Config, tier: str, norm: str) -> str:
    """What replacing the memory would lose, as the rest of a sentence."""
    path = names.tier_path(tier, norm)
    if tier != "active":
        return f", which is read-only (`git strata recall {names.display(norm)}` brings it back)"
    try:
        mem = memory.parse(safefs.read(repo.root, path, cfg.max_memory_bytes), path)
    except StrataError:
        return "; replacing it would lose its whole content"
    lines = len([line for line in mem.body.splitlines() if line.strip()])
    meta = [f"title {mem.title!r}" if mem.title else "", f"tags {', '.join(mem.tags)}" if mem.tags else "",
            f"type {mem.type}"]
    return f"; replacing it would lose its {', '.join(m for m in meta if m)} and {lines} line(s) of text"


def _rejected(repo: Repo, cfg: Config, norm: str) -> tuple[str, str] | None:
    """(title, body) of the active rejection named `norm`, if it is one."""
    path = names.tier_path("active", norm)
    try:
        mem = memory.parse(safefs.read(repo.root, path, cfg.max_memory_bytes), path)
    except StrataError:
        return None
    return (mem.title, mem.body) if mem.type == "rejection" else None


def _type_of(repo: Repo, cfg: Config, path: str) -> str | None:
    """The type of the memory at `path` (None if it does not parse: a valid one may replace it)."""
    try:
        return memory.parse(safefs.read(repo.root, path, cfg.max_memory_bytes), path).type
    except StrataError:
        return None


def reject(repo: Repo, cfg: Config, text: str, *, name: str | None = None, why: str | None = None,
           via: str = "api", agent: str | None = None, project: str | None = None) -> Change:
    """Record "we said no to `text`" as an active memory of type rejection (never cooled, always
    in the boot context), named rejections/<words of text> unless `name` is given; of `project`
    if given."""
    if not isinstance(text, str) or not text.strip():
        raise BadMemory("nothing to reject: the text is empty", 'say what was rejected: git strata reject "TEXT"')
    title = " ".join(text.split())
    if len(title) > 200:
        raise BadMemory(f"the rejection is {len(title)} characters; keep it to 200",
                        "say what was rejected in one line and put the reasons in --why")
    meta = {"type": "rejection", "title": title, "created": contract.day(time.time()),
            projects.KEY: None if project is None else projects.check(project)}
    body = f"We said no to: {title}\n" + (f"\nWhy: {' '.join(why.split())}\n" if why and why.strip() else "")
    content = memory.compose(body, meta, "rejection")
    if name is not None:
        return write(repo, cfg, name, content, via=via, agent=agent, mode="create")
    from strata_git.core import secrets

    # The name is made of the text's words: a secret in the text must not become one, in any case.
    words = secrets.redact(title, " secret ")
    slug = "-".join("".join(c if c.isalnum() else " " for c in words.lower()).split())[:60].strip("-")
    base = f"rejections/{slug or 'rejection'}"
    try:
        names.normalize(base)
    except BadName:  # "con", "aux", ...: names some file systems reserve
        base = f"rejections/no-{slug}"
    taken = locate.known(repo)[0]
    for candidate in (base, *(f"{base}-{i}" for i in range(2, 1000))):
        if names.collision_key(names.normalize(candidate)) in taken:
            said = _rejected(repo, cfg, names.normalize(candidate))
            reason = f"Why: {' '.join(why.split())}" if why and why.strip() else ""
            if said is not None and " ".join(said[0].split()) == title and reason in said[1]:
                # said no to this already (and for this reason, if one is given): once is enough
                norm = names.normalize(candidate)
                return Change("reject", norm, names.tier_path("active", norm), None,
                              "already recorded as a rejection, nothing changed")
            continue
        try:
            return write(repo, cfg, candidate, content, via=via, agent=agent, mode="create")
        except Refused as e:
            if "already exists" not in e.message:  # another writer took this name meanwhile: next one
                raise
    raise Refused(f"there are 999 rejections named {base}", "pass --name to choose a name")


def forget(repo: Repo, cfg: Config, name: str, via: str = "api", agent: str | None = None) -> Change:
    """Remove an active memory in a commit; history keeps it."""
    from strata_git.store import summary

    with txn.locked(repo):
        tier, norm = locate.locate(repo, name)
        path = names.tier_path("active", norm)
        shown = names.display(norm)
        if tier is None:
            raise locate.not_found(repo, norm)
        if tier != "active":
            raise Refused(f"{shown} is in {tier}/, and only active memories can be forgotten",
                          f"run `git strata recall {shown}` first")
        txn.require_clean(repo, path, "forget")  # history must hold exactly what is removed
        repo.require_identity()
        held = summary.path(norm)  # a summary of an earlier cooling goes with it, if nobody changed it
        paths = [path, held] if repo.in_head(held) and not repo.dirty(held) else [path]
        commit = txn.commit(repo, paths, lambda: repo.git("rm", "-q", "--", *paths), f"strata: forget {shown}",
                            _trailers("forget", norm, via), agent=agent)
        _follow(repo, cfg, paths, commit)
        return Change("forget", norm, path, commit, f"undo with: git revert {commit[:12]}")


def edit(repo: Repo, cfg: Config, name: str, run_editor: Callable[[str], None], via: str = "api",
         agent: str | None = None) -> Change:
    """Open an active memory in an editor and commit the result if it is valid and changed."""
    tier, norm = locate.locate(repo, name)
    path = names.tier_path("active", norm)
    shown = names.display(norm)
    if tier is None:
        raise NotFound(f"no memory named {shown!r}", f"create it with `git strata write {shown} -m TEXT`")
    if tier != "active":
        raise Refused(f"{shown} is in {tier}/, which is read-only",
                      f"bring it back with `git strata recall {shown}` (or `git strata edit --recall ...`)")
    if safefs.kind(repo.root, path) != "file":
        raise Refused(f"{path} is not a regular file", "replace it with a real file")
    before = safefs.read(repo.root, path, cfg.max_memory_bytes)
    run_editor(os.path.join(repo.root, path))
    with txn.locked(repo):
        left = safefs.kind(repo.root, path)
        if left != "file":  # an editor that saves by rename can leave anything, or nothing, behind
            what = {None: "nothing", "dir": "a folder"}.get(left, "a link or special file")
            raise BadMemory(f"the editor left {what} where {path} was; nothing was committed",
                            f"the memory is still in the last commit: `git checkout -- {path}` brings it back"
                            + (" once the folder is moved away" if left == "dir" else ""))
        try:
            after = safefs.read(repo.root, path, cfg.max_memory_bytes)
            check_content(after, path, cfg, allowlist.load(repo))
        except (BadMemory, Refused) as e:
            raise BadMemory(e.message, f"your edit is kept in {path}; fix it and run "
                            f"`git strata edit {shown}` again, or `git checkout -- {path}` to drop it") from None
        if not repo.dirty(path):
            return Change("edit", norm, path, None, "unchanged")
        repo.require_identity()
        # restore=False: a failed commit must never throw away what the user just typed.
        commit = txn.commit(repo, [path], lambda: repo.git("add", "--", path), f"strata: edit {shown}",
                            _trailers("edit", norm, via), restore=False, agent=agent)
        _follow(repo, cfg, [path], commit)
        return Change("edit", norm, path, commit, "unchanged content" if after == before else "edited")
