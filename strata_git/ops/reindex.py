"""`git strata reindex`: rebuild every derived store, upgrading the archived memories that lack a
full shadow record (archived by an older version, or by hand) to one on the way.

Blobs held here are read here; the others are fetched from the archive remote in one batch,
into a scratch repository so a pruned clone stays pruned. Offline, what could not be upgraded is
named and keeps its old row.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from strata_git.core.config import Config
from strata_git.errors import StrataError
from strata_git.gitio import partial
from strata_git.gitio.git import Repo
from strata_git.ops import archive, txn
from strata_git.store import catalog, index_md, records, shadow


class Report(NamedTuple):
    archived: int  # archived memories in the rebuilt shadow index
    active_and_cooled: int  # memories in the rebuilt search catalog's other tiers
    shadow_commit: str | None  # the commit the shadow index was built for
    records_written: int  # full shadow records written for archived memories that lacked one
    upgraded: int
    not_upgraded: list[str]  # archived memories (with .md) whose content was neither here nor fetched
    unreachable: str  # why the archive remote could not be read ("" if it could)
    embedded: int = 0  # active and cooled memories whose meaning vectors were made afresh
    meaning: str = ""  # why no vectors were made ("" if a model made them, or none is set)

    def as_dict(self) -> dict[str, object]:
        return self._asdict()


def reindex(repo: Repo, cfg: Config, progress: Callable[[int, int], None] | None = None) -> Report:
    """Rebuild every derived store (and, with search.model set, every meaning vector, telling
    `progress` (done, of) memory by memory)."""
    with txn.locked(repo):
        lacking = [row for row in shadow.all_rows(repo) if row.source != "record"]
        blobs = sorted({row.blob for row in lacking})
        missing = set(partial.absent(repo, blobs))
        held = [b for b in blobs if b not in missing]
        raw = dict(zip(held, repo.objects(held), strict=True))
        unreachable = ""
        try:
            raw |= archive.borrow(repo, cfg, sorted(missing))
        except StrataError as e:
            unreachable = e.message
        made = {b: records.make(data, b, cfg.record_max_terms) for b, data in raw.items() if data is not None}
        written = len(records.write(repo, made, (cfg.janitor_name, cfg.janitor_email)))
        catalog.reset(repo)
        archived = shadow.build(repo, repo.head())
        scan = index_md.refresh(repo, cfg.max_memory_bytes)
        embedded, why = _embed(repo, cfg, [e for e in scan.entries if e.tier in catalog.SEARCHED and not e.problem],
                               progress)
    left = sorted(row.name for row in lacking if row.blob not in made)
    return Report(archived=archived, active_and_cooled=sum(1 for e in scan.entries if e.tier != "archive"),
                  shadow_commit=repo.head(), records_written=written, upgraded=len(lacking) - len(left),
                  not_upgraded=left, unreachable=unreachable, embedded=embedded, meaning=why)


def _embed(repo: Repo, cfg: Config, live: list, progress: Callable[[int, int], None] | None) -> tuple[int, str]:
    """(memories embedded, why none were) with the model search.model names, all afresh."""
    if not cfg.search_model:
        return 0, ""
    from strata_git.store import meaning

    found = meaning.model(cfg.search_model)
    if found is None:
        return 0, "; ".join(meaning.warnings())
    meaning.forget(repo)
    return meaning.refresh(repo, found, live, cfg.max_memory_bytes, progress), ""
