"""One search over all three tiers.

active/ and cooled/ are searched in the catalog's full-text table, brought in line
with the working tree first (a file saved a moment ago, committed or not, is found as
it is now); archive/ is searched in the shadow index, fresh for HEAD. Scores are
FTS5's bm25 (negated: higher is better) with title > tags and type > body.

Two orders: `merged` (the default) sorts every hit by score whatever its tier;
`cascade` lists active hits first, then cooled, then archive. The choice comes from
bench/retrieval.py (recall@5 on queries with known answers spread over the tiers):
see README "Search".
"""

from __future__ import annotations

import os
import sqlite3
from typing import NamedTuple

from strata_git import catalog, names, safefs, shadow, textindex
from strata_git.errors import BadName
from strata_git.git import Repo

RANKS = ("merged", "cascade")
MAX_QUERY_CHARS = 100_000
MAX_LIMIT = 1000
# bm25 column weights: title, tags (and type), body.
WEIGHTS = (5.0, 3.0, 1.0)


class Hit(NamedTuple):
    tier: str
    name: str  # without the .md suffix
    title: str
    type: str
    score: float
    snippet: str
    commit: str = ""  # archive hits: the commit that archived it
    blob: str = ""  # archive hits: the blob holding it
    summary: str = ""  # cooled and archive hits: the summary made when it cooled, if any

    @property
    def path(self) -> str:
        return f"{self.tier}/{self.name}{names.SUFFIX}"

    def as_dict(self) -> dict:
        out = {"tier": self.tier, "name": self.name, "path": self.path, "title": self.title, "type": self.type,
               "score": self.score, "snippet": self.snippet}
        if self.tier == "archive":
            out |= {"commit": self.commit or None, "blob": self.blob}
        if self.summary:
            out["summary"] = self.summary
        return out


def check(query: object, tier: str | None, limit: int, rank: str) -> str:
    if not isinstance(query, str):
        raise BadName("the search query must be text", "pass the words to look for")
    if len(query) > MAX_QUERY_CHARS:
        raise BadName(f"the search query is {len(query)} characters, over the {MAX_QUERY_CHARS} limit",
                      "search for the key words instead")
    if tier is not None and tier not in names.TIERS:
        raise BadName(f"unknown tier {tier!r}", f"use one of: {', '.join(names.TIERS)}")
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
        raise BadName(f"bad limit {limit!r}", f"give a whole number from 1 to {MAX_LIMIT}")
    if rank not in RANKS:
        raise BadName(f"unknown ranking {rank!r}", f"use one of: {', '.join(RANKS)}")
    return query


COMMON = 0.2  # a term in more than this share of the documents is dropped while rarer ones remain


def selective(db: sqlite3.Connection, vocab: str, terms: list[str], total: int) -> list[str]:
    """The query's terms without those most documents contain: bm25 gives them almost no weight,
    and scoring every document that has one is what would make a query slow. If every term is
    common, the two rarest stay."""
    if total < 200 or len(terms) < 2:
        return terms
    df = {}
    for t in terms:
        if textindex.is_prefix(t):
            row = db.execute(f"SELECT sum(doc) FROM {vocab} WHERE term >= ? AND term < ?", (t, t + "\U0010ffff"))
        else:
            row = db.execute(f"SELECT doc FROM {vocab} WHERE term = ?", (t,))
        df[t] = (row.fetchone() or (0,))[0] or 0
    kept = [t for t in terms if df[t] <= COMMON * total]
    return kept or sorted(terms, key=lambda t: df[t])[:2]


def _run(db: sqlite3.Connection, table: str, sql: str, terms: list[str], args: tuple) -> list[tuple]:
    """Run a MATCH query; if FTS5 still finds something to object to in a term (its tokenizer
    splitting one where ours did not), drop the terms it refuses one by one and ask again."""
    try:
        return db.execute(sql, (textindex.expression(terms), *args)).fetchall()
    except sqlite3.OperationalError as e:
        if "fts5" not in str(e) and "syntax" not in str(e):
            raise
    usable = []
    for t in terms:
        try:
            db.execute(f"SELECT 1 FROM {table} WHERE {table} MATCH ? LIMIT 0", (textindex.expression([t]),))
            usable.append(t)
        except sqlite3.OperationalError:
            continue
    return db.execute(sql, (textindex.expression(usable), *args)).fetchall() if usable else []


