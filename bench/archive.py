"""The archive tier at scale: 5,000 active and 50,000 archived memories.

    bash scripts/setup.sh bench
    .venv/bin/python bench/archive.py [--active 5000] [--archived 50000] [--json]

Builds the repository with the real janitor (memories of 150-900 words, 1-6 KB, drawn from a
Zipf law over 20,000 made-up words; the archived ones written in ten batches, so ten archive
commits of 5,000 each write their shadow records), serves a bare
remote with `git daemon` on 127.0.0.1, and prints, each beside its baseline from the
same run:

- search p50/p95 in-process (`Vault.search`, one-shot: a stat of every live file first; and
  watched, as `git strata mcp` runs it: inotify), and end to end (`git strata search`), against
  `git grep -i` over the same text (before pruning, when it is all on disk);
- the full shadow rebuild from history and records, and the incremental update after one commit;
- the shadow index (the catalog without its live rows) and the shadow records (raw, and packed
  alone) against the raw bytes of the archived memories;
- the size of `.git` after `git strata archive` against a fresh `git strata clone` and a plain
  `git clone --filter=blob:none --sparse` of the same remote;
- rehydrating 200 archived memories over `git daemon` on a fresh `git strata clone`;
- `git strata reindex` upgrading every archived memory to a full record over `git daemon` (the
  shadow refs deleted on that clone, as in a repository archived before records existed).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchlib import BIN, hermetic_env, progress, sh, timed

DAY = 86400
NOW = 1_800_000_000
WORDS = ("alpha bravo cobalt delta ember falcon garnet harbor indigo juniper kestrel lantern meadow nimbus "
         "orchid pylon quartz raven saffron tundra umber violet willow xenon yarrow zephyr anchor beacon "
         "canyon drift estuary fjord glacier horizon island jetty knoll lagoon mesa notch oasis prairie "
         "quarry ridge savanna terrace upland valley wharf").split()


def vocabulary(rng: random.Random, size: int = 20000) -> tuple[list[str], list[float]]:
    """Made-up words with Zipf weights (1/rank), as word counts in real prose fall off."""
    syllables = ["ka", "lo", "mi", "ner", "os", "pra", "qui", "ret", "sa", "tul", "ven", "wy", "zo", "an", "el"]
    words = sorted({"".join(rng.choice(syllables) for _ in range(rng.randint(1, 4))) for _ in range(size * 2)})
    rng.shuffle(words)
    words = words[:size]
    return words, [1 / (rank + 1) for rank in range(len(words))]


VOCAB = vocabulary(random.Random(11))


def text(rng: random.Random, i: int) -> str:
    """A memory of about 1-6 KB of prose-like text (150-900 words in lines of 12), with one marker."""
    words = rng.choices(VOCAB[0], VOCAB[1], k=rng.randint(150, 900))
    lines = "\n".join(" ".join(words[j:j + 12]) for j in range(0, len(words), 12))
    return (f"---\ntitle: Note {i} {rng.choice(WORDS)}\ntags: [{rng.choice(WORDS)}]\n---\n# Note {i}\n\n"
            f"Marker mk{i:06d}. {rng.choice(WORDS)}\n{lines}\n")


def du(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file() and not f.is_symlink())


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return round(values[min(len(values) - 1, int(q * len(values)))], 2)


def build(root: Path, active: int, archived: int, env: dict[str, str], rng: random.Random,
          before_janitor: Callable[[Path], None] | None = None) -> None:
    """The repository: `archived` memories in ten batches, each cooled and archived by the janitor,
    then `active` live ones (`before_janitor` runs once every batch is committed)."""
    from strata_git.app.init import init
    from strata_git.app.vault import Vault

    init(str(root))
    batches = 10
    per = archived // batches
    n = 0
    for b in range(batches):
        progress(f"writing batch {b + 1}/{batches} of archived memories")
        folder = root / "active" / f"b{b:02d}"
        for k in range(per):
            sub = folder / f"{k % 64:02x}"
            sub.mkdir(parents=True, exist_ok=True)
            (sub / f"m{n:06d}.md").write_text(text(rng, n))
            n += 1
        stamp = f"@{NOW - (1200 - b * 100) * DAY} +0000"  # 100 days apart: the janitor takes one at a time
        sh(["git", "add", "active"], root, env)
        sh(["git", "-c", "core.hooksPath=/dev/null", "commit", "-q", "-m", f"batch {b}"], root,
           {**env, "GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_DATE": stamp})
    if before_janitor:
        before_janitor(root)
    vault = Vault.open(str(root))
    for b in range(batches):  # one cycle cools batch b, the next archives it: 5,000 per commit
        progress(f"janitor: batch {b + 1}/{batches}")
        vault.janitor(now=NOW - (1200 - b * 100 - 35) * DAY)
        vault.janitor(now=NOW - (1200 - b * 100 - 95) * DAY)
    progress("writing the active memories")
    folder = root / "active" / "live"
    for k in range(active):
        sub = folder / f"{k % 64:02x}"
        sub.mkdir(parents=True, exist_ok=True)
        (sub / f"m{n:06d}.md").write_text(text(rng, n))
        n += 1
    sh(["git", "add", "active"], root, env)
    sh(["git", "-c", "core.hooksPath=/dev/null", "commit", "-q", "-m", "active memories"], root, env)
    vault.index()


def arguments(doc: str, samples: int) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--active", type=int, default=5000)
    parser.add_argument("--archived", type=int, default=50000)
    parser.add_argument("--samples", type=int, default=samples)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder (its path is printed)")
    return parser.parse_args()


def scaled(tmp_path: Path, args: argparse.Namespace, rng: random.Random, out: dict,
           before_janitor: Callable[[Path], None] | None = None) -> tuple[Path, dict[str, str]]:
    """The built repository under `tmp_path` (this process's environment made hermetic) and its env."""
    home = tmp_path / "home"
    home.mkdir()
    env = hermetic_env(home)
    os.environ.clear()
    os.environ.update(env)
    root = tmp_path / "mem"
    started = time.perf_counter()
    build(root, args.active, args.archived, env, rng, before_janitor)
    out["build_s"] = round(time.perf_counter() - started, 1)
    return root, env


@contextmanager
def workspace(prefix: str, keep: bool) -> Iterator[Path]:
    """A temporary folder, removed afterwards unless `keep` (then its path is printed)."""
    tmp_path = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        yield tmp_path
    finally:
        if keep:
            print(f"kept: {tmp_path}", file=sys.stderr)
        else:
            shutil.rmtree(tmp_path, ignore_errors=True)


def main() -> None:
    args = arguments(__doc__, samples=200)
    rng = random.Random(5)
    out: dict = {"active": args.active, "archived": args.archived}
    with workspace("strata-bench-", args.keep) as tmp_path:
        root, env = scaled(tmp_path, args, rng, out)
        from strata_git.app.vault import Vault
        from strata_git.store import shadow

        vault = Vault.open(str(root))
        archived_names = [e.name[:-3] for e in vault.list(tier="archive")]
        active_names = [e.name[:-3] for e in vault.list(tier="active")]
        out["tiers"] = {"active": len(active_names), "archive": len(archived_names)}

        # -- search, with git grep -i over the same text as the baseline --------------------------
        def marker(name: str) -> str:
            return "mk" + name.rsplit("/m", 1)[1]

        queries = [f"{marker(rng.choice(archived_names))} {rng.choice(WORDS)}" for _ in range(25)] + \
                  [f"{marker(rng.choice(active_names))} {rng.choice(WORDS)}" for _ in range(25)]
        vault.search("warm up")
        found = sum(1 for q in queries if marker_hit(vault.search(q, limit=5), q))
        inproc = search_ms(vault, queries, args.samples)
        vault.watch_files()  # as `git strata mcp` does: inotify instead of a stat of every file
        vault.search("warm up")
        watched = search_ms(vault, queries, args.samples)
        vault.watch.close()
        vault.watch = None
        cli = [timed([str(BIN / "git-strata"), "search", q, "--json"], root, env) for q in queries[:30]]
        grep = [timed(["git", "grep", "-i", "-q", "-e", q.split()[0], "--", "active", "cooled", "archive"], root, env)
                for q in queries[:30]]
        out["search"] = {"in_process_p50_ms": pct(inproc, 0.5), "in_process_p95_ms": pct(inproc, 0.95),
                         "watched_p50_ms": pct(watched, 0.5), "watched_p95_ms": pct(watched, 0.95),
                         "cli_p50_ms": pct(cli, 0.5), "cli_p95_ms": pct(cli, 0.95),
                         "git_grep_i_p50_ms": pct(grep, 0.5), "marker_found_in_top5": f"{found}/{len(queries)}"}

        # -- shadow index: full rebuild and incremental ---------------------------------------------
        t0 = time.perf_counter()
        rows = shadow.build(vault.repo, vault.repo.head())
        full = time.perf_counter() - t0
        cli_rebuild = timed([str(BIN / "git-strata"), "reindex"], root, env) / 1000
        incr = []
        for i in range(10):
            vault.write(f"live/extra{i}", f"# extra {i}\n\nmore text {i}\n".encode())
            t0 = time.perf_counter()
            shadow.refresh(vault.repo)  # write() does not touch it: this brings it one commit forward
            incr.append((time.perf_counter() - t0) * 1000)
        out["shadow"] = {"rows": rows, "full_rebuild_s": round(full, 2), "reindex_cli_s": round(cli_rebuild, 2),
                         "incremental_per_commit_ms_median": round(statistics.median(incr), 1)}

        # -- prune, against a fresh filtered clone ---------------------------------------------------
        served = tmp_path / "served"
        served.mkdir()
        sh(["git", "init", "-q", "--bare", "-b", "main", str(served / "mem.git")], tmp_path, env)
        for key in ("uploadpack.allowFilter", "uploadpack.allowAnySHA1InWant"):
            sh(["git", "config", key, "true"], served / "mem.git", env)
        port = free_port()
        daemon = subprocess.Popen(["git", "daemon", "--reuseaddr", f"--base-path={served}", "--export-all",
                                   "--enable=receive-pack", "--listen=127.0.0.1", f"--port={port}", str(served)],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        try:
            time.sleep(0.5)
            url = f"git://127.0.0.1:{port}/mem.git"
            sh(["git", "remote", "add", "origin", url], root, env)
            before = du(root / ".git")
            progress("git strata archive")
            t0 = time.perf_counter()
            sh([str(BIN / "git-strata"), "archive"], root, env)
            archive_s = time.perf_counter() - t0
            sh(["git", "gc", "-q"], root, env)
            after = du(root / ".git")
            fresh = tmp_path / "fresh"
            sh(["git", "clone", "-q", "--filter=blob:none", "--sparse", url, str(fresh)], tmp_path, env)
            sh(["git", "sparse-checkout", "set", "--no-cone", "/*", "!/archive/"], fresh, env)
            sh(["git", "gc", "-q"], fresh, env)
            fresh_size = du(fresh / ".git")
            objects = du(root / ".git/objects")
            out["prune"] = {"archive_cli_s": round(archive_s, 1), "git_before_mib": mib(before),
                            "git_after_mib": mib(after), "fresh_filtered_clone_mib": mib(fresh_size),
                            "ratio_to_fresh_clone": round(after / fresh_size, 2),
                            "objects_after_mib": mib(objects), "fresh_objects_mib": mib(du(fresh / ".git/objects")),
                            "objects_ratio": round(objects / du(fresh / ".git/objects"), 2),
                            "derived_indexes_mib": {f.name: mib(f.stat().st_size)
                                                    for f in (root / ".git/strata").glob("*.sqlite")}}

            # -- rehydrate 200 over git daemon on a fresh git strata clone ----------------------------
            laptop = tmp_path / "laptop"
            t0 = time.perf_counter()
            sh([str(BIN / "git-strata"), "clone", url, str(laptop)], tmp_path, env)
            clone_s = time.perf_counter() - t0
            sh(["git", "gc", "-q"], laptop, env)
            laptop_before = du(laptop / ".git")
            out["prune"] |= {"fresh_strata_clone_mib": mib(laptop_before),
                             "ratio_to_fresh_strata_clone": round(after / laptop_before, 2)}
            out["shadow"] |= shadow_sizes(root, tmp_path, env)
            picked = rng.sample(archived_names, 200)
            t0 = time.perf_counter()
            sh([str(BIN / "git-strata"), "recall", *picked], laptop, env)
            recall_s = time.perf_counter() - t0
            out["rehydrate"] = {"strata_clone_s": round(clone_s, 1), "recall_200_s": round(recall_s, 2),
                                "laptop_git_mib": mib(du(laptop / ".git"))}
            out["upgrade"] = upgrade_all(laptop, env)
        finally:
            daemon.terminate()
            daemon.wait()
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        for key, value in out.items():
            print(f"{key}: {value}")


def shadow_sizes(root: Path, tmp_path: Path, env: dict[str, str]) -> dict:
    """The shadow index's bytes (the catalog with every live row removed, compacted, vacuumed) and the
    records' bytes (raw, and packed alone in a scratch repository), each against the raw bytes of the
    archived memories they cover."""
    import sqlite3

    from strata_git.gitio.git import discover
    from strata_git.store import catalog, shadow

    repo = discover(str(root))
    archived_raw = sum(r.size for r in shadow.all_rows(repo))
    copy = tmp_path / "shadow-only.sqlite"
    shutil.copy(root / ".git/strata/catalog.sqlite", copy)
    db = sqlite3.connect(copy)
    with db:
        for i, cols in db.execute("SELECT id, cols FROM live_docs").fetchall():
            db.execute("INSERT INTO docs (docs, rowid, title, tags, body) VALUES ('delete', ?, ?, ?, ?)",
                       (i, *catalog.unpack(cols)))
        db.execute("DELETE FROM live_docs")
        db.execute("DELETE FROM memories")
        db.execute("INSERT INTO docs (docs) VALUES ('optimize')")
    db.execute("VACUUM")
    db.close()
    index = copy.stat().st_size
    scratch = tmp_path / "records.git"
    sh(["git", "init", "-q", "--bare", str(scratch)], tmp_path, env)
    sh(["git", "push", "-q", str(scratch), "refs/strata/shadow/*:refs/strata/shadow/*"], root, env)
    raw = sum(int(line.split()[3]) for line in sh(["git", "ls-tree", "-r", "-l", "--full-tree", "--",
                                                   *sh(["git", "for-each-ref", "--format=%(refname)"], scratch, env)
                                                   .split()], scratch, env).splitlines())
    sh(["git", "repack", "-adq"], scratch, env)
    packed = du(scratch / "objects/pack")
    return {"archived_raw_mib": mib(archived_raw), "index_mib": mib(index),
            "index_ratio_to_archived": round(index / archived_raw, 2), "records_raw_mib": mib(raw),
            "records_packed_mib": mib(packed), "records_packed_ratio_to_archived": round(packed / archived_raw, 2),
            "catalog_total_mib": mib((root / ".git/strata/catalog.sqlite").stat().st_size)}


def upgrade_all(laptop: Path, env: dict[str, str]) -> dict:
    """Every archived memory without a record (the shadow refs deleted here, as in a repository whose
    archive predates records): `git strata reindex` fetches every blob over `git daemon` in one
    batch and writes every record."""
    for ref in sh(["git", "for-each-ref", "--format=%(refname)", "refs/strata-remotes/", "refs/strata/shadow/"],
                  laptop, env).split():
        if "/shadow/" in ref:
            sh(["git", "update-ref", "-d", ref], laptop, env)
    (laptop / ".git/strata/catalog.sqlite").unlink()
    sh([str(BIN / "git-strata"), "status"], laptop, env)  # the index now finds them by name only
    t0 = time.perf_counter()
    done = json.loads(sh([str(BIN / "git-strata"), "reindex", "--json"], laptop, env))
    return {"reindex_s": round(time.perf_counter() - t0, 1), "upgraded": done["upgraded"],
            "not_upgraded": len(done["not_upgraded"])}


def search_ms(vault, queries: list[str], samples: int) -> list[float]:
    """Milliseconds of `samples` in-process searches, cycling through `queries`."""
    out = []
    for i in range(samples):
        t0 = time.perf_counter()
        vault.search(queries[i % len(queries)], limit=10)
        out.append((time.perf_counter() - t0) * 1000)
    return out


def marker_hit(hits: list, query: str) -> bool:
    return any(h.name.endswith("/m" + query.split()[0][2:]) for h in hits)


def mib(n: int) -> float:
    return round(n / 1024 / 1024, 1)


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


if __name__ == "__main__":
    main()
