"""Shadow records beside history: made per blob, on one ref per machine, untrusted when read.

Two machines that archive concurrently sync without a conflict and build the same index;
a repository whose archive commits carry the old `Strata-Shadow` trailers keeps working and
`reindex` upgrades it (from blobs held here, from the archive remote, or says what it could
not); corrupt, hostile or missing records are skipped with a warning, never a crash.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from conftest import bare_remote, git, strata
from helpers.archive import DAY, T0, archived_blobs, body, held, seed_archive, shadow_rows


def rows_only(repo: Path) -> list[tuple]:
    return [r for r in shadow_rows(repo) if len(r) == 10]


@pytest.mark.slow
def test_the_janitor_commit_carries_no_records_and_short_lines(mem: Path):
    long = "notes/a-rather-long-memory-name-about-the-quarterly-planning-review-" + "x" * 10  # 80 characters
    (mem / "active/notes").mkdir(parents=True)
    (mem / f"active/{long}.md").write_text("# Long\n\nnamed\n")
    seed_archive(mem, 12)
    moves = json.loads(strata(mem, "log", long, "--json").stdout)
    assert {(m["from"], m["to"]) for m in moves} == {(f"active/{long}.md", f"cooled/{long}.md"),
                                                     (f"cooled/{long}.md", f"archive/{long}.md")}
    log = git(mem, "log", "--format=%B%x00").stdout.decode()
    assert "Strata-Shadow" not in log
    assert all(len(line.encode()) <= 256 for line in log.splitlines())
    ref = git(mem, "for-each-ref", "--format=%(refname)", "refs/strata/shadow/").stdout.decode().split()
    assert len(ref) == 1
    # a record is keyed by its blob id and says so: checkable against the blob
    blob = next(iter(archived_blobs(mem).values()))
    note = json.loads(git(mem, "show", f"{ref[0]}:{blob[:2]}/{blob[2:]}").stdout)
    assert note["b"] == blob and note["s"] == len(git(mem, "cat-file", "blob", blob).stdout)


@pytest.mark.slow
def test_two_machines_archive_the_same_memories_concurrently_without_conflict(mem: Path, tmp_path: Path):
    remote = bare_remote(tmp_path / "remote.git")
    git(mem, "remote", "add", "origin", str(remote))
    folder = mem / "active/notes"
    folder.mkdir(parents=True)
    for i in range(8):
        (folder / f"m{i}.md").write_text(body(i))
    git(mem, "add", "active")
    subprocess.run(["git", "commit", "-q", "--no-verify", "-m", "seed"], cwd=mem, check=True,
                   env={**os.environ, "STRATA_INTERNAL": "1"})
    assert strata(mem, "sync").returncode == 0
    other = tmp_path / "other"
    assert strata(tmp_path, "clone", str(remote), str(other)).returncode == 0
    for repo in (mem, other):  # both archive the same blobs, neither has seen the other's records
        for when in (40, 200):
            assert strata(repo, "janitor", "--now", f"@{T0 + when * DAY}").returncode == 0
    for repo in (mem, other, mem):
        proc = strata(repo, "sync", "--json")
        assert proc.returncode == 0, proc.stderr
    refs = git(mem, "for-each-ref", "--format=%(refname)", "refs/strata-remotes/origin/shadow/").stdout.split()
    assert len(refs) == 2  # one ref per machine: nothing was merged, so nothing could conflict
    # Each clone credits the archive to its own janitor commit (commits name their machine, so the
    # two are distinct); both commits name the same record for every blob, so all else is equal.
    assert [r[:2] + r[3:] for r in rows_only(mem)] == [r[:2] + r[3:] for r in rows_only(other)]
    assert len(rows_only(mem)) == 8 and {r[8] for r in rows_only(mem)} == {"record"}
    janitors = {c for repo in (mem, other) for c in {r[2] for r in rows_only(repo)}}
    named = {c: git(mem, "log", "-1", "--format=%(trailers:key=Strata-Record,valueonly)", c).stdout.split()
             for c in janitors}
    assert len(janitors) == 2 and len({tuple(v) for v in named.values()}) == 1 and len(next(iter(named.values()))) == 16
    assert [r for r in shadow_rows(mem) if len(r) != 10] == [r for r in shadow_rows(other) if len(r) != 10]


def legacy_archive(mem: Path, n: int) -> dict[str, str]:
    """Archive `n` memories the way versions before records did: a plain commit whose message
    carries one `Strata-Shadow` trailer (32 keywords, a preview) per memory."""
    from strata_git.core import textindex

    folder = mem / "archive/old"
    folder.mkdir(parents=True)
    trailers = []
    for i in range(n):
        text = body(i) + f"\nA detail only in the body: gadget{i:03d} and more words here.\n"
        (folder / f"o{i}.md").write_text(text)
        blob = git(mem, "hash-object", "-w", str(folder / f"o{i}.md")).stdout.decode().strip()
        rec = {"b": blob, "n": f"old/o{i}", "t": f"Memory {i}", "y": "note", "g": [], "s": len(text),
               "k": " ".join(textindex.tokens(f"memory {i} project cache")), "p": f"Memory {i} fact"}
        trailers.append("Strata-Shadow: " + json.dumps(rec, separators=(",", ":")))
    git(mem, "add", "archive")
    msg = "strata: archive by an older version\n\n" + "\n".join(trailers) + "\n"
    subprocess.run(["git", "commit", "-q", "--no-verify", "-m", msg], cwd=mem, check=True,
                   env={**os.environ, "STRATA_INTERNAL": "1"})
    return archived_blobs(mem)


@pytest.mark.slow
def test_old_trailers_still_search_and_reindex_upgrades_them_from_blobs_held_here(vault, mem: Path):
    legacy_archive(mem, 4)
    assert {r[8] for r in rows_only(mem)} == {"trailer"}
    assert [h.name for h in vault.search("memory 2 cache")][:1] == ["old/o2"]
    assert vault.search("gadget002") == []  # only the 32 keywords and preview were kept
    proc = strata(mem, "reindex", "--json")
    assert proc.returncode == 0, proc.stderr
    done = json.loads(proc.stdout)
    assert done["upgraded"] == 4 and done["not_upgraded"] == [] and done["records_written"] == 4
    assert {r[8] for r in rows_only(mem)} == {"record"}
    assert [h.name for h in vault.search("gadget002")] == ["old/o2"]


@pytest.mark.slow
def test_reindex_fetches_missing_blobs_in_one_batch_or_says_what_it_could_not(mem: Path, tmp_path: Path):
    remote = bare_remote(tmp_path / "remote.git")
    git(mem, "remote", "add", "origin", str(remote))
    seed_archive(mem, 2)
    legacy_archive(mem, 3)
    assert strata(mem, "archive").returncode == 0  # pushes, verifies, prunes the old blobs too
    assert all(not held(mem, b) for b in archived_blobs(mem).values())
    git(mem, "remote", "set-url", "origin", str(tmp_path / "gone.git"))
    proc = strata(mem, "reindex")
    assert proc.returncode == 0 and "could not upgrade 3 (old/o0, old/o1, old/o2)" in proc.stdout.decode()
    assert [h.name for h in strata_search(mem, "memory 1 cache")][:1] == ["old/o1"]  # old rows kept
    git(mem, "remote", "set-url", "origin", str(remote))
    done = json.loads(strata(mem, "reindex", "--json").stdout)
    assert done["upgraded"] == 3 and done["not_upgraded"] == []
    assert all(not held(mem, b) for b in archived_blobs(mem).values())  # read in a scratch repository
    assert [h["name"] for h in json.loads(strata(mem, "search", "gadget001", "--json").stdout)] == ["old/o1"]


def strata_search(repo: Path, query: str):
    from strata_git.app.vault import Vault

    return Vault.open(str(repo)).search(query)


def put_record(mem: Path, blob: str, content: bytes, ref: str = "refs/strata-remotes/origin/shadow/hostile") -> None:
    """Another machine's shadow ref holding `content` as the record of `blob`."""
    note = git(mem, "hash-object", "-w", "--stdin", input=content).stdout.decode().strip()
    tree = git(mem, "mktree", input=f"100644 blob {note}\t{blob[2:]}\n".encode()).stdout.decode().strip()
    top = git(mem, "mktree", input=f"040000 tree {tree}\t{blob[:2]}\n".encode()).stdout.decode().strip()
    commit = git(mem, "commit-tree", top, "-m", "hostile").stdout.decode().strip()
    git(mem, "update-ref", ref, commit)


