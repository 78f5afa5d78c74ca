"""`git strata sync` waits on the network beside its own work. It starts its fetch before it loads
the rest of the command (ops/sync/early.py): the round takes that fetch only when it is this
repository's, for the same remote and refs, and nothing is fetched where a round would not fetch
(outside a memory repository, a detached HEAD). Its push runs while index.md, the catalog and the
shadow index follow the new HEAD."""

from __future__ import annotations

import datetime
import json
from pathlib import Path

import pytest

from conftest import bare_remote, git, strata
from strata_git.app.vault import Vault
from strata_git.core import contract
from strata_git.gitio.git import discover
from strata_git.ops.sync import early, launch


@pytest.fixture
def pair(tmp_path: Path, mem: Path) -> tuple[Vault, Vault]:
    """`mem` and a second machine, both with `origin` on one bare remote."""
    from strata_git.ops import clone

    remote = bare_remote(tmp_path / "mem.git")
    git(mem, "remote", "add", "origin", str(remote))
    here = Vault.open(str(mem))
    here.write("projects/koda", b"# Koda\n\nfirst\n")
    here.sync()
    clone.clone(str(remote), str(tmp_path / "other"))
    return here, Vault.open(str(tmp_path / "other"))


def _builtins(trace: Path) -> list[str]:
    """The git commands a GIT_TRACE file shows, in order (`fetch`, `config`, ...)."""
    lines = [line.split("trace: built-in: git ", 1)[1] for line in trace.read_text().splitlines()
             if "trace: built-in: git " in line]
    return [line.split()[0] if not line.startswith("-c ") else line.split()[2] for line in lines]


def _sync_traced(here: Vault, tmp_path: Path) -> tuple[list[str], bool]:
    """(the git commands a CLI sync ran, whether launch.py started its fetch: `git -C ROOT fetch`)."""
    trace, events = tmp_path / "trace", tmp_path / "events"
    for f in (trace, events):
        f.unlink(missing_ok=True)
    proc = strata(Path(here.repo.root), "sync", "--json",
                  env={"GIT_TRACE": str(trace), "GIT_TRACE2_EVENT": str(events)})
    assert proc.returncode == 0, proc.stderr
    assert b'"integrated": "fast-forward"' in proc.stdout
    ran = _builtins(trace)
    assert ran.count("fetch") == 1 and trace.read_text().count("--show-toplevel") == 1, ran
    assert ran.count("config") == 1 and "symbolic-ref" not in ran, ran  # the round asks none of it again
    started = [json.loads(line) for line in events.read_text().splitlines()]
    [fetch] = [e["argv"] for e in started if e.get("event") == "start" and "fetch" in e.get("argv", [])[:9]]
    return ran, fetch[1:3] == ["-C", here.repo.root]


def test_the_command_line_fetches_once_before_the_round_reads_the_remote(pair, tmp_path: Path):
    here, other = pair
    for text in ("second", "third"):
        other.write("projects/koda", f"# Koda\n\n{text}\n".encode())
        other.sync()
        ran, launched = _sync_traced(here, tmp_path)
        assert launched == (text == "third")
        assert (Path(here.repo.root) / "active/projects/koda.md").read_text() == f"# Koda\n\n{text}\n"
        # started once the repository, its remotes and the refs from before it were read (the three
        # are asked side by side, so in any order)
        assert sorted(ran[:3]) == ["config", "for-each-ref", "rev-parse"] and ran[3] == "fetch", ran
    # the second time by launch.py, before the command's modules were loaded: what the first
    # remembered of the config is taken while the config's files are as they were
    assert (Path(here.repo.git_dir) / "strata" / contract.SYNC_LAUNCH).read_text().split("\n")[2] == "origin"


def test_without_a_remembered_remote_the_fetch_starts_once_the_config_is_read(pair, tmp_path: Path, monkeypatch):
    here, other = pair
    root = Path(here.repo.root)
    monkeypatch.chdir(root)
    for change in ("nothing remembered", "this clone's config written"):
        if change == "this clone's config written":  # (the shared one's stamp is tested the same way)
            (Path(here.repo.git_dir) / "strata" / "config.toml").write_text("# this clone's own settings\n")
        other.write("projects/koda", f"# Koda\n\n{change}\n".encode())
        other.sync()
        launch.begin([])
        seen = launch._seen
        assert seen is not None and seen.root == str(root)
        assert seen.proc is None  # git asked, nothing fetched: the remote is not known
        launch._seen = None
        ran, launched = _sync_traced(here, tmp_path)
        assert not launched and sorted(ran[:3]) == ["config", "for-each-ref", "rev-parse"] and ran[3] == "fetch", ran
        assert launch.remembered(str(root), here.repo.git_dir) == "origin"


def test_an_early_fetch_of_another_remote_is_stopped_and_the_round_fetches_its_own(pair, tmp_path: Path):
    here, other = pair
    root = Path(here.repo.root)
    git(root, "remote", "add", "second", str(tmp_path / "mem.git"))
    other.write("projects/koda", b"# Koda\n\nsecond\n")
    other.sync()
    early.start(str(root), "second")
    started = early._started
    assert started is not None
    assert early.take(discover(str(root)), early.fetch_args("origin", discover(str(root)).git_dir)) is None
    assert started.proc.returncode is not None and early._started is None  # stopped and forgotten
    assert here.sync().integrated == "fast-forward"  # its own fetch, of origin


