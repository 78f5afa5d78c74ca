"""Ranking ideas past plain BM25, tried on bench/retrieval.py's corpus with a Python replica of the scoring.

    .venv/bin/python bench/ranking_variants.py [--seed 7] [--memories 400]

The replica scores every memory as search.py does (git-strata's own words, stems and
fields; BM25 k1 1.2, b 0.75, field weights applied to term counts as FTS5's bm25 does)
over the same generated memories and questions as bench/retrieval.py, without building a
repository, so each idea costs seconds to try: FTS5's classic idf against Lucene's, other
field weights, pseudo-relevance feedback, and a recency boost. Its `shipped` line comes within
0.002 of what `bench/retrieval.py` measures end to end (ties fall differently). Prints recall@5
and MRR@10 for each, over all questions.
"""

from __future__ import annotations

import argparse
import math
import random
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import retrieval

import corpus
from strata_git.core import textindex


def fields(m: corpus.Memory, name: bool = True) -> list[Counter[str]]:
    """title, tags with type, body (with the name's words): as textindex.document builds them."""
    words = textindex.tokens((m.name.replace("/", " ") + " " if name else "") + m.body)
    return [Counter(textindex.terms(textindex.tokens(m.title))),
            Counter(textindex.terms(textindex.tokens(" ".join(m.tags) + (" " + m.type if name else "")))),
            Counter(textindex.terms(words))]


class Replica:
    def __init__(self, memories: list[corpus.Memory], name: bool = True) -> None:
        self.memories = memories
        self.docs = [fields(m, name) for m in memories]
        self.lengths = [sum(sum(c.values()) for c in d) for d in self.docs]
        self.average = sum(self.lengths) / len(self.docs)
        self.df: Counter[str] = Counter()
        for d in self.docs:
            self.df.update(set().union(*d))

    def idf(self, term: str, kind: str) -> float:
        n, total = self.df[term], len(self.docs)
        if kind == "classic":  # FTS5's bm25(), clamped as FTS5 clamps it
            value = math.log((total - n + 0.5) / (n + 0.5))
            return value if value > 0 else 1e-6
        return math.log(1 + (total - n + 0.5) / (n + 0.5))

    def scores(self, query: dict[str, float], weights=(5, 3, 1), idf: str = "lucene",
               boost: Callable[[int], float] | None = None) -> list[tuple[float, int]]:
        found = []
        for i, d in enumerate(self.docs):
            s = 0.0
            for term, q in query.items():
                tf = sum(w * c[term] for w, c in zip(weights, d, strict=True))
                if tf:
                    norm = 1.2 * (1 - 0.75 + 0.75 * self.lengths[i] / self.average)
                    s += q * self.idf(term, idf) * tf * 2.2 / (tf + norm)
            if s:
                found.append((-(s * boost(i)) if boost else -s, i))
        return sorted(found)


def feedback(replica: Replica, query: dict[str, float], docs: int, terms: int, beta: float) -> dict[str, float]:
    """RM3-like pseudo-relevance feedback: the top `docs` hits' best `terms` body terms added at `beta`."""
    pool: Counter[str] = Counter()
    for _, i in replica.scores(query)[:docs]:
        body = replica.docs[i][2]
        length = sum(body.values()) or 1
        for t, c in body.items():
            pool[t] += c / length * replica.idf(t, "lucene")
    added = [t for t, _ in pool.most_common(terms + len(query)) if t not in query][:terms]
    return {**query, **{t: beta for t in added}}


def evaluate(replica: Replica, questions: list[corpus.Question], rank) -> tuple[float, float]:
    hit, mrr = 0, 0.0
    for q in questions:
        names = [replica.memories[i].name for _, i in rank(q)[:10]]
        hit += q.answer in names[:5]
        mrr += 1 / (names.index(q.answer) + 1) if q.answer in names else 0
    return round(hit / len(questions), 3), round(mrr / len(questions), 3)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--memories", type=int, default=400)
    args = parser.parse_args()
    rng = random.Random(args.seed)  # drawn exactly as bench/retrieval.py draws them
    memories = corpus.generate(rng, retrieval.ages(rng, args.memories), retrieval.NOW)
    questions = corpus.questions(rng, memories, 3)
    full, nameless = Replica(memories), Replica(memories, name=False)

    def query(q: corpus.Question) -> dict[str, float]:
        return {t: 1.0 for t in textindex.query_terms(q.text)}

    def recent(i: int, alpha: float) -> float:
        return 1 + alpha * math.exp(-memories[i].day / 90)

    variants = {
        "FTS5's bm25 as it is (classic idf), fields 5/3/1": lambda q: full.scores(query(q), idf="classic"),
        "shipped: Lucene idf, fields 5/3/1": lambda q: full.scores(query(q)),
        "Lucene idf, no field weights (1/1/1)": lambda q: full.scores(query(q), weights=(1, 1, 1)),
        "Lucene idf, fields 3/1/1": lambda q: full.scores(query(q), weights=(3, 1, 1)),
        "Lucene idf, fields 1/1/1, name and type not indexed": lambda q: nameless.scores(query(q), weights=(1, 1, 1)),
        "pseudo-relevance feedback: 5 terms of the top 3 at 0.3": lambda q: full.scores(feedback(full, query(q), 3, 5, 0.3)),
        "pseudo-relevance feedback: 5 terms of the top 3 at 0.1": lambda q: full.scores(feedback(full, query(q), 3, 5, 0.1)),
        "pseudo-relevance feedback: 5 terms of the top 1 at 0.2": lambda q: full.scores(feedback(full, query(q), 1, 5, 0.2)),
        "recency boost x(1 + 0.02 e^(-days/90))": lambda q: full.scores(query(q), boost=lambda i: recent(i, 0.02)),
        "recency boost x(1 + 0.1 e^(-days/90))": lambda q: full.scores(query(q), boost=lambda i: recent(i, 0.1)),
    }
    print(f"{len(memories)} memories, {len(questions)} questions (seed {args.seed}); recall@5 / MRR@10")
    for label, rank in variants.items():
        r5, mrr = evaluate(full, questions, rank)
        print(f"{r5:.3f} / {mrr:.3f}  {label}", flush=True)


if __name__ == "__main__":
    main()
