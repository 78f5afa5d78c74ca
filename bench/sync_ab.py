"""A sync that brings 100 changed memories, taken in turns by two installs of git-strata on one
clone: what a change to the code is worth, without the drift between separate runs.

    .venv/bin/python bench/sync_ab.py --before OTHER/bin/git-strata [--samples 25] [--memories 2000]
                                      [--transport daemon|http]

`--before` is another install's `git-strata` (say, of the commit before: `git worktree add` it,
then `python -m venv` and `pip install` it there); the install running this script is "after".
One remote served by `git daemon` on 127.0.0.1 (or git's smart HTTP: see sync.py), a writer
clone that pushes 100 edited memories before every sync, and one reader (a git-strata memory
repository) that the two installs sync in turn, in random order each sample. Prints each
install's median and mean, their difference, and the CPU time each sync took (user + system of
the processes it waited for: the sync and its git, and over HTTP the server's `git http-backend`
too). On two cores shared with the server a round's time follows its CPU time, and CPU time
drifts less from run to run than wall time.
"""

from __future__ import annotations

import argparse
import random
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from sync import _edit, _serve, _time, build

from benchlib import BIN, hermetic_env, progress, sh


def run(before: str, memories: int, samples: int, transport: str = "daemon"
        ) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    tmp = Path(tempfile.mkdtemp(prefix="strata-bench-sync-ab-"))
    (tmp / "home").mkdir()
    env = hermetic_env(tmp / "home")
    progress(f"building {memories} memories")
    paths = build(tmp, memories, env)
    base, stop = _serve(paths["served"], transport, env)
    installs = {"before": before, "after": str(BIN / "git-strata")}
    times: dict[str, list[float]] = {label: [] for label in installs}
    cpu: dict[str, list[float]] = {label: [] for label in installs}
    try:
        url = f"{base}/strata.git"
        for name in ("reader", "writer"):
            sh(["git", "clone", "-q", url, str(tmp / name)], tmp, env)
        sh([installs["after"], "init"], tmp / "reader", env)
        sh([installs["after"], "sync"], tmp / "reader", env)
        names = sorted(str(p.relative_to(tmp / "seed")) for p in (tmp / "seed" / "active").rglob("*.md"))
        rng = random.Random(7)
        for i in range(samples + 1):  # the first sample warms caches and is dropped
            order = list(installs)
            rng.shuffle(order)
            for label in order:
                progress(f"sample {i}/{samples}: {label}")
                start = rng.randrange(len(names) - 100)
                sh(["git", "pull", "-q", "--rebase"], tmp / "writer", env)
                _edit(tmp / "writer", env, names[start:start + 100], f"{i}-{label}-{time.time_ns()}")
                sh(["git", "push", "-q"], tmp / "writer", env)
                before_cpu = _cpu()
                elapsed = _time([installs[label], "sync"], tmp / "reader", env)
                if i:
                    times[label].append(elapsed)
                    cpu[label].append(_cpu() - before_cpu)
    finally:
        stop()
    return times, cpu


def _cpu() -> float:
    """ms of user + system time of this process's ended children, and of its own threads (the
    HTTP server's)."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN), resource.getrusage(resource.RUSAGE_SELF)
    return sum(u.ru_utime + u.ru_stime for u in used) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--before", required=True, help="the other install's git-strata")
    parser.add_argument("--memories", type=int, default=2000)
    parser.add_argument("--samples", type=int, default=25)
    parser.add_argument("--transport", choices=("daemon", "http"), default="daemon")
    args = parser.parse_args()
    times, cpu = run(args.before, args.memories, args.samples, args.transport)
    print(f"sync bringing 100 changed memories over {args.transport}, {args.memories} memories, "
          f"{args.samples} samples each, in turns")
    for label, found in times.items():
        print(f"{label:<8} median {statistics.median(found):7.1f} ms   mean {statistics.mean(found):7.1f} ms   "
              f"CPU median {statistics.median(cpu[label]):7.1f} ms")
    change = statistics.median(times["after"]) - statistics.median(times["before"])
    spent = statistics.median(cpu["after"]) - statistics.median(cpu["before"])
    print(f"after - before: {change:+.1f} ms, CPU {spent:+.1f} ms (medians)")


if __name__ == "__main__":
    main()
