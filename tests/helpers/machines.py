"""Three machines on one remote: a made the repository, b joined with `git strata clone` (a
partial, sparse clone), c with a plain `git clone` and `git strata init`."""

from __future__ import annotations

import datetime
from pathlib import Path

from conftest import FIXED_DATE, git

DAY = 86400
T0 = int(datetime.datetime.fromisoformat(FIXED_DATE).timestamp())
KODA = "# Koda\n\nline one\nline two\nline three\nline four\nline five\n"


def make_machines(tmp_path: Path, url: str, remote: Path) -> list:
    from strata_git.app.init import init
    from strata_git.app.vault import Vault
    from strata_git.ops import clone

    a = tmp_path / "a"
    init(str(a))
    git(a, "remote", "add", "origin", url)
    va = Vault.open(str(a))
    va.write("projects/koda", KODA.encode())
    va.sync()
    clone.clone(url, str(tmp_path / "b"))
    git(tmp_path, "clone", "-q", url, "c")
    init(str(tmp_path / "c"))
    return [va, Vault.open(str(tmp_path / "b")), Vault.open(str(tmp_path / "c"))]


def tree(v) -> str:
    return git(Path(v.repo.root), "rev-parse", "HEAD^{tree}").stdout.decode().strip()


def converge(vaults: list, rounds: int = 2) -> None:
    for _ in range(rounds):
        for v in vaults:
            v.sync()
    assert len({tree(v) for v in vaults}) == 1, "the clones did not converge in two rounds"
    for v in vaults:  # and every working tree matches its HEAD
        out = git(Path(v.repo.root), "status", "--porcelain", "--untracked-files=all").stdout.decode()
        assert out == "", out
