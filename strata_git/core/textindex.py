"""Turning text into search terms, the same way for memories, for archive records and for queries.

SQLite FTS5's unicode61 tokenizer splits on spaces and punctuation, which leaves a
Chinese or Japanese sentence as one giant token. So text is tokenized here, before
FTS5 sees it, in two steps:

1. `tokens()`: words, lower-cased and NFKC-folded, and every run of Han, kana or Hangul
   as its overlapping two-character pieces ("记忆系统" -> "记忆 忆系 系统"), so a
   two-character query word matches inside a longer run; an emoji or other pictograph is a
   token of its own, spelled `u` + its code point in hex ("🎉" -> "u1f389"), so that it is a
   word to FTS5 and to archive records alike. An archive record keeps these surface tokens
   with their counts, so it never depends on the rules of step 2.
2. `terms()`: stop words dropped and every other word reduced to its Snowball (English)
   stem, so "hosted", "hosts" and "hosting" are one term. The index also holds each
   character of a CJK piece, so a one-character query ("猫") finds it inside a longer run
   ("黑猫很可爱"). This is the ranking policy, applied when the index is built: changing it
   rebuilds the index, never the records.

A query goes through the same two steps and each term is quoted, so no text an agent
types can be FTS5 syntax.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Mapping

import Stemmer

# Han (incl. extension A and compatibility), Hiragana, Katakana, Hangul syllables and jamo.
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af\u1100-\u11ff\u31f0-\u31ff"
# What FTS5's unicode61 keeps together (letters and digits), so each token stays one FTS5 token.
# A CJK run is its own token even when a Latin word touches it ("heron项目" -> "heron", "项目").
# Pictographs: emoji and the older symbol blocks they grew from.
_PICTO = "\u2600-\u27bf\u2b00-\u2bff\U0001f000-\U0001faff"
# Text that is ASCII once folded (most of it) holds no CJK and no pictograph, so the full pattern
# finds in it exactly `_ASCII_TOKEN`'s words. The patterns with the large classes are compiled on
# first need: compiling them took about 10 ms of every process that indexes or searches a memory.
_ASCII_TOKEN = re.compile(r"[a-z0-9]+")


@functools.cache
def _unicode() -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    """(a token, a pictograph, the start of a CJK run): the patterns for text that is not ASCII."""
    return (re.compile(f"[{_CJK}]+|[{_PICTO}]|[^\\W_{_CJK}]+", re.UNICODE), re.compile(f"[{_PICTO}]"),
            re.compile(f"^[{_CJK}]"))


def _cjk_start(word: str) -> bool:
    """Whether `word` starts with a Han, kana or Hangul character."""
    return not word.isascii() and _unicode()[2].match(word) is not None
MAX_QUERY_TERMS = 32
MAX_TOKEN_CHARS = 64
# English stop words (the common NLTK list, which bm25s and most BM25 setups use), plus the
# pieces contractions leave ("don't" -> "don", "t").
STOPWORDS = frozenset("""
i me my myself we our ours ourselves you your yours yourself yourselves he him his himself she her
hers herself it its itself they them their theirs themselves what which who whom this that these
those am is are was were be been being have has had having do does did doing a an the and but if or
because as until while of at by for with about against between into through during before after
above below to from up down in out on off over under again further then once here there when where
why how all any both each few more most other some such no nor not only own same so than too very s
t can will just don should now d ll m o re ve y ain aren couldn didn doesn hadn hasn haven isn ma
mightn mustn needn shan shouldn wasn weren won wouldn would could also
""".split())
_STEMMER = Stemmer.Stemmer("english")
_STEMMER.maxCacheSize = 100_000  # distinct words of a large memory repository; a dict lookup each


def tokens(text: str) -> list[str]:
    """Surface tokens of `text`, in order (duplicates kept)."""
    folded = unicodedata.normalize("NFKC", text).lower()
    if folded.isascii():
        return [word for word in _ASCII_TOKEN.findall(folded) if len(word) <= MAX_TOKEN_CHARS]
    token, picto, cjk = _unicode()
    out: list[str] = []
    for word in token.findall(folded):
        if word.isascii():  # (most words: neither a pictograph nor CJK, so no regex asked)
            if len(word) <= MAX_TOKEN_CHARS:
                out.append(word)
        elif picto.match(word):
            out.append(f"u{ord(word):x}")
        elif cjk.match(word):
            out.extend(word[i:i + 2] for i in range(max(1, len(word) - 1)))
        elif len(word) <= MAX_TOKEN_CHARS:
            out.append(word)
    return out


# token -> its term ("" for a stop word): a repository's vocabulary is tens of thousands of
# words, each looked up millions of times when the index is rebuilt.
_TERMS: dict[str, str] = {}
_MAX_TERMS = 500_000


def _term(token: str) -> str:
    found = _TERMS.get(token)
    if found is None:
        found = "" if token in STOPWORDS else token if _cjk_start(token) else _STEMMER.stemWord(token)
        if len(_TERMS) < _MAX_TERMS:
            _TERMS[token] = found
    return found


def terms(surface: Iterable[str]) -> list[str]:
    """Terms of surface tokens, in order: stop words dropped, the rest stemmed (a query's terms)."""
    return [term for term in map(_term, surface) if term]


def _chars(token: str) -> tuple[str, ...]:
    """The characters a CJK piece adds to the index (none for any other token)."""
    return tuple(token) if len(token) == 2 and _cjk_start(token) else ()


def index_terms(surface: Iterable[str]) -> list[str]:
    """Terms the index holds for surface tokens: `terms`, and each character of a CJK piece."""
    out: list[str] = []
    for token in surface:
        term = _term(token)
        if term:
            out.append(term)
            out.extend(_chars(token))
    return out


def counted_terms(counts: Mapping[str, int], into: dict[str, int] | None = None) -> dict[str, int]:
    """{term: count} from {surface token: count} (words that share a stem add up), added to `into`."""
    out: dict[str, int] = {} if into is None else into
    known = _TERMS  # (the loop of a rebuild: millions of tokens, so no call per known one)
    for token, n in counts.items():
        term = known.get(token)
        if term is None:
            term = _term(token)
        if term:
            out[term] = out.get(term, 0) + n
            if len(term) == 2:  # (a CJK piece's characters are terms too; the test first: millions of terms)
                for char in _chars(term):
                    out[char] = out.get(char, 0) + n
    return out


def indexed(text: str) -> str:
    """`text` as the full-text index holds it: its terms joined by spaces."""
    return " ".join(index_terms(tokens(text)))


def spelled_out(counts: Mapping[str, int]) -> str:
    """A document FTS5 scores exactly like the text the counts came from (bm25 looks at how often
    each term occurs and how many there are, never at their order): each term `count` times."""
    return "".join((t + " ") * counts[t] for t in sorted(counts)).rstrip()


def document(title: str, tags: Iterable[str], type_: str, name: str, body: Mapping[str, int]) -> tuple[str, str, str]:
    """(title, tags, body) columns as the index holds one memory, live or archived alike: the same
    text gives the same columns, so an archived memory scores exactly as it did live. `body`
    counts the surface tokens of the memory's body; its name's words are part of the body."""
    return (indexed(title), indexed(" ".join(tags) + " " + type_),
            spelled_out(counted_terms(Counter(tokens(name.replace("/", " "))), counted_terms(body))))


# Words that frame a question to memory ("what did we decide about login?") rather than name what
# it is about: dropped from a query that has other words (their stems: a query is stemmed first).
ASKING = frozenset(_STEMMER.stemWords("""
decide decided remember recall remind know knew tell told say said think thought agree agreed discuss
discussed mention mentioned talk talked again ever please anything something thing things stuff
""".split()))
_PICTO_TERM = re.compile(r"^u[0-9a-f]{4,5}$")  # a pictograph's spelling (see tokens)
PREFIX = "\0"  # marks a query term to be matched as the start of a word (see `prefixable`)
LONGER = "\1"  # marks a query term whose longer words are matched, the term itself not ("cockroachdb")
MIN_PREFIX = 4


def query_terms(query: str) -> list[str]:
    """A query's distinct terms (stop words dropped, stemmed; the words that only frame a question,
    ASKING, dropped too when any other word is left), at most MAX_QUERY_TERMS."""
    found = list(dict.fromkeys(terms(tokens(query))))
    return ([t for t in found if t not in ASKING] or found)[:MAX_QUERY_TERMS]


def prefixable(term: str) -> bool:
    """Whether a query term no memory holds may be looked for as a word's start ("cockroach" finds
    "CockroachDB"): a word of MIN_PREFIX characters or more, not CJK (whose pieces are matched)."""
    return len(term) >= MIN_PREFIX and not _cjk_start(term) and not _PICTO_TERM.match(term)


def expression(terms: list[str]) -> str:
    """An FTS5 MATCH expression: each term quoted (so no text is ever FTS5 syntax), OR-ed; a term
    marked with PREFIX matches any word it starts, one marked with LONGER any word it starts but
    itself."""
    def one(term: str) -> str:
        word = '"' + term.lstrip(PREFIX + LONGER).replace('"', '""') + '"'
        return word + "*" if term.startswith(PREFIX) else f"({word}* NOT {word})" if term.startswith(LONGER) else word

    return " OR ".join(map(one, terms))


def match_expression(query: str) -> str:
    """The MATCH expression for any text; "" when it has no searchable term."""
    return expression(query_terms(query))


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
