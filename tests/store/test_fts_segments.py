"""Rows reach the full-text index in rowid order: FTS5 writes its in-memory changes out as a new
segment whenever a row comes at a rowid no greater than the last one, so memories re-indexed in
path order (whose ids follow the order they were first written in) made a segment each. The
count of segments FTS5 ever wrote is in its structure record; the index must still answer."""

from __future__ import annotations

import sqlite3
from pathlib import Path


def _varint(data: bytes, at: int) -> tuple[int, int]:
    """SQLite's variable-length integer at `at`: (value, the offset after it)."""
    value = 0
    for i in range(8):
        byte = data[at + i]
        value = (value << 7) | (byte & 0x7F)
        if byte < 0x80:
            return value, at + i + 1
    return (value << 8) | data[at + 8], at + 9


def _segments_written(db: sqlite3.Connection) -> int:
    """FTS5's count of segments written to `docs` (its structure record: a 4-byte cookie, in
    later versions a 4-byte marker, then the levels, the segments and this counter)."""
    data = db.execute("SELECT block FROM docs_data WHERE id = 10").fetchone()[0]
    at = 8 if data[4:8] == b"\xff\x00\x00\x01" else 4
    _, at = _varint(data, at)  # levels
    _, at = _varint(data, at)  # segments now
    return _varint(data, at)[0]


def _write(mem: Path, names: list[str], text: str) -> None:
    for name in names:
        (mem / f"active/notes/{name}.md").write_text(f"---\ntitle: {name}\n---\n{text} {name}\n")


def test_memories_indexed_again_in_path_order_are_written_to_fts5_in_rowid_order(mem: Path):
    from strata_git.gitio.git import discover
    from strata_git.store import catalog

    repo = discover(str(mem))
    (mem / "active/notes").mkdir(parents=True, exist_ok=True)
    names = [f"n{i:02}" for i in range(30)]
    batches = [names[i:i + 3] for i in range(0, 30, 3)]
    for batch in reversed(batches):  # the last names first: their ids are the smallest
        _write(mem, batch, "kestrel")
        with catalog.connect(repo) as db:
            catalog.update(repo, db, [f"active/notes/{n}.md" for n in batch])
    with catalog.connect(repo) as db:
        ids = dict(db.execute("SELECT path, id FROM memories WHERE folder = 'notes'").fetchall())
        assert [ids[f"active/notes/{n}.md"] for n in names] != sorted(ids.values())  # path order is not id order
        before = _segments_written(db)

    _write(mem, names, "heron")
    with catalog.connect(repo) as db:
        catalog.update(repo, db, [f"active/notes/{n}.md" for n in names])
    with catalog.connect(repo) as db:
        written = _segments_written(db) - before
        assert written <= 2, written  # the deletions, then the rows (in order: one segment each)
        found = {r[0] for r in db.execute("SELECT rowid FROM docs WHERE docs MATCH 'heron'")}
        assert found == set(ids.values())
        assert not list(db.execute("SELECT rowid FROM docs WHERE docs MATCH 'kestrel'"))
        db.execute("INSERT INTO docs (docs, rank) VALUES ('integrity-check', 0)")
