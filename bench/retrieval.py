"""Retrieval: does search find the memory that answers a question, whatever tier holds it?

A generated corpus of agent memories (bench/corpus.py: session transcripts, decisions,
meetings, people and vendor pages, tasks, lessons, personal notes, a few in Chinese or
Japanese), each stating 1-4 facts that mostly sit deep in the body and appear once,
and questions with one known answer each, mostly in other words than the memory's.

The memories are committed at dates in the past and moved by the real janitor, so about
a third end in each tier; `git strata archive` then pushes to a local bare remote and
prunes archive/, and `git strata clone` makes a fresh machine of that remote. Every
question is asked through `Vault.search` (limit 10) in the archiving repository (merged
and cascade ranking) and in the fresh clone, and of an independent reference: bm25s
(Okapi BM25, k1 1.2, b 0.75) with PyStemmer's English stemmer and bm25s's longer English
stop word list ("en_plus": questions are full of what, which, did, how) over the full text
of every memory (title, tags, body), CJK runs split into two-character pieces as a CJK
analyzer does.

    bash scripts/setup.sh bench
    .venv/bin/python bench/retrieval.py [--seed 7] [--memories 400] [--questions-per-memory 3]
        [--caps 0,128,32] [--json]

Prints recall@5 and MRR@10 per system, overall, by the tier holding the answer and by
question style, with the counts, and strata minus the reference per tier.

--caps measures what `archive.record_max_terms` trades: for each cap, the same corpus is
built again with that cap in .strata/config.toml before the janitor runs, archived and
pruned (no fresh clone), and every question is asked with merged ranking. Beside recall it
reports the shadow records' size: the raw bytes of the record blobs on the shadow ref, per
archived memory and against the archived Markdown's bytes; the same ref alone pushed to a
scratch bare repository and repacked (its .pack files); and .git/strata/catalog.sqlite
(the search index of every tier) after the archive. Cap 0 (keep every word) is the main
run's configuration, so its ranks must equal the main run's merged ones: that is checked.

--model DIR adds search by meaning (the semantic extra; DIR from scripts/model.py). The
hand-written paraphrase set (bench/paraphrases.json: questions that share no word with their
answer, written before any result was seen; a pair that shares a term after stemming is left
out) joins the corpus, its memories aged a third per tier like the rest. `search.model` is set
in both machines' own config; `reindex` embeds every memory before the janitor runs (so the
janitor carries the vectors of what it archives in the shadow records) and again in the fresh
clone (its active and cooled memories; the archived ones are read from the records). Every
question is then asked by words and by both (`search.meaning_weight`, the default), in the
archiving repository and in the fresh clone; the "meaning" column is the paraphrase set. Costs:
seconds per memory embedded, query p50 per mode, meaning.sqlite and record bytes per memory,
peak resident memory.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import resource
import shlex
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from meaning import PAIRS, shares_a_term

import corpus
from benchlib import BIN, emit, hermetic_env, progress, sh

NOW = 1_800_000_000
DAY = 86400
TIERS = ("active", "cooled", "archive")
# Days since the last change, by the tier two janitor cycles at NOW should leave a memory in:
# under every folder's cooling threshold (gtd: 7); past every one (entities: 60) but under
# archive.idle_days (90); past that.
AGES = {"active": (0, 6), "cooled": (62, 88), "archive": (95, 400)}
LIMIT = 10
CUTOFF = 5
STYLES = ("paraphrase", "exact", "cjk", "meaning")  # meaning: the hand-written set of --model
REFERENCE = "reference (bm25s)"
CJK_RUN = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]+")


def ages(rng: random.Random, count: int) -> list[int]:
    """A third of the memories aged for each tier, in random order."""
    tiers = [TIERS[i % 3] for i in range(count)]
    rng.shuffle(tiers)
    return [rng.randint(*AGES[t]) for t in tiers]


@dataclass(frozen=True)
class Paraphrased:
    """A memory of the paraphrase set: its text alone, no frontmatter (as a person might write it)."""
    name: str
    body: str
    day: int

    @property
    def text(self) -> str:
        return self.body + "\n"

    @property
    def searchable(self) -> str:
        return self.body


def paraphrased(rng: random.Random) -> tuple[list[Paraphrased], list[corpus.Question]]:
    """The paraphrase set's memories (aged a third per tier) and questions (style "meaning")."""
    pairs = [p for p in json.loads(PAIRS.read_text())["pairs"]
             if not shares_a_term(p["question"], p["name"] + " " + p["memory"])]
    days = ages(rng, len(pairs))
    return ([Paraphrased(p["name"], p["memory"], d) for p, d in zip(pairs, days, strict=True)],
            [corpus.Question(p["question"], p["name"], "meaning") for p in pairs])