HOSTILE = {
    "not json": b"{not json",
    "wrong blob": None,  # filled in: a valid record of another blob
    "wrong types": b'{"v":2,"b":"BLOB","s":"big","t":1,"y":[],"g":{},"p":null,"w":5}',
    "bad words": b'{"v":2,"b":"BLOB","s":1,"t":"","y":"note","g":[],"p":"","w":"a:0 b\\"c d:-1"}',
    "huge": b'{"v":2,"b":"BLOB","s":1,"t":"","y":"note","g":[],"p":"","w":"' + b"w " * (5 * 1024 * 1024) + b'"}',
    "nan": b'{"v":2,"b":"BLOB","s":NaN,"t":"","y":"note","g":[],"p":"","w":"x"}',
}


@pytest.mark.slow
@pytest.mark.parametrize("kind", sorted(HOSTILE))
def test_a_hostile_record_is_skipped_with_a_warning_and_never_crashes_search(mem: Path, kind: str):
    from strata_git.app.vault import Vault
    from strata_git.store import shadow

    # Archived by hand (no record of its own): the hostile record is the only one offered.
    (mem / "archive/x").mkdir(parents=True)
    (mem / "archive/x/target.md").write_text("# Target\n\nThe launch code word is periwinkle.\n")
    git(mem, "add", "archive")
    subprocess.run(["git", "commit", "-q", "--no-verify", "-m", "by hand"], cwd=mem, check=True,
                   env={**os.environ, "STRATA_INTERNAL": "1"})
    blob = archived_blobs(mem)["archive/x/target.md"]
    content = HOSTILE[kind]
    if content is None:
        content = json.dumps({"v": 2, "b": "0" * 40, "s": 5, "t": "Forged", "y": "note", "g": [], "p": "",
                              "w": "periwinkle:50"}).encode()
    put_record(mem, blob, content.replace(b"BLOB", blob.encode()))
    vault = Vault.open(str(mem))
    hits = vault.search("target periwinkle")
    assert [(h.name, h.title) for h in hits] == [("x/target", "x/target")]  # by name; nothing forged
    assert {r[8] for r in rows_only(mem)} == {"name"}
    warned = shadow.warnings(vault.repo)
    assert len(warned) == 1 and blob[:12] in warned[0] and "skipped" in warned[0]
    status = json.loads(strata(mem, "status", "--json").stdout)
    assert any("shadow record" in p for p in status["problems"])


