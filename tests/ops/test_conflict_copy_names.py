"""A conflict copy's name is sync's alone to make: every door refuses to write or reject under it
(the rule lives in ops/memories.py, below the CLI, MCP and the Python API)."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import git, strata
from strata_git.errors import BadName

COPY = "projects/koda.conflict-deadbeef"


def test_the_cli_refuses_a_conflict_copy_name_and_writes_nothing(mem: Path):
    before = git(mem, "rev-parse", "HEAD").stdout
    proc = strata(mem, "write", COPY, "-m", "x\n")
    assert proc.returncode != 0 and b"a name sync gives to conflict copies" in proc.stderr
    assert git(mem, "rev-parse", "HEAD").stdout == before and not (mem / f"active/{COPY}.md").exists()


def test_the_python_api_refuses_it_for_writes_and_named_rejections(vault):
    with pytest.raises(BadName, match="conflict copies"):
        vault.write(COPY, b"x\n")
    with pytest.raises(BadName, match="conflict copies"):
        vault.reject("use a message bus", name=COPY)
