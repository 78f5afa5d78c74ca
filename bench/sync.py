"""`git strata sync` against plain `git pull --rebase && git push`, over `git daemon` or smart HTTP.

    bash scripts/setup.sh bench
    .venv/bin/python bench/sync.py [--memories 2000] [--samples 7] [--transport daemon|http] [--json]

Two identical remotes are served by one `git daemon` (or, with `--transport http`, by `git
http-backend` behind a small HTTP server on 127.0.0.1: git's smart HTTP, as hosted services speak
it): one for git-strata, one for plain git. Each has a writer clone that pushes the same
changes to both, and a reader clone: `a` (a git-strata memory repository with its hooks) and `p`
(a plain clone, no hooks).
Every sample, in alternating order, times the same round on both:

- no change: nothing new on either side;
- bring 100: the writer pushed 100 edited memories, the reader brings them in;
- send 100: the reader committed 100 edited memories, and sends them;
- both 100: the writer pushed 100 edits and the reader committed 100 others
  (git-strata makes a merge commit; plain git rebases the local commit).

The goal is git-strata within 1.5x of plain git for each round.

`--machines N` first makes N-1 other machines share the git-strata remote: each is a
`git strata clone` that reads three memories and writes one, and syncs (its access ref, and its
memory on the branch), and holds a shadow ref of 20 records of its own; `a` then syncs them
all in before the rounds. A traced no-change sync (GIT_TRACE_PACKET) then counts what the
fetch negotiation sent: the refs the server listed, the wants and the haves.
"""

from __future__ import annotations

import argparse
import hashlib
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchlib import BIN, USER, emit, git_daemon, hermetic_env, progress, sh

GOAL = 1.5
ROUNDS = ("no change", "bring 100", "send 100", "both 100")




def _edit(clone: Path, env: dict, names: list[str], stamp: str) -> None:
    """Append a line to each memory and commit them all in one commit, as its user would (through
    git-strata's hooks where they are installed: they keep its indexes current). Not measured."""
    for name in names:
        with open(clone / name, "a", encoding="utf-8") as f:
            f.write(f"update {stamp}\n")
    sh(["git", "add", "--", *names], clone, env)
    sh(["git", "commit", "-q", "-m", f"edit {len(names)} ({stamp})"], clone, env)


def _time(cmd: list[str], cwd: Path, env: dict) -> float:
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, stdin=subprocess.DEVNULL, check=False)
    elapsed = (time.perf_counter() - start) * 1000
    if proc.returncode != 0:
        sys.exit(f"failed: {cmd}\n{proc.stdout.decode()}\n{proc.stderr.decode()}")
    return elapsed


def build(tmp: Path, memories: int, env: dict) -> dict[str, Path]:
    seed = tmp / "seed"
    sh([str(BIN / "git-strata"), "init", str(seed)], tmp, env)
    for i in range(memories):
        folder = seed / "active" / ("projects", "entities", "notes", "gtd")[i % 4]
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"m{i:05d}.md").write_text(f"---\ntitle: Memory {i}\n---\n# Memory {i}\n\n"
                                             f"Fact {i}: {'detail ' * (5 + i % 20)}\n")
    sh(["git", "add", "active"], seed, env)
    sh(["git", "-c", "core.hooksPath=/dev/null", "commit", "-q", "-m", "seed"], seed, env)
    served = tmp / "served"
    served.mkdir()
    for kind in ("strata", "plain"):
        sh(["git", "clone", "-q", "--bare", str(seed), str(served / f"{kind}.git")], tmp, env)
    return {"seed": seed, "served": served}


def _machines(tmp: Path, url: str, count: int, names: list[str], env: dict) -> None:
    """count other machines on the remote, each with its access ref, shadow ref and one memory."""
    strata = str(BIN / "git-strata")
    for k in range(count):
        progress(f"machine {k + 1}/{count}")
        clone = tmp / "machines" / f"m{k:02d}"
        sh([strata, "clone", url, str(clone)], tmp, env)
        for name in names[k * 3:k * 3 + 3]:
            sh([strata, "read", name[len("active/"):-3]], clone, env)
        sh([strata, "write", f"machines/m{k:02d}", "-m", f"Machine {k} was here."], clone, env)
        _shadow_records(clone, [clone / n for n in names[k * 20:k * 20 + 20]])
        sh([strata, "sync"], clone, env)


