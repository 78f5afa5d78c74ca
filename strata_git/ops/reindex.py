"""`git strata reindex`: rebuild every derived store, upgrading the archived memories that lack a
full shadow record (archived by an older version, or by hand) to one on the way.

Blobs held here are read here; the others are fetched from the archive remote in one batch,
into a scratch repository so a pruned clone stays pruned. Offline, what could not be upgraded is
named and keeps its old row.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple

from strata_git.core.config import Config
from strata_git.errors import StrataError
from strata_git.gitio import partial
from strata_git.gitio.git import Repo
from strata_git.ops import archive, txn
from strata_git.store import catalog, index_md, records, shadow

if TYPE_CHECKING:
    from strata_git.store import meaning as meaning_t


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
    meaning_notes: int = 0  # archived memories whose vectors from this model were written beside their records

    def as_dict(self) -> dict[str, object]:
        return self._asdict()


def reindex(repo: Repo, cfg: Config, progress: Callable[[int, int], None] | None = None) -> Report:
    """Rebuild every derived store. With search.model set, also every meaning vector (telling
    `progress` (done, of) memory by memory), and new records for the archived memories whose
    records carry no vectors from that model (their blobs fetched in the same one batch)."""
    model, why = _model(cfg)
    with txn.locked(repo):
        rows = shadow.all_rows(repo)
        lacking = [row for row in rows if row.source != "record"]
        unvectored: list[shadow.Row] = []
        if model is not None:
            kept = [row for row in rows if row.source == "record"]
            found = records.find(repo, sorted({row.blob for row in kept}))[0] if kept else {}
            unvectored = [row for row in kept if row.blob in found
                          and (found[row.blob].model, found[row.blob].dim) != (model.id, model.dim)]
        blobs = sorted({row.blob for row in [*lacking, *unvectored]})
        missing = set(partial.absent(repo, blobs))
        held = [b for b in blobs if b not in missing]
        raw = dict(zip(held, repo.objects(held), strict=True))
        unreachable = ""
        try:
            raw |= archive.borrow(repo, cfg, sorted(missing))
        except StrataError as e:
            unreachable = e.message
        made, notes = {}, {}
        legacy = {row.blob for row in lacking}
        for done, (b, data) in enumerate(sorted(raw.items()), 1):
            if data is None:
                continue
            vectors = _vectors(model, data) if model is not None else None
            if b in legacy:
                made[b] = records.make(data, b, cfg.record_max_terms, vectors)
            if vectors is not None and b not in legacy:  # its record stays: history names it
                notes[b] = records.meaning_note(b, *vectors)
            if progress and model is not None:
                progress(done, len(raw))
        author = (cfg.janitor_name, cfg.janitor_email)
        written = len(records.write(repo, made, author))
        noted = len(records.write(repo, notes, author, model=model.id)) if model is not None and notes else 0
        catalog.reset(repo)
        archived = shadow.build(repo, repo.head())
        scan = index_md.refresh(repo, cfg.max_memory_bytes)
        embedded = 0
        if model is not None:
            from strata_git.store import meaning

            meaning.forget(repo)
            live = [e for e in scan.entries if e.tier in catalog.SEARCHED and not e.problem]
            embedded = meaning.refresh(repo, model, live, cfg.max_memory_bytes, progress,
                                       archived=shadow.all_rows(repo))
    left = sorted(row.name for row in lacking if row.blob not in made)
    return Report(archived=archived, active_and_cooled=sum(1 for e in scan.entries if e.tier != "archive"),
                  shadow_commit=repo.head(), records_written=written, upgraded=len(lacking) - len(left),
                  not_upgraded=left, unreachable=unreachable, embedded=embedded, meaning=why, meaning_notes=noted)


def _model(cfg: Config) -> tuple[meaning_t.Model | None, str]:
    """(the model search.model names, why there is none: "" when none is set)."""
    if not cfg.search_model:
        return None, ""
    from strata_git.store import meaning

    found = meaning.model(cfg.search_model)
    return found, "" if found is not None else "; ".join(meaning.warnings())


def _vectors(model: meaning_t.Model, raw: bytes) -> tuple[str, int, list[bytes]]:
    """What a record carries of an archived memory's meaning: its first pieces' vectors."""
    from strata_git.store import meaning

    pieces = meaning.pieces_of(raw, "archive/record.md")[: records.MAX_VECTORS]
    return model.id, model.dim, [meaning.quantise(v) for v in model.embed(pieces)]