def test_the_round_takes_the_fetch_started_for_it_with_the_refs_from_before_it(pair):
    here, other = pair
    before = git(Path(here.repo.root), "rev-parse", "refs/remotes/origin/main").stdout.decode().strip()
    other.write("projects/koda", b"# Koda\n\nsecond\n")
    other.sync()
    early.start(here.repo.root, None)
    started = early._started
    assert started is not None and started.tracking == before
    taken = early.take(here.repo, early.fetch_args("origin", here.repo.git_dir))
    assert taken is started and early._started is None
    taken.proc.communicate()  # (as the round would)


def test_nothing_is_fetched_outside_a_memory_repository_or_on_a_detached_head(pair, tmp_path: Path):
    here, _ = pair
    plain = tmp_path / "plain"  # a code repository whose origin is the memory's remote
    git(tmp_path, "init", "-q", "-b", "main", str(plain))
    git(plain, "remote", "add", "origin", str(tmp_path / "mem.git"))
    early.start(str(plain), None)
    assert early._started is None
    assert git(plain, "for-each-ref", "refs/remotes/").stdout == b""  # nothing fetched there
    root = Path(here.repo.root)
    git(root, "checkout", "-q", "--detach")
    early.start(str(root), None)
    assert early._started is None


def test_the_push_runs_while_the_indexes_follow_the_merge(pair, tmp_path: Path):
    here, other = pair
    other.write("projects/koda", b"# Koda\n\nsecond\n")
    other.sync()
    here.write("projects/lamp", b"# Lamp\n\nhere\n")
    trace, events = tmp_path / "trace", tmp_path / "events"
    proc = strata(Path(here.repo.root), "sync", "--json", env={"GIT_TRACE": str(trace),
                                                                "GIT_TRACE2_EVENT": str(events)})
    assert proc.returncode == 0, proc.stderr
    assert b'"integrated": "merge"' in proc.stdout and b'"pushed": true' in proc.stdout
    ran = _builtins(trace)
    assert "push" in ran[ran.index("read-tree"):], ran  # the merge's checkout, then the push
    # ... started before the catalog followed the merge
    started = [json.loads(line) for line in events.read_text().splitlines()]
    [push] = [e["time"] for e in started if e.get("event") == "start" and e.get("argv", [None, None])[1] == "push"]
    pushed_at = datetime.datetime.fromisoformat(push.replace("Z", "+00:00")).timestamp()
    assert pushed_at < (Path(here.repo.git_dir) / "strata" / contract.CATALOG).stat().st_mtime
    other.sync()
    assert (Path(other.repo.root) / "active/projects/lamp.md").read_text() == "# Lamp\n\nhere\n"
    assert here.search("lamp")[0].name == "projects/lamp"  # the catalog followed the merge


def test_an_interrupt_while_the_indexes_follow_stops_the_push_and_loses_nothing(pair, monkeypatch):
    from strata_git.ops import txn
    from strata_git.ops.sync import sync

    here, other = pair
    other.write("projects/koda", b"# Koda\n\nsecond\n")
    other.sync()
    here.write("projects/lamp", b"# Lamp\n\nhere\n")
    started = []

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    real_start = sync.start_push
    monkeypatch.setattr(sync, "start_push", lambda *a: started.append(real_start(*a)) or started[-1])
    monkeypatch.setattr(txn, "follow_head", interrupted)
    with pytest.raises(KeyboardInterrupt):
        here.sync()
    assert started and started[0] is not None and started[0].returncode is not None  # stopped, not left running
    monkeypatch.undo()
    here.sync()  # the next round pushes what the stopped one might not have
    other.sync()
    assert (Path(other.repo.root) / "active/projects/lamp.md").read_text() == "# Lamp\n\nhere\n"
    assert (Path(here.repo.root) / "active/projects/koda.md").read_text() == "# Koda\n\nsecond\n"
    assert here.search("lamp")[0].name == "projects/lamp"


@pytest.mark.parametrize("through", ["the command line", "the shared config"])
def test_a_remote_name_that_is_an_option_runs_nothing(pair, tmp_path: Path, through: str):
    here, _ = pair
    root = Path(here.repo.root)
    planted = tmp_path / "planted"
    hostile = f"--upload-pack=touch {planted}"  # what git fetch would take for an option
    if through == "the shared config":  # a peer can commit .strata/config.toml
        config = root / ".strata/config.toml"
        config.write_text(config.read_text().replace('remote = "origin"', f'remote = "{hostile}"'))
        git(root, "commit", "-qam", "sync elsewhere", "--no-verify")
        args: tuple[str, ...] = ("sync",)
    else:
        args = ("sync", "--remote", hostile)
    early.start(str(root), hostile if through == "the command line" else None)
    assert early._started is None
    proc = strata(root, *args)
    assert proc.returncode == 1 and b"no remote named" in proc.stderr, proc.stderr
    assert not planted.exists()


@pytest.mark.parametrize(("typed", "remote"), [
    ([], "origin"), (["--json"], "origin"), (["--remote", "second", "--dry-run"], "second"),
    (["--remote=second"], "second"), (["--rem", "second"], None), (["--remote"], None),
    (["--remote", "--json"], None), (["-h"], None), (["--frobnicate"], None)])
def test_the_fetch_starts_before_the_parser_only_for_arguments_it_takes_as_they_are(pair, tmp_path: Path,
                                                                                      monkeypatch, typed, remote):
    """What argparse would read otherwise (an abbreviation, a missing value, help, an unknown
    option) starts nothing: the parser says what is wrong, or the round fetches by itself."""
    here, _ = pair
    root = Path(here.repo.root)
    git(root, "remote", "add", "second", str(tmp_path / "mem.git"))
    monkeypatch.chdir(root)
    early.begin(typed)
    started = early._started
    early.stop()
    assert (started.where.remote if started else None) == remote
    if started:
        assert started.repo.git_dir == here.repo.git_dir and started.where.url == str(tmp_path / "mem.git")
