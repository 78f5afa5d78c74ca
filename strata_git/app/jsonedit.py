"""Edit a JSON document as text: find the span of each value, and add, remove or replace one
member of an object (one item of an array) by splicing text, so that every other byte stays as
it was: number spellings (`1e5`, `1e400`), duplicate keys, key order, spacing, indentation,
line endings, a byte order mark, a missing final newline. Re-serialising the parsed value, as
json.dumps does, would change all of these.

Strict JSON only (what JSON.parse accepts): no comments, no trailing commas, no NaN.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from json.decoder import scanstring  # type: ignore[attr-defined]  # typeshed leaves it out

_SPACE = re.compile(r"[ \t\n\r]*")
_INDENT = re.compile(r"[ \t]*")
_KINDS = {"{": "object", "[": "array", '"': "string", "t": "literal", "f": "literal", "n": "literal"}


class Invalid(ValueError):
    """Not strict JSON; the message says what and where (line and column)."""

    def __init__(self, what: str, text: str, pos: int | None) -> None:
        if pos is None:
            super().__init__(what)
            return
        line, column = text.count("\n", 0, pos) + 1, pos - text.rfind("\n", 0, pos)
        super().__init__(f"{what} at line {line} column {column}")


@dataclass(frozen=True, eq=False)
class Node:
    """A value's span in the text; an object's or array's members, read when first asked for (only
    the containers on the way to what is edited are; the rest is skipped at the C decoder's speed)."""

    text: str = field(repr=False)
    start: int
    end: int

    @property
    def kind(self) -> str:  # "object", "array", "string", "number" or "literal"
        return _KINDS.get(self.text[self.start], "number")

    @cached_property
    def members(self) -> tuple[Member, ...]:
        return _members(self) if self.kind in ("object", "array") else ()

    def get(self, key: str) -> list[Member]:
        """Every member under `key` (JSON allows a key twice; JSON.parse keeps the last)."""
        return [m for m in self.members if m.key == key]

    def index(self, key: str) -> int:
        return next(i for i, m in enumerate(self.members) if m.key == key)


@dataclass(frozen=True)
class Member:
    start: int  # where its key starts (an array item: where its value starts)
    key: str | None  # None: an array's item
    value: Node


@lru_cache(maxsize=4)  # an edit finds its way from the top again in the same text; ~/.claude.json runs to megabytes
def parse(text: str) -> Node:
    """The document's value (a byte order mark before it is allowed); Invalid if `text` is not JSON."""
    start = _skip(text, 1 if text.startswith("\ufeff") else 0)
    end = _end(text, start)
    if _skip(text, end) != len(text):
        raise Invalid("extra data after the value", text, _skip(text, end))
    return Node(text, start, end)


def load(text: str, node: Node) -> object:
    """The Python value of one node."""
    return json.loads(text[node.start:node.end])


def insert(text: str, container: Node, key: str | None, value: object) -> str:
    """`text` with `value` added as the last member of `container` (under `key`; None for an array),
    laid out as the member before it is; in an empty container, as the document is."""
    nl, unit = "\r\n" if "\r\n" in text else "\n", _unit(text)
    colon = _colon(text)
    if container.members:
        last = container.members[-1]
        after = container.members[-2].value.end if len(container.members) > 1 else container.start + 1
        lead = text[after:last.start].rpartition(",")[2]  # the white space before the last member
        if len(container.members) == 1 and "\n" not in lead:  # `{"a": 1}`: no comma to copy; spaced as colons are
            lead = " " if colon == ": " else ""
        if key is not None:
            colon = text[_key_end(text, last):last.value.start]
        indent = lead.rpartition("\n")[2] if "\n" in lead else None
        piece = "," + lead + _render(key, value, colon, indent, nl, unit)
        return text[:last.value.end] + piece + text[last.value.end:]
    if "\n" in text.strip() or not parse(text).members:  # a document on several lines (or an empty one)
        outer = _run(_INDENT, text, text.rfind("\n", 0, container.start) + 1)
        body = nl + outer + unit + _render(key, value, ": ", outer + unit, nl, unit) + nl + outer
    else:
        body = _render(key, value, colon, None, nl, unit)
    return text[:container.start + 1] + body + text[container.end - 1:]


