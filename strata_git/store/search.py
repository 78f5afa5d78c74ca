"""One search over all three tiers, on one scale.

Every memory is a row of the catalog's one full-text table: active/ and cooled/ from the
working tree, brought in line first (a file saved a moment ago, committed or not, is found
as it is now), archive/ from its shadow record (see shadow.py), fresh for HEAD. So bm25's
corpus statistics cover every tier and an archived memory scores exactly as it did live.
Scores are BM25 with Lucene's idf (see idf_weights) over title > tags and type > body,
negated so that higher is better.

Two orders: `merged` (the default) sorts every hit by score whatever its tier;
`cascade` lists active hits first, then cooled, then archive. bench/retrieval.py
measures both against an independent BM25: see docs/search.md.
"""

from __future__ import annotations

import math
import os
import sqlite3
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, NamedTuple, TypeVar

from strata_git.core import contract, entries, names, textindex
from strata_git.errors import BadName
from strata_git.gitio import safefs
from strata_git.gitio.git import Repo
from strata_git.store import catalog, shadow, toplists

if TYPE_CHECKING:
    from strata_git.gitio.watch import Watch
    from strata_git.store import meaning as meaning_t

RANKS = ("merged", "cascade")
MODES = ("words", "meaning", "both")
T = TypeVar("T")
FUSED = 50  # hits of each kind fused in mode "both": a memory outside both lists cannot win
MAX_QUERY_CHARS = 100_000
MAX_LIMIT = 1000
# bm25 column weights, in the full-text table's column order: body, title, tags (and type).
WEIGHTS = toplists.WEIGHTS


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
    project: str = ""  # the project it records, "" for none
    coverage: float = 0.0  # the share of the query's idf (its rarer words weigh more) that this memory holds

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
        if self.project:
            out["project"] = self.project
        out["coverage"] = self.coverage
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


class Weighed(NamedTuple):
    terms: list[tuple[str, float, float]]  # (term, bm25 scale, Lucene idf it covers) of the terms some memory holds
    idf: float  # the query's whole Lucene idf, its terms no memory holds included (counted as held by none)
    held: tuple[int, ...] = ()  # how many memories each of `terms` is in


K1 = 1.2  # FTS5 bm25()'s
NO_PART = 0.005  # a word that can add less than this to a score (shown to two decimals) is not scored
LONGER_SHARE = 0.1  # a word the query word starts counts this much of a word it names (bench/retrieval.py)
MAX_LONGER = 32  # a held word that starts more words than this is a stem ("data"), not a name's start
MAX_LONGER_MEMORIES = 1000  # ... or than this many memories hold: scoring them would cost what a word does


