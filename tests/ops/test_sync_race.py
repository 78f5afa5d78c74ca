"""Pushes that race on the remote: the remote's own update of the branch fails because another
push holds the ref's lock, or moved the ref between receive-pack's check and its update. git
2.39 answers `! refs/heads/main:refs/heads/main [remote rejected] (failed to update ref)` (and
`remote: error: cannot lock ref 'refs/heads/main': ...` on stderr): `git strata sync` fetches and
tries again, as for `(fetch first)`, and says what the remote said only when the lock never goes.

Real git throughout: the races are made by hooks in a bare remote (the lock file another push
holds, another push landing in between), and for real by several clones syncing at once.
"""

from __future__ import annotations

import json
import subprocess
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from conftest import BIN, bare_remote, git, strata

pytestmark = pytest.mark.slow


@pytest.fixture
def remote(tmp_path: Path) -> Path:
    return bare_remote(tmp_path / "remote.git")


def machine(tmp_path: Path, remote: Path, name: str) -> Path:
    """A clone of `remote` made a memory repository (the first one makes the memory)."""
    from strata_git.app.init import init

    root = tmp_path / name
    if git(remote, "rev-parse", "-q", "--verify", "refs/heads/main", check=False).returncode != 0:
        init(str(root))
        git(root, "remote", "add", "origin", str(remote))
        assert strata(root, "sync").returncode == 0
    else:
        git(tmp_path, "clone", "-q", str(remote), name)
        init(str(root))
    return root


def write(root: Path, name: str, text: str) -> None:
    proc = strata(root, "write", name, "-m", text)
    assert proc.returncode == 0, proc.stderr.decode()


def on_remote(remote: Path) -> set[str]:
    return set(git(remote, "ls-tree", "-r", "--name-only", "main").stdout.decode().split())


def hook(remote: Path, name: str, body: str) -> Path:
    path = remote / "hooks" / name
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return path


def test_a_push_refused_because_another_push_holds_the_ref_lock_is_retried(tmp_path: Path, remote: Path):
    a = machine(tmp_path, remote, "a")
    # The first push finds refs/heads/main.lock held, as while another push updates the branch;
    # that push has finished by the second.
    hook(remote, "pre-receive", """
lock="$GIT_DIR/refs/heads/main.lock"
if [ ! -e "$GIT_DIR/raced" ]; then : > "$GIT_DIR/raced"; : > "$lock"; else rm -f "$lock"; fi
""")
    write(a, "notes/late", "# Late\n\nwritten while another push held the lock\n")
    out = strata(a, "sync", "--json")
    assert out.returncode == 0, out.stderr.decode()
    result = json.loads(out.stdout)
    assert result["pushed"] and result["attempts"] == 2, result
    assert (remote / "raced").exists() and not (remote / "refs/heads/main.lock").exists()
    assert "active/notes/late.md" in on_remote(remote)
    assert git(remote, "rev-parse", "main").stdout == git(a, "rev-parse", "HEAD").stdout


def test_a_push_whose_ref_moved_under_receive_pack_is_retried_and_both_land(tmp_path: Path, remote: Path):
    a = machine(tmp_path, remote, "a")
    c = machine(tmp_path, remote, "c")
    write(c, "notes/from-c", "# From c\n")
    git(c, "push", "-q", "origin", "HEAD:refs/pending/c")
    # c's push lands between receive-pack's check of a's push and its update of the branch:
    # `cannot lock ref 'refs/heads/main': is at <c's> but expected <old>`.
    hook(remote, "pre-receive", """
read old new ref
[ -e "$GIT_DIR/raced" ] && exit 0
: > "$GIT_DIR/raced"
unset GIT_QUARANTINE_PATH GIT_OBJECT_DIRECTORY GIT_ALTERNATE_OBJECT_DIRECTORIES
git update-ref refs/heads/main refs/pending/c "$old"
""")
    write(a, "notes/from-a", "# From a\n")
    out = strata(a, "sync", "--json")
    assert out.returncode == 0, out.stderr.decode()
    result = json.loads(out.stdout)
    assert result["pushed"] and result["attempts"] == 2 and result["integrated"] == "merge", result
    assert {"active/notes/from-a.md", "active/notes/from-c.md"} <= on_remote(remote)
    assert strata(c, "sync").returncode == 0
    assert git(c, "rev-parse", "HEAD^{tree}").stdout == git(a, "rev-parse", "HEAD^{tree}").stdout


def test_a_ref_lock_that_never_goes_is_refused_with_the_remotes_words(tmp_path: Path, remote: Path, monkeypatch):
    from strata_git.app.vault import Vault
    from strata_git.errors import Refused
    from strata_git.ops.sync import sync

    a = machine(tmp_path, remote, "a")
    (remote / "refs/heads/main.lock").write_bytes(b"")  # left by a git that crashed on the remote
    write(a, "notes/stuck", "# Stuck\n")
    monkeypatch.setattr(sync, "BACKOFF", 0.0)
    with pytest.raises(Refused) as refused:
        Vault.open(str(a)).sync()
    said = f"{refused.value.message}\n{refused.value.hint}"
    assert f"origin failed to update its refs, on the last of {sync.ATTEMPTS} attempts" in said, said
    assert "(failed to update ref)" in said and "cannot lock ref 'refs/heads/main'" in said, said
    assert "remove it" in said and "nothing was lost" in said, said
    assert b"stuck" in git(a, "ls-tree", "-r", "--name-only", "HEAD").stdout  # committed here
    (remote / "refs/heads/main.lock").unlink()
    assert strata(a, "sync").returncode == 0
    assert "active/notes/stuck.md" in on_remote(remote)


def test_many_machines_syncing_at_once_all_land_and_none_is_refused(tmp_path: Path, remote: Path):
    """Five machines start each of three syncs at the same instant: about half the pushes that lose
    are `(failed to update ref)` races on git 2.39, the rest `(fetch first)`."""
    machines = [machine(tmp_path, remote, f"m{i}") for i in range(5)]
    rounds = 3
    start = threading.Barrier(len(machines))

    def work(i: int) -> list[subprocess.CompletedProcess]:
        done = []
        for r in range(rounds):
            (machines[i] / "active/notes").mkdir(exist_ok=True)
            (machines[i] / f"active/notes/m{i}-{r}.md").write_text(f"# Machine {i}, round {r}\n")
            start.wait(timeout=120)
            done.append(subprocess.run([str(BIN / "git-strata"), "sync"], cwd=machines[i], capture_output=True,
                                       stdin=subprocess.DEVNULL, timeout=120))
        return done

    with ThreadPoolExecutor(len(machines)) as pool:
        runs = [proc for done in pool.map(work, range(len(machines))) for proc in done]
    for proc in runs:
        err = proc.stderr.decode()
        assert proc.returncode == 0 and "refused" not in err and "failed to update" not in err, err
    wanted = {f"active/notes/m{i}-{r}.md" for i in range(len(machines)) for r in range(rounds)}
    assert wanted <= on_remote(remote), sorted(wanted - on_remote(remote))
    for root in machines:  # and every machine has it all after one more round
        assert strata(root, "sync").returncode == 0
    assert all(wanted <= set(git(root, "ls-tree", "-r", "--name-only", "HEAD").stdout.decode().split())
               for root in machines)
