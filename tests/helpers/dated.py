"""Memories written on given days (commit dates fixed by the environment), for the tests of what
history shows: `--as-of`, `history`, the local page, memory over time."""

from __future__ import annotations

import subprocess
from pathlib import Path

from conftest import strata


def at(day: str) -> dict:
    """The environment that dates a commit at noon UTC of `day` (YYYY-MM-DD)."""
    return {"GIT_COMMITTER_DATE": f"{day}T12:00:00+00:00", "GIT_AUTHOR_DATE": f"{day}T12:00:00+00:00"}


def ok(mem: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    proc = strata(mem, *args, env=env)
    assert proc.returncode == 0, proc.stderr
    return proc


def story(mem: Path) -> None:
    """notes/db written on 03-01, changed on 03-10, cooled on 04-20; notes/cat written on 03-05."""
    ok(mem, "write", "notes/db", "-m", "Postgres 15.", env=at("2026-03-01"))
    ok(mem, "write", "notes/cat", "-m", "The cat is Miso.", env=at("2026-03-05"))
    ok(mem, "write", "notes/db", "--replace", "-m", "Postgres 16.", env=at("2026-03-10"))
    ok(mem, "janitor", "--now", "2026-04-20T12:00:00+00:00")