def idf_weights(db: sqlite3.Connection, terms: list[str]) -> Weighed:
    """(term, weight, idf) for the terms any memory holds. FTS5's bm25() uses the classic idf,
    log((N - n + 0.5) / (n + 0.5)), which falls to nothing for a word in half the memories
    and is clamped there; Lucene's log(1 + (N - n + 0.5) / (n + 0.5)) keeps such words
    counting a little, and finds the answer more often (docs/search.md). One phrase's bm25
    is its idf times its term-frequency part, so each term's score is scaled by
    lucene idf / classic idf: exactly BM25 with Lucene's idf, tf and lengths still FTS5's."""
    total = indexed_count(db)
    found: list[tuple[str, int, int, float]] = []  # (term, memories it finds, FTS5's count, share of its score)
    unheld = 0
    lists = toplists.listed(db, terms)
    for t in terms:
        if t in lists:  # (a count of its own: FTS5's vocabulary walks every memory a word is in)
            n = lists[t][2]
        else:
            row = db.execute("SELECT doc FROM docs_vocab WHERE term = ?", (t,)).fetchone()
            n = row[0] if row else 0
        # A word held or not is also looked for as the start of longer ones ("cockroach" finds
        # "CockroachDB"): in place of itself when no memory holds it, else beside it at a share.
        longer, words = _longer(db, t, held=n > 0) if textindex.prefixable(t) else (0, 0)
        if n:
            found.append((t, n, n, 1.0))
        elif longer:
            found.append((textindex.PREFIX + t, longer, longer, 1.0))
        else:
            unheld += 1
        if n and 0 < longer <= MAX_LONGER_MEMORIES and words <= MAX_LONGER:  # (FTS5 counts about n + longer)
            found.append((textindex.LONGER + t, longer, n + longer, LONGER_SHARE))
    if any(n > total for _, n, _, _ in found):  # counts not yet written (in a transaction), or summed: count rows
        total = max(total, db.execute("SELECT (SELECT count(*) FROM live_docs) + (SELECT count(*) FROM archived)"
                                      ).fetchone()[0])
    out, most, held = [], [], []
    for term, n, counted, share in found:
        held.append(n)
        n, counted = min(n, total), min(counted, total)
        classic = math.log((total - counted + 0.5) / (counted + 0.5))  # what FTS5's bm25() scaled by
        idf = math.log(1 + (total - n + 0.5) / (n + 0.5))
        # A longer word's match covers none of the query's idf: the word itself covers it.
        out.append((term, share * idf / (classic if classic > 0 else 1e-6), idf if share == 1.0 else 0.0))
        most.append(share * idf * (K1 + 1) * sum(WEIGHTS))  # the most its bm25 part can add to a score
    # A word in (nearly) every memory can add no visible part of a point to any score, yet scoring
    # it walks every memory (1.5 s at a million): it is left out when another word of the query
    # counts, and taken as held by every memory (out of the coverage's whole too).
    kept = [i for i, m in enumerate(most) if m >= NO_PART] or list(range(len(out)))
    out = [out[i] for i in kept]
    return Weighed(out, sum(i for _, _, i in out) + unheld * math.log(1 + (total + 0.5) / 0.5),
                   tuple(held[i] for i in kept))


def _longer(db: sqlite3.Connection, term: str, held: bool) -> tuple[int, int]:
    """(memories a longer word starting with `term` is in, summed over those words; how many words).
    For a held word, counted only until past what a longer word is looked for with (more than
    MAX_LONGER_MEMORIES memories or MAX_LONGER words): each word's count walks its postings, and
    at a million memories a short word starts words that hundreds of thousands hold."""
    # (from the first word after `term`, which no word lies between: `term > ?` walks its memories first)
    rows = db.execute("SELECT doc FROM docs_vocab WHERE term >= ? AND term < ?", (term + "\x01", term + "\uffff"))
    memories = words = 0
    for (doc,) in rows:
        memories, words = memories + doc, words + 1
        if held and (memories > MAX_LONGER_MEMORIES or words > MAX_LONGER):
            break
    return memories, words


def indexed_count(db: sqlite3.Connection) -> int:
    """N as FTS5's bm25() counts it: the first varint of its averages record (data row 1), read in
    microseconds where a count of the rows takes milliseconds at 50,000 memories."""
    return toplists.stats(db).memories


# Every tier in one query: each term's bm25 (one single-phrase MATCH per term, scaled by its idf
# weight) summed per memory, then each hit is found either among the live memories or among the
# archived ones (an id is in exactly one of them). Ties: by name, then tier. Without filters only
# the best `limit` scores (and any tied with the last of them) are looked up, not every match.
_HIT = "WITH hit AS MATERIALIZED (SELECT id, sum(s) AS score, sum(c) AS covered FROM ({terms}) GROUP BY id)"
_ROWS = """
SELECT coalesce(m.tier, 'archive'), coalesce(m.name, substr(a.path, 9)), coalesce(m.title, a.title),
       coalesce(m.type, a.type), best.score, a.preview, a.commit_id, a.blob, coalesce(m.project, a.project),
       best.covered / ?
FROM best LEFT JOIN memories m ON m.id = best.id AND m.tier IN ('active', 'cooled')
          LEFT JOIN archived a ON a.id = best.id
WHERE (m.path IS NOT NULL OR a.path IS NOT NULL) {where}
ORDER BY best.score, 2, 1 LIMIT ?
"""
_SQL = _HIT + ", best AS (SELECT id, score, covered FROM hit {cut})" + _ROWS
_CUT = "WHERE score <= coalesce((SELECT score FROM hit ORDER BY score LIMIT 1 OFFSET ?), 0)"
# One term's scores (FTS5's `rank` column, not a bm25() call: an auxiliary function cannot run
# inside a compound select).
_PART = (f"SELECT rowid AS id, rank * ? AS s, ? AS c FROM docs WHERE docs MATCH ? "
         f"AND rank MATCH 'bm25({', '.join(map(str, WEIGHTS))})'")
