"""Mirrors: remotes that get a backup copy after each sync, such as an S3 bucket through
git-remote-s3 (which uploads a whole bundle per push and cannot serve single objects, so it
can be neither the sync remote nor the archive remote). Configured per clone, like their
credentials: `git config --add strata.mirror NAME`.
"""

from __future__ import annotations

from strata_git.core import contract
from strata_git.errors import NotFound
from strata_git.gitio import git
from strata_git.gitio.git import Repo, run
from strata_git.ops.sync.remotes import Where, where
from strata_git.store import access


def push_mirrors(repo: Repo, w: Where, branch: str) -> dict[str, str]:
    """Push the branch and this machine's access ref to each mirror, a backup: a failure is
    reported (and makes the command exit non-zero) but does not undo the sync."""
    if w.partial:
        return dict.fromkeys(w.mirrors, "skipped: this clone is partial (cloned by git strata clone, or pruned) and "
                             "a mirror needs every object (git-remote-s3 uploads a whole bundle); mirror from a "
                             "full clone")
    specs = [f"refs/heads/{branch}:refs/heads/{branch}"]
    mine = contract.ACCESS_REFS + access.machine_id(repo)
    if w.mirrors and repo.git("rev-parse", "-q", "--verify", mine, check=False).strip():
        specs.append(f"{mine}:{mine}")
    done = {}
    for mirror in w.mirrors:
        try:
            url = where(repo, mirror).url
        except NotFound as e:
            done[mirror] = f"failed: {e.message}"
            continue
        proc = run(["push", "--porcelain", "--", mirror, *specs], repo.root, check=False)
        said = proc.stderr if proc.stderr.strip() else proc.stdout
        done[mirror] = "pushed" if proc.returncode == 0 else \
            f"failed: {git.error_line(said)} ({git.shown_url(url)})"
    return done
