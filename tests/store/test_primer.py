"""catalog.primer: the memories a sync brings are described while git checks them out, and the
catalog's update takes a description only for the very bytes it finds on disk.

Whatever was primed or not, the rows must equal those a rebuild from the working tree makes; a
memory is never described twice; a primer paused between steps holds no lock on the catalog.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from pathlib import Path

import pytest

from conftest import bare_remote, git
from helpers.machines import make_machines
from strata_git.core import contract
from strata_git.store import catalog, history

TEXTS = [
    "---\ntitle: Kestrel {i}\ntype: decision\ntags: [birds, n{i}]\n---\n# Kestrel {i}\n\nWe chose kestrel {i}.\n",
    "# Plain {i}\n\nNo frontmatter here, word{i} and caf\u00e9.\n",
    "---\ntitle: [broken {i}\n---\nunclosed frontmatter {i}\n",  # a problem: kept as the row's problem
]


def _texts(count: int, stamp: str) -> dict[str, str]:
    return {f"notes/n{i:02d}": TEXTS[i % len(TEXTS)].format(i=i) + f"{stamp}\n" for i in range(count)}


def _commit(root: Path, texts: dict[str, str], message: str) -> list[str]:
    """Write and commit memories as plain git would (hooks off: a broken one gets in too)."""
    paths = [f"active/{name}.md" for name in texts]
    for rel, text in zip(paths, texts.values(), strict=True):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    git(root, "add", "--", *paths)
    git(root, "-c", "core.hooksPath=/dev/null", "commit", "-q", "-m", message)
    return paths


def _rows(root: Path) -> tuple[list, list]:
    with contextlib.closing(sqlite3.connect(root / ".git" / "strata" / contract.CATALOG)) as db:
        rows = db.execute("SELECT path, tier, folder, name, size, title, type, tags, problem, frontmatter_hash, "
                          "project FROM memories ORDER BY path").fetchall()
        docs = db.execute("SELECT m.path, l.cols FROM live_docs l JOIN memories m ON m.id = l.id "
                          "ORDER BY m.path").fetchall()
    return rows, [(p, catalog.unpack(c)) for p, c in docs]


def _rebuilt(vault) -> tuple[list, list]:
    from strata_git.store import index_md

    os.unlink(os.path.join(vault.repo.state_dir(), contract.CATALOG))
    index_md.refresh(vault.repo, vault.cfg.max_memory_bytes)
    return _rows(Path(vault.repo.root))


def _spied(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, bool]]:
    """(path, whether it was made in a step run while git worked) for every description made from
    now on, and ("history", ...) for every read of history into the last-change table."""
    made: list[tuple[str, bool]] = []
    priming = [False]

    def spy(real):
        def steps(*args, **kwargs):
            inner = real(*args, **kwargs)
            while True:
                priming[0] = True
                try:
                    next(inner)
                except StopIteration:
                    return
                finally:
                    priming[0] = False
                yield
        return steps

    real_described, real_scan = catalog._described, history._scan

    def described(rel, *rest):
        made.append((rel, priming[0]))
        return real_described(rel, *rest)

    def scan(*args):
        made.append(("history", priming[0]))
        return real_scan(*args)

    monkeypatch.setattr(catalog, "primer", spy(catalog.primer))
    monkeypatch.setattr(history, "ahead", spy(history.ahead))
    monkeypatch.setattr(catalog, "_described", described)
    monkeypatch.setattr(history, "_scan", scan)
    return made


@pytest.fixture
def two(tmp_path: Path) -> list:
    (tmp_path / "served").mkdir()
    remote = bare_remote(tmp_path / "served" / "mem.git")
    return make_machines(tmp_path, str(remote), remote)[:2]


def test_what_a_sync_brings_is_described_once_and_rows_equal_a_rebuild(two, monkeypatch):
    a, b = two
    for round_, stamp in enumerate(("first", "second")):
        _commit(Path(a.repo.root), _texts(9, stamp), stamp)
        a.sync()
        made = _spied(monkeypatch)
        result = b.sync()
        monkeypatch.undo()
        assert result.integrated == "fast-forward", round_
        brought = {f"active/notes/n{i:02d}.md" for i in range(9)}
        for rel in brought:  # primed (while git checked it out) or described by the update: never both
            assert [m for m in made if m[0] == rel] in ([(rel, True)], [(rel, False)]), made
        # the last-change table was brought forward while git worked, and only then
        assert [m for m in made if m[0] == "history"] == [("history", True)], made
    root = Path(b.repo.root)
    names = [f"notes/n{i:02d}.md" for i in range(9)] + ["projects/koda.md"]
    at = history.head(b.repo)
    times = history.last_changed(b.repo, at, names)
    index = (root / "index.md").read_text()
    rows = _rows(root)
    assert [r for r in rows[0] if r[0].startswith("active/notes/")] and rows == _rebuilt(b)
    os.unlink(os.path.join(b.repo.state_dir(), contract.CHANGES))
    assert len(times) == len(names) and history.last_changed(b.repo, at, names) == times
    assert (root / "index.md").read_text() == index


def test_update_takes_only_descriptions_of_the_bytes_on_disk(vault, monkeypatch):
    root = Path(vault.repo.root)
    paths = _commit(root, _texts(6, "one"), "one")
    old = git(root, "rev-parse", "HEAD").stdout.decode().strip()
    for rel in paths:
        (root / rel).write_text((root / rel).read_text().replace("one", "two"))
    git(root, "-c", "core.hooksPath=/dev/null", "commit", "-q", "-am", "two")
    new = git(root, "rev-parse", "HEAD").stdout.decode().strip()
    made = _spied(monkeypatch)
    steps = catalog.primer(vault.repo, new, paths, vault.cfg.max_memory_bytes)
    assert len(list(steps)) == 1 + len(paths)  # the read of their bytes, then one step a memory
    edited = paths[1]
    (root / edited).write_text("# Edited after the commit\n\nnot what was primed\n")
    from strata_git.store import index_md

    index_md.refresh(vault.repo, vault.cfg.max_memory_bytes, moved=(paths, git(root, "rev-parse", f"{old}^{{tree}}")
                                                                  .stdout.decode().strip()))
    monkeypatch.undo()
    for rel in paths:
        assert [m for m in made if m[0] == rel] == ([(rel, True), (rel, False)] if rel == edited else [(rel, True)])
    assert not catalog._PRIMED
    rows = _rows(root)
    assert any(r[0] == edited and r[5] == "Edited after the commit" for r in rows[0])
    assert rows == _rebuilt(vault)


def test_a_paused_primer_holds_no_lock_on_the_catalog(vault):
    paths = _commit(Path(vault.repo.root), _texts(4, "x"), "x")
    steps = catalog.primer(vault.repo, "HEAD", paths, vault.cfg.max_memory_bytes)
    next(steps)
    next(steps)  # its connection is open, between two memories
    path = os.path.join(vault.repo.state_dir(), contract.CATALOG)
    with contextlib.closing(sqlite3.connect(path, timeout=0.5, isolation_level=None)) as other:
        other.execute("BEGIN EXCLUSIVE")
        other.execute("INSERT OR REPLACE INTO meta VALUES ('primer-test', 'written')")
        other.execute("COMMIT")
    assert len(list(steps)) == len(paths) - 1


def test_past_its_byte_budget_the_primer_stops_and_the_update_describes_the_rest(vault, monkeypatch):
    from strata_git.store import index_md

    root = Path(vault.repo.root)
    paths = _commit(root, _texts(7, "one"), "one")
    index_md.refresh(vault.repo, vault.cfg.max_memory_bytes)
    old_tree = git(root, "rev-parse", "HEAD^{tree}").stdout.decode().strip()
    _commit(root, _texts(7, "two"), "two")
    monkeypatch.setattr(catalog, "PRIMED_BATCH", 2)
    monkeypatch.setattr(catalog, "PRIMED_BYTES", 1)  # past it after the first batch
    steps = catalog.primer(vault.repo, "HEAD", paths, vault.cfg.max_memory_bytes)
    assert len(list(steps)) == 1 + 2 and len(catalog._PRIMED) == 2  # one read, two memories, then no more
    made = _spied(monkeypatch)
    index_md.refresh(vault.repo, vault.cfg.max_memory_bytes, moved=(paths, old_tree))
    monkeypatch.undo()
    assert sorted(rel for rel, _ in made if rel in paths) == sorted(paths[2:])  # the first two were taken
    assert _rows(root) == _rebuilt(vault)


def test_primed_by_blob_id_a_description_is_still_taken_only_for_the_bytes_on_disk(vault):
    """A sync hands the primer the ids its diff already has; an id that is not the file's (here,
    another memory's) is described, never taken: the rows still equal a rebuild."""
    from strata_git.store import index_md

    root = Path(vault.repo.root)
    paths = _commit(root, _texts(4, "one"), "one")
    index_md.refresh(vault.repo, vault.cfg.max_memory_bytes)
    old_tree = git(root, "rev-parse", "HEAD^{tree}").stdout.decode().strip()
    _commit(root, _texts(4, "two"), "two")
    ids = {p: git(root, "rev-parse", f"HEAD:{p}").stdout.decode().strip() for p in paths}
    blobs = {**ids, paths[0]: ids[paths[1]]}  # the first memory's id is the second's
    steps = catalog.primer(vault.repo, "HEAD", paths, vault.cfg.max_memory_bytes, blobs)
    assert len(list(steps)) == 1 + len(paths)
    read = {rel: raw for rel, _, raw in catalog._PRIMED}
    assert read[paths[0]] == read[paths[1]] == (root / paths[1]).read_bytes()  # read by the id it was given
    index_md.refresh(vault.repo, vault.cfg.max_memory_bytes, moved=(paths, old_tree))
    assert not catalog._PRIMED
    assert _rows(root) == _rebuilt(vault)