_LISTED = "WITH best AS (SELECT id, score, covered FROM temp.listed_best)" + _ROWS


def _terms_sql(weighed: list[tuple[str, float, float]]) -> tuple[str, list]:
    return (" UNION ALL ".join([_PART] * len(weighed)),
            [v for t, w, idf in weighed for v in (w, idf, textindex.expression([t]))])


def _query(db: sqlite3.Connection, terms: list[str], where: list[str], args: list, limit: int) -> list[tuple]:
    weighed = idf_weights(db, terms)
    if not weighed.terms:
        return []
    listed = _from_lists(db, weighed, limit, where, args)
    if listed is not None:
        return listed
    parts, values = _terms_sql(weighed.terms)
    sql = _SQL.format(terms=parts, cut="" if where else _CUT, where="".join(f" AND {w}" for w in where))
    return db.execute(sql, (*values, *(() if where else (limit - 1,)), weighed.idf, *args, limit)).fetchall()


_ALLOWED = """
WITH best(id) AS (VALUES {ids})
SELECT best.id FROM best LEFT JOIN memories m ON m.id = best.id AND m.tier IN ('active', 'cooled')
                         LEFT JOIN archived a ON a.id = best.id
WHERE (m.path IS NOT NULL OR a.path IS NOT NULL) {where}
"""


def _from_lists(db: sqlite3.Connection, weighed: Weighed, limit: int, where: list[str], args: list
                ) -> list[tuple] | None:
    """_query's rows with each word in more than toplists.LONG memories scored from its list, read
    best first, not by FTS5 from every memory it is in (the other words are FTS5's, as ever); None
    when the lists cannot answer (then FTS5 does)."""
    listed = [i for i, ((t, _, _), n) in enumerate(zip(weighed.terms, weighed.held, strict=True))
              if toplists.listable(t, n)]
    if not listed or limit > toplists.MAX_LIMIT:
        return None
    others = [term for i, term in enumerate(weighed.terms) if i not in listed]
    known: dict[int, tuple[float, float]] = {}
    if others:
        parts, values = _terms_sql(others)
        known = {i: (-s, c) for i, s, c in db.execute(_HIT.format(terms=parts) + " SELECT id, score, covered FROM hit",
                                                      values)}
    filtered = "".join(f" AND {w}" for w in where)

    def allowed(ids: list[int]) -> set[int]:
        """Those of `ids` that are a memory's and pass the filters."""
        out: set[int] = set()
        for start in range(0, len(ids), 500):
            chunk = ids[start:start + 500]
            out.update(i for (i,) in db.execute(_ALLOWED.format(ids=",".join(["(?)"] * len(chunk)), where=filtered),
                                                (*chunk, *args)))
        return out

    found = toplists.best(db, [(weighed.terms[i][0], weighed.terms[i][2]) for i in listed], known, limit,
                          make=not catalog.hurried(), allowed=allowed if where else None)
    if found is None:
        return None
    db.execute("CREATE TEMP TABLE IF NOT EXISTS listed_best (id INTEGER PRIMARY KEY, score REAL, covered REAL)")
    db.execute("DELETE FROM temp.listed_best")
    db.executemany("INSERT INTO temp.listed_best VALUES (?, ?, ?)", ((f.doc, -f.score, f.covered) for f in found))
    rows = db.execute(_LISTED.format(where=filtered), (weighed.idf, *args, limit)).fetchall()
    # Unfiltered, a hit is never expected to lack its memory's row; if one did, FTS5 answers.
    return rows if where or len(rows) >= min(limit, len(found)) else None


