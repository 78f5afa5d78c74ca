"""Secret detection against a labelled corpus: recall on secrets, false positives on ordinary notes.

    bash scripts/setup.sh bench
    .venv/bin/python bench/secrets.py [--seed 15] [--per-format 2] [--ordinary 240] [--json]

The corpus (bench/secrets_corpus.py) holds `--per-format` notes for each of its secret formats,
some split by an invisible character, and `--ordinary` technical notes full of things that
look like secrets. Each note goes through `secrets.scan`, what the pre-commit hook, `write` and
capture use. A secret counts as found if the note is flagged; an ordinary note flagged is a
false positive. Goals (issue 15): recall >= 98 %, false positives <= 1 %.

The corpus and git-strata's own rules were written together, so the same run scores an
independent reference on it: detect-secrets' own scanner as its CLI runs it (every plugin,
entropy and keyword ones included, with its default filters), each note in a file of its own.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import secrets_corpus as corpus

from benchlib import emit


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seed", type=int, default=15)
    p.add_argument("--per-format", type=int, default=2)
    p.add_argument("--ordinary", type=int, default=240)
    p.add_argument("--json", action="store_true")
    args = p.parse_args()
    from strata_git.core import secrets

    maintained = {r for r, _, _ in getattr(secrets, "maintained", list)()}  # (older versions had none)
    rng = random.Random(args.seed)
    positives = corpus.secrets(rng, args.per_format)
    negatives = corpus.ordinary(rng, args.ordinary)
    missed = [s for s in positives if not secrets.scan(s.text)]
    flagged = [(s, secrets.scan(s.text)[0].rule) for s in negatives if secrets.scan(s.text)]
    rules = Counter(secrets.scan(s.text)[0].rule for s in positives if secrets.scan(s.text))
    formats = {s.kind.removesuffix(" (split)") for s in positives}
    out = {
        "seed": args.seed, "secrets": len(positives), "formats": len(formats),
        "split_by_invisible_characters": sum(s.kind.endswith("(split)") for s in positives),
        "ordinary": len(negatives), "ordinary_kinds": len({s.kind for s in negatives}),
        "recall": round(1 - len(missed) / len(positives), 4),
        "false_positive_rate": round(len(flagged) / len(negatives), 4),
        "missed": sorted({s.kind for s in missed}),
        "false_positives": sorted({f"{s.kind} ({rule})" for s, rule in flagged}),
        "maintained_rules_used": sum(n for rule, n in rules.items() if rule in maintained),
        "own_rules_used": sum(n for rule, n in rules.items() if rule not in maintained),
    }
    ref_missed, ref_flagged = reference(positives, negatives)
    out["reference_detect_secrets"] = {
        "recall": round(1 - len(ref_missed) / len(positives), 4),
        "false_positive_rate": round(len(ref_flagged) / len(negatives), 4),
        "missed": sorted({s.kind for s in ref_missed}), "false_positives": sorted({s.kind for s in ref_flagged})}
    out["goals"] = {"recall_ge_98": out["recall"] >= 0.98, "false_positives_le_1": out["false_positive_rate"] <= 0.01}

    def report(o: dict) -> None:
        print(f"{o['secrets']} secrets in {o['formats']} formats ({o['split_by_invisible_characters']} split by an "
              f"invisible character), {o['ordinary']} ordinary notes of {o['ordinary_kinds']} kinds (seed {o['seed']})")
        print(f"recall {o['recall']:.1%}  (missed: {', '.join(o['missed']) or 'none'})")
        print(f"false positives {o['false_positive_rate']:.1%}  ({', '.join(o['false_positives']) or 'none'})")
        print(f"findings by detect-secrets' rules: {o['maintained_rules_used']}, by git-strata's own: "
              f"{o['own_rules_used']}")
        ref = o["reference_detect_secrets"]
        print(f"reference, detect-secrets' own scanner: recall {ref['recall']:.1%}, false positives "
              f"{ref['false_positive_rate']:.1%}")
        print(f"  it missed: {', '.join(ref['missed']) or 'none'}")
        print(f"  it flagged: {', '.join(ref['false_positives']) or 'none'}")
        print("goals:", ", ".join(f"{k} {'met' if v else 'MISSED'}" for k, v in o["goals"].items()))

    emit(out, args.json, report)


def reference(positives: list, negatives: list) -> tuple[list, list]:
    """(secrets missed, ordinary notes flagged) by detect-secrets' scanner with its defaults."""
    from detect_secrets import SecretsCollection
    from detect_secrets.settings import default_settings

    def flagged(text: str, folder: str) -> bool:
        path = os.path.join(folder, "note.md")
        with open(path, "w", encoding="utf-8") as f:
            f.write(text + "\n")
        found = SecretsCollection()
        found.scan_file(path)
        return any(True for name in found.files for _ in found[name])

    with tempfile.TemporaryDirectory() as folder, default_settings():
        return ([s for s in positives if not flagged(s.text, folder)],
                [s for s in negatives if flagged(s.text, folder)])


if __name__ == "__main__":
    main()
