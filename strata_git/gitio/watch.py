"""Which live memories changed, told by the kernel, for a process that searches again and again.

A one-shot command brings the catalog in line by a stat of every file in active/ and
cooled/ (catalog.rescan): exact, and about 15 ms at 5,000 memories. A long-running process
(`git strata mcp`) instead watches those folders with inotify and, before each query,
re-examines only the paths the kernel reported. Whenever the events cannot tell the whole
story it says so and the caller falls back to the full scan: on the first query, after the
kernel's queue overflowed, when a folder appears, disappears or moves (files may have been
written into it before it was watched), when a tier folder itself comes or goes, and when
another process replaced the catalog database. Where inotify is not available (not Linux,
or no watches left), every query scans, as before.
"""

from __future__ import annotations

import os
from typing import Any

from strata_git.core.names import TIERS

try:
    from inotify_simple import INotify, flags
except (ImportError, OSError):  # pragma: no cover - not Linux
    INotify = None

_FILE_EVENTS = ("CREATE", "DELETE", "MODIFY", "CLOSE_WRITE", "MOVED_FROM", "MOVED_TO", "ATTRIB")
_LOST = ("Q_OVERFLOW", "DELETE_SELF", "MOVE_SELF", "UNMOUNT")


class Watch:
    """inotify watches on the tier folders `tiers` under `root` (and on `root`, for the tier
    folders themselves coming and going)."""

    def __init__(self, root: str, tiers: tuple[str, ...]) -> None:
        self.root = root
        self.tiers = tiers
        self._ino: Any = None  # an inotify_simple.INotify once started (the package ships no types)
        self._folders: dict[int, str] = {}  # watch descriptor -> folder relative to root ("" for root)
        self._synced = ""  # the catalog (its 'born' id) our last full scan went into; "" = none yet
        self.seen = 0  # counts the takes that found a change or could not tell: unchanged, nothing changed

    def _start(self) -> bool:
        if INotify is None:
            return False
        try:
            self._ino = INotify()
            self._mask = 0
            for name in _FILE_EVENTS:
                self._mask |= getattr(flags, name)
            self._mask |= flags.DELETE_SELF | flags.MOVE_SELF | flags.DONT_FOLLOW
            self._add("", flags.CREATE | flags.DELETE | flags.MOVED_FROM | flags.MOVED_TO | flags.DONT_FOLLOW)
            for tier in self.tiers:
                self._add_tree(tier)
            return True
        except OSError:  # no watches left (fs.inotify.max_user_watches), or no inotify: scan instead
            self.close()
            return False

    def _add(self, folder: str, mask: int) -> None:
        wd = self._ino.add_watch(os.path.join(self.root, folder) if folder else self.root, mask)
        self._folders[wd] = folder

    def _add_tree(self, folder: str) -> None:
        path = os.path.join(self.root, folder)
        if os.path.islink(path) or not os.path.isdir(path):
            return  # a link is never followed (catalog.rescan reports it as a stray)
        self._add(folder, self._mask | flags.ONLYDIR)
        try:
            items = list(os.scandir(path))
        except OSError:
            return
        for item in items:
            if item.is_dir(follow_symlinks=False):
                self._add_tree(f"{folder}/{item.name}")

    def take(self, catalog_id: str) -> list[str] | None:
        """Paths (relative to root) changed since the last call, or None when only a full scan can
        tell; after a full scan the caller calls `scanned(catalog_id)`. `seen` grows unless the
        answer is that nothing changed."""
        changed = self._take(catalog_id)
        if changed is None or changed:
            self.seen += 1
        return changed

    def _take(self, catalog_id: str) -> list[str] | None:
        if self._ino is None and not self._start():
            return None
        events = self._ino.read(timeout=0)
        if self._synced != catalog_id:
            return None
        changed: set[str] = set()
        for event in events:
            folder = self._folders.get(event.wd)
            if event.mask & flags.IGNORED:
                self._folders.pop(event.wd, None)
            if folder is None or any(event.mask & getattr(flags, name) for name in _LOST):
                self._lost()
                return None
            if folder == "":
                if event.name in self.tiers:
                    self._lost()  # a tier folder came or went
                    return None
                continue
            if event.mask & flags.ISDIR and not event.mask & (flags.ATTRIB | flags.MODIFY | flags.CLOSE_WRITE):
                self._lost()  # a folder came, went or moved: its files were not watched
                return None
            changed.add(f"{folder}/{event.name}")
        return sorted(changed)

    def _lost(self) -> None:
        """Start over, watching again before the caller's full scan (so nothing slips between)."""
        self.close()
        self._start()
        return None

    def scanned(self, catalog_id: str) -> None:
        """The caller has just brought the catalog `catalog_id` in line with the disk by a full scan
        (events read before it are covered by it)."""
        if self._ino is not None or self._start():
            self._synced = catalog_id

    def close(self) -> None:
        if self._ino is not None:
            self._ino.close()
        self._ino = None
        self._folders = {}
        self._synced = ""


def watch(root: str) -> Watch:
    """A watch on the folders search reads from disk (active/, cooled/)."""
    return Watch(root, tuple(t for t in TIERS if t != "archive"))