def embed(root: Path, model: str) -> dict[str, float]:
    """`search.model` in this machine's config, then reindex: memories embedded and seconds taken."""
    from strata_git.app.vault import Vault

    (root / ".git" / "strata" / "config.toml").write_text(f'[search]\nmodel = "{model}"\n', encoding="utf-8")
    progress(f"reindex in {root.name}: embedding")
    started = time.perf_counter()
    report = Vault.open(str(root)).reindex()
    if not report.embedded:
        sys.exit(f"reindex in {root} made no vectors: {report.meaning}")
    return {"embedded": report.embedded, "seconds": round(time.perf_counter() - started, 1)}


def build(root: Path, memories: list, env: dict[str, str], record_max_terms: int | None = None,
          model: str | None = None) -> dict[str, float] | None:
    """One commit per day of writing, oldest first, dated that day; then two janitor cycles
    at NOW (the first cools the old memories, the second archives the oldest). With
    `record_max_terms`, that cap is set (and committed) in the config first; with `model`, every
    memory is embedded before the janitor runs (what embed() says is returned)."""
    from strata_git.app.init import init
    from strata_git.app.vault import Vault

    init(str(root))
    if record_max_terms is not None:
        set_record_cap(root, record_max_terms, env)
    by_day: dict[int, list[corpus.Memory]] = defaultdict(list)
    for m in memories:
        by_day[m.day].append(m)
    progress(f"committing {len(memories)} memories on {len(by_day)} days")
    for age in sorted(by_day, reverse=True):
        for m in by_day[age]:
            path = root / "active" / f"{m.name}.md"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(m.text, encoding="utf-8")
        stamp = f"@{NOW - age * DAY} +0000"
        sh(["git", "add", "active"], root, env)
        sh(["git", "-c", "core.hooksPath=/dev/null", "commit", "-q", "-m", f"memories of day -{age}"], root,
           {**env, "GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_DATE": stamp})
    embedded = embed(root, model) if model else None
    progress("janitor: two cycles")
    vault = Vault.open(str(root))
    vault.janitor(now=NOW)
    vault.janitor(now=NOW)
    return embedded


def set_record_cap(root: Path, cap: int, env: dict[str, str]) -> None:
    """`record_max_terms = cap` in [archive] of the new repository's config, checked as strata
    reads it, and committed (unless init's template already says so)."""
    from strata_git.core import config

    path = root / config.CONFIG_PATH
    line = f"record_max_terms = {cap}"
    before = path.read_text(encoding="utf-8")
    text, n = re.subn(r"(?m)^record_max_terms[ \t]*=.*$", line, before)
    if n == 0:
        text, n = re.subn(r"(?m)^\[archive\][ \t]*$", f"[archive]\n{line}", text, count=1)
    if n != 1:
        sys.exit(f"cannot set archive.record_max_terms in {path}: {n} places found")
    path.write_text(text, encoding="utf-8")
    if config.load(str(root)).record_max_terms != cap:
        sys.exit(f"{path} does not read back as archive.record_max_terms = {cap}")
    if text == before:  # the template's value already (0): init committed it as it is
        return
    sh(["git", "add", config.CONFIG_PATH], root, env)
    sh(["git", "-c", "core.hooksPath=/dev/null", "commit", "-q", "-m", f"archive.record_max_terms = {cap}"],
       root, env)


