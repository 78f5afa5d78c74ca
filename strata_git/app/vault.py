"""The library API: one Vault per memory repository, a facade over the operations.

The CLI and the MCP server are thin shells over it, so a name, a size or a query is checked
the same way whichever door it comes through; nothing here prints. Each method is one call
into ops/ (what commits, through ops/txn.py), store/ (what reads) or app/reports.py; the
Vault only carries what they share: the repository, its settings, the agent's name (recorded
in every commit it makes) and, in a long-running process, the file watch.

Imports of the operations are made inside the methods: `git strata read` should not pay for
loading the janitor, the archive or sync.
"""

from __future__ import annotations

import builtins
import os
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

from strata_git.core import config, names, projects
from strata_git.core.config import Config
from strata_git.errors import BadName, NotFound
from strata_git.gitio.git import Repo, discover

if TYPE_CHECKING:
    from strata_git.app.reports import Status
    from strata_git.app.stats import Stats
    from strata_git.core.context import Context
    from strata_git.core.entries import Entry, Scan
    from strata_git.gitio.watch import Watch
    from strata_git.ops import archive as archive_op
    from strata_git.ops import janitor
    from strata_git.ops.asof import Counted
    from strata_git.ops.asof import Point as AsOf
    from strata_git.ops.audit import Migration, Version, Why
    from strata_git.ops.reading import Read
    from strata_git.ops.reindex import Report as ReindexReport
    from strata_git.ops.scan import Report as ScanReport
    from strata_git.ops.sync.sync import Result as SyncResult
    from strata_git.ops.timeline import Week
    from strata_git.ops.txn import Change
    from strata_git.store.search import Hit


