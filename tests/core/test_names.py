"""Collision keys: two names with equal keys differ only by case or Unicode normalization."""

from __future__ import annotations

import random
import string
import unicodedata

from strata_git.core import names


def _slow(name: str) -> str:
    return unicodedata.normalize("NFC", unicodedata.normalize("NFKD", name).casefold())


def test_the_ascii_shortcut_gives_the_key_the_full_normalization_gives():
    rng = random.Random(5)
    alphabet = string.printable + "ßÉéﬁ＿Ａ\u0301ı"
    for _ in range(3000):
        name = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 24)))
        assert names.collision_key(name) == _slow(name), repr(name)
    assert names.collision_key("Projects/KODA.md") == "projects/koda.md"
    assert names.collision_key("Straße/Été.md") == names.collision_key("STRASSE/e\u0301te\u0301.md")