@pytest.mark.slow
def test_a_valid_record_beside_a_corrupt_one_wins_and_every_clone_chooses_alike(mem: Path):
    from strata_git.store import records

    seed_archive(mem, 3)
    blob = archived_blobs(mem)["archive/notes/m0001.md"]
    put_record(mem, blob, b"garbage")
    good = records.make(git(mem, "cat-file", "blob", blob).stdout, blob)
    put_record(mem, blob, good, ref="refs/strata-remotes/origin/shadow/second")
    assert {r[8] for r in rows_only(mem)} == {"record"}
    assert [h.name for h in strata_search(mem, "token0001")] == ["notes/m0001"]


@pytest.mark.slow
def test_a_record_that_vanishes_under_a_row_rebuilds_instead_of_corrupting(mem: Path):
    """Removing a row gives FTS5 back what it indexed, recomputed from the record: if that record
    is gone, the rows are rebuilt rather than the counts left wrong."""
    from strata_git.app.vault import Vault
    from strata_git.store import shadow

    vault = seed_archive(mem, 6)
    before = shadow_rows(mem)
    ref = git(mem, "for-each-ref", "--format=%(refname)", "refs/strata/shadow/").stdout.decode().strip()
    git(mem, "update-ref", "-d", ref)  # records lost (a hostile sync, a hand-deleted ref)
    vault = Vault.open(str(mem))
    vault.recall(["notes/m0002"])  # the forward step must delete m0002's row
    assert shadow.refresh(vault.repo) == "fresh"
    assert {r[8] for r in rows_only(mem)} == {"name"}
    assert len(rows_only(mem)) == len([r for r in before if len(r) == 10]) - 1