def _live(repo: Repo, terms: list[str], tier: str | None, type: str | None, limit: int,
          max_bytes: int) -> list[Hit]:
    tiers = catalog.SEARCHED if tier is None else (tier,)
    where, args = [f"m.tier IN ({','.join('?' * len(tiers))})"], [*tiers]
    if type is not None:
        where.append("m.type = ?")
        args.append(type)
    sql = (f"SELECT m.tier, m.name, m.title, m.type, bm25(docs, 0, {', '.join(map(str, WEIGHTS))}) AS s "
           f"FROM docs JOIN memories m ON m.path = docs.path WHERE docs MATCH ? AND {' AND '.join(where)} "
           "ORDER BY s LIMIT ?")
    with catalog.connect(repo) as db:
        catalog.sync(repo, db, max_bytes, tiers)
        total = db.execute("SELECT count(*) FROM memories").fetchone()[0]
        rows = _run(db, "docs", sql, selective(db, "docs_vocab", terms, total), (*args, limit))
    hits = []
    for t, name, title, kind, score in rows:
        try:
            text = safefs.read(repo.root, f"{t}/{name}", max_bytes).decode("utf-8", "replace")
        except Exception:  # noqa: BLE001 - gone since the scan: show no snippet rather than fail
            text = ""
        body = text.split("\n---", 1)[-1] if text.startswith("---") else text
        hits.append(Hit(t, name[: -len(names.SUFFIX)], title or name[: -len(names.SUFFIX)], kind,
                        float(f"{-score:.4g}"), catalog.clean(textindex.snippet(body, terms))))
    return hits


def _archived(repo: Repo, terms: list[str], type: str | None, limit: int) -> list[Hit]:
    sql = (f"SELECT e.path, e.title, e.type, e.preview, e.commit_id, e.blob, "
           f"bm25(terms, {', '.join(map(str, WEIGHTS))}) AS s FROM terms JOIN entries e ON e.id = terms.rowid "
           f"WHERE terms MATCH ? {'AND e.type = ?' if type is not None else ''} ORDER BY s LIMIT ?")
    for attempt in (1, 2):
        try:
            with shadow.connect(repo) as db:
                total = db.execute("SELECT count(*) FROM entries").fetchone()[0]
                rows = _run(db, "terms", sql, selective(db, "vocab", terms, total),
                            (type, limit) if type is not None else (limit,))
            break
        except sqlite3.DatabaseError:
            if attempt == 2:
                raise
            shadow.build(repo, repo.head())  # corrupt where only a query reaches: rebuild, then ask again
    found = []
    for path, title, kind, preview, commit, blob, score in rows:
        name = path.partition("/")[2][: -len(names.SUFFIX)]
        found.append(Hit("archive", name, title or name, kind, float(f"{-score:.4g}"), textindex.snippet(preview, terms),
                         commit, blob))
    return found


def search(repo: Repo, query: str, *, tier: str | None = None, type: str | None = None, limit: int = 10,
           rank: str = "merged", max_bytes: int = 1024 * 1024) -> list[Hit]:
    """The best `limit` hits for any text, over the tiers asked for (all by default)."""
    check(query, tier, limit, rank)
    terms = textindex.query_terms(query)
    if not terms:
        return []  # nothing searchable in it (only punctuation, say): no hits, no error
    hits: list[Hit] = []
    if tier in (None, "active", "cooled"):
        hits += _live(repo, terms, tier, type, limit, max_bytes)
    if tier in (None, "archive"):
        hits += _archived(repo, terms, type, limit)
    order = {t: i for i, t in enumerate(names.TIERS)}
    if rank == "cascade":
        hits.sort(key=lambda h: (order[h.tier], -h.score, h.name))
    else:
        hits.sort(key=lambda h: (-h.score, order[h.tier], h.name))
    return [_with_summary(repo.root, h) for h in hits[:limit]]


def _with_summary(root: str, hit: Hit) -> Hit:
    from strata_git import summary

    if hit.tier == "active" or not os.path.isdir(os.path.join(root, summary.FOLDER)):
        return hit
    return hit._replace(summary=summary.read(root, hit.name + names.SUFFIX) or "")
