"""A round's fetch leaves out this clone's own access and shadow refs (negative refspecs): their
commits are made here, in no promisor pack, and a partial clone's fetch of a ref whose commit is
in none checks connectivity with `rev-list --exclude-promisor-objects`, which first lists every
object the promisor packs hold (0.9 s at a million archived memories, every sync)."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import bare_remote, git, strata


def _children(trace: Path) -> list[list[str]]:
    return [e["argv"] for e in map(json.loads, trace.read_text().splitlines()) if e.get("event") == "child_start"]


def test_a_sync_never_checks_its_own_refs_against_every_promisor_object(mem: Path, tmp_path: Path):
    from strata_git.ops.sync import launch

    remote = bare_remote(tmp_path / "remote.git")
    git(mem, "remote", "add", "origin", str(remote))
    assert strata(mem, "write", "projects/koda", input=b"# Koda\n\nfirst\n").returncode == 0
    assert strata(mem, "sync").returncode == 0
    where = tmp_path / "laptop"
    assert strata(tmp_path, "clone", str(remote), str(where)).returncode == 0
    assert strata(where, "read", "projects/koda").returncode == 0
    assert strata(where, "sync").returncode == 0  # (its access ref, made here, pushed)
    mine = launch.own(str(where / ".git"))
    assert mine and git(where, "rev-parse", f"refs/strata/access/{mine}").stdout == \
        git(remote, "rev-parse", f"refs/strata/access/{mine}").stdout
    trace = tmp_path / "trace.json"
    assert strata(where, "sync", env={"GIT_TRACE2_EVENT": str(trace)}).returncode == 0
    checks = [argv for argv in _children(trace) if "--exclude-promisor-objects" in argv]
    assert checks == [], checks
    there = git(where, "rev-parse", f"refs/strata-remotes/origin/access/{mine}").stdout  # (not pruned)
    assert there == git(where, "rev-parse", f"refs/strata/access/{mine}").stdout
    assert strata(where, "read", "projects/koda").returncode == 0  # a new read: the next sync sends it
    assert strata(where, "sync").returncode == 0
    assert git(remote, "rev-parse", f"refs/strata/access/{mine}").stdout == \
        git(where, "rev-parse", f"refs/strata/access/{mine}").stdout != there


def test_a_machine_id_file_that_is_not_one_leaves_the_fetch_whole(tmp_path: Path):
    from strata_git.ops.sync import launch

    state = tmp_path / "strata"
    state.mkdir()
    for text, expected in ((b"0123456789abcdef\n", "0123456789abcdef"), (b"../../etc\n", None), (b"\xff" * 16, None),
                           (b"0123456789ABCDEF", None), (b"", None), (b"0123456789abcdef0", None)):
        (state / "machine-id").write_bytes(text)
        assert launch.own(str(tmp_path)) == expected
        args = launch.fetch_args("origin", str(tmp_path))
        assert [a for a in args if a.startswith("^")] == (
            [f"^refs/strata/access/{expected}", f"^refs/strata/shadow/{expected}"] if expected else [])
