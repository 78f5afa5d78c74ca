"""Turning text into search terms, the same way for memories and for queries.

SQLite FTS5's unicode61 tokenizer splits on spaces and punctuation, which leaves a
Chinese or Japanese sentence as one giant token. So text is tokenized here, before
FTS5 sees it: words are lower-cased and NFKC-folded, and every run of Han, kana or
Hangul becomes its overlapping two-character pieces ("记忆系统" -> "记忆 忆系 系统"),
so a two-character query word matches inside a longer run. A query is built from
the same tokens, each one quoted, so no text an agent types can be FTS5 syntax.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter

# Han (incl. extension A and compatibility), Hiragana, Katakana, Hangul syllables and jamo.
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af\u1100-\u11ff\u31f0-\u31ff"
# What FTS5's unicode61 keeps together (letters and digits), so each token stays one FTS5 token.
_TOKEN = re.compile(f"[{_CJK}]+|[^\\W_]+", re.UNICODE)
_CJK_RUN = re.compile(f"^[{_CJK}]")
MAX_QUERY_TERMS = 32
MAX_TOKEN_CHARS = 64
STOPWORDS = frozenset("""
a an and are as at be but by can did do does for from had has have how i if in into is it its
me my no not of on or our so that the their them then there these they this to was we were what
when where which who why will with you your about after all also any been before being both
could each few more most other some such than too very would should just over under again
""".split())


def tokens(text: str) -> list[str]:
    """Search tokens of `text`, in order (duplicates kept)."""
    out: list[str] = []
    for match in _TOKEN.finditer(unicodedata.normalize("NFKC", text).lower()):
        word = match.group()
        if _CJK_RUN.match(word):
            out.extend(word[i:i + 2] for i in range(max(1, len(word) - 1)))
        elif len(word) <= MAX_TOKEN_CHARS:
            out.append(word)
    return out


def indexed(text: str) -> str:
    """`text` as FTS5 should store it: tokens joined by spaces."""
    return " ".join(tokens(text))


def query_terms(query: str) -> list[str]:
    """A query's distinct tokens, stop words dropped when others remain, at most MAX_QUERY_TERMS."""
    seen = list(dict.fromkeys(tokens(query)))
    return ([t for t in seen if t not in STOPWORDS] or seen)[:MAX_QUERY_TERMS]


def is_prefix(term: str) -> bool:
    """Words of 4+ letters also match as prefixes ("deploy" finds "deployment"); CJK pieces need not."""
    return len(term) >= 4 and not _CJK_RUN.match(term)


def expression(terms: list[str]) -> str:
    """An FTS5 MATCH expression: each term quoted (so no text is ever FTS5 syntax), OR-ed."""
    return " OR ".join('"' + t.replace('"', '""') + '"' + ("*" if is_prefix(t) else "") for t in terms)


def match_expression(query: str) -> str:
    """The MATCH expression for any text; "" when it has no searchable token."""
    return expression(query_terms(query))


def keywords(text: str, limit: int = 48) -> list[str]:
    """The `limit` most frequent non-stop-word tokens (ties: first occurrence first)."""
    counts = Counter(t for t in tokens(text) if t not in STOPWORDS and (len(t) > 1 or _CJK_RUN.match(t)))
    first: dict[str, int] = {}
    for i, t in enumerate(counts):
        first[t] = i
    return sorted(counts, key=lambda t: (-counts[t], first[t]))[:limit]


def preview(body: str, limit: int = 160) -> str:
    """The first `limit` characters of the body's prose, whitespace collapsed, headings' marks dropped."""
    lines = [line.strip().lstrip("#").strip() for line in body.splitlines()]
    text = " ".join(line for line in lines if line)
    text = re.sub(r"\s+", " ", text)
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def snippet(text: str, terms: list[str], width: int = 160) -> str:
    """About `width` characters of `text` around the first place a query term appears."""
    flat = re.sub(r"\s+", " ", text).strip()
    folded = unicodedata.normalize("NFKC", flat).lower()
    if len(folded) != len(flat):  # NFKC changed lengths: positions would not line up
        folded = flat.lower()
    hits = [pos for pos in (folded.find(t) for t in terms) if pos >= 0]
    if not hits:
        return flat[:width] + ("…" if len(flat) > width else "")
    start = max(0, min(hits) - width // 3)
    piece = flat[start:start + width]
    return ("…" if start else "") + piece + ("…" if start + width < len(flat) else "")
