"""Every memory an often-used word is in, ordered to be read best first.

FTS5 scores every memory a query's word is in before it can say which are best: about 3 µs a
memory, so 0.3 s for a word in 100,000 of a million. A word in more than LONG memories gets a list
here the first time a search needs it: each memory the word is in, with what bm25 needs to score it
(F, the word's occurrences weighted by column; D, the memory's length in words), ordered by the
word's part of bm25 (`key`) at the average length of the day the list was made. best() reads the
lists best first and stops as soon as no memory further down can reach those it holds (Fagin's
threshold algorithm): the answer FTS5's bm25 gives, from the same counts in the same formula.

Every row FTS5 takes in or gives back goes through added() or removed() (catalog.py, shadow.py),
so a list always holds every memory its word is in; emptying the full-text table drops them all
(clear()). The lists are derived state, like the rest of the catalog.
"""

from __future__ import annotations

import heapq
import sqlite3
import time
from collections.abc import Callable, Iterable, Sequence
from typing import NamedTuple

LONG = 200  # a word in more memories than this is scored from its list
MOST = 250_000  # ... and in at most this many: a list of more costs seconds to make
MAX_ROWS = 2_000_000  # rows all lists hold at most: the oldest lists go first
MAX_LIMIT = 100  # hits a search asks for at most to be answered from the lists
K1, B = 1.2, 0.75  # FTS5 bm25()'s
WEIGHTS = (1.0, 5.0, 3.0)  # bm25 column weights in the full-text table's order (search.WEIGHTS)
_COLUMNS = ("body", "title", "tags")
EPSILON = 1e-9  # relative: a bound this close to a score is not taken as below it

SCHEMA = (
    "CREATE TABLE IF NOT EXISTS top_terms (id INTEGER PRIMARY KEY, term TEXT NOT NULL UNIQUE, "
    "avgdl REAL NOT NULL, rows INTEGER NOT NULL, made INTEGER NOT NULL)",
    "CREATE TABLE IF NOT EXISTS tops (t INTEGER NOT NULL, doc INTEGER NOT NULL, f REAL NOT NULL, "
    "d INTEGER NOT NULL, key REAL NOT NULL, PRIMARY KEY (t, doc)) WITHOUT ROWID",
    "CREATE INDEX IF NOT EXISTS tops_by_key ON tops (t, key DESC)",
)


class Stats(NamedTuple):
    memories: int  # in the full-text table (FTS5's N)
    avgdl: float  # their average length in words, every column together


def varints(block: bytes) -> list[int]:
    """SQLite's varints (7 bits a byte, big-endian; the ninth byte all 8) one after another."""
    if block.isascii():  # every value under 128, one byte each: a memory's column lengths, mostly
        return list(block)
    out, i = [], 0
    while i < len(block):
        value = 0
        for j in range(9):
            byte = block[i]
            i += 1
            if j == 8:
                value = (value << 8) | byte
                break
            value = (value << 7) | (byte & 0x7F)
            if byte < 0x80:
                break
        out.append(value)
    return out


def stats(db: sqlite3.Connection) -> Stats:
    """N and the average length as bm25() reads them: FTS5's averages record (data row 1), the
    row count then each column's total of words."""
    row = db.execute("SELECT block FROM docs_data WHERE id = 1").fetchone()
    values = varints(row[0]) if row and row[0] else []
    if not values or not values[0]:
        return Stats(0, 0.0)
    return Stats(values[0], sum(values[1:]) / values[0])


def part(f: float, d: int, avgdl: float) -> float:
    """One word's bm25 part before its idf, exactly as FTS5 computes it (fts5_aux.c)."""
    return (f * (K1 + 1.0)) / (f + K1 * (1 - B + B * d / avgdl)) if avgdl > 0 else 0.0


_PART = "(f * ?) / (f + ? * (? + ? * d / ?))"  # part(f, d, avgdl), given (K1 + 1, K1, 1 - B, B, avgdl)


