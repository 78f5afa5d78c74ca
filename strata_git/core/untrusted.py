"""The one reader for what arrives from history, refs or another machine: commit dates, trailers,
access records. Another clone, a plain `git commit` or a buggy or hostile machine wrote them, and
sync spreads them to every clone, so each value is range- and type-checked here before use.

A bad value is skipped (or a date clamped where skipping would lose more), never a crash and
never copied forward into a new commit. Each is reported once per process as a one-line warning
naming the commit or ref it came from: the CLI prints them on stderr, and `status` lists them
under problems.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from strata_git.core.memory import UNSAFE_TO_DISPLAY

MAX_TIME = 253_402_300_799  # 9999-12-31T23:59:59Z: the last second Python's datetime (and git) can show
MAX_WARNINGS = 100  # kept per process; past that, one line says how many more
_MAX_TEXT = 4096  # characters of a trailer's text value (a name, a rule, a tier)

_warnings: dict[str, None] = {}
_more = 0


def warn(where: str, what: str) -> None:
    """Note a skipped value: `where` names the commit or ref, `what` says what was wrong and what
    was done instead."""
    global _more
    line = f"{where}: {what}"
    if line in _warnings:
        return
    if len(_warnings) >= MAX_WARNINGS:
        _more += 1
        return
    _warnings[line] = None


def warnings() -> list[str]:
    """Every warning of this process so far (see `warn`)."""
    tail = [f"... and {_more} more value(s) skipped from history"] if _more else []
    return list(_warnings) + tail


def drain() -> list[str]:
    """The warnings so far, forgotten (a long-running server reports each batch once)."""
    global _more
    found = warnings()
    _warnings.clear()
    _more = 0
    return found


def stamp(value: object) -> int | None:
    """A Unix time as a whole number of seconds, if `value` is one a date can show: a finite int or
    float (not a bool) from 0 to MAX_TIME. Text is parsed as a number (git's `%ct` prints text)."""
    if isinstance(value, bytes | str):
        text = value.strip()
        if not text or len(text) > 20:
            return None
        try:
            value = int(text)
        except ValueError:
            return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return int(value) if 0 <= value <= MAX_TIME else None


def text(value: object, limit: int = _MAX_TEXT) -> str | None:
    """A string without control or direction-changing characters, at most `limit` characters;
    None otherwise."""
    if not isinstance(value, str) or len(value) > limit:
        return None
    return None if UNSAFE_TO_DISPLAY.search(value) else value


def json_object(raw: str | bytes) -> dict | None:
    """A JSON object, or None. NaN and Infinity, which Python's json accepts, are refused."""
    try:
        found = _DECODER.decode(raw.decode("utf-8") if isinstance(raw, bytes) else raw)
    except (ValueError, RecursionError):  # (UnicodeDecodeError is a ValueError)
        return None
    return found if isinstance(found, dict) else None


def _refuse(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


_DECODER = json.JSONDecoder(parse_constant=_refuse)  # one for every record: a million janitor moves


MOVE_KEYS = ("action", "name", "from", "to")  # text, required
MOVE_NUMBERS = ("age_days", "last_read", "reads", "window_days")  # a number or null, optional


def move(raw: str) -> dict | None:
    """A `Strata-Move` trailer's record, if it is one: a JSON object whose action, name, from and to
    are text, rule text or null, and age_days, last_read and reads finite numbers (see _number) or null.
    Only those keys are kept, each present (None where the record had none)."""
    found = _as_written(raw)
    return found if found is not None else _move(raw)


# A move as the janitor writes it (rules.Move.trailer, compact JSON, keys in that order, no escape
# in any text, plain numbers): read by one match, where a clone reads two million of them. Any
# other spelling is decoded as JSON by _move, which gives the same record for this one (a test
# checks).
_TEXT = r'"([^"\\\x00-\x1f]{0,' + str(_MAX_TEXT) + '})"'
_NUMBER = r"(null|-?(?:0|[1-9][0-9]{0,14})(?:\.[0-9]{1,17})?)"
_WRITTEN = re.compile(rf'\{{"action":{_TEXT},"name":{_TEXT},"from":{_TEXT},"to":{_TEXT},"rule":(?:null|{_TEXT}),'
                      rf'"age_days":{_NUMBER},"last_read":{_NUMBER},"reads":{_NUMBER}\}}')


def _as_written(raw: str) -> dict | None:
    """The record of a move spelled as the janitor writes it and valid; None for any other."""
    written = _WRITTEN.fullmatch(raw)
    if written is None or UNSAFE_TO_DISPLAY.search(raw):  # (no escape: the raw text is the texts' text)
        return None
    action, name, source, target, rule, *spelled = written.groups()
    numbers = [None if n == "null" else float(n) if "." in n else int(n) for n in spelled]
    if any(n is not None and abs(n) > MAX_TIME for n in numbers):
        return None
    return {"action": action, "name": name, "from": source, "to": target, "rule": rule,
            **dict(zip(MOVE_NUMBERS[:3], numbers, strict=True)), "window_days": None}


def _move(raw: str) -> dict | None:
    found = json_object(raw)
    if found is None or any(text(found.get(k)) is None for k in MOVE_KEYS):
        return None
    rule = found.get("rule")
    if rule is not None and text(rule) is None:
        return None
    numbers = {k: found.get(k) for k in MOVE_NUMBERS}
    if any(v is not None and not _number(v) for v in numbers.values()):
        return None
    return {**{k: found[k] for k in MOVE_KEYS}, "rule": rule, **numbers}


def _number(value: object) -> bool:
    """A finite int or float (not a bool) no larger than a time a date can show, either sign."""
    return not isinstance(value, bool) and isinstance(value, int | float) and math.isfinite(value) \
        and abs(value) <= MAX_TIME


def access_record(item: object) -> dict | None:
    """An access record (one read of one memory), if `item` is one: `t` a number (not text) that
    a date can show, `name` text; `m` (machine) text and `n` (a sequence number) an int, where
    present."""
    if not isinstance(item, dict) or text(item.get("name")) is None or isinstance(item.get("t"), str) \
            or stamp(item.get("t")) is None:
        return None
    if "m" in item and text(item["m"], 200) is None:
        return None
    n = item.get("n")
    if n is not None and (isinstance(n, bool) or not isinstance(n, int) or not 0 <= n < 1 << 64):
        return None
    if "tier" in item and text(item["tier"], 16) is None or "via" in item and text(item["via"], 64) is None:
        return None
    return item
