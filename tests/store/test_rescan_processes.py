"""A large rescan (a new clone's live memories, a first scan) reads and describes its files on
forked processes, part by part: the rows, the full-text rows and the frontmatter memo are those
one process makes, whatever the parts, bad memories included."""

from __future__ import annotations

import contextlib
import os
import sqlite3
from pathlib import Path

from strata_git.core import contract, heap
from strata_git.gitio.git import discover
from strata_git.store import catalog

TEXTS = [
    "---\ntitle: Kestrel {i}\ntype: decision\ntags: [birds, n{i}]\n---\n# Kestrel {i}\n\nWe chose kestrel {i}.\n",
    "---\ntitle: Shared\ntype: fact\n---\nthe same frontmatter as every third one, word{i}\n",
    "# Plain {i}\n\nNo frontmatter here, word{i} and caf\u00e9.\n",
    "---\ntitle: [broken {i}\n---\nunclosed frontmatter {i}\n",
]


def _state(root: Path) -> tuple[list, list, list]:
    with contextlib.closing(sqlite3.connect(root / ".git" / "strata" / contract.CATALOG)) as db:
        rows = db.execute("SELECT path, tier, folder, name, size, title, type, tags, problem, frontmatter_hash, "
                          "project FROM memories ORDER BY path").fetchall()
        docs = db.execute("SELECT m.path, l.cols FROM live_docs l JOIN memories m ON m.id = l.id "
                          "ORDER BY m.path").fetchall()
        memo = db.execute("SELECT hash, meta FROM frontmatter ORDER BY hash").fetchall()
    return rows, [(p, catalog.unpack(c)) for p, c in docs], memo


def _scanned(root: Path) -> tuple[list, list, list]:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(root / ".git" / "strata" / contract.CATALOG)
    repo = discover(str(root))
    with catalog.connect(repo) as db:
        catalog.scan(repo, db, limit=400)
    return _state(root)


def test_a_rescan_on_several_processes_makes_the_rows_one_process_makes(mem: Path, monkeypatch):
    for i in range(40):
        folder = mem / ("active" if i % 3 else "cooled") / f"f{i % 4}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"m{i:02d}.md").write_text(TEXTS[i % len(TEXTS)].format(i=i))
    (mem / "active/f0/big.md").write_text("x" * 500)  # over the limit given: a problem, no words
    (mem / "active/f0/bytes.md").write_bytes(b"\xff\xfe not utf-8\n")
    serial = _scanned(mem)
    assert len(serial[0]) >= 42 and any(r[8] for r in serial[0]) and serial[2]
    monkeypatch.setattr(catalog, "PARALLEL_FROM", 1)
    monkeypatch.setattr(heap, "forkable", lambda: 2)  # forked, even on one core
    for part in (7, 1000):
        monkeypatch.setattr(catalog, "PART", part)
        assert _scanned(mem) == serial
