"""Golden round trips: a memory goes in and comes out byte for byte, on disk and in git."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import git
from strata_git.core import memory
from strata_git.errors import BadMemory

GOLDEN = sorted((Path(__file__).parents[1] / "golden").glob("*.md"))


@pytest.mark.parametrize("path", GOLDEN, ids=[p.stem for p in GOLDEN])
def test_golden_round_trip_is_byte_identical(vault, mem: Path, path: Path):
    raw = path.read_bytes()
    change = vault.write(f"golden/{path.stem}", raw)
    assert change.commit
    assert (mem / change.path).read_bytes() == raw
    assert git(mem, "show", f"HEAD:{change.path}").stdout == raw
    assert vault.read(f"golden/{path.stem}").memory.raw == raw
    # Writing back what was read changes nothing and makes no commit.
    again = vault.write(f"golden/{path.stem}", vault.read(f"golden/{path.stem}").memory.raw)
    assert again.commit is None


def test_golden_files_parse_as_expected():
    odd = memory.parse((Path(__file__).parents[1] / "golden/odd-formatting.md").read_bytes())
    assert list(odd.meta) == ["title", "tier", "created", "zeta", "alpha", "tags"]
    assert odd.meta["tier"] == "no" and odd.meta["created"] == "2026-01-02"
    assert odd.body.startswith("\n  indented first line\ntrailing spaces   \n")
    assert odd.body.endswith("last line without newline")
    crlf = memory.parse((Path(__file__).parents[1] / "golden/crlf.md").read_bytes())
    assert crlf.meta == {"title": "Windows", "type": "lesson"} and crlf.body == "CRLF body\r\nline two\r\n"


def test_setting_metadata_keeps_key_order_and_body(vault, mem: Path):
    raw = b"---\nzeta: 1\nalpha: 2\ntitle: Old\n---\n\n  body kept   \n"
    vault.write("k", raw)
    vault.write("k", (mem / "active/k.md").read_bytes(), title="New", type="decision")
    parsed = memory.parse((mem / "active/k.md").read_bytes())
    assert list(parsed.meta) == ["zeta", "alpha", "title", "type"]
    assert parsed.meta["title"] == "New"
    assert parsed.body == "\n  body kept   \n"


def test_title_falls_back_to_first_heading():
    assert memory.parse(b"\n# Heading here\ntext").title == "Heading here"
    assert memory.parse(b"---\ntitle: T\n---\n# H\n").title == "T"


class DictMemo(dict):
    def put(self, key, meta):
        self[key] = meta


def test_validated_frontmatter_is_not_parsed_again(monkeypatch):
    memo = DictMemo()
    first = memory.parse(b"---\ntitle: Once\ntags: [a]\n---\nbody one\n", "x.md", memo)
    assert len(memo) == 1 and first.meta == {"title": "Once", "tags": ["a"]}

    def explode(*_):
        raise AssertionError("parsed again")

    monkeypatch.setattr(memory, "parse_frontmatter", explode)
    again = memory.parse(b"---\ntitle: Once\ntags: [a]\n---\nanother body\n", "x.md", memo)
    assert again.meta == first.meta and again.body == "another body\n"
    with pytest.raises(AssertionError):  # different frontmatter text is parsed (and checked)
        memory.parse(b"---\ntitle: Twice\n---\n", "x.md", memo)


def test_invalid_frontmatter_never_enters_the_memo():
    memo = DictMemo()
    with pytest.raises(BadMemory):
        memory.parse(b"---\ntitle: a\ntitle: b\n---\n", "x.md", memo)
    assert memo == {}
