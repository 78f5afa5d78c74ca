"""Search by meaning at scale: 5,000 active + 50,000 archived memories with the semantic extra on.

The repository of bench/archive.py (memories of 150-900 made-up Zipf words, ten janitor batches
of 5,000 archived), with `search.model` set. Embedding all 55,000 memories would take hours on
two cores, so the archived ones' vectors are real vectors of other texts: `--sample` of them are
embedded and their vectors are given, in turn, to every memory about to be archived (in
meaning.sqlite, keyed by its blob, as reindex leaves them) before the janitor runs. The janitor
then carries them into the shadow records as it would any vectors, and searches read them back
from there: what a search reads and scores is what 55,000 embedded memories would give it; only
which archived memory ranks first means nothing. The active memories get lent vectors the same way
after they are committed (embedding 5,000 of these 1-6 KB memories takes over half an hour); what
embedding costs is printed from the sample: milliseconds per memory and pieces per memory.
The first search then reads every archived memory's vectors from its record (timed;
`reindex` would embed every active memory again).

Printed, each mode beside words in the same run: search p50/p95 in process (one-shot, as the CLI
and the Python API run it) and watched (as `git strata mcp` runs it), and end to end
(`git strata search`); the first search's time; meaning.sqlite, the vectors file and the catalog;
peak resident memory (this process, which also built everything, and the largest CLI search).

    .venv/bin/python scripts/model.py /tmp/minilm     # once
    .venv/bin/python bench/meaning_scale.py --model /tmp/minilm [--active 5000] [--archived 50000] [--json]
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from archive import WORDS, mib, pct, scaled, workspace

from benchlib import BIN, progress, sh, timed

MODES = ("words", "both", "meaning")


def arguments() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", required=True, help="a model folder (scripts/model.py makes one)")
    p.add_argument("--active", type=int, default=5000)
    p.add_argument("--archived", type=int, default=50000)
    p.add_argument("--sample", type=int, default=300, help="memories embedded to lend their vectors to the archived")
    p.add_argument("--samples", type=int, default=60, help="in-process searches per mode")
    p.add_argument("--json", action="store_true")
    p.add_argument("--keep", action="store_true", help="keep the temporary folder (its path is printed)")
    args = p.parse_args()
    args.model = str(Path(args.model).resolve())
    return args


def lend_vectors(model_folder: str, sample: int, out: dict):
    """A step (before the janitor, and again once the active memories are in): every memory under
    active/ that has none gets the vectors of one of `sample` embedded memories, in turn, as
    meaning.sqlite keeps them."""
    lent: list = []

    def lend(root: Path) -> None:
        from strata_git.gitio.git import discover
        from strata_git.store import meaning

        repo = discover(str(root))
        # the model set first: the janitor carries into the records only what this model made
        (root / ".git/strata/config.toml").write_text(f'[search]\nmodel = "{model_folder}"\n', encoding="utf-8")
        m = meaning.model(model_folder)
        if m is None:
            sys.exit(f"cannot load the model in {model_folder}: {meaning.warnings()}")
        paths = sorted(p for p in (root / "active").rglob("*.md"))
        if not lent:
            progress(f"embedding {sample} memories to lend their vectors to the others")
            started = time.perf_counter()
            lent.extend(m.embed(meaning.pieces_of(p.read_bytes(), str(p))) for p in paths[:sample])
            out["sample_embed_ms_per_memory"] = round((time.perf_counter() - started) * 1000 / sample, 1)
            out["sample_pieces_per_memory"] = round(sum(len(v) for v in lent) / len(lent), 2)
        db = meaning._connect(repo)
        with db:
            meaning._same_model(db, m)
            held = {row[0] for row in db.execute("SELECT path FROM files")}
            out_file = meaning._Vectors(repo, db, m.dim)
            for i, p in enumerate(paths):
                raw = p.read_bytes()
                rel = p.relative_to(root).as_posix()
                if rel in held:
                    continue
                info = p.stat()
                vectors = lent[i % len(lent)]
                db.execute("INSERT OR REPLACE INTO files VALUES (?, ?, ?, ?)",
                           (rel, info.st_size, info.st_mtime_ns, meaning._blob_id(raw)))
                db.executemany("INSERT INTO pieces VALUES (?, ?, ?)",
                               ((rel, k, raw[:80].decode("utf-8", "replace")) for k in range(len(vectors))))
                out_file.add(rel, vectors)
        out_file.close()
        db.close()
    return lend


def search_ms(vault, queries: list[str], samples: int, mode: str) -> list[float]:
    out = []
    for i in range(samples):
        t0 = time.perf_counter()
        vault.search(queries[i % len(queries)], limit=10, mode=mode)
        out.append((time.perf_counter() - t0) * 1000)
    return out


def cli_peak(root: Path, env: dict[str, str], mode: str) -> int:
    """The peak resident MiB of one `git strata search`, started by a small launcher (a child forked
    from this big process would count this process's pages until it execs)."""
    launcher = ("import resource, subprocess, sys; subprocess.run(sys.argv[1:], check=True, "
                "stdout=subprocess.DEVNULL); print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    kib = sh([sys.executable, "-c", launcher, str(BIN / "git-strata"), "search", "first things", "--mode", mode,
              "--json"], root, env)
    return round(int(kib.split()[-1]) / 1024)


