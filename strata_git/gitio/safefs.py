"""File access inside the memory repository that never follows a symlink.

Every path is walked one component at a time from an open descriptor of the
repository root with O_NOFOLLOW, so a symlink planted anywhere on the way (even
between our check and our use) makes the operation fail instead of escaping.
Writes go to a temporary file in the same folder and are renamed into place.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager

from strata_git.core import contract
from strata_git.errors import NotFound, Refused, too_large
from strata_git.gitio import procs

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


def _in_the_way(path: str, what: str) -> Refused:
    if what == "link":
        return Refused(f"{path} is a symbolic link; git-strata never follows links",
                       "replace the link with a real folder or file")
    if what == "file":
        return Refused(f"{path} is a file, so it cannot be a folder", "choose another name")
    return Refused(f"{path} is not a regular file (a FIFO, device or socket)", "move it aside")


@contextmanager
def _parent(root: str, relpath: str, create: bool) -> Iterator[tuple[int, str]]:
    """An open descriptor of the folder holding `relpath`, and the last component."""
    *folders, leaf = relpath.split("/")
    fd = os.open(root, _DIR_FLAGS)
    try:
        for i, part in enumerate(folders):
            try:
                nxt = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    raise NotFound(f"{'/'.join(folders[:i + 1])}: no such folder") from None
                os.mkdir(part, 0o777, dir_fd=fd)
                nxt = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except OSError as e:
                if e.errno in (errno.ELOOP, errno.ENOTDIR):
                    where = "/".join(folders[: i + 1])
                    is_link = os.path.islink(os.path.join(root, where))
                    raise _in_the_way(where, "link" if is_link or e.errno == errno.ELOOP else "file") from None
                raise
            os.close(fd)
            fd = nxt
        yield fd, leaf
    finally:
        os.close(fd)


def read(root: str, relpath: str, limit: int) -> bytes:
    """Content of a regular file (NotFound if absent, Refused if a link or too large)."""
    with _parent(root, relpath, create=False) as (dir_fd, leaf):
        try:
            fd = os.open(leaf, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=dir_fd)
        except FileNotFoundError:
            raise NotFound(f"{relpath}: no such file") from None
        except OSError as e:
            if e.errno == errno.ELOOP:
                raise _in_the_way(relpath, "link") from None
            raise
        with os.fdopen(fd, "rb") as f:
            info = os.fstat(f.fileno())
            if not stat.S_ISREG(info.st_mode):
                raise _in_the_way(relpath, "special")
            if info.st_size > limit:
                raise too_large(relpath, info.st_size, limit)
            return f.read(min(limit, info.st_size) + 1)


def kind(root: str, relpath: str) -> str | None:
    """'file', 'dir', 'other' (links, fifos...) or None when nothing is there."""
    try:
        with _parent(root, relpath, create=False) as (dir_fd, leaf):
            info = os.stat(leaf, dir_fd=dir_fd, follow_symlinks=False)
    except (NotFound, FileNotFoundError):
        return None
    except Refused:
        return "other"
    if stat.S_ISREG(info.st_mode):
        return "file"
    return "dir" if stat.S_ISDIR(info.st_mode) else "other"


def write(root: str, relpath: str, data: bytes, durable: bool = True, sweep: bool = True) -> None:
    """Atomically create or replace a regular file, creating folders as needed.

    The temporary file gets an unpredictable name and O_EXCL|O_NOFOLLOW, so nothing
    planted in the folder (a link, a file) can redirect the write. `durable` fsyncs
    it first (memories); derived files like index.md skip that. `sweep` first deletes what a
    killed writer of this file left (a caller writing thousands of new files skips that: it
    lists the folder each time).
    """
    with _parent(root, relpath, create=True) as (dir_fd, leaf):
        existing = kind(root, relpath)
        if existing not in (None, "file"):
            raise _in_the_way(relpath, "link" if os.path.islink(os.path.join(root, relpath)) else "special")
        if sweep:
            _clear_dead_temps(dir_fd, leaf)
        tmp = contract.temp_name(leaf, os.getpid(), os.urandom(6).hex())
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644, dir_fd=dir_fd)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
                if durable:
                    f.flush()
                    os.fsync(f.fileno())
            os.replace(tmp, leaf, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        except BaseException:
            try:
                os.unlink(tmp, dir_fd=dir_fd)
            except FileNotFoundError:
                pass
            raise


def _clear_dead_temps(dir_fd: int, leaf: str) -> None:
    """Delete temporary files of `leaf` that a writer killed mid-write left behind: their names
    carry the writer's pid, and only a pid that no longer exists makes one stale."""
    procs.sweep("", contract.temp_prefix(leaf), dir_fd=dir_fd)


def clear_dead_temps_in(root: str, relfolder: str) -> None:
    """What killed writers left anywhere in one folder (for a caller that writes with sweep=False)."""
    import re

    folder = os.path.join(root, relfolder)
    if os.path.islink(folder) or not os.path.isdir(folder):
        return
    for name in os.listdir(folder):
        found = re.fullmatch(r"\.(.+)\.strata-tmp-(\d+)-[0-9a-f]+", name)
        if found and not procs.alive(int(found.group(2))):
            try:
                os.unlink(os.path.join(folder, name))
            except FileNotFoundError:
                pass


def make_parents(root: str, relpath: str) -> None:
    """Create the folders above `relpath` (refusing symlinks on the way)."""
    with _parent(root, relpath, create=True):
        pass


def remove(root: str, relpath: str) -> None:
    with _parent(root, relpath, create=False) as (dir_fd, leaf):
        os.unlink(leaf, dir_fd=dir_fd)