def _shadow_records(clone: Path, files: list[Path]) -> None:
    """Shadow records of `files` on the clone's own shadow ref, as its janitor would write them."""
    from strata_git.gitio.git import discover
    from strata_git.store import records

    made = {}
    for path in files:
        raw = path.read_bytes()
        blob = hashlib.sha1(b"blob %d\0" % len(raw) + raw).hexdigest()
        made[blob] = records.make(raw, blob)
    records.write(discover(str(clone)), made, USER)


def _negotiation(clone: Path, env: dict) -> dict[str, int]:
    """What one no-change `git strata sync` sent and received in the fetch: packet lines by kind."""
    trace = clone.parent / "packet.trace"
    trace.unlink(missing_ok=True)
    sh([str(BIN / "git-strata"), "sync"], clone, {**env, "GIT_TRACE_PACKET": str(trace)})
    lines = trace.read_text(errors="replace").splitlines() if trace.exists() else []
    # `fetch<`/`fetch>` over git daemon; over smart HTTP git-remote-http reads the ref list (`git<`)
    # and fetch-pack sends the rest (`fetch-pack>`).
    fetch = [line for line in lines if any(f" {who}{way} " in line for who in ("fetch", "git", "fetch-pack")
                                           for way in "<>")]
    listed = sum(1 for line in fetch if ("fetch< " in line or "git< " in line) and " refs/" in line)
    return {"packet_lines": len(fetch), "refs_listed": listed,
            "wants": sum(1 for line in fetch if "> want " in line),
            "haves": sum(1 for line in fetch if "> have " in line),
            "ref_prefixes": sum(1 for line in fetch if "> ref-prefix " in line)}


def _serve(served: Path, transport: str, env: dict) -> tuple[str, Callable[[], None]]:
    """(the base url, how to stop it) of a server of the bare remotes under `served`."""
    if transport == "http":
        sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
        from helpers.smarthttp import SmartHttp

        for remote in served.iterdir():  # pushes over HTTP (a hosted service's accounts)
            sh(["git", "config", "http.receivepack", "true"], remote, env)
        server = SmartHttp(served)
        return f"http://127.0.0.1:{server.port}", server.stop
    daemon, port = git_daemon(served)

    def stop() -> None:
        daemon.terminate()
        daemon.wait()

    return f"git://127.0.0.1:{port}", stop


