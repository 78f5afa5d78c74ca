"""Would pygit2 (libgit2 in-process) read objects faster than the git CLI does for git-strata?

    bash scripts/setup.sh bench
    .venv/bin/python bench/pygit2_reads.py [--records 5000] [--samples 15] [--json]

A repository holds `--records` shadow-record-sized blobs (about 400 bytes of JSON each, as
records.py writes them) on a ref, as the shadow index does. Measured, in one run, interleaved:

- **bulk**: every record read, as `records.load` reads them when the shadow index is built or
  refreshed: `Repo.objects` (one `git cat-file --batch` process, what the code does) against
  pygit2 reading each blob in-process (the repository opened once, as a long-running server
  would keep it);
- **one**: a single object read, what the MCP server or `serve` does per request for one
  memory: `Repo.objects([oid])` (a cat-file process per call) against pygit2's lookup;
- **start**: what pygit2 costs a fresh process before its first read (import and open), which
  every CLI command and hook would pay.

The issue's bar: adopt pygit2 where it is at least 1.5x faster, otherwise say why not. It is
adopted (gitio/git.py `Repo.objects`) where it cleared that bar: in the MCP server and `serve`,
and for BULK objects or more in any command. The rows "Repo.objects ..." measure it as adopted.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchlib import emit, hermetic_env, progress, sh


def build(root: Path, count: int, env: dict) -> list[str]:
    sh(["git", "init", "-q", str(root)], root.parent, env)
    rng = random.Random(7)
    words = [f"w{i}" for i in range(3000)]
    payload = "".join(json.dumps({"v": 2, "b": f"{rng.getrandbits(160):040x}", "s": rng.randint(300, 3000),
                                  "t": f"Memory {i}", "y": "note", "g": [], "p": "preview " * 20,
                                  "w": " ".join(sorted(set(rng.choices(words, k=40))))}) + "\n"
                      for i in range(count))
    out = subprocess.run(["git", "hash-object", "-w", "--stdin-paths"], cwd=root, env=env, check=True,
                         capture_output=True, input="".join(_files(root, payload)).encode())
    return out.stdout.decode().split()


def _files(root: Path, payload: str):
    folder = root.parent / "records"
    folder.mkdir()
    for i, line in enumerate(payload.splitlines()):
        path = folder / f"{i}.json"
        path.write_text(line + "\n")
        yield f"{path}\n"


def ms(fn) -> float:
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1000


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--records", type=int, default=5000)
    p.add_argument("--samples", type=int, default=15)
    p.add_argument("--json", action="store_true")
    args = p.parse_args()
    try:
        import pygit2
    except ImportError:
        sys.exit("pygit2 is not installed: .venv/bin/pip install pygit2")
    from strata_git.gitio import git as gitio
    from strata_git.gitio.git import discover

    with tempfile.TemporaryDirectory(prefix="strata-pygit2-") as tmp:
        (Path(tmp) / "home").mkdir()
        env = hermetic_env(Path(tmp) / "home")
        os.environ.update(env)
        root = Path(tmp) / "repo"
        root.mkdir()
        progress(f"writing {args.records} records")
        oids = build(root, args.records, env)
        sh(["git", "repack", "-adq"], root, env)  # records live in packs, as after a fetch
        repo = discover(str(root))
        lib = pygit2.Repository(str(root))
        one = oids[len(oids) // 2]
        assert repo.objects([one])[0] == lib[one].data

        def cli(names: list[str]) -> float:  # Repo.objects through `git cat-file --batch`, as before
            bulk, gitio.BULK = gitio.BULK, 1 << 30
            try:
                return ms(lambda: repo.objects(names))
            finally:
                gitio.BULK = bulk

        def server(names: list[str]) -> float:  # Repo.objects in a process that called use_libgit2()
            keep, gitio._KEEP = gitio._KEEP, True
            try:
                return ms(lambda: repo.objects(names))
            finally:
                gitio._KEEP = keep

        rows: dict[str, list[float]] = {k: [] for k in (
            "bulk: git cat-file --batch", "bulk: pygit2", "bulk: Repo.objects (libgit2 from BULK)",
            "one: git cat-file --batch", "one: pygit2", "one: Repo.objects in a server")}
        for i in range(args.samples):
            progress(f"sample {i + 1}/{args.samples}")
            rows["bulk: git cat-file --batch"].append(cli(oids))
            rows["bulk: pygit2"].append(ms(lambda: [lib[o].data for o in oids]))
            rows["bulk: Repo.objects (libgit2 from BULK)"].append(ms(lambda: repo.objects(oids)))
            rows["one: git cat-file --batch"].append(cli([one]))
            rows["one: pygit2"].append(ms(lambda: lib[one].data))
            rows["one: Repo.objects in a server"].append(server([one]))
        start_cmd = [sys.executable, "-c", f"import pygit2; pygit2.Repository({str(root)!r})[{one!r}].data"]
        bare_cmd = [sys.executable, "-c", "pass"]
        starts = {"python -c pass": [], "python: import pygit2, open, read one": []}
        for _ in range(args.samples):
            starts["python -c pass"].append(ms(lambda: subprocess.run(bare_cmd, check=True)))
            starts["python: import pygit2, open, read one"].append(ms(lambda: subprocess.run(start_cmd, check=True)))
    med = {k: round(statistics.median(v), 3) for k, v in {**rows, **starts}.items()}
    out = {"records": args.records, "samples": args.samples, "pygit2": pygit2.__version__,
           "libgit2": pygit2.LIBGIT2_VERSION, "median_ms": med,
           "speedup_bulk": round(med["bulk: git cat-file --batch"] / med["bulk: pygit2"], 2),
           "speedup_one": round(med["one: git cat-file --batch"] / med["one: pygit2"], 2),
           "speedup_bulk_adopted": round(med["bulk: git cat-file --batch"]
                                         / med["bulk: Repo.objects (libgit2 from BULK)"], 2),
           "speedup_one_adopted": round(med["one: git cat-file --batch"] / med["one: Repo.objects in a server"], 2),
           "start_cost_ms": round(med["python: import pygit2, open, read one"] - med["python -c pass"], 1)}

    def report(o: dict) -> None:
        print(f"{o['records']} records, {o['samples']} samples, pygit2 {o['pygit2']} (libgit2 {o['libgit2']})")
        for k, v in o["median_ms"].items():
            print(f"  {k:<42} {v:>10.3f} ms")
        print(f"pygit2 against the CLI: bulk {o['speedup_bulk']}x, one object {o['speedup_one']}x; "
              f"a fresh process pays {o['start_cost_ms']} ms to import it and open the repository")
        print(f"Repo.objects as adopted against the CLI: bulk {o['speedup_bulk_adopted']}x, "
              f"one object in a server {o['speedup_one_adopted']}x")

    emit(out, args.json, report)


if __name__ == "__main__":
    main()
