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


def _move(name: str) -> str:
    move = {"action": "archive", "name": f"notes/{name}", "from": "cooled", "to": "archive"}
    return "Strata-Move: " + json.dumps(move, separators=(",", ":"))


def _both(mem: Path) -> tuple[dict[str, str], dict[str, str], dict[str, str]]:
    repo = discover(str(mem))
    head = repo.head() or ""
    archived = shadow._archived(repo, head)
    return archived, shadow._commits(repo, head, archived), shadow._commits_read(repo, head, list(archived))


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


def test_janitor_trailers_alone_answer_and_agree_with_every_change_read(history: Path, monkeypatch):
    repo = discover(str(history))
    archived = shadow._archived(repo, repo.head() or "")
    monkeypatch.setattr(shadow, "_commits_read", lambda *a: pytest.fail("read every change for a janitor-only history"))
    commits = shadow._commits(repo, repo.head() or "", archived)
    monkeypatch.undo()
    assert len(archived) == 22 and set(commits) == set(archived)
    assert set(commits.values()) == set(_janitor_commits(history))
    assert commits == _both(history)[2]


def test_edits_reverts_moves_and_written_trailers_give_what_reading_every_change_gives(history: Path):
    arch = history / "archive/notes"
    first_janitor = _janitor_commits(history)[-1]
    # An edit by hand of an archived memory: the edit archived that version.
    (arch / "m0001.md").write_text("# edited by hand\n")
    git(history, "add", "archive")
    edited = _commit(history, "edit by hand")
    # An edit, then its revert: the blob is the janitor's again, but the revert brought it back.
    (arch / "m0002.md").write_text("# for a moment\n")
    git(history, "add", "archive")
    _commit(history, "edit")
    (arch / "m0002.md").write_text(body(2))
    git(history, "add", "archive")
    reverted = _commit(history, "revert the edit")
    # A live memory moved to archive/ by hand.
    (history / "active/notes").mkdir(parents=True, exist_ok=True)
    (history / "active/notes/h0.md").write_text("# kept by hand\n")
    git(history, "add", "active")
    _commit(history, "write")
    git(history, "mv", "active/notes/h0.md", "archive/notes/h0.md")
    by_hand = _commit(history, "archive by hand")
    # Deleted, then put back as it was, by commits whose bodies quote a Strata-Move line that git
    # does not read as a trailer (text follows it): git log --grep finds them, %(trailers) does not.
    git(history, "rm", "-q", "archive/notes/m0003.md")
    _commit(history, f"gone for a while\n\n{_move('m0003')}\n\nnot a trailer block")
    (arch / "m0003.md").write_text(body(3))
    git(history, "add", "archive")
    restored = _commit(history, f"put back\n\n{_move('m0003')}\n\nnot a trailer block")
    # Trailers written by hand that name m0004 and its very blob, on a commit that changes another
    # folder of the archive: the folder of m0004 is unchanged, so they vouch for nothing.
    blob4 = archived_blobs(history)["archive/notes/m0004.md"]
    (history / "archive/elsewhere").mkdir()
    (history / "archive/elsewhere/x.md").write_text("# x\n")
    git(history, "add", "archive")
    _commit(history, f"unrelated\n\n{_move('m0004')}\nStrata-Record: {blob4} {blob4}")
    # Trailers that name m0005 beside another blob: its newest Strata-Move says another version.
    (arch / "m0099.md").write_text("# a neighbour\n")
    git(history, "add", "archive")
    _commit(history, f"neighbour\n\n{_move('m0005')}\nStrata-Record: {'1' * 40} {'2' * 40}")
    # Deleted, then put back as it was by a commit whose own trailers name it beside another blob:
    # that commit is the newest to bring it, though an older janitor commit vouches for its blob.
    git(history, "rm", "-q", "archive/notes/m0006.md")
    _commit(history, "gone")
    (arch / "m0006.md").write_text(body(6))
    git(history, "add", "archive")
    back = _commit(history, f"back\n\n{_move('m0006')}\nStrata-Record: {'3' * 40} {'4' * 40}")

    archived, commits, read = _both(history)
    assert commits == read
    assert commits["archive/notes/m0001.md"] == edited
    assert commits["archive/notes/m0002.md"] == reverted
    assert commits["archive/notes/h0.md"] == by_hand
    assert commits["archive/notes/m0003.md"] == restored
    assert commits["archive/notes/m0004.md"] == first_janitor
    assert commits["archive/notes/m0005.md"] == first_janitor
    assert commits["archive/notes/m0006.md"] == back


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


def test_a_move_names_its_place_in_archive_as_the_janitor_writes_it_now_and_did_before():
    assert shadow._archived_at('{"action":"archive","name":"a/b","from":"cooled","to":"archive","rule":"x"}') \
        == "archive/a/b.md"
    older = '{"action": "archive", "name": "a/b", "from": "cooled/a/b.md", "to": "archive/a/b.md"}'
    assert shadow._archived_at(older) == "archive/a/b.md"
    assert shadow._archived_at('{"action":"cool","name":"a/b","from":"active","to":"cooled"}') is None
    assert shadow._archived_at('{"action":"archive","name":"a\\"b","to":"archive"}') is None  # escaped: not read
    assert shadow._archived_at("junk") is None
