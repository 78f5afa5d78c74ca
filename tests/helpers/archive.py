"""A repository with an archive tier: memories seeded, moved to archive/ by the janitor, and
readers of what the archive left behind (blobs at HEAD, objects held here, shadow rows)."""

from __future__ import annotations

import datetime
import os
import subprocess
from collections.abc import Callable
from pathlib import Path

from conftest import FIXED_DATE, git

DAY = 86400
T0 = int(datetime.datetime.fromisoformat(FIXED_DATE).timestamp())
WORDS = ["harbor", "lantern", "quartz", "meadow", "copper", "violet", "glacier", "saffron", "tundra", "orchid"]


def body(i: int) -> str:
    return (f"---\ntitle: Memory {i} about {WORDS[i % 10]}\ntags: [batch{i % 5}]\n---\n# Memory {i}\n\n"
            f"Fact number {i}: the {WORDS[i % 10]} project uses token{i:04d} for its cache.\n"
            f"{'Extra line for size. ' * (i % 7)}\n")


def seed_archive(mem: Path, n: int, active: int = 3):
    """`n` memories moved active -> cooled -> archive by the janitor, plus `active` live ones."""
    from strata_git.app.vault import Vault

    notes_committed(mem, {f"m{i:04d}": body(i) for i in range(n)})
    vault = Vault.open(str(mem))
    vault.janitor(now=T0 + 40 * DAY)
    vault.janitor(now=T0 + 200 * DAY)
    for i in range(active):
        vault.write(f"live/a{i}", f"# Live {i}\n\nStill in use: kestrel{i}.\n".encode())
    return vault


def notes_committed(mem: Path, texts: dict[str, str]) -> None:
    """Write active/notes/NAME.md for each of `texts` and commit them in one commit (hooks quiet)."""
    folder = mem / "active/notes"
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in texts.items():
        (folder / f"{name}.md").write_text(text)
    git(mem, "add", "active")
    os.environ["STRATA_INTERNAL"] = "1"
    try:
        git(mem, "commit", "-q", "-m", "seed")
    finally:
        del os.environ["STRATA_INTERNAL"]


def archived_blobs(repo: Path) -> dict[str, str]:
    out = git(repo, "ls-tree", "-r", "HEAD", "--", "archive").stdout.decode().splitlines()
    return {line.split("\t")[1]: line.split()[2] for line in out if line.endswith(".md")}


def held(repo: Path, oid: str) -> bool:
    env = {**os.environ, "GIT_NO_LAZY_FETCH": "1"}
    return subprocess.run(["git", "cat-file", "-e", oid], cwd=repo, env=env, capture_output=True).returncode == 0


def shadow_rows(repo: Path) -> list[tuple]:
    from strata_git.gitio.git import discover
    from strata_git.store import shadow

    r = discover(str(repo))
    with shadow.connect(r) as db:
        return shadow.rows(db)


def pruned_clone(mem: Path, tmp_path: Path, texts: dict[str, str],
                                before: Callable[[], None] = lambda: None) -> Path:
    """Write `texts` (plain notes: they archive), call `before`, archive them, push and prune, and
    make a fresh clone: archived blobs are not in it."""
    from conftest import bare_remote, strata

    remote = bare_remote(tmp_path / "remote.git")
    git(mem, "remote", "add", "origin", str(remote))
    for name, text in texts.items():
        strata(mem, "write", name, "-m", text)
    before()
    assert strata(mem, "janitor", "--now", "+40d").returncode == 0
    assert strata(mem, "janitor", "--now", "+200d").returncode == 0
    assert all((mem / f"archive/{name}.md").exists() for name in texts)
    assert strata(mem, "sync").returncode == 0 and strata(mem, "archive").returncode == 0
    clone = tmp_path / "clone"
    assert strata(tmp_path, "clone", str(remote), str(clone)).returncode == 0
    assert not any((clone / f"archive/{name}.md").exists() for name in texts)  # pruned: no blob here
    return clone


def pruned_over_daemon(mem: Path, tmp_path: Path, daemon, n: int) -> Path:
    """`n` archived memories (seed_archive) pushed to a remote `daemon` serves, and a fresh clone
    of it there: a pruned clone that fetched over the network."""
    from conftest import bare_remote, strata

    git(mem, "remote", "add", "origin", str(bare_remote(tmp_path / "remote.git")))
    seed_archive(mem, n)
    assert strata(mem, "archive").returncode == 0
    git(mem, "push", "-q", str(bare_remote(daemon.base / "mem.git")), "main")
    where = tmp_path / "laptop"
    assert strata(tmp_path, "clone", daemon.url("mem.git"), str(where)).returncode == 0
    return where
