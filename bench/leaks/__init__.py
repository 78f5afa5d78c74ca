"""A labelled secret corpus written apart from git-strata's detection rules (see README.md).

    from leaks import samples, leaked       # with bench/ on sys.path
    positives, negatives = samples(15)

`samples(seed)` places every format of formats.py in every placement (prose, command, config)
with a fresh value, and draws the ordinary notes of notes.py; the same seed gives the same
corpus. `leaked(secret, stored)` says whether any of a secret got into stored text.
"""

from __future__ import annotations

import random
from typing import NamedTuple

from . import placements as P
from .formats import FORMATS, PREFIXES, Format
from .notes import ordinary

RUN = 12  # characters in a row of a secret that count as a leak
SHORT = 6  # a random part shorter than RUN counts when it appears whole, if at least this long


class Sample(NamedTuple):
    format: str  # the format's name, or the kind of an ordinary note
    placement: str  # prose, command or config
    text: str
    secret: str | None  # the exact secret (a block: all of it); None for an ordinary note
    source: str


def samples(seed: int) -> tuple[list[Sample], list[Sample]]:
    """(positives, negatives): each format once in each placement (plus its pinned
    templates), then the ordinary notes."""
    rng = random.Random(seed)
    positives = []
    for fmt in FORMATS:
        for placement in P.PLACEMENTS:
            positives.append(place(fmt, placement, rng.choice(templates(fmt, placement)), rng))
        positives += [place(fmt, placement, template, rng) for placement, template in fmt.pinned]
    negatives = [Sample(kind, placement, text, None, source)
                 for kind, placement, source, text in ordinary(random.Random(seed + 1))]
    return positives, negatives


def templates(fmt: Format, placement: str) -> tuple[str, ...]:
    own = getattr(fmt, placement)
    if own:
        return own
    if fmt.block:
        return {"prose": P.PROSE_BLOCK, "command": P.COMMAND_BLOCK, "config": P.CONFIG_BLOCK}[placement]
    if placement == "command":
        return P.COMMAND + (P.COMMAND_HTTP[fmt.auth] if fmt.auth else ())
    return P.PROSE if placement == "prose" else P.CONFIG


def place(fmt: Format, placement: str, template: str, rng: random.Random) -> Sample:
    value = fmt.make(rng)
    ctx = P.fields(rng, value, fmt.key, fmt.name, fmt.host)
    text = P.render(template, ctx, placement, rng)
    return Sample(fmt.name, placement, text, fmt.secret_of(value) if fmt.secret_of else value, fmt.source)


def leaked(secret: str, stored: str) -> bool:
    """True if any RUN (12) characters in a row of the secret's random part are in `stored`.

    The random part of each line of the secret (a block is checked line by line) is the line
    without surrounding whitespace and without the issuer's known prefix (formats.PREFIXES:
    `ghp_`, `sk-ant-api03-`, a DER header...), which is public and the same in every secret.
    Armour lines (`-----BEGIN ...`) are skipped; a random part shorter than 12 characters
    counts only when it appears whole (and is at least 6 long). A masked form that keeps a few
    characters (`ghp_****3hJ5`) is not a leak; any 12 characters of the secret in a row are.
    """
    for line in secret.splitlines():
        part = line.strip()
        if not part or part.startswith("-----"):
            continue
        prefix = next((p for p in PREFIXES if part.startswith(p)), "")
        part = part[len(prefix):]
        if len(part) >= RUN:
            if any(part[i:i + RUN] in stored for i in range(len(part) - RUN + 1)):
                return True
        elif len(part) >= SHORT and part in stored:
            return True
    return False


__all__ = ["FORMATS", "Sample", "leaked", "samples"]