def archive(work: Path, root: Path, env: dict[str, str]) -> Path:
    """Archive to a bare `file://` remote in `work` (configured as docs/archive.md asks)
    and prune; the remote."""
    remote = work / "remote.git"
    sh(["git", "init", "-q", "--bare", "-b", "main", str(remote)], work, env)
    for key in ("uploadpack.allowFilter", "uploadpack.allowAnySHA1InWant"):
        sh(["git", "config", key, "true"], remote, env)
    sh(["git", "remote", "add", "origin", remote.as_uri()], root, env)
    progress("git strata archive")
    sh([str(BIN / "git-strata"), "archive"], root, env)
    if (root / "archive").exists():
        sys.exit(f"archive/ is still on disk in {root}: the benchmark needs it pruned")
    return remote


def archive_and_clone(tmp: Path, root: Path, env: dict[str, str]) -> Path:
    """archive(), then `git strata clone` the remote into a fresh folder, which is returned."""
    remote = archive(tmp, root, env)
    fresh = tmp / "fresh"
    progress("git strata clone")
    sh([str(BIN / "git-strata"), "clone", remote.as_uri(), str(fresh)], tmp, env)
    if (fresh / "archive").exists():
        sys.exit(f"archive/ is still on disk in {fresh}: the benchmark needs it pruned")
    return fresh


def record_sizes(work: Path, root: Path, env: dict[str, str]) -> dict[str, int]:
    """The shadow ref's record blobs: how many, their raw bytes (ls-tree sizes), and the bytes of
    the .pack files of a scratch bare repository holding that ref alone, repacked."""
    refs = sh(["git", "for-each-ref", "--format=%(refname)", "refs/strata/shadow/"], root, env).split()
    if len(refs) != 1:
        sys.exit(f"expected one shadow ref in {root}, found {refs}")
    items = [item for item in sh(["git", "ls-tree", "-r", "-l", "-z", refs[0]], root, env).split("\0") if item]
    sizes = [int(item.split("\t")[0].split()[3]) for item in items]
    scratch = work / "shadow-only.git"
    sh(["git", "init", "-q", "--bare", str(scratch)], work, env)
    sh(["git", "-c", "core.hooksPath=/dev/null", "push", "-q", str(scratch),
        "refs/strata/shadow/*:refs/strata/shadow/*"], root, env)
    sh(["git", "repack", "-adq"], scratch, env)
    loose = sh(["git", "count-objects", "-v"], scratch, env)
    if not re.search(r"(?m)^count: 0$", loose):
        sys.exit(f"loose objects left in {scratch} after repack:\n{loose}")
    return {"ref": refs[0], "records": len(sizes), "raw_bytes": sum(sizes),
            "packed_bytes": sum(p.stat().st_size for p in (scratch / "objects" / "pack").glob("*.pack"))}


def tiers_of(root: Path) -> dict[str, str]:
    """Each memory's tier, as the repository has it (name without .md)."""
    from strata_git.app.vault import Vault

    return {e.name[:-3]: e.tier for e in Vault.open(str(root)).list()}


def strata_ranks(root: Path, questions: list[corpus.Question], rank: str, mode: str = "words",
                 times: list[float] | None = None) -> list[int | None]:
    """The 1-based place of each question's answer among `Vault.search`'s hits, or None (each
    search's milliseconds appended to `times`)."""
    from strata_git.app.vault import Vault

    vault = Vault.open(str(root))
    out = []
    for i, q in enumerate(questions):
        if i % 100 == 0:
            progress(f"strata {rank} {mode} in {root.name}: question {i + 1}/{len(questions)}")
        started = time.perf_counter()
        hits = [h.name for h in vault.search(q.text, limit=LIMIT, rank=rank, mode=mode)]
        if times is not None:
            times.append((time.perf_counter() - started) * 1000)
        out.append(hits.index(q.answer) + 1 if q.answer in hits else None)
    return out


