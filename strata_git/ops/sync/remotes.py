"""What this clone's git config says about a remote: its url, whether objects may be missing
here (a partial or pruned clone), and the mirrors that get a copy after each sync."""

from __future__ import annotations

import re
from typing import NamedTuple

from strata_git.errors import NotFound
from strata_git.gitio.git import Repo
from strata_git.ops.sync import launch


class Where(NamedTuple):
    """What one sync needs from this clone's git config, read with one git call."""

    remote: str
    url: str
    partial: bool  # objects may be missing here, promised by a remote (clone --filter, or pruned)
    mirrors: list[str]  # `git config --add strata.mirror NAME`: per clone, like credentials


def config_args(remote: str | None) -> list[str]:
    """The git call where() reads: about `remote`, or about every remote for None."""
    if remote is None:
        return list(launch.CONFIG)
    return ["config", "-z", "--get-regexp", launch.REMOTE_KEYS.format(remote=re.escape(remote))]


def where(repo: Repo, remote: str) -> Where:
    """The remote's url, whether this clone is partial, and its mirrors."""
    return read(remote, repo.git(*config_args(remote), check=False))


def read(remote: str, out: bytes) -> Where:
    """where() from git's answer to config_args(remote), or to config_args(None)."""
    found: dict[str, list[str]] = {}
    for item in filter(None, out.decode("utf-8", "surrogateescape").split("\0")):
        key, _, value = item.partition("\n")
        found.setdefault(key.lower() if not key.startswith("remote.") else key, []).append(value)
    url = found.get(f"remote.{remote}.url")
    if not url:
        raise NotFound(f"this repository has no remote named {remote!r}",
                       f"add one (`git remote add {remote} URL`), or name another with --remote")
    partial = bool(found.get("extensions.partialclone")) or any(
        k.endswith(".promisor") and v[-1].lower() in ("true", "yes", "on", "1") for k, v in found.items())
    return Where(remote, url[-1], partial, found.get("strata.mirror", []))
