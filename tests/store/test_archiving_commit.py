"""Which commit archived each memory: the shadow index takes it from the janitor's trailers where
they agree with the commit, and reads the changes of every other commit. The answer must be the
one reading every commit's changes gives (`_commits_read`), through hand edits, reverts, moves by
hand and trailers written by hand."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from conftest import git
from helpers.archive import DAY, T0, archived_blobs, body, seed_archive
from strata_git.gitio import git as gitio
from strata_git.gitio.git import discover
from strata_git.store import shadow


def _commit(mem: Path, message: str) -> str:
    os.environ["STRATA_INTERNAL"] = "1"  # a plain git commit: no git-strata hook between
    try:
        git(mem, "commit", "-q", "--allow-empty", "-m", message)
    finally:
        del os.environ["STRATA_INTERNAL"]
    return git(mem, "rev-parse", "HEAD").stdout.decode().strip()


def _edit(mem: Path, files: dict[str, str], message: str) -> str:
    """Write `files` ({path: text}) and commit them with `message`, as plain git does."""
    for path, text in files.items():
        (mem / path).parent.mkdir(parents=True, exist_ok=True)
        (mem / path).write_text(text)
    git(mem, "add", "--", *files)
    return _commit(mem, message)


def _move(name: str) -> str:
    move = {"action": "archive", "name": f"notes/{name}", "from": "cooled", "to": "archive"}
    return "Strata-Move: " + json.dumps(move, separators=(",", ":"))


def _both(mem: Path, read: bool = True) -> tuple[dict[str, str], dict[str, str], dict[str, str]]:
    """(archived, _commits, _commits_read); with read=False, _commits may not fall back on reading
    every change."""
    repo = discover(str(mem))
    head = repo.head() or ""
    archived = shadow._archived(repo, head)
    every = shadow._commits_read
    if not read:
        shadow._commits_read = lambda *a: pytest.fail("read every change")  # type: ignore[assignment]
    try:
        commits = shadow._commits(repo, head, archived)
    finally:
        shadow._commits_read = every
    return archived, commits, every(repo, head, list(archived))


def _janitor_commits(mem: Path) -> list[str]:
    return git(mem, "log", "--format=%H", "--grep=^Strata-Move: ", "--", "archive").stdout.decode().split()


@pytest.fixture(autouse=True)
def from_trailers_always(monkeypatch):
    monkeypatch.setattr(shadow, "FROM_TRAILERS", 1)  # (from 2,000 paths otherwise)


@pytest.fixture
def history(mem: Path) -> Path:
    """Two janitor cycles that archive: 12 memories, then 8 more with the 2 written live meanwhile."""
    vault = seed_archive(mem, 12, active=2)
    folder = mem / "active/notes"
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(100, 108):
        (folder / f"m{i:04d}.md").write_text(body(i))
    git(mem, "add", "active")
    _commit(mem, "second batch")
    vault.janitor(now=T0 + 240 * DAY)
    vault.janitor(now=T0 + 400 * DAY)
    assert len(_janitor_commits(mem)) == 2
    return mem


def test_janitor_trailers_alone_answer_and_agree_with_every_change_read(history: Path):
    archived, commits, read = _both(history, read=False)
    assert len(archived) == 22 and set(commits) == set(archived)
    assert set(commits.values()) == set(_janitor_commits(history))
    assert commits == read


def test_edits_reverts_moves_and_written_trailers_give_what_reading_every_change_gives(history: Path):
    n = "archive/notes/"
    first_janitor = _janitor_commits(history)[-1]
    # An edit by hand of an archived memory: the edit archived that version.
    edited = _edit(history, {n + "m0001.md": "# edited by hand\n"}, "edit by hand")
    # An edit, then its revert: the blob is the janitor's again, but the revert brought it back.
    _edit(history, {n + "m0002.md": "# for a moment\n"}, "edit")
    reverted = _edit(history, {n + "m0002.md": body(2)}, "revert the edit")
    # A live memory moved to archive/ by hand.
    (history / "active/notes").mkdir(parents=True, exist_ok=True)
    (history / "active/notes/h0.md").write_text("# kept by hand\n")
    git(history, "add", "active")
    _commit(history, "write")
    git(history, "mv", "active/notes/h0.md", n + "h0.md")
    by_hand = _commit(history, "archive by hand")
    # Deleted, then put back as it was, by commits whose bodies hold a Strata-Move line that git
    # does not read as a trailer (text follows it): it counts as a line all the same.
    git(history, "rm", "-q", n + "m0003.md")
    _commit(history, f"gone for a while\n\n{_move('m0003')}\n\nnot a trailer block")
    restored = _edit(history, {n + "m0003.md": body(3)}, f"put back\n\n{_move('m0003')}\n\nnot a trailer block")
    # Trailers written by hand that name m0004 and its very blob, on a commit that changes another
    # folder of the archive: the folder of m0004 is unchanged, so they vouch for nothing.
    blob4 = archived_blobs(history)[n + "m0004.md"]
    _edit(history, {"archive/elsewhere/x.md": "# x\n"}, f"unrelated\n\n{_move('m0004')}\nStrata-Record: {blob4} x")
    # Trailers that name m0005 beside another blob: its newest Strata-Move says another version.
    _edit(history, {n + "m0099.md": "# a neighbour\n"}, f"neighbour\n\n{_move('m0005')}\nStrata-Record: {'1' * 80}")
    # Deleted, then put back as it was by a commit whose own trailers name it beside another blob:
    # that commit is the newest to bring it, though an older janitor commit vouches for its blob.
    git(history, "rm", "-q", n + "m0006.md")
    _commit(history, "gone")
    back = _edit(history, {n + "m0006.md": body(6)}, f"back\n\n{_move('m0006')}\nStrata-Record: {'3' * 80}")
    # A commit that names other moves and also edits, unnamed, a memory the janitor archived and
    # one edited by hand before (an amended janitor commit): the janitor's line names another
    # version, the hand edit's commit holds another version, so every change is read.
    _edit(history, {n + "m0008.md": "# edited by hand first\n"}, "edit by hand")
    amended = _edit(history, {n + "m0007.md": "# amended in\n", n + "m0008.md": "# amended in too\n",
                              n + "m0098.md": "# another neighbour\n"}, f"strata: archive 1\n\n{_move('m0098')}")
    # Edited by hand, then by a commit whose line names it, then back by one that does not name it:
    # the hand edit's commit holds the blob at the tip, but the named change after it rules it out.
    _edit(history, {n + "m0009.md": "# by hand\n"}, "edit by hand")
    _edit(history, {n + "m0009.md": "# named\n"}, f"strata: archive 1\n\n{_move('m0009')}")
    # A message that holds what a separator would make another commit: it is one message.
    fake = f"\x01{first_janitor}\x00{_move('m0010')}\nStrata-Record: {archived_blobs(history)[n + 'm0010.md']} x"
    _edit(history, {n + "m0096.md": "# a fourth neighbour\n"}, f"odd bytes\n\n{fake}".replace("\x00", " "))
    back_again = _edit(history, {n + "m0009.md": "# by hand\n", n + "m0097.md": "# a third neighbour\n"},
                       f"strata: archive 1\n\n{_move('m0097')}")

    archived, commits, read = _both(history)
    assert commits == read
    assert commits[n + "m0001.md"] == edited
    assert commits[n + "m0002.md"] == reverted
    assert commits[n + "h0.md"] == by_hand
    assert commits[n + "m0003.md"] == restored
    assert commits[n + "m0004.md"] == first_janitor
    assert commits[n + "m0005.md"] == first_janitor
    assert commits[n + "m0006.md"] == back
    assert commits[n + "m0007.md"] == commits[n + "m0008.md"] == amended
    assert commits[n + "m0009.md"] == back_again


def _janitor_like(mem: Path, names: list[str]) -> str:
    """A commit as a janitor cycle makes it: each memory moved from cooled/ to archive/, with its
    Strata-Move and the Strata-Record of its blob."""
    (mem / "archive/notes").mkdir(parents=True, exist_ok=True)
    for name in names:
        git(mem, "mv", f"cooled/notes/{name}.md", f"archive/notes/{name}.md")
    records = [f"Strata-Record: {_blob(mem, f'archive/notes/{n}.md')} {'e' * 40}" for n in names]
    return _commit(mem, "strata: archive\n\n" + "\n".join([*(_move(n) for n in names), *records]))


def _blob(mem: Path, path: str) -> str:
    return git(mem, "rev-parse", f":{path}").stdout.decode().strip()


def _cooled(mem: Path, names: list[str]) -> None:
    (mem / "cooled/notes").mkdir(parents=True, exist_ok=True)
    for name in names:
        (mem / f"cooled/notes/{name}.md").write_text(f"# {name}\n")
    git(mem, "add", "cooled")
    _commit(mem, "cooled by hand")


def test_a_janitor_commit_replayed_by_a_rebase_onto_the_same_archiving_names_it(mem: Path):
    """Two machines archive p; the local cycle, rebased onto the other's, no longer brings p but
    still names it and its blob, and changed its folder: the row names the replayed commit (reading
    every change names the other machine's), a commit that archived the same blob. (Known, and
    said in _commits; git-strata's own sync merges, where both commits brought it.)"""
    _cooled(mem, ["p", "q", "r"])
    git(mem, "checkout", "-q", "-b", "theirs")
    theirs = _janitor_like(mem, ["p", "r"])
    git(mem, "checkout", "-q", "-")
    _janitor_like(mem, ["p", "q"])
    git(mem, "-c", "core.hooksPath=/dev/null", "rebase", "-q", "theirs")
    archived, commits, read = _both(mem, read=False)
    ours = git(mem, "rev-parse", "HEAD").stdout.decode().strip()
    assert read["archive/notes/p.md"] == theirs and commits["archive/notes/p.md"] == ours
    assert commits["archive/notes/q.md"] == read["archive/notes/q.md"] == ours
    assert commits["archive/notes/r.md"] == read["archive/notes/r.md"] == theirs


def test_squashed_cycles_keep_every_move_line_in_the_body(mem: Path):
    """Archived, recalled, then archived again in a commit that squashed two cycles: only the
    last paragraph is a trailer block, and the first paragraph's line still counts."""
    _cooled(mem, ["p", "q"])
    first = _janitor_like(mem, ["p"])
    git(mem, "mv", "archive/notes/p.md", "cooled/notes/p.md")
    _commit(mem, "recall p")
    git(mem, "mv", "cooled/notes/p.md", "archive/notes/p.md")
    git(mem, "mv", "cooled/notes/q.md", "archive/notes/q.md")
    p, q = (f"Strata-Record: {_blob(mem, f'archive/notes/{n}.md')} {'e' * 40}" for n in ("p", "q"))
    squashed = _commit(mem, f"strata: archive 1\n\n{_move('p')}\n{p}\n\nstrata: archive 1\n\n{_move('q')}\n{q}")
    archived, commits, read = _both(mem, read=False)
    assert commits == read and commits["archive/notes/p.md"] == squashed != first


def test_without_libgit2_the_cli_answers_the_same(history: Path, monkeypatch):
    (history / "archive/notes/m0001.md").write_text("# edited by hand\n")
    git(history, "add", "archive")
    _commit(history, "edit by hand")
    expected = _both(history)[1]
    monkeypatch.setattr(gitio, "_libgit2", lambda *a, **k: None)
    archived, commits, read = _both(history)
    assert commits == read == expected


def test_a_range_gives_what_reading_the_range_gives(history: Path):
    """As a shadow index brought forward from one commit to a later one reads it."""
    old = git(history, "rev-parse", "HEAD~3").stdout.decode().strip()
    repo = discover(str(history))
    archived = shadow._archived(repo, repo.head() or "")
    assert shadow._commits(repo, f"{old}..HEAD", archived) == shadow._commits_read(repo, f"{old}..HEAD",
                                                                                   list(archived))


def test_items_splits_output_read_in_small_pieces(history: Path, monkeypatch):
    repo = discover(str(history))
    args = ("log", "--format=%x01%H%x00%B", "--name-only")
    whole = repo.git(*args).split(b"\x01")[1:]
    monkeypatch.setattr(gitio, "CHUNK", 7)
    assert list(repo.items(*args)) == whole and len(whole) > 5
    with pytest.raises(gitio.GitFailed):
        list(repo.items("log", "no-such-revision"))
    first = repo.items(*args)  # a caller that stops early: git is stopped, and that is no failure
    assert next(first) == whole[0]
    first.close()
    lines = repo.git("rev-list", "--all").split(b"\n")  # lines: the first is an item, the last empty
    assert list(repo.items("rev-list", "--all", sep=b"\n", lead=True)) == lines and len(lines) > 5


def test_a_move_names_its_place_in_archive_as_the_janitor_writes_it_now_and_did_before():
    assert shadow._archived_at('{"action":"archive","name":"a/b","from":"cooled","to":"archive","rule":"x"}') \
        == "archive/a/b.md"
    older = '{"action": "archive", "name": "a/b", "from": "cooled/a/b.md", "to": "archive/a/b.md"}'
    assert shadow._archived_at(older) == "archive/a/b.md"
    assert shadow._archived_at('{"action":"cool","name":"a/b","from":"active","to":"cooled"}') is None
    assert shadow._archived_at('{"action":"archive","name":"a\\"b","to":"archive"}') is None  # escaped: not read
    assert shadow._archived_at("junk") is None
