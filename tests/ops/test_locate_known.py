"""A name is checked against what it could collide with only (the keys of the name and of the
folders above it): the same answer as a check against every memory, for look-alikes by case,
accents, compatibility forms and folders."""

from __future__ import annotations

from pathlib import Path

from strata_git.errors import BadName
from strata_git.gitio.git import discover
from strata_git.ops import locate

ON_DISK = ["active/Bench/X.md", "cooled/Ünïcode/Été.md", "active/ünïcode/other.md", "active/FILE/ss.md",
           "cooled/A/B/c.md", "active/Straße/x.md", "active/strasse/y.md", "active/ＡＢ/z.md", "cooled/x.md",
           "active/notes/plain.md", "cooled/notes/Plain2.md", "active/x.md.md/inner.md"]
ASKED = ["bench/x", "Bench/X", "bench/y", "ünïcode/été", "UNICODE/ete", "file/SS", "FILE/ß", "ab/z", "AB/q",
         "a/b/c", "a/B/d", "a/b", "x", "X", "strasse/x", "straße/y", "notes/plain", "Notes/new", "notes/plain2",
         "x.md/inner", "brand/new", "straße"]


def _answer(repo, name: str, known=None):
    try:
        return locate.locate(repo, name, known)
    except BadName as e:
        return ("refused", e.message)


def test_the_check_against_a_names_look_alikes_answers_as_the_check_against_every_memory(mem: Path):
    for path in ON_DISK:
        (mem / path).parent.mkdir(parents=True, exist_ok=True)
        (mem / path).write_text("---\ntitle: t\n---\nbody\n", encoding="utf-8")
    repo = discover(str(mem))
    everything = locate.known(repo)
    answers = {name: _answer(repo, name) for name in ASKED}
    assert answers == {name: _answer(repo, name, everything) for name in ASKED}
    refused = {name for name, a in answers.items() if a[0] == "refused"}
    assert refused == {"bench/x", "bench/y", "ünïcode/été", "file/SS", "FILE/ß", "ab/z", "AB/q", "a/b/c", "a/B/d",
                       "a/b", "X", "strasse/x", "straße/y", "Notes/new", "notes/plain2", "x.md/inner"}
    assert answers["Bench/X"] == ("active", "Bench/X.md") and answers["x"] == ("cooled", "x.md")
    assert answers["UNICODE/ete"] == (None, "UNICODE/ete.md")  # other letters, not another spelling of them
    assert answers["brand/new"] == (None, "brand/new.md")