_AMONG = _HIT + """
SELECT t.key, hit.score, hit.covered / ? FROM hit JOIN temp.among t ON t.id = hit.id
ORDER BY hit.score, t.key LIMIT ?
"""


def scored_among(db: sqlite3.Connection, terms: list[str], among: Mapping[int, int], limit: int) -> list[tuple]:
    """(key, score, coverage) of the best `limit` of the full-text rows `among` ({rowid: key}),
    scored as every search is (the index's word statistics are those of every row it holds)."""
    weighed = idf_weights(db, terms)
    if not weighed.terms or not among:
        return []
    db.execute("CREATE TEMP TABLE IF NOT EXISTS among (id INTEGER PRIMARY KEY, key INTEGER NOT NULL)")
    db.execute("DELETE FROM temp.among")
    db.executemany("INSERT INTO temp.among VALUES (?, ?)", among.items())
    parts, values = _terms_sql(weighed.terms)
    sql = _AMONG.format(terms=parts)
    return db.execute(sql, (*values, weighed.idf, limit)).fetchall()


_RANKED = _HIT + """
SELECT id, score, covered / ? FROM hit ORDER BY score LIMIT ?
"""


def scored_within(db: sqlite3.Connection, terms: list[str], among: Mapping[int, int], limit: int) -> list[tuple]:
    """What `scored_among` answers, found by walking the whole index's ranking best first and
    keeping the rows `among` holds: for when they are most of the index (a temporary table of them
    would cost more than the walk)."""
    weighed = idf_weights(db, terms)
    if not weighed.terms or not among:
        return []
    parts, values = _terms_sql(weighed.terms)
    sql = _RANKED.format(terms=parts)
    first = max(4 * limit, 64)  # the best of the whole index: enough when `among` is most of it
    while True:
        rows = db.execute(sql, (*values, weighed.idf, first)).fetchall()
        kept: list[tuple] = []
        done = len(rows) < first  # every hit seen
        for row_id, score, covered in rows:
            if len(kept) >= limit and score > kept[-1][1]:
                done = True  # (the rows tied with the last one kept are all in: among them the key orders)
                break
            key = among.get(row_id)
            if key is not None:
                kept.append((key, score, covered))
        if done:
            return sorted(kept, key=lambda k: (k[1], k[0]))[:limit]
        first *= 16


def _where(tier: str | None, type: str | None, project: str | None) -> tuple[list[str], list]:
    """The catalog query's filters (memories m, archived a) and their values."""
    where, args = [], []
    if project is not None:
        where.append("coalesce(m.project, a.project) = ?")
        args.append(project)
    if tier is not None:
        where.append("coalesce(m.tier, 'archive') = ?")
        args.append(tier)
    if type is not None:
        where.append("coalesce(m.type, a.type) = ?")
        args.append(type)
    return where, args


def _fresh(repo: Repo, max_bytes: int, watch: Watch | None, then: Callable[[sqlite3.Connection], T]) -> T:
    """`then` on the catalog brought up to date (files on disk and the shadow index), asked again
    where a damaged catalog had to be rebuilt."""
    for attempt in range(1, 7):
        try:
            with catalog.connect(repo) as db:
                catalog.rescan(repo, db, max_bytes, catalog.SEARCHED, watch, quick=True)
                shadow.refresh_in(repo, db)
                db.commit()  # FTS5 writes its counts (see indexed_count) when a transaction commits
                return then(db)
        except sqlite3.DatabaseError as e:
            if not catalog.again(e, attempt, repo):  # corrupt where only a query reaches: rebuilt, asked again
                raise
    raise AssertionError("catalog.again() gives up before six attempts")


def _rows(repo: Repo, terms: list[str], tier: str | None, type: str | None, limit: int,
          max_bytes: int, watch: Watch | None, project: str | None = None) -> list[tuple]:
    where, args = _where(tier, type, project)
    return _fresh(repo, max_bytes, watch, lambda db: _query(db, terms, where, args, limit))