def run(memories: int, samples: int, machines: int = 1, transport: str = "daemon") -> dict:
    tmp = Path(tempfile.mkdtemp(prefix="strata-bench-sync-"))
    (tmp / "home").mkdir()
    env = hermetic_env(tmp / "home")
    progress(f"building {memories} memories")
    paths = build(tmp, memories, env)
    base, stop = _serve(paths["served"], transport, env)
    try:
        url = {kind: f"{base}/{kind}.git" for kind in ("strata", "plain")}
        for name, kind in (("a", "strata"), ("wa", "strata"), ("p", "plain"), ("wp", "plain")):
            sh(["git", "clone", "-q", url[kind], str(tmp / name)], tmp, env)
        sh([str(BIN / "git-strata"), "init"], tmp / "a", env)  # hooks, machine id
        sh([str(BIN / "git-strata"), "sync"], tmp / "a", env)
        sh(["git", "pull", "-q", "--rebase"], tmp / "p", env)
        names = sorted(str(p.relative_to(tmp / "seed")) for p in (tmp / "seed" / "active").rglob("*.md"))
        if machines > 1:
            _machines(tmp, url["strata"], machines - 1, names, env)
            sh([str(BIN / "git-strata"), "sync"], tmp / "a", env)
            sh(["git", "pull", "-q", "--rebase"], tmp / "wa", env)
            for reader in ("p", "wp"):  # plain git gets the same commits on its branch
                sh(["git", "pull", "-q", "--rebase"], tmp / reader, env)
        strata_cmd = [str(BIN / "git-strata"), "sync"]
        plain_cmd = ["sh", "-c", "git pull -q --rebase && git push -q"]
        times: dict[str, dict[str, list[float]]] = {r: {"git-strata": [], "plain git": []} for r in ROUNDS}
        for i in range(samples + 1):  # the first sample warms caches and is dropped
            for round_ in ROUNDS:
                progress(f"sample {i}/{samples}: {round_}")
                theirs = names[(i * 200) % len(names):][:100]
                mine = names[(i * 200 + 100) % len(names):][:100]
                stamp = f"{i}-{round_}"
                if round_ in ("bring 100", "both 100"):
                    for writer in ("wa", "wp"):
                        sh(["git", "pull", "-q", "--rebase"], tmp / writer, env)
                        _edit(tmp / writer, env, theirs, stamp)
                        sh(["git", "push", "-q"], tmp / writer, env)
                if round_ in ("send 100", "both 100"):
                    for reader in ("a", "p"):
                        _edit(tmp / reader, env, mine, stamp + "-local")
                order = [("git-strata", "a", strata_cmd), ("plain git", "p", plain_cmd)]
                for label, reader, cmd in (order if i % 2 else order[::-1]):
                    elapsed = _time(cmd, tmp / reader, env)
                    if i:
                        times[round_][label].append(elapsed)
        same = sh(["git", "rev-parse", "HEAD^{tree}"], tmp / "a", env) == sh(["git", "rev-parse", "HEAD^{tree}"],
                                                                                 tmp / "p", env)
        negotiation = _negotiation(tmp / "a", env)
        refs = len(sh(["git", "ls-remote", url["strata"]], tmp, env).splitlines())
    finally:
        stop()
    shown = {"daemon": "git daemon on 127.0.0.1", "http": "smart HTTP (git http-backend) on 127.0.0.1"}[transport]
    result = {"memories": memories, "samples": samples, "transport": shown,
              "machines": machines, "refs_on_remote": refs, "negotiation": negotiation,
              "same_tree_at_the_end": same and machines == 1, "rounds": {}}
    for round_, by in times.items():
        s, p = statistics.median(by["git-strata"]), statistics.median(by["plain git"])
        result["rounds"][round_] = {"git_strata_ms": round(s, 1), "plain_git_ms": round(p, 1),
                                    "ratio": round(s / p, 2), "goal": GOAL, "met": s / p <= GOAL}
    result["folder"] = str(tmp)
    return result


def report(result: dict) -> None:
    print(f"sync over {result['transport']}, {result['memories']} memories, {result['machines']} machine(s) "
          f"({result['refs_on_remote']} refs on the remote), median of {result['samples']} samples")
    print(f"{'round':<12}{'git strata sync':>18}{'pull --rebase && push':>24}{'ratio':>8}  goal <= {GOAL}x")
    for round_, r in result["rounds"].items():
        print(f"{round_:<12}{r['git_strata_ms']:>15.1f} ms{r['plain_git_ms']:>21.1f} ms{r['ratio']:>7.2f}x  "
              f"{'met' if r['met'] else 'MISSED'}")
    n = result["negotiation"]
    print(f"a no-change sync's fetch: {n['packet_lines']} packet lines, {n['refs_listed']} refs listed, "
          f"{n['ref_prefixes']} ref prefixes asked, {n['wants']} wants, {n['haves']} haves")
    if result["machines"] == 1:
        print(f"trees equal at the end: {result['same_tree_at_the_end']}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--memories", type=int, default=2000)
    parser.add_argument("--samples", type=int, default=7)
    parser.add_argument("--machines", type=int, default=1, help="machines sharing the remote (see above)")
    parser.add_argument("--transport", choices=("daemon", "http"), default="daemon")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    result = run(args.memories, args.samples, args.machines, args.transport)
    emit(result, args.json, report, result["folder"])


if __name__ == "__main__":
    main()