def listable(term: str, count: int) -> bool:
    """Whether a query word (as search.idf_weights weighs it) is scored from a list: a plain ASCII
    word only (FTS5 also holds some words of other text as one: "café" as "cafe"; see _counted)."""
    return LONG < count <= MOST and term.isascii() and term.isalnum() and term.lower() == term


def _listed(db: sqlite3.Connection) -> dict[str, tuple[int, float]]:
    """{word: (list id, average length its keys were made at)}; none on a catalog without lists."""
    return {t: (i, a) for t, (i, a, _) in listed(db).items()}


def listed(db: sqlite3.Connection, words: Sequence[str] | None = None) -> dict[str, tuple[int, float, int]]:
    """{word: (list id, average length its keys were made at, memories it is in)} of every list, or
    of those of `words`; none on a catalog without them. The count is FTS5's (its vocabulary walks
    the word's memories to count them: 40 ms for a word in 100,000)."""
    sql = "SELECT id, term, avgdl, rows FROM top_terms"
    if words is not None:
        sql += f" WHERE term IN ({','.join('?' * len(words))})"
    try:
        return {t: (i, a, n) for i, t, a, n in db.execute(sql, tuple(words or ()))}
    except sqlite3.OperationalError as e:
        if "no such table" in str(e):
            return {}
        raise


TOKENIZE = "unicode61 remove_diacritics 2"  # the full-text table's tokenizer (catalog._SCHEMA: a test checks)


def _counted(db: sqlite3.Connection, cols: Sequence[str], listed: dict[str, tuple[int, float]]
             ) -> tuple[dict[str, float], int]:
    """({listed word: F}, D) of one row's (title, tags, body) as they were given to FTS5. ASCII text
    is split at its spaces, as FTS5 splits it; other text is handed to FTS5's own tokenizer (it
    folds "café" into "cafe", and splits at some marks), in a scratch table of this connection."""
    if not all(c.isascii() for c in cols):
        return _tokenized(db, cols, listed)
    title, tags, body = cols
    found: dict[str, float] = {}
    length = 0
    for text, weight in ((body, WEIGHTS[0]), (title, WEIGHTS[1]), (tags, WEIGHTS[2])):
        words = text.split()
        length += len(words)
        for word in words:
            if word in listed:
                found[word] = found.get(word, 0.0) + weight
    return found, length


def _tokenized(db: sqlite3.Connection, cols: Sequence[str], listed: dict[str, tuple[int, float]]
               ) -> tuple[dict[str, float], int]:
    db.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.fold USING fts5(body, title, tags, content = '', "
               f"tokenize = '{TOKENIZE}')")
    db.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.fold_words USING fts5vocab(temp, 'fold', 'instance')")
    db.execute("INSERT INTO temp.fold (rowid, title, tags, body) VALUES (1, ?, ?, ?)", tuple(cols))
    weight = dict(zip(_COLUMNS, WEIGHTS, strict=True))
    found: dict[str, float] = {}
    length = 0
    for term, col in db.execute("SELECT term, col FROM temp.fold_words"):
        length += 1
        if term in listed:
            found[term] = found.get(term, 0.0) + weight[col]
    db.execute("INSERT INTO temp.fold (fold) VALUES ('delete-all')")
    return found, length


def added(db: sqlite3.Connection, rows: Iterable[Sequence]) -> None:
    """Rows (id, title, tags, body) just given to FTS5: each list of a word they hold takes them."""
    listed = _listed(db)
    if not listed:
        return
    out: dict[int, list[tuple]] = {}
    for doc, *cols in rows:
        found, length = _counted(db, cols, listed)
        for word, f in found.items():
            tid, avgdl = listed[word]
            out.setdefault(tid, []).append((tid, doc, f, length, part(f, length, avgdl)))
    for tid, new in out.items():
        count = db.executemany("INSERT OR REPLACE INTO tops VALUES (?,?,?,?,?)", new).rowcount
        db.execute("UPDATE top_terms SET rows = rows + ? WHERE id = ?", (count, tid))