def _hit(root: str, row: tuple, terms: list[str], max_bytes: int) -> Hit:
    tier, name, title, kind, score, preview, commit, blob, project, covered = row
    name = name[: -len(names.SUFFIX)]
    coverage = round(min(1.0, covered or 0.0), 3)
    if tier == "archive":
        return Hit(tier, name, title or name, kind, readable(score), textindex.snippet(preview or "", terms),
                   commit or "", blob or "", project=project or "", coverage=coverage)
    try:
        text = safefs.read(root, f"{tier}/{name}{names.SUFFIX}", max_bytes).decode("utf-8", "replace")
    except Exception:  # noqa: BLE001 - gone since the scan: show no snippet rather than fail
        text = ""
    body = text.split("\n---", 1)[-1] if text.startswith("---") else text
    return Hit(tier, name, title or name, kind, readable(score), entries.clean(textindex.snippet(body, terms)),
               project=project or "", coverage=coverage)


def readable(score: float) -> float:
    """bm25 as people read it: higher is better, two decimals."""
    return round(-score, 2) + 0.0


def search(repo: Repo, query: str, *, tier: str | None = None, type: str | None = None, limit: int = 10,
           rank: str = "merged", max_bytes: int = 1024 * 1024, watch: Watch | None = None,
           project: str | None = None, mode: str = "words", model: str = "", weight: float = 0.6) -> list[Hit]:
    """The best `limit` hits for any text, over the tiers asked for (all by default), of one project's
    memories if `project` is given. A long-running caller passes its `watch` (see watch.py) so that
    only files the kernel reported are re-read. `mode` "meaning" or "both" also ask the model in the
    folder `model` (see meaning.py; by words alone, with a warning, when it cannot be used), fusing
    each list's scores scaled to 0..1 as `(1 - weight) * words + weight * meaning`."""
    check(query, tier, limit, rank)
    if mode not in MODES:
        raise BadName(f"unknown search mode {mode!r}", f"use one of: {', '.join(MODES)}")
    if mode != "words":
        from strata_git.store import meaning

        found = meaning.model(model) if model else None
        if found is not None:
            try:
                return _by_meaning(repo, found, query, tier, type, limit, max_bytes, watch, project,
                                   1.0 if mode == "meaning" else weight)
            except meaning.Unavailable as e:  # busy past its wait, or damaged (then made afresh)
                meaning.warn(f"meaning search is off for now: {e}; searched by words")
        if not model:
            meaning.warn("meaning search is off: no model is set (search.model, see docs/search.md); "
                         "searched by words")
    terms = textindex.query_terms(query)
    if not terms:
        return []  # nothing searchable in it (only punctuation, say): no hits, no error
    rows = _rows(repo, terms, tier, type, limit if rank == "merged" else MAX_LIMIT, max_bytes, watch, project)
    if rank == "cascade":
        order = {t: i for i, t in enumerate(names.TIERS)}
        rows.sort(key=lambda r: (order[r[0]], r[4], r[1]))
    return [_with_summary(repo.root, _hit(repo.root, r, terms, max_bytes)) for r in rows[:limit]]


def _with_summary(root: str, hit: Hit) -> Hit:
    from strata_git.store import summary

    if hit.tier == "active" or not os.path.isdir(os.path.join(root, contract.SUMMARIES)):
        return hit
    return hit._replace(summary=summary.read(root, hit.name + names.SUFFIX) or "")