@pytest.mark.slow
def test_a_rewritten_or_shallow_history_never_breaks_search(mem: Path, tmp_path: Path):
    from strata_git.app.vault import Vault

    vault = seed_archive(mem, 6)
    assert [(h.tier, h.name) for h in vault.search("token0003")] == [("archive", "notes/m0003")]
    git(mem, "reset", "-q", "--hard", "HEAD~4")  # back before the archive commit: history rewritten
    assert [(h.tier, h.name) for h in Vault.open(str(mem)).search("token0003")] == [("cooled", "notes/m0003")]
    git(mem, "reset", "-q", "--hard", "ORIG_HEAD")
    shallow = tmp_path / "shallow"
    git(tmp_path, "clone", "-q", "--depth", "1", mem.as_uri(), str(shallow))
    # A plain shallow clone: one commit of history and no records (only `git strata` fetches them),
    # so archived memories are found by name; reindex makes full records from the blobs it holds.
    proc = strata(shallow, "search", "m0003", "--json")
    assert proc.returncode == 0, proc.stderr
    assert [(h["tier"], h["name"]) for h in json.loads(proc.stdout)] == [("archive", "notes/m0003")]
    assert strata(shallow, "reindex").returncode == 0
    hits = json.loads(strata(shallow, "search", "token0003", "--json").stdout)
    assert [(h["tier"], h["name"]) for h in hits] == [("archive", "notes/m0003")]


@pytest.mark.slow
def test_status_and_stats_report_each_derived_file_and_how_the_archive_is_indexed(mem: Path):
    seed_archive(mem, 4)
    legacy_archive(mem, 2)
    status = json.loads(strata(mem, "status", "--json").stdout)
    assert status["derived"]["catalog.sqlite"] > 0 and "shadow.sqlite" not in status["derived"]
    assert status["archive"]["indexed_from"] == {"record": 4, "trailer": 2, "name": 0}
    text = strata(mem, "status").stdout.decode()
    assert "archive indexed from: 4 records, 2 trailers (`git strata reindex` upgrades" in text
    assert "catalog.sqlite" in text
    stats = json.loads(strata(mem, "stats", "--json").stdout)
    assert stats["derived_bytes"]["catalog.sqlite"] == os.path.getsize(mem / ".git/strata/catalog.sqlite")