def removed(db: sqlite3.Connection, rows: Iterable[Sequence]) -> None:
    """Rows (id, title, tags, body) just given back to FTS5: the lists let them go."""
    listed = _listed(db)
    if not listed:
        return
    out: dict[int, list[tuple[int, int]]] = {}
    for doc, *cols in rows:
        for word in _counted(db, cols, listed)[0]:
            out.setdefault(listed[word][0], []).append((listed[word][0], doc))
    for tid, gone in out.items():
        count = db.executemany("DELETE FROM tops WHERE t = ? AND doc = ?", gone).rowcount
        db.execute("UPDATE top_terms SET rows = rows - ? WHERE id = ?", (count, tid))


def clear(db: sqlite3.Connection) -> None:
    """Drop every list (the full-text table was emptied)."""
    if _listed(db):
        db.execute("DELETE FROM tops")
        db.execute("DELETE FROM top_terms")


def _make(db: sqlite3.Connection, term: str, avgdl: float, keep: set[int]) -> tuple[int, float]:
    """(id, average length of its keys) of a list for `term` made from FTS5's own counts: its
    instances (which memory, which column), then each memory's length; about 4 µs a memory. The
    oldest lists but those in `keep` make room. In a transaction of its own when the caller has
    none (committed at once: a search holds no write lock while it goes on), taken before the
    count, so that no other process makes the same list or writes a memory meanwhile."""
    began = not db.in_transaction
    if began:
        db.execute("BEGIN IMMEDIATE")
    try:
        made = _made(db, term, avgdl, keep)
        if began:
            db.commit()
        return made
    except BaseException:
        if began:
            db.rollback()
        raise


def _made(db: sqlite3.Connection, term: str, avgdl: float, keep: set[int]) -> tuple[int, float]:
    for statement in SCHEMA:  # (a catalog made before the lists gets their tables here)
        db.execute(statement)
    there = db.execute("SELECT id, avgdl FROM top_terms WHERE term = ?", (term,)).fetchone()
    if there:  # made by another process since this one looked
        return int(there[0]), float(there[1])
    db.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.docs_instance USING fts5vocab(main, 'docs', 'instance')")
    db.create_function("strata_length", 1, _length, deterministic=True)
    weighed = " ".join(f"WHEN '{c}' THEN {w}" for c, w in zip(_COLUMNS, WEIGHTS, strict=True))
    made = int(db.execute("INSERT INTO top_terms (term, avgdl, rows, made) VALUES (?,?,0,?)",
                          (term, avgdl, time.time_ns())).lastrowid or 0)
    # One statement, row by row in SQLite: the key is part(f, d, avgdl) in the same operations.
    count = db.execute(
        f"INSERT INTO tops SELECT ?, doc, f, d, CASE WHEN ? > 0 THEN {_PART} ELSE 0.0 END FROM "
        f"(SELECT i.doc AS doc, i.f AS f, strata_length(s.sz) AS d FROM (SELECT doc, sum(CASE col {weighed} END) AS f "
        f"FROM temp.docs_instance WHERE term = ? GROUP BY doc) i JOIN docs_docsize s ON s.id = i.doc)",
        (made, avgdl, K1 + 1.0, K1, 1 - B, B, avgdl, term)).rowcount
    db.execute("UPDATE top_terms SET rows = ? WHERE id = ?", (count, made))
    held = db.execute("SELECT coalesce(sum(rows), 0) FROM top_terms").fetchone()[0]
    for (old, rows) in db.execute("SELECT id, rows FROM top_terms ORDER BY made, id").fetchall():
        if held <= MAX_ROWS:
            break
        if old in keep or old == made:
            continue
        db.execute("DELETE FROM tops WHERE t = ?", (old,))
        db.execute("DELETE FROM top_terms WHERE id = ?", (old,))
        held -= rows
    return made, avgdl


def _length(size: bytes) -> int:
    """A memory's length in words from FTS5's docsize record (each column's, as varints)."""
    return sum(size) if size.isascii() else sum(varints(size))


class Scored(NamedTuple):
    doc: int
    score: float  # higher is better
    covered: float  # the idf of the query's words it holds