def remove(text: str, container: Node, index: int) -> str:
    """`text` without the member at `index` of `container`, and without the comma that separated it."""
    members = container.members
    if len(members) == 1:
        return text[:container.start + 1] + text[container.end - 1:]
    if index < len(members) - 1:
        return text[:members[index].start] + text[members[index + 1].start:]
    return text[:members[index - 1].value.end] + text[members[index].value.end:]


def replace(text: str, node: Node, value: object) -> str:
    """`text` with `value` in place of the value at `node` (on several lines if the old one was)."""
    indent = None
    if "\n" in text[node.start:node.end]:
        indent = _run(_INDENT, text, text.rfind("\n", 0, node.start) + 1)
    nl = "\r\n" if "\r\n" in text else "\n"
    return text[:node.start] + _render(None, value, _colon(text), indent, nl, _unit(text)) + text[node.end:]


def _render(key: str | None, value: object, colon: str, indent: str | None, nl: str, unit: str) -> str:
    """`value` (after `"key"` and `colon`) on one line, spaced as `colon` is, or indented by `unit` below `indent`."""
    if indent is None:
        out = json.dumps(value, ensure_ascii=False, separators=(", ", ": ") if colon.endswith(" ") else (",", ":"))
    else:
        out = json.dumps(value, ensure_ascii=False, indent=unit).replace("\n", nl + indent)
    return out if key is None else json.dumps(key, ensure_ascii=False) + colon + out


def _colon(text: str) -> str:
    """": " unless the document is written compact (`{"a":1}`)."""
    return ": " if re.search(r'":[ \t]', text) else ":"


def _unit(text: str) -> str:
    """One level of indentation as the document's first indented line has it (a tab, or spaces), else 2 spaces."""
    found = re.search(r"\n([ \t]+)\S", text)
    if not found:
        return "  "
    return "\t" if found.group(1).startswith("\t") else found.group(1)


def _key_end(text: str, member: Member) -> int:
    end: int = scanstring(text, member.start + 1, True)[1]
    return end


def _run(pattern: re.Pattern[str], text: str, pos: int) -> str:
    """The run of `pattern`'s characters (zero or more: it always matches) at `pos`."""
    found = pattern.match(text, pos)
    assert found is not None
    return found.group()


def _skip(text: str, pos: int) -> int:
    return pos + len(_run(_SPACE, text, pos))


def _no_constant(name: str) -> object:
    raise ValueError(f"{name} is not JSON")


_DECODER = json.JSONDecoder(parse_constant=_no_constant)  # strict: control characters in strings refused too


def _end(text: str, pos: int) -> int:
    """Where the value at `pos` ends (it is read, and so checked, by the C decoder)."""
    try:
        return _DECODER.raw_decode(text, pos)[1]
    except json.JSONDecodeError as e:
        raise Invalid(e.msg, text, e.pos) from None
    except ValueError as e:  # NaN or Infinity, somewhere inside
        raise Invalid(str(e), text, None) from None
    except RecursionError:
        raise Invalid("nested too deeply", text, pos) from None


def _members(node: Node) -> tuple[Member, ...]:
    """One level of an object's (array's) members; what is inside them was checked by parse."""
    text, close = node.text, "}" if node.kind == "object" else "]"
    members: list[Member] = []
    pos = _skip(text, node.start + 1)
    while not text.startswith(close, pos):
        at, key = pos, None
        if close == "}":
            key, pos = scanstring(text, pos + 1, True)
            pos = _skip(text, _skip(text, pos) + 1)  # past the colon
        end = _end(text, pos)
        members.append(Member(at, key, Node(text, pos, end)))
        pos = _skip(text, end)
        pos = _skip(text, pos + 1) if text.startswith(",", pos) else pos
    return tuple(members)
