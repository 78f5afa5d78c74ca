"""`git strata history NAME`: a memory's versions and moves, each with its commit, date, author,
machine and why, and with --diff what each changed; read from history, which other machines
write (untrusted), in a pruned clone too."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from conftest import bare_remote, git, head, strata


def _history(mem: Path, *args: str) -> list[dict]:
    proc = strata(mem, "history", *args, "--json")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_history_lists_each_version_and_move_with_why(mem: Path):
    assert strata(mem, "write", "notes/db", "-m", "Postgres 15.").returncode == 0
    assert strata(mem, "write", "notes/db", "--replace", "-m", "Postgres 16.").returncode == 0
    assert strata(mem, "janitor", "--now", "+40d").returncode == 0
    assert strata(mem, "recall", "notes/db").returncode == 0
    found = _history(mem, "notes/db")
    assert [(v["action"], v["from"], v["to"]) for v in found] == [
        ("recall", "cooled", "active"), ("cool", "active", "cooled"), ("edit", "active", "active"),
        ("create", "", "active")]
    machine = (mem / ".git/strata/machine-id").read_text().strip()
    assert all(v["machine"] == machine and len(v["commit"]) == 40 for v in found)
    assert found[1]["why"].startswith("cool.after_days") and found[1]["author"] == "git-strata janitor"
    assert found[2]["why"] == "strata: update notes/db" and found[0]["commit"] == head(mem)
    assert "diff" not in found[0]
    text = strata(mem, "history", "notes/db", "--diff").stdout.decode()
    assert "-Postgres 15.\n+Postgres 16.\n" in text and "+++ b/nothing" not in text
    with_diff = _history(mem, "notes/db", "--diff")
    assert "diff" not in with_diff[1] and "diff" not in with_diff[0]  # moves keep the content: no diff
    assert _history(mem, "notes/db", "--limit", "1") == found[:1]


def test_history_of_a_forgotten_memory_and_refusals(mem: Path):
    assert strata(mem, "write", "notes/gone", "-m", "Temporary.").returncode == 0
    assert strata(mem, "forget", "notes/gone").returncode == 0
    found = _history(mem, "notes/gone")
    assert [(v["action"], v["to"], v["blob"]) for v in found][0] == ("delete", "", "")
    before = head(mem)
    for args in (["never/was"], ["../etc/passwd"], ["notes/gone", "--limit", "0"], ["notes/gone", "--limit", "-3"]):
        proc = strata(mem, "history", *args)
        assert proc.returncode != 0 and proc.stderr.count(b"\n") <= 2 and b"Traceback" not in proc.stderr, args
    assert head(mem) == before and git(mem, "status", "--porcelain").stdout == b""


def test_history_shows_what_another_machine_wrote_as_text_and_no_move_git_does_not_show(mem: Path):
    assert strata(mem, "write", "notes/x", "-m", "One.").returncode == 0
    (mem / "active/notes/x.md").write_text("Two.\n")
    git(mem, "add", "-A")
    env = {**os.environ, "GIT_AUTHOR_NAME": "Mallory \x1b[31mred\u202e"}
    forged = '{"action":"archive","name":"notes/x","from":"active","to":"archive","rule":"no"}'
    message = f"edit\n\nStrata-Machine: \x1b]0;forged\x07\nStrata-Move: {forged}"
    subprocess.run(["git", "commit", "-q", "-m", message], cwd=mem, env=env, check=True)
    found = _history(mem, "notes/x")
    assert found[0]["author"] == "Mallory  [31mred" and found[0]["machine"] == ""  # control characters gone
    assert found[0]["action"] == "edit" and found[0]["to"] == "active"  # a move git does not show is no move
    text = strata(mem, "history", "notes/x").stdout
    assert b"\x1b" not in text and "\u202e".encode() not in text


def test_history_diff_in_a_pruned_clone_fetches_the_versions_it_lacks(mem: Path, tmp_path: Path):
    remote = bare_remote(tmp_path / "remote.git")
    git(mem, "remote", "add", "origin", str(remote))
    assert strata(mem, "write", "notes/old", "-m", "First words.").returncode == 0
    assert strata(mem, "write", "notes/old", "--replace", "-m", "Second words.").returncode == 0
    assert strata(mem, "janitor", "--now", "+40d").returncode == 0
    assert strata(mem, "janitor", "--now", "+200d").returncode == 0
    assert strata(mem, "sync").returncode == 0 and strata(mem, "archive").returncode == 0
    clone = tmp_path / "clone"
    assert strata(tmp_path, "clone", str(remote), str(clone)).returncode == 0
    text = strata(clone, "history", "notes/old", "--diff").stdout.decode()
    assert "archive " in text and "-First words.\n+Second words.\n" in text and "could not be fetched" not in text
    assert not (clone / "archive/notes/old.md").exists()  # still pruned: the versions were borrowed
