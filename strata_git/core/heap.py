"""Python's cycle collector held off while a bulk job makes millions of objects.

The collector runs after every few hundred container objects made and, now and then, walks every
one still alive. A clone at a million archived memories keeps millions of them (the archive's
paths, their commits, their records' candidates) while it makes millions more, and those walks
cost it a seventh of its shadow index's build (168.8 s -> 146.1 s without them: docs/benchmarks.md,
"Less work in a clone of a million"). git-strata's bulk jobs make no reference cycles on
purpose, so nothing piles up meanwhile that the collector would have freed sooner; it runs as
before once the job is done.

Such jobs also share their work with forked processes where this one may fork (`forkable`).
"""

from __future__ import annotations

import gc
import os
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def held_off() -> Iterator[None]:
    """No cycle collection within the block (nor in a process forked within it); nested, the
    outermost block decides when it resumes."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def forkable() -> int:
    """How many cores this process may fork workers onto: 0 unless it runs on Linux, has more than
    one core, and has no other thread (a fork copies no thread, and a lock another held would stay
    held in the child)."""
    import sys
    import threading

    if not sys.platform.startswith("linux") or threading.active_count() > 1:
        return 0
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return cores if cores > 1 else 0
