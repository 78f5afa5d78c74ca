"""A project's identity: the name a memory records (`project:` in its frontmatter) so that one memory
repository can serve many code projects, and the same project is named alike on every machine and by
every person.

The identity of a code repository is its remote's URL, normalised: host and path, lowercase, with
the scheme, any user name, password or token, the port and a trailing `.git` taken off
(`https://me:tok@GitHub.com/Org/App.git` and `git@github.com:org/app` are both `github.com/org/app`).
A repository with no remote, or whose remote is a local path (a path is personal), is named by its
root folder's name. A name given by hand (`--project`) is checked the same way: a short lowercase
name of letters, digits and `. _ - /`, never an absolute path.

Pure: no git, no files (app/where.py asks git for the URL and the folder).
"""

from __future__ import annotations

import re

from strata_git.errors import BadName

KEY = "project"
MAX = 200
_NAME = re.compile(r"[a-z0-9][a-z0-9._-]*(?:/[a-z0-9._-]+)*")
_SCP = re.compile(r"^(?:[^@/:\s]+@)?(?P<host>[^@/:\s]+):(?!//)(?P<path>.+)$")  # git@host:org/repo
_URL = re.compile(r"^[a-z][a-z0-9+.-]*://(?:[^@/]*@)?(?P<host>\[[^\]/]+\]|[^@/:]+)(?::\d*)?(?P<path>/.*)?$", re.I)


def valid(name: object) -> bool:
    return (isinstance(name, str) and len(name) <= MAX and _NAME.fullmatch(name) is not None
            and ".." not in name.split("/"))


def check(name: str) -> str:
    """A project name given by hand, normalised (lowercase, no slash or `.git` at its end), or BadName."""
    norm = name.strip().rstrip("/").lower() if isinstance(name, str) else ""  # a leading / is a path: refused
    if norm.endswith(".git"):
        norm = norm[: -len(".git")]
    if not valid(norm):
        raise BadName(f"bad project name {name[:80]!r}" if isinstance(name, str) else "bad project name",
                      "give a name such as github.com/org/app or app: lowercase letters, digits, . _ - and /, "
                      f"at most {MAX} characters, never a path on this machine")
    return norm


def of_meta(meta: dict) -> str:
    """The project a memory's frontmatter records, "" when none (or one that is not a valid name:
    a memory that used the key for something else is simply not in any project)."""
    value = meta.get(KEY)
    if not isinstance(value, str):
        return ""
    norm = value.strip().lower()
    return norm if valid(norm) else ""


def of_url(url: str) -> str | None:
    """A remote URL as a project identity, None for a local path or anything that is not a URL."""
    url = url.strip()
    if not url or "\n" in url or url.startswith(("/", "~", ".", "file:")) or re.match(r"^[a-z]:[\\/]", url, re.I):
        return None
    m = _URL.match(url) or (_SCP.match(url) if "://" not in url else None)
    if not m:
        return None
    host = m["host"].strip("[]").lower()
    path = (m["path"] or "").split("?", 1)[0].split("#", 1)[0].strip("/")
    if path.lower().endswith(".git"):
        path = path[: -len(".git")]
    if path.startswith("~"):  # ssh://host/~user/repo: a home folder on the server is not the project's name
        path = path.partition("/")[2]
    name = f"{host}/{path}".strip("/").lower()
    return name if valid(name) else None


def of_folder(folder_name: str) -> str | None:
    """A root folder's name as a project identity (lowercase; other characters become `-`)."""
    name = re.sub(r"[^a-z0-9._-]+", "-", folder_name.lower()).strip("-.")
    return name[:MAX] if name and valid(name[:MAX]) else None


def rank(project: str, current: str | None) -> int:
    """0: the current project's, 1: no project's (general), 2: another project's. Without a current
    project, every memory ranks 0."""
    if not current:
        return 0
    return 0 if project == current else 1 if not project else 2
