"""Access records: every read through git-strata, appended to a local log.

Reads never create commits. Each read is one JSON line appended with a single
write to `<git dir>/strata/access.log` (O_APPEND makes concurrent appends safe),
keyed by the memory's name so its history survives tier moves. The janitor
builds on this log (flushing it to a per-machine ref that syncs without
conflicts); until then it is per clone.
"""

from __future__ import annotations

import json
import os
import time

from strata_git.git import Repo

LOG = "access.log"


def record(repo: Repo, name: str, tier: str, via: str, now: float | None = None) -> None:
    line = json.dumps({"t": round(now if now is not None else time.time(), 3), "name": name,
                       "tier": tier, "via": via}, ensure_ascii=False) + "\n"
    fd = os.open(os.path.join(repo.state_dir(), LOG), os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        size = os.fstat(fd).st_size
        if size and os.pread(fd, 1, size - 1) != b"\n":
            line = "\n" + line  # a torn last record (a crash mid-append) must not swallow this one
        os.write(fd, line.encode("utf-8"))
    finally:
        os.close(fd)


def read_all(repo: Repo) -> list[dict]:
    """Every record in order; a torn last line (a crash mid-append) is skipped."""
    try:
        with open(os.path.join(repo.state_dir(), LOG), encoding="utf-8") as f:
            lines = f.readlines()
    except FileNotFoundError:
        return []
    records = []
    for line in lines:
        try:
            records.append(json.loads(line))
        except ValueError:
            continue
    return records
