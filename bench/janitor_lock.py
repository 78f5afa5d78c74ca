"""Does the janitor get the repository lock while writers keep it busy?

    .venv/bin/python bench/janitor_lock.py [--writers 4] [--rate 5] [--tries 100] [--blocks 4] [--json]

Makes a memory repository with `git strata init` (and `--memories` committed memories), starts
`--writers` writer processes that each write a memory through the Python API `--rate` times a
second (on a fixed schedule: one that falls behind goes again at once, never in a burst), and
meanwhile tries a janitor cycle `--tries` times in this process, a quarter second apart. Each
try is the cycle's work (janitor.run: recover, flush the access records, plan, apply) under the
lock, as janitor.cycle takes it. Two phases, in one run, on the same repository, in alternating
blocks (`--blocks`, fresh writers each) so that machine noise falls on both alike:

- before: the lock as it was: writers poll a non-blocking flock of .git/strata/lock every 50 ms,
  and the janitor tries it once (wait=0) and is refused if it is held;
- after: txn.locked as it is now: every waiter queues (lock.queue) and polls every 5 ms, and the
  janitor waits its turn up to txn.LOCK_WAIT (role "janitor": only another janitor refuses it).

Printed per phase: how many janitor tries got the lock within the wait, the wait (p50, p95, max,
over the tries that got it), and the writers' throughput and write latency (p50, p95: from the
call to its return, the lock wait included) while the janitor was being tried.
Goal: the janitor gets the lock in at least 99 of 100 tries, after.
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchlib import BIN, emit, hermetic_env, progress, sh

GOAL = 99  # per cent of the tries
PHASES = ("before", "after")


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    values = sorted(values)
    return round(values[min(len(values) - 1, int(q * len(values)))], 1)


@contextmanager
def old_locked(repo, wait: float = 30.0) -> Iterator[str]:
    """txn.locked as it was before the queue (commit b0a3aa7), for the `before` phase."""
    from strata_git.core import contract
    from strata_git.errors import Refused
    from strata_git.ops import txn

    fd = os.open(os.path.join(repo.state_dir(), contract.LOCK), os.O_RDWR | os.O_CREAT, 0o644)
    deadline = time.monotonic() + wait
    try:
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise Refused("another git-strata process (a janitor or a write) is changing this "
                                  "repository", "wait for it to finish, then try again") from None
                time.sleep(0.05)
        yield txn.recover(repo) if os.path.exists(os.path.join(repo.state_dir(), contract.JOURNAL)) else ""
    finally:
        os.close(fd)


def writer(root: str, phase: str, number: str, rate: str, stop: str, out: str) -> None:
    """One writer process: writes until `stop` exists, then leaves [start, ms, refused] per write in `out`."""
    from strata_git.app.vault import Vault
    from strata_git.errors import Refused
    from strata_git.ops import txn

    if phase == "before":
        txn.locked = old_locked  # memories.write takes the lock through the module attribute
    vault = Vault.open(root)
    period, due, done, k = 1 / float(rate), time.monotonic(), [], 0
    while not os.path.exists(stop):
        now = time.monotonic()
        if now < due:
            time.sleep(due - now)
        start = time.monotonic()
        refused = False
        try:
            vault.write(f"notes/writer-{number}-{k % 20}", f"# Writer {number}\n\nwrite {k}, {time.time()}\n".encode())
        except Refused:
            refused = True
        done.append((start, (time.monotonic() - start) * 1000, refused))
        k += 1
        due = max(due + period, time.monotonic() - period)  # behind: go again at once, but no burst
    with open(out, "w", encoding="utf-8") as f:
        json.dump(done, f)


def build(tmp: Path, memories: int, env: dict[str, str]) -> Path:
    root = tmp / "mem"
    sh([str(BIN / "git-strata"), "init", str(root)], tmp, env)
    for i in range(memories):
        folder = root / "active" / ("projects", "entities", "notes", "gtd")[i % 4]
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"m{i:04d}.md").write_text(f"---\ntitle: Memory {i}\n---\n# Memory {i}\n\nFact {i}.\n")
    sh(["git", "add", "active"], root, env)
    sh(["git", "commit", "-q", "-m", f"{memories} memories"], root, env)
    return root


def block(root: Path, env: dict[str, str], name: str, tries: int, args: argparse.Namespace, k: int) -> dict:
    """One block of `tries` janitor tries under fresh writers; the raw figures."""
    from strata_git.app.vault import Vault
    from strata_git.errors import Refused
    from strata_git.ops import janitor, txn

    tag = f"{name}-{k}"
    stop, outs = root.parent / f"stop-{tag}", [root.parent / f"writer-{tag}-{i}.json" for i in range(args.writers)]
    procs = [subprocess.Popen([sys.executable, __file__, "--writer", str(root), name, str(i), str(args.rate), str(stop),
                               str(out)], cwd=root, env=env, stdin=subprocess.DEVNULL) for i, out in enumerate(outs)]
    vault = Vault.open(str(root))
    time.sleep(2)  # the writers are up and writing
    got, waits, holds = 0, [], []
    began = time.monotonic()
    for n in range(tries):
        progress(f"{name}, block {k + 1}: janitor try {n + 1}/{tries}")
        start = time.monotonic()
        lock = old_locked(vault.repo, wait=0) if name == "before" else txn.locked(vault.repo, role="janitor")
        try:
            with lock:
                waits.append((time.monotonic() - start) * 1000)
                janitor.run(vault.repo, vault.cfg, dry_run=False)
                holds.append((time.monotonic() - start) * 1000 - waits[-1])
            got += 1
        except Refused:
            pass
        time.sleep(0.25)
    ended = time.monotonic()
    stop.touch()
    for proc in procs:
        if proc.wait(timeout=120) != 0:
            sys.exit(f"a writer failed in phase {name}")
    writes = [w for out in outs for w in json.loads(out.read_text()) if began <= w[0] < ended]
    return {"got": got, "waits": waits, "holds": holds, "seconds": ended - began,
            "ms": [w[1] for w in writes if not w[2]], "refused": sum(1 for w in writes if w[2])}


def summary(name: str, blocks: list[dict], args: argparse.Namespace) -> dict:
    from strata_git.ops import txn

    waits = [w for b in blocks for w in b["waits"]]
    ms = [m for b in blocks for m in b["ms"]]
    seconds = sum(b["seconds"] for b in blocks)
    return {"janitor_got_lock": sum(b["got"] for b in blocks), "tries": args.tries,
            "janitor_wait": "0 s (one try)" if name == "before" else f"{txn.LOCK_WAIT:g} s",
            "janitor_wait_ms": {"p50": pct(waits, 0.5), "p95": pct(waits, 0.95),
                                "max": round(max(waits), 1) if waits else None},
            "janitor_hold_ms_p50": pct([h for b in blocks for h in b["holds"]], 0.5),
            "writes_per_s": round(len(ms) / seconds, 1), "offered_per_s": args.writers * args.rate,
            "writes_refused": sum(b["refused"] for b in blocks),
            "write_ms": {"p50": pct(ms, 0.5), "p95": pct(ms, 0.95), "max": round(max(ms), 1) if ms else None},
            "seconds": round(seconds, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--writers", type=int, default=4)
    parser.add_argument("--rate", type=float, default=5, help="writes a second per writer")
    parser.add_argument("--tries", type=int, default=100)
    parser.add_argument("--blocks", type=int, default=4, help="the tries of each phase in this many blocks, "
                        "the phases' blocks alternating (machine noise falls on both alike)")
    parser.add_argument("--memories", type=int, default=200)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    out: dict = {"writers": args.writers, "rate": args.rate, "cores": os.cpu_count()}
    sizes = [args.tries // args.blocks + (k < args.tries % args.blocks) for k in range(args.blocks)]
    with tempfile.TemporaryDirectory(prefix="strata-bench-janitor-lock-") as tmp:
        env = hermetic_env(Path(tmp) / "home")
        os.environ.clear()
        os.environ.update(env)  # the janitor runs in this process
        root = build(Path(tmp), args.memories, env)
        blocks: dict[str, list[dict]] = {name: [] for name in PHASES}
        for k, size in enumerate(sizes):
            for name in PHASES:
                blocks[name].append(block(root, env, name, size, args, k))
        out["phases"] = {name: summary(name, found, args) for name, found in blocks.items()}
    out["goal_met"] = out["phases"]["after"]["janitor_got_lock"] >= GOAL * args.tries / 100
    emit(out, args.json, report)


def report(out: dict) -> None:
    print(f"{out['writers']} writers x {out['rate']:g} writes/s (Python API, one process each), {out['cores']} cores")
    for name, p in out["phases"].items():
        w, ms = p["janitor_wait_ms"], p["write_ms"]
        print(f"  {name:<6} janitor got the lock {p['janitor_got_lock']:>3}/{p['tries']} (wait {p['janitor_wait']}); "
              f"its wait p50 {w['p50']} / p95 {w['p95']} / max {w['max']} ms; it held the lock "
              f"p50 {p['janitor_hold_ms_p50']} ms")
        print(f"         writers {p['writes_per_s']}/s of {p['offered_per_s']:g} offered "
              f"({p['writes_refused']} refused); "
              f"write p50 {ms['p50']} / p95 {ms['p95']} / max {ms['max']} ms, over {p['seconds']} s")
    print(f"goal, the janitor gets the lock in >= {GOAL}% of its tries, after: "
          f"{'met' if out['goal_met'] else 'MISSED'}")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--writer"]:
        writer(*sys.argv[2:8])
    else:
        main()