def best(db: sqlite3.Connection, words: list[tuple[str, float]], known: dict[int, tuple[float, float]],
         limit: int, make: bool = True, allowed: Callable[[list[int]], set[int]] | None = None
         ) -> list[Scored] | None:
    """The best `limit` memories (and any tied with the last of them) for a query whose listable
    `words` are (word, idf) and whose other words scored `known` ({id: (score, covered)}, higher
    better, every memory they are in), among those `allowed` keeps of the ids it is given (all, by
    default). None when a list is missing and `make` is False, or when more hits are asked for than
    MAX_LIMIT: search.py then asks FTS5."""
    if not words or limit > MAX_LIMIT:
        return None
    now = stats(db)
    have = {t: (i, a) for t, (i, a, _) in listed(db, [word for word, _ in words]).items()}
    lists: list[tuple[int, float, float]] = []  # (list id, idf, how much keys may have grown since made)
    keep = {have[word][0] for word, _ in words if word in have}  # (not dropped to make room for another)
    for word, idf in words:
        if word not in have:
            if not make:
                return None
            have[word] = _make(db, word, now.avgdl, keep)
            keep.add(have[word][0])
        tid, avgdl = have[word]
        lists.append((tid, idf, max(1.0, now.avgdl / avgdl) if avgdl > 0 else 1.0))
    scores = {doc: list(v) for doc, v in known.items()}
    formula = (K1 + 1.0, K1, 1 - B, B, now.avgdl)  # part() in SQL (the same operations in the same order)
    passed: set[int] | None = None if allowed is None else allowed(sorted(scores))
    if passed is not None:
        scores = {doc: v for doc, v in scores.items() if doc in passed}
    left_out: set[int] = set(known) - scores.keys()  # (seen and filtered out: never scored again)

    def score(docs: list[int], skip: int = -1) -> None:
        """Add each list's part (all but list `skip`'s) to `docs`, whatever lists hold them. A list
        read to its end is not asked: every memory it holds was seen, and `docs` were not."""
        for n, (tid, idf, _) in enumerate(lists):
            if n == skip or bounds[n] == 0.0:
                continue
            for start in range(0, len(docs), 500):
                chunk = docs[start:start + 500]
                for doc, tf_part in db.execute(f"SELECT doc, {_PART} FROM tops WHERE t = ? AND doc IN "
                                               f"({','.join('?' * len(chunk))})", (*formula, tid, *chunk)):
                    held = scores[doc]
                    held[0] += idf * tf_part
                    held[1] += idf

    bounds = [float("inf")] * len(lists)  # the most a memory further down each list adds (0.0: read)
    score(sorted(scores))  # the other words' memories: every one of them seen, each now scored whole
    cursors = [db.execute(f"SELECT doc, {_PART}, key FROM tops WHERE t = ? ORDER BY key DESC", (*formula, tid))
               for tid, _, _ in lists]
    blocks = [32] * len(lists)
    while True:
        n = max(range(len(lists)), key=lambda i: bounds[i])  # the list that may add most is read on
        _, idf, grown = lists[n]
        size = blocks[n]
        rows = cursors[n].fetchmany(size)
        blocks[n] = min(size * 4, 4096)
        bounds[n] = idf * rows[-1][2] * grown if len(rows) == size else 0.0  # (0.0: read to its end)
        fresh = [doc for doc, _, _ in rows if doc not in scores and doc not in left_out]
        if allowed is not None and fresh:
            kept = allowed(fresh)
            left_out.update(doc for doc in fresh if doc not in kept)
            fresh = [doc for doc in fresh if doc in kept]
        chosen = set(fresh)
        for doc, tf_part, _ in rows:
            if doc in chosen:
                scores[doc] = [idf * tf_part, idf]
        score(fresh, skip=n)
        if any(b == float("inf") for b in bounds):
            continue
        top = heapq.nlargest(limit, (v[0] for v in scores.values()))
        unseen = sum(bounds)
        if not unseen or (len(top) == limit and top[-1] > unseen * (1 + EPSILON)):
            break
    if not top:
        return []
    last = top[-1] * (1 - EPSILON) if len(top) == limit else float("-inf")
    return [Scored(doc, s, c) for doc, (s, c) in scores.items() if s >= last]