class Vault:
    def __init__(self, repo: Repo, cfg: Config) -> None:
        self.repo = repo
        self.cfg = cfg
        self.agent: str | None = None  # the agent's name, recorded in every commit's Strata-Agent trailer
        self.watch: Watch | None = None  # set by watch_files() in a long-running process

    @classmethod
    def open(cls, path: str = ".", repo: Repo | None = None) -> Vault:
        """The memory repository at `path` (or `repo`, found there already)."""
        repo = repo or discover(path)
        if not os.path.isfile(os.path.join(repo.root, config.CONFIG_PATH)):
            raise NotFound(f"{repo.root} is a git repository but not a memory repository",
                           f"run `git strata init {repo.root}`")
        return cls(repo, config.load(repo.root, repo.state_dir()))

    def config_now(self) -> list[str]:
        """What is wrong with the config as it is on disk now (a sync may have changed it): the
        shared file's weakening values not applied, or why it cannot be read."""
        from strata_git.errors import BadConfig

        try:
            return list(config.load(self.repo.root, self.repo.state_dir()).ignored)
        except BadConfig as e:
            return [f"{e.message} ({e.hint})"]

    # -- names --------------------------------------------------------------------------------------

    def locate(self, name: str) -> tuple[str | None, str]:
        """(tier holding the memory or None, normalized name); refuses near-collisions."""
        from strata_git.ops import locate

        return locate.locate(self.repo, name)

    # -- one memory ---------------------------------------------------------------------------------

    def write(self, name: str, content: bytes, *, title: str | None = None, tags: list[str] | None = None,
              type: str | None = None, via: str = "api", mode: str = "replace",
              keep_types: tuple[str, ...] = (), project: str | None = None) -> Change:
        """Write an active memory; `mode` replace (the default here), create or append (see ops/memories.py);
        `project` recorded in its frontmatter."""
        from strata_git.ops import memories

        return memories.write(self.repo, self.cfg, name, content, title=title, tags=tags, type=type, via=via,
                              agent=self.agent, mode=mode, keep_types=keep_types, project=project)

    def reject(self, text: str, *, name: str | None = None, why: str | None = None, via: str = "api",
               project: str | None = None) -> Change:
        """Record "we said no to `text`" as an active memory of type rejection (of `project` if given)."""
        from strata_git.ops import memories

        return memories.reject(self.repo, self.cfg, text, name=name, why=why, via=via, agent=self.agent,
                               project=project)

    def read(self, name: str, via: str = "api", archived: str = "recall", as_of: str | AsOf | None = None,
             code_dir: str | None = None) -> Read:
        """The memory from whichever tier holds it; records an access. An archived one is recalled
        first, or (`archived="refuse"`) refused. `as_of` (a date, a commit of the memory, or a
        revision of the code repository `code_dir` is in): the memory as it was then, from history,
        changing and recording nothing (see ops/asof.py)."""
        from strata_git.ops import reading

        if as_of is not None:
            from strata_git.ops import asof

            point = as_of if isinstance(as_of, asof.Point) else self.as_of(as_of, code_dir)
            tier, raw = asof.read(self.repo, self.cfg, name, point)
            return reading.Read(names.normalize(name), tier, raw)
        return reading.read(self.repo, self.cfg, name, via=via, agent=self.agent, archived=archived)

    def as_of(self, asked: str, code_dir: str | None = None) -> AsOf:
        """The commit of the memory `asked` names: a date, a commit, or a code revision (asof.py)."""
        from strata_git.ops import asof

        return asof.resolve(self.repo, asked, code_dir)

    def summary(self, name: str) -> tuple[str, str]:
        """(tier, text) of the summary made when the memory cooled."""
        from strata_git.ops import reading

        return reading.summary_of(self.repo, name)

    def edit(self, name: str, run_editor: Callable[[str], None], via: str = "api") -> Change:
        """Open an active memory in an editor and commit the result if it is valid and changed."""
        from strata_git.ops import memories

        return memories.edit(self.repo, self.cfg, name, run_editor, via=via, agent=self.agent)

    def forget(self, name: str, via: str = "api") -> Change:
        """Remove an active memory in a commit; history keeps it."""
        from strata_git.ops import memories

        return memories.forget(self.repo, self.cfg, name, via=via, agent=self.agent)

    def recall(self, items: str | list[str], via: str = "api", match: bool = False,
               mode: str | None = None) -> list[Change]:
        """Bring cooled or archived memories back to active/ in one commit (see ops/recall.py); with
        `match`, an item that names none is a query, searched by `mode` as `search` does."""
        from strata_git.ops import recall

        return recall.recall(self.repo, self.cfg, items, via=via, match=match, agent=self.agent, mode=mode)

    def resolve(self, name: str, keep: str, via: str = "api") -> Change:
        """Close a conflict a sync left: keep the version in place, take the copy, or keep both."""
        from strata_git.ops.sync import conflicts

        return conflicts.resolve(self.repo, self.cfg, name, keep, via=via, agent=self.agent)

    # -- listing and finding ------------------------------------------------------------------------

    def refresh_router(self) -> Scan:
        """Bring index.md (and the catalog) up to date with the working tree."""
        from strata_git.store import index_md

        return index_md.refresh(self.repo, self.cfg.max_memory_bytes)

    def index(self) -> tuple[str, str]:
        """(path, text) of index.md, brought up to date first."""
        from strata_git.core import contract

        self.refresh_router()
        path = os.path.join(self.repo.root, contract.INDEX_MD)
        with open(path, encoding="utf-8") as f:
            return path, f.read()

    def list(self, tier: str | None = None, type: str | None = None, project: str | None = None,
             as_of: str | None = None, code_dir: str | None = None) -> list[Entry]:
        """Every memory (of one tier, type or project if given; `project` is checked as a name);
        `as_of`: as they were then (see `read`)."""
        if tier is not None and tier not in names.TIERS:
            raise BadName(f"unknown tier {tier!r}", f"use one of: {', '.join(names.TIERS)}")
        wanted = None if project is None else projects.check(project)
        if as_of is not None:
            from strata_git.ops import asof

            entries = asof.listing(self.repo, self.cfg, self.as_of(as_of, code_dir))
        else:
            entries = self.refresh_router().entries
        return [e for e in entries if (tier is None or e.tier == tier) and (type is None or e.type == type)
                and (wanted is None or e.project == wanted)]

    def search(self, query: str, *, tier: str | None = None, type: str | None = None, limit: int = 10,
               rank: str = "merged", project: str | None = None, mode: str | None = None,
               as_of: str | None = None, code_dir: str | None = None) -> builtins.list[Hit]:
        """Hits for any text over active/, cooled/ and the shadow index of archive/ (see search.py),
        of one project's memories if `project` is given; by `mode` words, meaning or both (default:
        both when `search.model` names a model, else words; see meaning.py)."""
        from strata_git.store import search

        if as_of is not None:  # by words, among the memories then (see asof.search)
            from strata_git.ops import asof

            if mode not in (None, "words") or rank != "merged":
                raise BadName("--as-of searches by words, best first", "leave out --mode and --rank")
            return asof.search(self.repo, self.cfg, self.as_of(as_of, code_dir), query, tier, type, limit,
                               None if project is None else projects.check(project), self.watch)
        return search.search(self.repo, query, tier=tier, type=type, limit=limit, rank=rank,
                             max_bytes=self.cfg.max_memory_bytes, watch=self.watch,
                             project=None if project is None else projects.check(project),
                             mode=mode or self.cfg.search_mode(),
                             model=self.cfg.search_model, weight=self.cfg.search_meaning_weight)

    def impatient(self, until: float) -> AbstractContextManager[None]:
        """For a caller that must answer by `until` (time.monotonic(); the agent hooks): within the
        block, `search` and `context` read the catalog as it is and never wait past `until` for
        another process, nor build it; errors.Unavailable says why not (see catalog.impatient)."""
        from strata_git.store import catalog

        return catalog.impatient(until)

    def watch_files(self) -> None:
        """For a long-running process: learn which memories changed from the OS (inotify) instead
        of a stat of every file before each search (see watch.py)."""
        from strata_git.gitio import watch

        if self.watch is None:
            self.watch = watch.watch(self.repo.root)

    # -- reports ------------------------------------------------------------------------------------

    def context(self, budget: int | None = None, type: str | None = None, standing_only: bool = False,
                active_only: bool = False, project: str | None = None, as_of: str | None = None,
                code_dir: str | None = None) -> Context:
        """The boot context: rejections, decisions, recent memories, the router (`standing_only`:
        the rejections and decisions alone; `active_only`: look at active/ alone, not refreshing
        index.md or the other tiers' rows; `project`: the current project, whose memories come first,
        other projects' only as far as the budget allows; `as_of`: as it would have been then, see
        `read`)."""
        from strata_git.app import reports

        if as_of is not None:
            from strata_git.ops import asof

            context: Context = asof.context(self.repo, self.cfg, self.as_of(as_of, code_dir), budget, type,
                                            standing_only, None if project is None else projects.check(project))
            return context

        return reports.context(self.repo, self.cfg, budget, type, standing_only, active_only,
                               None if project is None else projects.check(project))

    def status(self) -> Status:
        from strata_git.app import reports

        return reports.status(self.repo, self.cfg)

    def status_as_of(self, asked: str, code_dir: str | None = None) -> Counted:
        """Memories and bytes per tier as they were then (see `read`)."""
        from strata_git.ops import asof

        return asof.status(self.repo, self.as_of(asked, code_dir))

    def stats(self) -> Stats:
        """Sizes, movements, reads, index freshness and what the boot context saves (see stats.py)."""
        from strata_git.app import stats

        return stats.gather(self.repo, self.context)

    def timeline(self, weeks: int = 26, now: int | None = None) -> builtins.list[Week]:
        """Memories per tier at each week's end and the week's moves, the last `weeks` weeks up to
        `now`, oldest first, from history in one pass (see ops/timeline.py)."""
        from strata_git.ops import timeline

        if isinstance(weeks, bool) or not isinstance(weeks, int) or not 1 <= weeks <= timeline.MAX_WEEKS:
            raise BadName(f"bad number of weeks {weeks!r}", f"give a whole number from 1 to {timeline.MAX_WEEKS}")
        return timeline.weekly(self.repo, int(time.time()) if now is None else now, weeks)

    def log(self, name: str | None = None, limit: int = 50) -> builtins.list[Migration]:
        """Migrations, newest first, from the janitor commits' trailers (optionally of one memory)."""
        from strata_git.ops import audit

        return audit.migrations(self.repo, names.normalize(name) if name else None, limit)

    def history(self, name: str, limit: int = 100, diff: bool = False) -> builtins.list[Version]:
        """Each commit that changed or moved the memory, newest first (see audit.versions); with
        `diff`, what each changed in its text (versions this clone pruned fetched in one batch)."""
        from strata_git.ops import audit

        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 10_000:
            raise BadName(f"bad limit {limit!r}", "give a whole number from 1 to 10000")
        norm = names.normalize(name)
        found = audit.versions(self.repo, norm, limit)
        if not found:
            import shlex

            raise NotFound(f"no memory named {names.display(norm)!r} in this repository's history",
                           f"look for it with `git strata search {shlex.quote(names.display(norm))}`")
        if not diff:
            return found
        from strata_git.ops import asof

        return audit.with_diffs(found, lambda blobs: asof.contents(self.repo, self.cfg, blobs),
                                self.cfg.max_memory_bytes)

    def why(self, name: str, now: int | None = None) -> Why:
        """Where a memory is, since when, by which rule, its evidence, and when it moves next."""
        from strata_git.ops import audit, locate

        tier, norm = locate.locate(self.repo, name)
        if tier is None:
            raise locate.not_found(self.repo, norm)
        return audit.why(self.repo, self.cfg, tier, norm, int(time.time()) if now is None else now)

    def scan(self, progress: Callable[[int, int], None] | None = None) -> ScanReport:
        """Secrets in the history of every ref, but for the false positives this clone allows
        (see ops/scan.py); nothing is changed."""
        from strata_git.ops import scan
        from strata_git.store import allowlist

        return scan.scan(self.repo, allowlist.load(self.repo), progress=progress)

    def set_notetaker(self, kind: str) -> None:
        """Who takes capture's notes in this clone: claude, codex, command or rules (git config
        strata.captureSummarizer; rules unsets it)."""
        if kind == "rules":
            self.repo.git("config", "--unset-all", "strata.captureSummarizer", check=False)
        else:
            self.repo.git("config", "strata.captureSummarizer", kind)

    def allow_secret(self, fingerprints: builtins.list[str]) -> builtins.list[str]:
        """Add fingerprints of secret false positives to this clone's allowlist; those new to it."""
        from strata_git.store import allowlist

        return allowlist.add(self.repo, fingerprints)

    # -- the strata ---------------------------------------------------------------------------------

    def janitor(self, dry_run: bool = False, now: int | None = None) -> janitor.Result:
        """One janitor cycle (plan, and apply unless `dry_run`); waits its turn behind writes, and refuses
        at once if another janitor runs."""
        from strata_git.ops import janitor

        return janitor.cycle(self.repo, self.cfg, dry_run=dry_run, now=now)

    def archive(self, dry_run: bool = False) -> archive_op.Report:
        """Push archived content to the archive remote, verify it there, then prune it here."""
        from strata_git.ops import archive

        return archive.command(self.repo, self.cfg, dry_run=dry_run)

    def reindex(self, progress: Callable[[int, int], None] | None = None) -> ReindexReport:
        """Rebuild the derived stores, upgrading archived memories to full shadow records, and the
        meaning vectors when a model is set (`progress`: (done, of) memories embedded)."""
        from strata_git.ops import reindex

        return reindex.reindex(self.repo, self.cfg, progress)

    def sync(self, remote: str | None = None, dry_run: bool = False,
             progress: Callable[[str], None] | None = None) -> SyncResult:
        """Bring memory, access records and archive records in line with the remote, both ways."""
        from strata_git.ops import txn
        from strata_git.ops.sync import sync

        with txn.locked(self.repo):
            return sync.sync(self.repo, self.cfg, remote, dry_run, progress)

    def serve(self, interval: int, live: bool = False, once: bool = False,
              say: Callable[[str], None] = lambda _: None, sync: bool = False) -> int:
        """Run janitor cycles every `interval` seconds until SIGTERM/SIGINT; the cycles run.
        With `sync`, each live cycle is followed by a sync (its failure is logged, not fatal)."""
        from strata_git.app import serve
        from strata_git.errors import StrataError

        def one(dry_run: bool) -> dict[str, Any]:
            result = self.janitor(dry_run=dry_run).as_dict()
            entry = {k: result[k] for k in ("summary", "commit", "head", "skipped", "recovered")}
            if sync:
                try:
                    done = self.sync(dry_run=dry_run)
                    entry["sync"] = {"integrated": done.integrated, "pushed": done.pushed,
                                     "conflicts": len(done.conflicts), "head": done.head}
                except StrataError as e:
                    entry["sync"] = {"error": e.message}
            return entry

        return serve.serve(self.repo, one, interval, live, once, say)