@pytest.mark.slow
def test_derived_state_shrinks_with_the_archive(mem: Path, tmp_path: Path):
    """After `git strata archive`, this machine's .git is no larger than 1.3x a fresh `git strata
    clone` of the same remote: the rows the live memories left behind are gone from the index."""
    import random

    remote = bare_remote(tmp_path / "remote.git")
    git(mem, "remote", "add", "origin", str(remote))
    rng = random.Random(1)
    words = [f"w{i}" for i in range(3000)]
    folder = mem / "active/notes"
    folder.mkdir(parents=True)
    for i in range(240):  # about 5 KB each, as in the report that found 10 MB of deleted rows
        text = " ".join(rng.choices(words, k=800))
        (folder / f"m{i:03d}.md").write_text(f"# Note {i}\n\n{text}\n")
    git(mem, "add", "active")
    subprocess.run(["git", "commit", "-q", "--no-verify", "-m", "seed"], cwd=mem, check=True,
                   env={**os.environ, "STRATA_INTERNAL": "1"})
    assert strata(mem, "search", "w17").returncode == 0  # every memory is indexed live first
    for when in (40, 200):
        assert strata(mem, "janitor", "--now", f"@{T0 + when * DAY}").returncode == 0
    assert strata(mem, "archive").returncode == 0
    clone = tmp_path / "clone"
    assert strata(tmp_path, "clone", str(remote), str(clone)).returncode == 0
    for repo in (mem, clone):
        git(repo, "gc", "-q")
        assert strata(repo, "search", "w17").returncode == 0

    def size(path: Path) -> int:
        return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())

    assert size(mem / ".git/strata/catalog.sqlite") <= 1.3 * size(clone / ".git/strata/catalog.sqlite")
    assert size(mem / ".git") <= 1.3 * size(clone / ".git")


@pytest.mark.slow
def test_a_hostile_janitor_identity_cannot_inject_into_the_records_stream(mem: Path):
    """The janitor's name comes from the shared config: a newline in it must not start a command
    of the fast-import stream that writes the records."""
    config = mem / ".strata/config.toml"
    config.write_text(config.read_text().replace('name = "git-strata janitor"',
                                                  'name = "evil\\nM 100644 inline zz/injected\\ndata 3\\nbad"'))
    git(mem, "add", ".strata")
    subprocess.run(["git", "commit", "-q", "--no-verify", "-m", "config"], cwd=mem, check=True,
                   env={**os.environ, "STRATA_INTERNAL": "1"})
    seed_archive(mem, 3)
    ref = git(mem, "for-each-ref", "--format=%(refname)", "refs/strata/shadow/").stdout.decode().strip()
    paths = git(mem, "ls-tree", "-r", "--name-only", ref).stdout.decode().split()
    assert len(paths) == 3 and "zz/injected" not in paths
    assert "\n" not in git(mem, "log", "-1", "--format=%cn", ref).stdout.decode().strip()


def test_every_honest_record_is_within_what_its_blob_can_hold():
    """The read caps (size within the memory limit, counts spelled out within EXPANSION times the
    size) never refuse a record make() wrote, whatever the text: characters NFKC spells out as
    many (U+FDFD), CJK runs counted in pairs, pictographs, long titles and many tags."""
    import random

    from strata_git.store import records

    rng = random.Random(21)
    pieces = ["\ufdfd", "\u3392", "漢字仮名交じり文", "😀🚀", "ﬃ", "word", "a", "x" * 64, "9", "İ", "ß", " ", "\n", "-"]
    for i in range(300):
        body = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 400)))
        tags = [rng.choice(pieces).strip() or "t" for _ in range(rng.randint(0, 5))]
        raw = f"---\ntitle: {json.dumps(body[:200])}\ntags: {json.dumps(tags)}\n---\n{body}\n".encode()
        blob = f"{i:040x}"
        parsed = records.parse(records.make(raw, blob), blob, limit=len(raw))
        assert isinstance(parsed, records.Record), (parsed, body[:80])


def test_a_record_may_not_claim_more_than_a_blob_holds():
    from strata_git.store import records

    blob = "ab" * 20

    def rec(**fields) -> bytes:
        return json.dumps({"v": 2, "b": blob, "s": 100, "t": "T", "y": "note", "g": [], "p": "", "w": "w",
                           **fields}).encode()

    assert isinstance(records.parse(rec(), blob, limit=100), records.Record)
    assert "memory size limit" in records.parse(rec(s=101), blob, limit=100)
    assert "more than a blob of 100 bytes holds" in records.parse(rec(w="boom:999999999"), blob, limit=100)
    assert "more than a blob of 100 bytes holds" in records.parse(rec(t="x" * 200), blob, limit=100)
    assert "more than a blob of 100 bytes holds" in records.parse(rec(g=["x" * 100, "y" * 100]), blob, limit=100)


