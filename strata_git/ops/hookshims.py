"""Hook shims: install, uninstall, report.

The shim (`hooks/shim.sh` in the source tree) is one small shell script installed
under every hook name. A hook the user already had is kept beside it as
`<hook>.strata-chained` and still runs after git-strata's; uninstalling removes
only files carrying the shim's marker and puts the user's hooks back.
"""

from __future__ import annotations

import os
import sys

from strata_git.core import contract
from strata_git.errors import Refused
from strata_git.gitio.git import Repo

HOOKS, MARKER, CHAINED = contract.HOOKS, contract.SHIM_MARKER, contract.CHAINED


def hooks_dir(repo: Repo) -> str:
    """The repository's own hooks folder. Never core.hooksPath: that may be a global or a
    team-tracked folder, and git-strata must not change hooks beyond this repository."""
    common = repo.git("rev-parse", "--git-common-dir").decode().strip()
    return os.path.join(common if os.path.isabs(common) else os.path.join(repo.root, common), "hooks")


def _hooks_path(repo: Repo) -> str:
    """core.hooksPath when it sends git elsewhere than git-strata's hooks folder, else ""."""
    value = repo.git("config", "--get", "core.hooksPath", check=False).decode().strip()
    if not value:
        return ""
    full = os.path.join(repo.root, os.path.expanduser(value))
    return "" if os.path.realpath(full) == os.path.realpath(hooks_dir(repo)) else value


def mentions(path: str, text: str) -> bool:
    """Whether the first 4 KiB of a file contain `text` (how git-strata recognizes its own files)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return text in f.read(4096)
    except OSError:
        return False


def _shim_text() -> str:
    import shutil

    from strata_git.core import shipped

    template = shipped.hook_shim()
    found = shutil.which("git-strata") or ""
    beside = os.path.join(os.path.dirname(sys.executable), "git-strata")
    strata = beside if os.access(beside, os.X_OK) else found
    return template.replace("@GIT_STRATA@", strata.replace("'", ""))


def install(repo: Repo) -> tuple[dict[str, str], str]:
    """Install every shim; ({hook: 'installed' | 'updated' | 'chained'}, a note for the user or "")."""
    folder = hooks_dir(repo)
    os.makedirs(folder, exist_ok=True)
    shim, done = _shim_text(), {}
    for hook in HOOKS:
        path = os.path.join(folder, hook)
        if os.path.lexists(path) and not mentions(path, MARKER):
            if os.path.lexists(path + CHAINED):
                raise Refused(f"{path} and {path + CHAINED} both exist and neither is git-strata's shim",
                              f"merge them into one hook at {path}, then run install-hooks again")
            os.rename(path, path + CHAINED)
            done[hook] = "chained"
        else:
            done[hook] = "updated" if os.path.lexists(path) else "installed"
        tmp = f"{path}.strata-tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(shim)
        os.chmod(tmp, 0o755)
        os.replace(tmp, path)
    elsewhere = _hooks_path(repo)
    note = (f"core.hooksPath is set to {elsewhere}, so git runs the hooks there, not git-strata's in {folder}; "
            f"point it here for this repository (`git config --local core.hooksPath {folder}`) or use the "
            "pre-commit framework entries in git-strata's .pre-commit-hooks.yaml") if elsewhere else ""
    return done, note


def uninstall(repo: Repo) -> dict[str, str]:
    """Remove git-strata's shims only, restoring chained user hooks; {hook: what happened}.

    A shim the pre-commit framework moved aside (`<hook>.legacy`) is git-strata's too; the
    user hook chained behind it goes back to that slot, where the framework runs it."""
    folder, done = hooks_dir(repo), {}
    for hook in HOOKS:
        path = os.path.join(folder, hook)
        slot = next((p for p in (path, path + ".legacy") if mentions(p, MARKER)), None)
        if slot is None:
            done[hook] = "not ours, left alone" if os.path.lexists(path) else "absent"
            continue
        os.unlink(slot)
        done[hook] = "removed" if slot == path else "removed (from .legacy)"
        if os.path.lexists(path + CHAINED):
            os.rename(path + CHAINED, slot)
            done[hook] += ", user hook restored"
    return done


def state(repo: Repo) -> dict[str, str]:
    """{hook: 'installed' | 'installed+chained' | 'missing' | 'foreign' | 'inactive (core.hooksPath=...)'}."""
    folder, found = hooks_dir(repo), {}
    elsewhere = _hooks_path(repo)
    for hook in HOOKS:
        path = os.path.join(folder, hook)
        if mentions(path, MARKER):
            found[hook] = "installed+chained" if os.path.lexists(path + CHAINED) else "installed"
            if elsewhere:
                found[hook] = f"inactive (core.hooksPath={elsewhere})"
        else:
            found[hook] = "foreign" if os.path.lexists(path) else "missing"
    return found