def cjk_pieces(text: str) -> str:
    """CJK runs as overlapping two-character pieces, the usual way to index text without spaces."""
    return CJK_RUN.sub(lambda m: " " + " ".join(m[0][i:i + 2] for i in range(max(1, len(m[0]) - 1))) + " ", text)


def reference_ranks(memories: list[corpus.Memory], questions: list[corpus.Question]) -> list[int | None]:
    """The same ranks from bm25s over the full text of every memory."""
    try:
        import bm25s
        import Stemmer
    except ImportError:
        sys.exit("the reference needs bm25s and PyStemmer: bash scripts/setup.sh bench")
    stemmer = Stemmer.Stemmer("english")

    def tokens(texts: list[str]) -> list[list[str]]:
        return bm25s.tokenize([cjk_pieces(t) for t in texts], stopwords="en_plus", stemmer=stemmer,
                              return_ids=False, show_progress=False)

    progress("reference: bm25s")
    retriever = bm25s.BM25(k1=1.2, b=0.75)
    retriever.index(tokens([m.searchable for m in memories]), show_progress=False)
    docs, scores = retriever.retrieve(tokens([q.text for q in questions]), k=LIMIT, show_progress=False)
    out = []
    for q, row, score in zip(questions, docs, scores, strict=True):
        hits = [memories[d].name for d, s in zip(row, score, strict=True) if s > 0]
        out.append(hits.index(q.answer) + 1 if q.answer in hits else None)
    return out


def scores(ranks: list[int | None]) -> dict[str, float | int | None]:
    """recall@5 and MRR@10 of 1-based ranks (None: not in the top 10); None when there are none."""
    n = len(ranks)
    return {"recall@5": round(sum(1 for r in ranks if r and r <= CUTOFF) / n, 3) if n else None,
            "mrr@10": round(sum(1 / r for r in ranks if r) / n, 3) if n else None, "n": n}


def breakdown(ranks: list[int | None], questions: list[corpus.Question], tiers: dict[str, str]) -> dict:
    """Scores overall, by the tier holding the answer, and by question style."""
    def where(group) -> dict:
        return scores([r for r, q in zip(ranks, questions, strict=True) if group(q)])

    return {"all": scores(ranks), **{t: where(lambda q, t=t: tiers[q.answer] == t) for t in TIERS},
            "by_style": {s: where(lambda q, s=s: q.style == s) for s in STYLES},
            "meaning_by_tier": {t: where(lambda q, t=t: q.style == "meaning" and tiers[q.answer] == t)
                                for t in TIERS}}


def differences(systems: dict[str, dict]) -> dict[str, dict]:
    """Each strata system minus the reference, overall and per tier."""
    ref = systems[REFERENCE]
    return {name: {part: {m: round(s[part][m] - ref[part][m], 3) for m in ("recall@5", "mrr@10")}
                   for part in ("all", *TIERS)}
            for name, s in systems.items() if name != REFERENCE}