def _both(repo: Repo, db: sqlite3.Connection, model: meaning_t.Model, query: str, terms: list[str],
          where: list[str], args: list, filters: tuple, max_bytes: int, weight: float,
          limit: int) -> list[tuple[str, float, tuple | None, object, object]]:
    """On the fresh catalog: the words' best FUSED rows and the meaning's best FUSED memories (the
    vectors brought up to date first, unless nothing changed since they last were), fused; the best
    `limit` as (path, fused score, the words' row or None, the catalog entry or shadow row, what
    the meaning found or None). meaning.py's errors come out as meaning.Unavailable: they are not
    the catalog's, which _fresh would rebuild."""
    from strata_git.store import meaning

    rows = _query(db, terms, where, args, FUSED) if terms else []
    state = ":".join((model.id, *(catalog.get_meta(db, k) for k in ("generation", "shadow_commit", "shadow_refs"))))
    with meaning.unavailable_on_error(repo):
        current = meaning.synced(repo, state)
    def searched() -> tuple[list[entries.Entry], list[shadow.Row]]:  # what has vectors: live and archived
        return ([e for e in catalog.entries(db) if e.tier in catalog.SEARCHED and not e.problem],
                shadow.all_rows(repo, db))

    everything = None
    if not current:
        everything = searched()
        with meaning.unavailable_on_error(repo):
            meaning.refresh(repo, model, everything[0], max_bytes, archived=everything[1], state=state)
    allowed = None
    if filters != (None, None, None):
        tier, type, project = filters
        live, archived = everything or searched()
        allowed = {e.path for e in live if tier in (None, e.tier) and type in (None, e.type)
                   and project in (None, e.project)}
        allowed |= {r.path for r in archived if tier in (None, "archive") and type in (None, r.type)
                    and project in (None, r.project)}
    with meaning.unavailable_on_error(repo):
        near = {f.path: f for f in meaning.nearest(repo, model, query, FUSED, allowed)}
    held = {f"{r[0]}/{r[1]}": r for r in rows}
    fused: dict[str, float] = {}
    for share, scores in ((1 - weight, {p: -r[4] for p, r in held.items()}),
                          (weight, {p: f.score for p, f in near.items()})):
        low, high = min(scores.values(), default=0.0), max(scores.values(), default=0.0)
        for path, score in scores.items():
            fused[path] = fused.get(path, 0.0) + share * ((score - low) / (high - low) if high > low else 1.0)
    best = sorted((p for p in fused if fused[p] > 0), key=lambda p: (-fused[p], p))[:limit]  # (0: last of both)
    rest = [p for p in best if p not in held]
    about: dict[str, object] = {**catalog.entries_at(db, rest), **shadow.lookup_in(db, rest)}
    return [(p, fused[p], held.get(p), about.get(p), near.get(p)) for p in best]


def _by_meaning(repo: Repo, model: meaning_t.Model, query: str, tier: str | None, type: str | None, limit: int,
                max_bytes: int, watch: Watch | None, project: str | None, weight: float) -> list[Hit]:
    """Hits fused from the words' best FUSED and the meaning's best FUSED (see search()). Archived
    memories take part by the vectors their records carry (meaning.py), or by words alone."""
    from strata_git.store import meaning

    terms = textindex.query_terms(query)
    where, args = _where(tier, type, project)
    found = _fresh(repo, max_bytes, watch, lambda db: _both(
        repo, db, model, query, terms if weight < 1 else [], where, args, (tier, type, project), max_bytes, weight,
        limit))
    with meaning.unavailable_on_error(repo):
        texts = meaning.piece_texts(repo, [n for _, _, row, about, n in found if row is None
                                           and isinstance(about, entries.Entry) and isinstance(n, meaning.Found)])
    hits = []
    for path, score, row, about, _ in found:
        if row is not None:
            hit = _hit(repo.root, row, terms, max_bytes)
        elif isinstance(about, shadow.Row):
            hit = Hit("archive", about.name, about.title or about.name, about.type, 0.0, about.preview[:160],
                      about.commit, about.blob, project=about.project)
        elif isinstance(about, entries.Entry) and path in texts:
            piece = texts[path].split("\n", 1)[-1]
            hit = Hit(about.tier, about.name[: -len(names.SUFFIX)], about.title or about.name, about.type, 0.0,
                      entries.clean(textindex.preview(piece)), project=about.project)
        else:  # gone between the vectors and the catalog's read
            continue
        hits.append(_with_summary(repo.root, hit._replace(score=round(score, 3))))
    return hits