@pytest.mark.slow
def test_a_build_on_several_processes_makes_the_same_rows_and_warnings(mem: Path, monkeypatch):
    """A large build turns records into rows on forked processes, part by part: the rows, their
    order in the index, and the warnings are those of a build in one process, whatever the parts."""
    from strata_git.gitio.git import discover
    from strata_git.store import shadow

    seed_archive(mem, 40)
    (mem / "archive/x").mkdir(parents=True)  # archived by hand: no record, found by its name
    (mem / "archive/x/by-hand.md").write_text("# By hand\n\nNo record of its own.\n")
    git(mem, "add", "archive")
    subprocess.run(["git", "commit", "-q", "--no-verify", "-m", "by hand"], cwd=mem, check=True,
                   env={**os.environ, "STRATA_INTERNAL": "1"})
    put_record(mem, archived_blobs(mem)["archive/notes/m0007.md"], b"{not json")  # a warning
    repo = discover(str(mem))

    def build() -> tuple[list[tuple], list[tuple], list[str]]:
        shadow.build(repo, repo.head())
        with shadow.connect(repo) as db:
            order = [path for (path,) in db.execute("SELECT path FROM archived ORDER BY id")]
        return shadow_rows(mem), order, shadow.warnings(repo)

    serial = build()
    assert {r[8] for r in rows_only(mem)} == {"record", "name"} and len(serial[2]) == 1
    monkeypatch.setattr(shadow, "BY_PATH", 0)  # the listing a large build reads its records from
    assert build() == serial
    monkeypatch.setattr(shadow, "_workers", lambda count: 2)  # forked, even on one core
    for part in (7, 1000):
        monkeypatch.setattr(shadow, "PART", part)
        assert build() == serial


def test_a_ref_s_notes_are_listed_alike_by_one_pattern_or_entry_by_entry(tmp_path: Path):
    """A tree whose every entry is a note where records put one is read by one pattern; one with
    any other entry (here a path that spells a note line inside it) entry by entry: the same
    listing either way, and nothing read from inside a path."""
    from strata_git.gitio.git import discover
    from strata_git.store import records

    repo_dir = tmp_path / "r"
    git(tmp_path, "init", "-q", str(repo_dir))
    notes = [git(repo_dir, "hash-object", "-w", "--stdin", input=f"note {n}".encode()).stdout.decode().strip()
             for n in range(4)]
    blobs = [f"{n:02x}" + "ab" * 19 for n in range(3)]
    index = {**os.environ, "GIT_INDEX_FILE": str(tmp_path / "index")}

    def ref(entries: list[tuple[str, str]]) -> str:
        (tmp_path / "index").unlink(missing_ok=True)
        for path, oid in entries:
            subprocess.run(["git", "update-index", "--add", "--cacheinfo", f"100644,{oid},{path}"], cwd=repo_dir,
                           env=index, check=True)
        tree = subprocess.run(["git", "write-tree"], cwd=repo_dir, env=index, check=True, capture_output=True)
        return git(repo_dir, "commit-tree", tree.stdout.decode().strip(), "-m", "records").stdout.decode().strip()

    repo = discover(str(repo_dir))
    placed = [(f"{b[:2]}/{b[2:]}", notes[i]) for i, b in enumerate(blobs)]
    plain = ref(placed)
    assert records.listing(repo, [plain]) == {b: [notes[i]] for i, b in enumerate(blobs)}
    forged = f"zz/q\t100644 blob {notes[3]}\t{blobs[1][:2]}/{blobs[1][2:]}"
    odd = ref([*placed, (forged, notes[0])])
    assert records.listing(repo, [odd]) == records.listing(repo, [plain])
    both = records.listing(repo, [plain, ref([(f"{blobs[0][:2]}/{blobs[0][2:]}", notes[3])])])
    assert both[blobs[0]] == sorted([notes[0], notes[3]]) and both[blobs[1]] == [notes[1]]