def cap_list(text: str) -> list[int]:
    try:
        caps = [int(c) for c in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError("give whole numbers separated by commas, like 0,128,32") from None
    if any(c < 0 for c in caps) or len(set(caps)) != len(caps):
        raise argparse.ArgumentTypeError("caps are 0 (keep every word) or more, each once")
    return caps


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--memories", type=int, default=400)
    parser.add_argument("--questions-per-memory", type=int, default=3)
    parser.add_argument("--caps", type=cap_list, default=None,
                        help="archive.record_max_terms values to rebuild with and measure, like 0,128,32")
    parser.add_argument("--model", help="a model folder (scripts/model.py): measure search by meaning too")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.model and args.caps:
        parser.error("--caps and --model are measured in separate runs")
    if args.model:
        args.model = str(Path(args.model).resolve())
    if args.memories < 30 or args.questions_per_memory < 1:
        parser.error("give at least 30 memories (so every tier holds answers) and 1 question per memory")
    return args


def reproduce(args: argparse.Namespace) -> str:
    """The command that repeats this run, from the repository root."""
    top = Path(__file__).resolve().parent.parent
    python = Path(sys.executable)
    python_arg = str(python.relative_to(top)) if python.is_relative_to(top) else str(python)
    return shlex.join([python_arg, "bench/retrieval.py", "--seed", str(args.seed), "--memories", str(args.memories),
                       "--questions-per-memory", str(args.questions_per_memory),
                       *(["--caps", ",".join(map(str, args.caps))] if args.caps else []),
                       *(["--model", "MODEL"] if args.model else []),
                       *(["--json"] if args.json else [])])


def run(args: argparse.Namespace, tmp: Path) -> dict:
    """Generate, build, archive, clone and ask, in `tmp`; the result, with each stage's seconds."""
    seconds: dict[str, float] = {}
    started = time.perf_counter()

    def lap(what: str) -> None:
        nonlocal started
        seconds[what] = round(time.perf_counter() - started, 1)
        started = time.perf_counter()

    rng = random.Random(args.seed)
    (tmp / "home").mkdir()
    env = hermetic_env(tmp / "home")
    os.environ.clear()
    os.environ.update(env)  # in-process git calls run in the same hermetic environment
    progress("generating the corpus")
    memories = corpus.generate(rng, ages(rng, args.memories), NOW)
    questions = corpus.questions(rng, memories, args.questions_per_memory)
    if args.model:
        extra, asked = paraphrased(rng)
        memories, questions = [*memories, *extra], [*questions, *asked]
    root = tmp / "mem"
    embedded = build(root, memories, env, model=args.model)
    tiers = tiers_of(root)
    lap("build_and_janitor")
    fresh = archive_and_clone(tmp, root, env)
    lap("archive_and_clone")
    merged = strata_ranks(root, questions, "merged")
    systems = {"strata merged": breakdown(merged, questions, tiers)}
    lap("strata_merged")
    systems["strata cascade"] = breakdown(strata_ranks(root, questions, "cascade"), questions, tiers)
    lap("strata_cascade")
    systems["strata merged, fresh clone"] = breakdown(strata_ranks(fresh, questions, "merged"), questions, tiers)
    lap("strata_fresh_clone")
    costs = meaning_runs(args.model, root, fresh, questions, tiers, systems, lap) if args.model else None
    systems[REFERENCE] = breakdown(reference_ranks(memories, questions), questions, tiers)
    lap("reference")
    count = {t: sum(1 for v in tiers.values() if v == t) for t in TIERS}
    result = {"seed": args.seed, "memories": count, "questions": len(questions),
              "corpus_kib": round(sum(len(m.text.encode()) for m in memories) / 1024),
              "systems": systems, "strata_minus_reference": differences(systems), "seconds": seconds,
              "reproduce": reproduce(args)}
    if costs is not None:
        result["meaning_costs"] = {"embedded_before_janitor": embedded, **costs}
    if args.caps:
        result["caps"] = []
        for cap in args.caps:
            row, ranks = cap_run(tmp / f"cap-{cap}", cap, memories, questions, env)
            if cap == 0:  # the main run's configuration: the same ranks, question by question
                row["same_ranks_as_main_merged"] = ranks == merged
                row["same_scores_as_main_merged"] = row["scores"] == systems["strata merged"]
            result["caps"].append(row)
            lap(f"cap_{cap}")
    return result


def meaning_runs(model: str, root: Path, fresh: Path, questions: list[corpus.Question], tiers: dict[str, str],
                 systems: dict[str, dict], lap: Callable[[str], None]) -> dict:
    """Every question by both words and meaning, here and in the fresh clone (embedded first), into
    `systems`; what it cost."""
    from strata_git.core import contract

    clone_embedded = embed(fresh, model)
    lap("fresh_clone_reindex")
    times: dict[str, list[float]] = {"words": [], "both": []}
    strata_ranks(root, questions, "merged", "words", times["words"])  # timed apart: the first pass warmed
    systems["strata both"] = breakdown(strata_ranks(root, questions, "merged", "both", times["both"]), questions,
                                       tiers)
    lap("strata_both")
    systems["strata both, fresh clone"] = breakdown(strata_ranks(fresh, questions, "merged", "both"), questions,
                                                    tiers)
    lap("strata_both_fresh_clone")
    archived = sum(1 for t in tiers.values() if t == "archive")
    records = record_sizes(root.parent, root, hermetic_env(root.parent / "home"))
    store = root / ".git" / "strata" / "meaning.sqlite"
    return {"embedded_in_fresh_clone": clone_embedded,
            "query_p50_ms": {m: round(statistics.median(t), 1) for m, t in times.items()},
            "meaning_sqlite_bytes": store.stat().st_size if store.exists() else None,
            "record_bytes_per_archived_memory": round(records["raw_bytes"] / max(1, archived)),
            "catalog_bytes": (root / ".git" / "strata" / contract.CATALOG).stat().st_size,
            "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)}


def cap_run(work: Path, cap: int, memories: list[corpus.Memory], questions: list[corpus.Question],
            env: dict[str, str]) -> tuple[dict, list[int | None]]:
    """Build the corpus again with `record_max_terms = cap`, archive and prune, ask every question
    (merged), and measure the records and the catalog: the row, and the ranks."""
    from strata_git.core import contract

    progress(f"record_max_terms = {cap}")
    started = time.perf_counter()
    work.mkdir()
    root = work / "mem"
    build(root, memories, env, record_max_terms=cap)
    tiers = tiers_of(root)
    markdown = sorted((root / "archive").rglob("*.md"))  # before the archive prunes them
    archived = {"memories": len(markdown), "bytes": sum(p.stat().st_size for p in markdown)}
    if archived["memories"] != sum(1 for t in tiers.values() if t == "archive"):
        sys.exit(f"{archived['memories']} files under archive/ but {tiers_of(root)} lists otherwise")
    archive(work, root, env)
    db = root / ".git" / "strata" / contract.CATALOG
    catalog_bytes = db.stat().st_size
    records = record_sizes(work, root, env)
    ranks = strata_ranks(root, questions, "merged")
    row = {"record_max_terms": cap, "scores": breakdown(ranks, questions, tiers), "archived": archived,
           "records": records["records"], "record_bytes": records["raw_bytes"],
           "record_bytes_per_memory": round(records["raw_bytes"] / max(1, archived["memories"])),
           "record_to_markdown": round(records["raw_bytes"] / max(1, archived["bytes"]), 3),
           "packed_bytes": records["packed_bytes"],
           "packed_to_markdown": round(records["packed_bytes"] / max(1, archived["bytes"]), 3),
           "catalog_bytes": catalog_bytes, "catalog_bytes_after_search": db.stat().st_size,
           "seconds": round(time.perf_counter() - started, 1)}
    return row, ranks


def report(result: dict) -> None:
    m = result["memories"]
    print(f"memories by tier: {m['active']} active, {m['cooled']} cooled, {m['archive']} archive "
          f"({result['corpus_kib']} KiB); {result['questions']} questions")
    parts = ("all", *TIERS, *STYLES)
    print(f"\n{'recall@5 / MRR@10':28}" + "".join(f"{p:>14}" for p in parts))
    for name, s in result["systems"].items():
        cells = [s[p] if p in s else s["by_style"][p] for p in parts]
        print(f"{name:28}" + "".join(f"{c['recall@5']:>7.3f}/{c['mrr@10']:.3f}" if c["n"] else f"{'-':>14}"
                                     for c in cells))
    first = result["systems"][REFERENCE]
    print(f"{'questions':28}" + "".join(f"{(first[p] if p in first else first['by_style'][p])['n']:>14}"
                                        for p in parts))
    print(f"\n{'strata - reference':28}" + "".join(f"{p:>14}" for p in ("all", *TIERS)))
    for name, d in result["strata_minus_reference"].items():
        print(f"{name:28}" + "".join(f"{d[p]['recall@5']:>+7.3f}/{d[p]['mrr@10']:+.3f}" for p in ("all", *TIERS)))
    if result.get("caps"):
        report_caps(result["caps"])
    if result.get("meaning_costs"):
        print(f"\n{'the paraphrase set by tier':28}" + "".join(f"{t:>14}" for t in TIERS))
        for name, s in result["systems"].items():
            cells = [s["meaning_by_tier"][t] for t in TIERS]
            print(f"{name:28}" + "".join(f"{c['recall@5']:>7.3f}/{c['mrr@10']:.3f}" if c["n"] else f"{'-':>14}"
                                         for c in cells))
        print(f"{'questions':28}" + "".join(f"{c['n']:>14}" for c in first["meaning_by_tier"].values()))
        print(f"\nmeaning costs: {result['meaning_costs']}")
    print(f"\nseconds: {result['seconds']}")
    print(f"reproduce: {result['reproduce']}")


def report_caps(rows: list[dict]) -> None:
    a = rows[0]["archived"]
    print(f"\narchive.record_max_terms: recall@5/MRR@10 of strata merged, rebuilt per cap "
          f"({a['memories']} archived memories, {a['bytes']} bytes of Markdown)")
    heads = ["cap", "all", *TIERS, "records", "rec bytes", "B/mem", "rec/md", "packed", "pk/md", "catalog"]
    widths = [5, 13, 13, 13, 13, 9, 11, 7, 8, 9, 7, 10]
    print("".join(f"{h:>{w}}" for h, w in zip(heads, widths, strict=True)))
    for r in rows:
        s = r["scores"]
        cells = [r["record_max_terms"], *(f"{s[p]['recall@5']:.3f}/{s[p]['mrr@10']:.3f}" for p in ("all", *TIERS)),
                 r["records"], r["record_bytes"], r["record_bytes_per_memory"], f"{r['record_to_markdown']:.3f}",
                 r["packed_bytes"], f"{r['packed_to_markdown']:.3f}", r["catalog_bytes"]]
        print("".join(f"{c:>{w}}" for c, w in zip(cells, widths, strict=True)))
    for r in rows:
        if r["archived"] != a:
            print(f"note: cap {r['record_max_terms']} archived {r['archived']}, not {a}")
        if r["catalog_bytes_after_search"] != r["catalog_bytes"]:
            print(f"note: cap {r['record_max_terms']}: catalog {r['catalog_bytes']} bytes after the archive, "
                  f"{r['catalog_bytes_after_search']} after the questions")
        if "same_ranks_as_main_merged" in r:
            print(f"cap 0 against the main run's strata merged: same ranks {r['same_ranks_as_main_merged']}, "
                  f"same scores {r['same_scores_as_main_merged']}")
    print("(bytes: rec = raw record blobs on the shadow ref, packed = that ref alone repacked, "
          "catalog = .git/strata/catalog.sqlite after the archive; md = the archived Markdown)")


def main() -> None:
    args = arguments()
    with tempfile.TemporaryDirectory(prefix="strata-retrieval-") as tmp:
        result = run(args, Path(tmp))
    emit(result, args.json, report)


if __name__ == "__main__":
    main()
