"""The archive flow over git's smart HTTP protocol, as hosted services speak it: `git http-backend`
behind a local server on 127.0.0.1 (helpers.smarthttp.SmartHttp). Archive (push, read back, prune), a
partial `git strata clone`, an archived memory read back through a lazy fetch, and sync, all over
HTTP."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import bare_remote, git, strata
from helpers.archive import body, seed_archive


@pytest.mark.slow
def test_the_archive_flow_end_to_end_over_smart_http(mem: Path, tmp_path: Path, smart_http):
    served = bare_remote(smart_http.base / "mem.git")
    git(served, "config", "http.receivepack", "true")  # pushes over HTTP (a hosted service's accounts)
    url = smart_http.url("mem.git")
    git(mem, "remote", "add", "origin", url)
    seed_archive(mem, 12)
    done = strata(mem, "archive", "--json")
    assert done.returncode == 0, done.stderr
    assert not (mem / "archive/notes/m0003.md").exists()  # pushed, read back over HTTP, pruned
    assert git(served, "rev-parse", "main").stdout == git(mem, "rev-parse", "main").stdout

    laptop = tmp_path / "laptop"
    cloned = strata(tmp_path, "clone", url, str(laptop))
    assert cloned.returncode == 0, cloned.stderr
    assert git(laptop, "config", "remote.origin.partialclonefilter").stdout.strip() == b"blob:none"
    hits = json.loads(strata(laptop, "search", "token0003", "--json").stdout)
    assert hits[0]["name"] == "notes/m0003" and hits[0]["tier"] == "archive"  # from the records, no blob
    read = strata(laptop, "read", "notes/m0003")  # the blob fetched on demand over HTTP
    assert read.returncode == 0, read.stderr
    assert read.stdout.decode() == body(3)

    strata(laptop, "write", "notes/from-laptop", "-m", "Written on the laptop.")
    synced = strata(laptop, "sync")
    assert synced.returncode == 0, synced.stderr
    assert git(served, "cat-file", "-e", "main:active/notes/from-laptop.md", check=False).returncode == 0
    assert git(laptop, "fsck", check=False).returncode == 0
    posts = [status for method, path, status in smart_http.log if method == "POST"]
    assert any(p.endswith("git-receive-pack") for _, p, _ in smart_http.log)  # really pushed over HTTP
    assert posts and all(status == 200 for status in posts), smart_http.log
