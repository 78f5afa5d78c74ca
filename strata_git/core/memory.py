"""The memory format: UTF-8 Markdown with optional, safely parsed YAML frontmatter.

A Memory keeps the exact bytes it was read from. Nothing here re-serializes an
existing memory, so a read-then-write round trip is byte-identical by
construction; only `compose` (new metadata asked for by the user) renders YAML,
and it keeps the existing key order.

YAML is untrusted: before composing any node the event stream is walked to refuse
anchors, aliases, explicit tags, merge keys and deep nesting, so alias bombs and
recursion bombs are stopped before they expand. Keys must be unique strings;
dates stay strings; only true/false are booleans (the Norway problem: `no` is a
string).
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple, Protocol

from strata_git.errors import BadMemory

MAX_FRONTMATTER_BYTES = 16 * 1024
MAX_DEPTH = 8
TYPE_PATTERN = re.compile(r"^[a-z][a-z0-9_-]{0,39}$")
# Control and direction-changing characters: refused in metadata (tab and newline excepted: a
# folded YAML scalar ends in one) and replaced by spaces wherever text is displayed.
_BIDI = "\u202a-\u202e\u2066-\u2069"
_CONTROL = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{_BIDI}]")
UNSAFE_TO_DISPLAY = re.compile(f"[\x00-\x1f\x7f-\x9f{_BIDI}]")


class Memory(NamedTuple):
    """A parsed memory. `raw` is the exact content; `meta` the validated frontmatter (do not mutate)."""

    raw: bytes
    meta: dict[str, Any]
    body: str
    has_frontmatter: bool = False
    frontmatter_hash: str = ""  # sha1 of the frontmatter's exact text

    @property
    def title(self) -> str:
        return self.meta.get("title") or _first_heading(self.body)

    @property
    def type(self) -> str:
        return self.meta.get("type") or "note"

    @property
    def tags(self) -> list[str]:
        return list(self.meta.get("tags") or [])

    @property
    def project(self) -> str:
        from strata_git.core import projects

        return projects.of_meta(self.meta)


def _first_heading(body: str) -> str:
    for line in body.splitlines():
        stripped = line.strip()
        if stripped.startswith("#"):
            return stripped.lstrip("#").strip()
        if stripped:
            return stripped[:80]
    return ""


def _bad(where: str, why: str, hint: str) -> BadMemory:
    return BadMemory(f"{where}: {why}", hint)


def decode(raw: bytes, where: str) -> str:
    """UTF-8 text of a memory, or BadMemory saying why it is not one."""
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise _bad(where, "it is UTF-16 (it starts with a UTF-16 byte-order mark)", "save it as UTF-8")
    if raw.startswith(b"\xef\xbb\xbf"):
        raise _bad(where, "it starts with a byte-order mark", "save it as UTF-8 without BOM")
    if b"\0" in raw:
        raise _bad(where, "it is binary (it contains NUL bytes)", "store only Markdown text in memories")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        line = raw[: e.start].count(b"\n") + 1
        raise _bad(f"{where}:{line}", "it is not valid UTF-8", "save it as UTF-8") from None


def split(text: str, where: str) -> tuple[str | None, str, int]:
    """(frontmatter text or None, body, line number where the body starts)."""
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].rstrip("\r\n") != "---":
        return None, text, 1
    for i in range(1, len(lines)):
        if lines[i].rstrip("\r\n") == "---":
            return "".join(lines[1:i]), "".join(lines[i + 1:]), i + 2
    raise _bad(f"{where}:1", "the frontmatter opened here is never closed",
               "add a line '---' after the frontmatter, or remove the first line")


class Memo(Protocol):
    """Frontmatter already validated, by the hash of its exact text (see catalog.FrontmatterMemo)."""

    def get(self, key: str) -> dict[str, Any] | None: ...

    def put(self, key: str, meta: dict[str, Any]) -> None: ...


def parse(raw: bytes, where: str = "memory", memo: Memo | None = None) -> Memory:
    """Parse and validate a memory; raises BadMemory with file and line on any problem.

    With a memo, frontmatter text validated before is not parsed again: the same
    text always gives the same result, and importing PyYAML costs ~17 ms, which a
    commit hook pays only when a commit brings frontmatter it has not seen.
    """
    text = decode(raw, where)
    fm, body, _ = split(text, where)
    if fm is None:
        return Memory(raw=raw, meta={}, body=body)
    import hashlib

    key = hashlib.sha1(fm.encode("utf-8")).hexdigest()
    meta = memo.get(key) if memo is not None else None
    if meta is None:
        meta = parse_frontmatter(fm, where)
        if memo is not None:
            memo.put(key, meta)
    return Memory(raw=raw, meta=meta, body=body, has_frontmatter=True, frontmatter_hash=key)


def parse_frontmatter(fm: str, where: str) -> dict[str, Any]:
    if len(fm.encode("utf-8")) > MAX_FRONTMATTER_BYTES:
        raise _bad(where, f"the frontmatter is larger than {MAX_FRONTMATTER_BYTES // 1024} KiB",
                   "keep metadata short and put long text in the body")
    from strata_git.core import yamlsafe  # yaml is imported only when there is frontmatter

    data = yamlsafe.load(fm, where, first_line=2, max_depth=MAX_DEPTH)
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise _bad(f"{where}:2", f"the frontmatter is a {type(data).__name__}, not a mapping of keys",
                   "write it as 'key: value' lines")
    check_known_keys(data, where)
    return data


def check_known_keys(meta: dict[str, Any], where: str) -> None:
    """Type-check the keys git-strata understands; other keys are kept as they are."""
    title = meta.get("title")
    if title is not None and not (isinstance(title, str) and title.strip()):
        raise _bad(where, "'title' must be a non-empty string", "write title: Some words")
    tags = meta.get("tags")
    if tags is not None:
        if not isinstance(tags, list) or not all(isinstance(t, str) and t.strip() for t in tags):
            raise _bad(where, "'tags' must be a list of words", "write tags: [launch, q3]")
    kind = meta.get("type")
    if kind is not None and not (isinstance(kind, str) and TYPE_PATTERN.match(kind)):
        raise _bad(where, "'type' must be one lowercase word (note, decision, rejection, lesson, task, entity, ...)",
                   "write type: decision")
    created = meta.get("created")
    if created is not None and not _is_iso_date(created):
        raise _bad(where, "'created' must be an ISO 8601 date or time", "write created: 2026-11-22")
    for key in ("title", "type"):
        if isinstance(meta.get(key), str) and _CONTROL.search(meta[key]):
            raise _bad(where, f"'{key}' contains control or direction-changing characters", "remove them")
    if tags and any(_CONTROL.search(t) for t in tags):
        raise _bad(where, "'tags' contain control or direction-changing characters", "remove them")


def _is_iso_date(value: Any) -> bool:
    import datetime as _dt

    if not isinstance(value, str):
        return False
    try:
        if len(value) == 10:
            _dt.date.fromisoformat(value)
        else:
            _dt.datetime.fromisoformat(value)
    except ValueError:
        return False
    return True


def compose(text: str, updates: dict[str, Any], where: str) -> bytes:
    """Content with `updates` set in its frontmatter. Only the lines of the keys set change: the
    other keys, their order, comments, the line endings (CRLF stays CRLF) and the body are kept."""
    import frontmatter

    updates = {k: v for k, v in updates.items() if v is not None}
    for key, value in updates.items():
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, str) and UNSAFE_TO_DISPLAY.search(item):
                raise _bad(where, f"the {key} holds a line break or another control character",
                           f"give the {key} on one line, as plain text")
    fm, body, _ = split(text, where)
    meta = parse_frontmatter(fm, where) if fm is not None else {}
    meta.update(updates)
    check_known_keys(meta, where)
    newline = "\r\n" if (fm if fm is not None else text).count("\r\n") else "\n"
    lines = (fm or "").replace("\r\n", "\n").split("\n")[:-1] if fm else []  # (not splitlines: U+2028 is text)
    for key, value in updates.items():
        block = frontmatter.YAMLHandler().export({key: value}, sort_keys=False).splitlines()
        at = next((i for i, line in enumerate(lines) if line.startswith(f"{key}:")), None)
        if at is None:
            lines += block
            continue
        end = at + 1  # the key's value goes on over indented lines, `- ` list items and blank lines
        while end < len(lines) and (lines[end][:1] in (" ", "\t", "-") and not lines[end].startswith("---")
                                    or not lines[end].strip()):
            end += 1
        while end > at + 1 and not lines[end - 1].strip():  # blank lines after the value stay
            end -= 1
        lines[at:end] = block
    parse_frontmatter("\n".join(lines) + "\n", where)  # still one valid frontmatter
    return newline.join(["---", *lines, "---", ""]).encode() + body.encode()