def main() -> None:
    args = arguments()
    rng = random.Random(5)
    out: dict = {"active": args.active, "archived": args.archived, "sample": args.sample}
    with workspace("strata-meaning-scale-", args.keep) as tmp:
        lend = lend_vectors(args.model, args.sample, out)
        root, env = scaled(tmp, args, rng, out, before_janitor=lend)
        lend(root)  # the active memories, committed last

        from strata_git.app.vault import Vault

        vault = Vault.open(str(root))
        progress("the first search: every archived memory's vectors read from its record")
        t0 = time.perf_counter()
        vault.search("first", mode="meaning")
        out["first_search_s"] = round(time.perf_counter() - t0, 1)
        names = [e.name[:-3] for e in vault.list()]
        queries = [" ".join(rng.choice(WORDS) for _ in range(3)) for _ in range(20)] + \
                  [f"what did we note about {rng.choice(WORDS)} and {rng.choice(WORDS)}" for _ in range(20)]
        out["tiers"] = {t: sum(1 for e in vault.list() if e.tier == t) for t in ("active", "cooled", "archive")}
        out["memories_listed"] = len(names)
        times: dict[str, dict[str, float]] = {}
        for mode in MODES:
            vault.search("warm up", mode=mode)
            one_shot = search_ms(vault, queries, args.samples, mode)
            times[mode] = {"in_process_p50_ms": pct(one_shot, 0.5), "in_process_p95_ms": pct(one_shot, 0.95)}
        vault.watch_files()
        for mode in MODES:
            vault.search("warm up", mode=mode)
            watched = search_ms(vault, queries, args.samples, mode)
            times[mode] |= {"watched_p50_ms": pct(watched, 0.5), "watched_p95_ms": pct(watched, 0.95)}
        vault.watch.close()
        vault.watch = None
        for mode in MODES:
            cli = [timed([str(BIN / "git-strata"), "search", q, "--mode", mode, "--json"], root, env)
                   for q in queries[:20]]
            times[mode] |= {"cli_p50_ms": pct(cli, 0.5), "cli_p95_ms": pct(cli, 0.95)}
        out["search"] = times
        out["ratio_both_to_words"] = {k: round(times["both"][k] / times["words"][k], 2)
                                      for k in ("in_process_p50_ms", "watched_p50_ms", "cli_p50_ms")}
        state = root / ".git/strata"
        out["sizes_mib"] = {f.name: mib(f.stat().st_size) for f in sorted(state.glob("*.sqlite"))}
        out["sizes_mib"] |= {"vectors file": mib(sum(f.stat().st_size for f in state.glob("meaning-*.i8")))}
        out["peak_rss_mib"] = {"this_process": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
                               "cli_search": {mode: cli_peak(root, env, mode) for mode in MODES}}
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        for key, value in out.items():
            print(f"{key}: {value}")


if __name__ == "__main__":
    main()
