"""A memory cut into the pieces meaning search embeds: whole paragraphs (a captured session's turns
are paragraphs too), each piece at most CHARS characters, the memory's title before each, so a
piece read alone still says what it is about. A memory scores as its best piece: a long memory is
found by the paragraph that answers, not diluted by the rest. Pure: text in, text out.
"""

from __future__ import annotations

import re

CHARS = 900  # about 240 tokens of English prose: well inside the models' 256-token window
MAX_CHUNKS = 64  # pieces of one memory embedded at most (a 1 MiB memory is not 1,000 pieces)
_SENTENCE = re.compile(r"(?<=[.!?。！？])\s+")


def chunks(title: str, body: str) -> list[str]:
    """The pieces of a memory, in order: consecutive paragraphs joined while they fit in CHARS, a
    paragraph longer than that cut at sentence ends (or, failing those, every CHARS characters)."""
    head = " ".join(title.split())
    room = max(200, CHARS - len(head) - 2)
    parts = [part for paragraph in _paragraphs(body) for part in _parts(paragraph, room)]
    pieces = _packed(parts, room, "\n") or [""]
    return [f"{head}\n{p}".strip() if head else p for p in pieces[:MAX_CHUNKS]]


def _packed(parts: list[str], room: int, joint: str) -> list[str]:
    """`parts` joined in order into as few pieces of at most `room` characters as they fit in."""
    pieces: list[str] = []
    current = ""
    for part in parts:
        if current and len(current) + 1 + len(part) > room:
            pieces.append(current)
            current = ""
        current = f"{current}{joint}{part}" if current else part
    if current:
        pieces.append(current)
    return pieces


def _paragraphs(body: str) -> list[str]:
    """The body's paragraphs, whitespace inside each collapsed."""
    return [text for block in re.split(r"\n\s*\n", body) if (text := " ".join(block.split()))]


def _parts(paragraph: str, room: int) -> list[str]:
    """A paragraph in sentences packed up to `room`; a sentence longer than that cut by length."""
    if len(paragraph) <= room:
        return [paragraph]
    sentences = [s[i:i + room] for s in _SENTENCE.split(paragraph) for i in range(0, len(s), room)]
    return _packed(sentences, room, " ")
