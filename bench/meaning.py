"""Meaning search: what a local model adds to word search, what it costs, and which fusion weight.

One repository holds the hand-written paraphrase set (bench/paraphrases.json: 40 memories, each
with a question that shares no word with it, written before any result was seen; a pair whose
question does share a term after stemming is named and left out) among the generated corpus of
bench/retrieval.py (bench/corpus.py, every memory active: only active and cooled memories have
vectors). Every question is asked in process through store/search.py by words, by meaning, and
by both at each weight, and scored by recall@5 and MRR@10: the paraphrases (what words cannot
find) and the corpus's own questions (mostly in other words than the memory's, some with its
rare words: fusion must not lose those). The default `search.meaning_weight` is the weight with
the best MRR@10 over both sets together.

Costs: `git strata reindex` time per memory embedded (the model is all-MiniLM-L6-v2 as int8
ONNX: scripts/model.py), query p50 per mode, the bytes per memory of meaning.sqlite and the
vectors file, and this process's peak resident memory.

    .venv/bin/python scripts/model.py /tmp/minilm     # once
    .venv/bin/python bench/meaning.py --model /tmp/minilm [--memories 400] [--seed 7] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

sys.path.insert(0, str(Path(__file__).resolve().parent))
from prompt_hints import build

import corpus
from benchlib import emit, hermetic_process, progress

NOW = 1_800_000_000
WEIGHTS = (0.2, 0.3, 0.4, 0.5, 0.6, 0.7)
PAIRS = Path(__file__).resolve().parent / "paraphrases.json"


class Written(NamedTuple):  # a memory as prompt_hints.build writes it
    name: str
    text: str


def arguments() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", required=True, help="a model folder (scripts/model.py makes one)")
    p.add_argument("--memories", type=int, default=400)
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--json", action="store_true")
    return p.parse_args()


def shares_a_term(question: str, text: str) -> list[str]:
    from strata_git.core import textindex

    held = set(textindex.terms(textindex.tokens(text)))
    return sorted(set(textindex.query_terms(question)) & held)


def score(ranked: list[list[str]], answers: list[str]) -> dict[str, float]:
    recall = sum(a in r[:5] for r, a in zip(ranked, answers, strict=True)) / len(answers)
    mrr = sum(1 / (r.index(a) + 1) if a in r[:10] else 0 for r, a in zip(ranked, answers, strict=True)) / len(answers)
    return {"recall@5": round(recall, 3), "mrr@10": round(mrr, 3)}


def run(args: argparse.Namespace, tmp: Path) -> dict:
    from strata_git.app.vault import Vault
    from strata_git.store import meaning, search

    rng = random.Random(args.seed)
    env = hermetic_process(tmp)
    pairs = json.loads(PAIRS.read_text())["pairs"]
    kept = [p for p in pairs if not shares_a_term(p["question"], p["name"] + " " + p["memory"])]
    dropped = {p["name"]: shares_a_term(p["question"], p["name"] + " " + p["memory"]) for p in pairs if p not in kept}
    progress("generating the corpus")
    memories = corpus.generate(rng, [0] * args.memories, NOW)
    questions = corpus.questions(rng, memories, 1)
    root = tmp / "mem"
    build(root, [*memories, *(Written(p["name"], p["memory"] + "\n") for p in pairs)], env)
    (root / ".git/strata/config.toml").write_text(f'[search]\nmodel = "{args.model}"\n')
    vault = Vault.open(str(root))
    progress("reindex (embedding every memory)")
    start = time.perf_counter()
    report = vault.reindex()
    seconds = time.perf_counter() - start
    if not report.embedded:
        raise SystemExit(f"no vectors made: {report.meaning}")
    sets = {"paraphrases": ([p["question"] for p in kept], [p["name"] for p in kept]),
            "corpus": ([q.text for q in questions], [q.answer for q in questions])}
    variants = {"words": ("words", 0.0), "meaning": ("meaning", 1.0),
                **{f"both {w}": ("both", w) for w in WEIGHTS}}
    results: dict[str, dict[str, dict[str, float]]] = {}
    times: dict[str, list[float]] = {}
    for label, (mode, weight) in variants.items():
        progress(f"asking every question, {label}")
        results[label] = {}
        for kind, (texts, answers) in sets.items():
            ranked = []
            for text in texts:
                begin = time.perf_counter()
                hits = search.search(vault.repo, text, limit=10, mode=mode, model=args.model, weight=weight,
                                     max_bytes=vault.cfg.max_memory_bytes)
                times.setdefault(label, []).append((time.perf_counter() - begin) * 1000)
                ranked.append([h.name for h in hits])
            results[label][kind] = score(ranked, answers)
    best = max(WEIGHTS, key=lambda w: sum(results[f"both {w}"][k]["mrr@10"] for k in sets))
    progress("shadow records with and without vectors")
    plain, carrying = records_size(vault, args.model)
    state = Path(meaning.path(vault.repo)).parent
    size = sum(p.stat().st_size for p in (state / meaning.DB, *state.glob("meaning-*.i8")))
    total = report.embedded
    return {"memories": total, "paraphrases_kept": len(kept), "paraphrases_dropped": dropped,
            "corpus_questions": len(questions), "reindex_s": round(seconds, 1),
            "embed_ms_per_memory": round(seconds * 1000 / total, 1),
            "meaning_bytes_per_memory": size // total, "results": results,
            "query_p50_ms": {k: round(statistics.median(v), 1) for k, v in times.items()},
            "record_bytes_per_memory": {"words": plain, "words_and_vectors": carrying},
            "best_weight": best, "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)}


def records_size(vault: object, model: str) -> tuple[int, int]:
    """Mean bytes of a shadow record of these memories without and with the vectors the janitor
    would put in it (what an archived memory costs on the shadow ref, before git compresses it)."""
    from strata_git.store import meaning, records

    repo = vault.repo  # type: ignore[attr-defined]
    out = repo.git("ls-files", "-s", "--", "active").decode().splitlines()
    blobs = sorted({line.split()[1] for line in out})
    carried = meaning.carried(repo, model, blobs)
    sizes = [(len(records.make(raw, b)), len(records.make(raw, b, 0, carried.get(b))))
             for b, raw in zip(blobs, repo.objects(blobs), strict=True) if raw is not None]
    return sum(a for a, _ in sizes) // len(sizes), sum(b for _, b in sizes) // len(sizes)


def report(r: dict) -> None:
    print(f"{r['memories']} memories embedded in {r['reindex_s']} s ({r['embed_ms_per_memory']} ms each, "
          f"{r['meaning_bytes_per_memory']} bytes each in meaning.sqlite and the vectors file); "
          f"peak {r['peak_rss_mib']} MiB")
    sizes = r["record_bytes_per_memory"]
    print(f"shadow record per memory: {sizes['words']} bytes by words, {sizes['words_and_vectors']} with vectors")
    print(f"questions: {r['paraphrases_kept']} paraphrases (left out, sharing a term: "
          f"{r['paraphrases_dropped'] or 'none'}), {r['corpus_questions']} corpus questions")
    print(f"{'':12} {'paraphrases R@5':>16} {'MRR@10':>7}   {'corpus R@5':>11} {'MRR@10':>7}   {'query p50':>9}")
    for label, by in r["results"].items():
        mark = "  <- best" if label == f"both {r['best_weight']}" else ""
        print(f"{label:12} {by['paraphrases']['recall@5']:>16.3f} {by['paraphrases']['mrr@10']:>7.3f}   "
              f"{by['corpus']['recall@5']:>11.3f} {by['corpus']['mrr@10']:>7.3f}   "
              f"{r['query_p50_ms'][label]:>7.1f} ms{mark}")


def main() -> None:
    args = arguments()
    args.model = os.path.abspath(args.model)
    with tempfile.TemporaryDirectory(prefix="strata-meaning-") as tmp:
        result = run(args, Path(tmp))
    emit(result, args.json, report)


if __name__ == "__main__":
    main()
