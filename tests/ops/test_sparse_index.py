"""A pruned clone keeps archive/ as one entry of a sparse index, and git-strata's everyday
commands never expand it (git's own trace says when a command does: region ensure_full_index).
An older clone's non-cone patterns are migrated by the next archive run, with nothing lost."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from conftest import bare_remote, git, strata
from helpers.archive import archived_blobs, seed_archive


def _expanding(mem: Path, tmp_path: Path, *command: str) -> list[str]:
    """The git commands that expanded the sparse index while `command` ran (a `git strata` one
    when it starts with no "git")."""
    trace = tmp_path / "trace2.json"
    trace.unlink(missing_ok=True)
    env = {**os.environ, "GIT_TRACE2_EVENT": str(trace)}
    if command[0] == "git":
        proc = subprocess.run(command, cwd=mem, env=env, capture_output=True)
    else:
        proc = strata(mem, *command, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    names, expanded = {}, []
    for line in trace.read_text().splitlines() if trace.exists() else []:
        event = json.loads(line)
        if event.get("event") == "start":
            names[event["sid"]] = " ".join(event.get("argv", [])[1:12])
        if event.get("event") == "region_enter" and event.get("label") == "ensure_full_index":
            expanded.append(names.get(event["sid"], event["sid"]))
    return expanded


def _sparse_entries(mem: Path) -> list[str]:
    out = git(mem, "ls-files", "--sparse", "-s", "-z").stdout.decode().split("\0")
    return [item.split("\t", 1)[1] for item in out if item.startswith("040000 ")]


@pytest.fixture
def pruned(mem: Path, tmp_path: Path) -> Path:
    git(mem, "remote", "add", "origin", str(bare_remote(tmp_path / "remote.git")))
    seed_archive(mem, 30)
    proc = strata(mem, "archive", "--json")
    assert proc.returncode == 0, proc.stderr
    return mem


@pytest.mark.slow
def test_archive_collapses_archive_into_one_index_entry(pruned: Path):
    assert _sparse_entries(pruned) == ["archive/"]
    assert git(pruned, "config", "index.sparse").stdout.strip() == b"true"
    assert not (pruned / "archive").exists() and (pruned / "active/live/a0.md").is_file()
    assert git(pruned, "status", "--porcelain", "--untracked-files=all").stdout == b""
    assert len(archived_blobs(pruned)) == 30  # still every one in HEAD


@pytest.mark.slow
def test_everyday_commands_do_not_expand_the_index(pruned: Path, tmp_path: Path):
    (pruned / "active/live/new.md").write_text("# New\n\nA new memory by hand.\n")
    git(pruned, "add", "active/live/new.md")
    steps = [
        ("git", "-c", "user.name=T", "-c", "user.email=t@e.invalid", "commit", "-qm", "by hand"),  # with hooks
        ("write", "live/written", "-m", "Written through git-strata."),
        ("git", "checkout", "-q", "HEAD~1"),  # the hook takes index.md and the indexes a step back
        ("git", "checkout", "-q", "-"),
        ("read", "notes/m0003"),
        ("search", "token0004", "--json"),
        ("list", "--tier", "archive", "--json"),
        ("status", "--json"),
        ("recall", "notes/m0005", "--json"),
        ("janitor", "--json"),
        ("janitor", "--now", "2040-01-01", "--json"),  # the recalled one cools again ...
        ("janitor", "--now", "2041-01-01", "--json"),  # ... and is archived into the collapsed folder
    ]
    expanded = [f"{step[0]}: {cmd}" for step in steps for cmd in _expanding(pruned, tmp_path, *step)]
    assert expanded == [], "\n".join(expanded)
    assert not (pruned / "active/notes/m0005.md").exists() and not (pruned / "cooled/notes/m0005.md").exists()
    assert "archive/notes/m0005.md" in archived_blobs(pruned)  # recalled, cooled and archived again
    log = git(pruned, "log", "--format=%s", "-4").stdout.decode()
    assert "strata: archive" in log and "recall" in log
    assert _sparse_entries(pruned) == ["archive/"]
    assert git(pruned, "status", "--porcelain", "--untracked-files=all").stdout == b""


@pytest.mark.slow
def test_an_older_clones_patterns_are_migrated_with_nothing_lost(pruned: Path):
    git(pruned, "sparse-checkout", "set", "--no-cone", "/*", "!/archive/")  # as versions before this one left it
    git(pruned, "config", "--worktree", "index.sparse", "false")
    assert _sparse_entries(pruned) == [] and not (pruned / "archive").exists()
    on_disk = sorted(str(p.relative_to(pruned)) for p in pruned.rglob("*.md") if ".git" not in p.parts)
    head = git(pruned, "rev-parse", "HEAD").stdout
    listed = json.loads(strata(pruned, "list", "--json").stdout)
    assert strata(pruned, "archive", "--json").returncode == 0
    assert _sparse_entries(pruned) == ["archive/"]
    assert sorted(str(p.relative_to(pruned)) for p in pruned.rglob("*.md") if ".git" not in p.parts) == on_disk
    assert git(pruned, "rev-parse", "HEAD").stdout == head
    assert json.loads(strata(pruned, "list", "--json").stdout) == listed
    assert git(pruned, "status", "--porcelain", "--untracked-files=all").stdout == b""


@pytest.mark.slow
def test_names_that_collide_with_archived_ones_are_still_refused(pruned: Path):
    """The collapsed archive/ holds names a new memory must not shadow by case or accents: they
    are looked up in the folders that could hold them."""
    proc = strata(pruned, "write", "Notes/M0007", "-m", "case twin of an archived memory")
    assert proc.returncode != 0 and b"differs only by case" in proc.stderr + proc.stdout
    proc = strata(pruned, "write", "NOTES/brand-new", "-m", "a folder spelled unlike the archived one")
    assert proc.returncode != 0 and b"folder" in proc.stderr + proc.stdout
    (pruned / "active/notes").mkdir(parents=True, exist_ok=True)
    (pruned / "active/notes/M0008.md").write_text("# Twin\n\nBy hand.\n")
    git(pruned, "add", "active/notes/M0008.md")
    commit = git(pruned, "-c", "user.name=T", "-c", "user.email=t@e.invalid", "commit", "-qm", "twin", check=False)
    out = commit.stdout + commit.stderr
    assert commit.returncode != 0 and b"archive/notes/m0008.md" in out and b"active/notes/M0008.md" in out
    git(pruned, "reset", "-q")
    (pruned / "active/notes/M0008.md").unlink()
    assert strata(pruned, "write", "notes/fresh", "-m", "no twin anywhere").returncode == 0
    assert _sparse_entries(pruned) == ["archive/"]
