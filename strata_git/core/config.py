"""`.strata/config.toml`: read once at each entry point into a frozen, validated Config.

The shared file is committed, so any peer on the remote can change it. It may only tighten
protection: a value in WEAKENING that would loosen it (let a secret or an oversized file
through) is ignored, and the default kept, unless this clone's own file
`.git/strata/config.toml` (same keys, never synced) sets it. Config.ignored says which were.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import Any, NamedTuple

from strata_git.core.contract import CONFIG_PATH, STATE_DIR
from strata_git.errors import BadConfig

DEFAULT_COOL_AFTER = (("default", 30), ("entities", 60), ("gtd", 7), ("projects", 14))


class Config(NamedTuple):
    """Validated settings."""

    janitor_name: str = "git-strata janitor"
    janitor_email: str = "janitor@git-strata.invalid"
    never_cool_types: tuple[str, ...] = ("rejection",)
    cool_summary: str = "none"  # none, extractive or command (see summary.py)
    cool_summary_timeout: int = 60
    # (folder prefix under the tier, days or None for never); "default" applies to the rest.
    cool_after_days: tuple[tuple[str, int | None], ...] = DEFAULT_COOL_AFTER
    archive_idle_days: int = 90
    archive_max_reads: int = 1
    archive_remote: str = ""
    archive_prune: bool = False
    record_max_terms: int = 0  # distinct terms kept in an archived memory's shadow record; 0: all
    promote_reads: int = 3
    promote_window_days: int = 14
    sync_remote: str = "origin"
    max_memory_bytes: int = 1024 * 1024
    check_secrets: bool = True
    search_model: str = ""  # a model folder for meaning search (store/meaning.py); "": words alone
    search_meaning_weight: float = 0.6  # the meaning's share of a fused score (search --mode both)
    agent_prompt_hints: bool = False  # UserPromptSubmit names the memories most relevant to a prompt
    agent_context_chars: int = 9000  # what the SessionStart hook may add (Claude Code takes ~10,000)
    agent_prompt_min_score: float = 5.0  # a memory scoring less is not named to a prompt
    agent_prompt_min_coverage: float = 0.2  # ... nor one holding less of the prompt's words (idf-weighted share)
    source: str = "(defaults)"
    ignored: tuple[str, ...] = ()  # weakening values of the shared file that were not applied (see WEAKENING)

    def cool_rule(self, name: str) -> tuple[int | None, str]:
        """(days before `name` cools or None for never, the deciding key): the longest folder prefix wins."""
        table = dict(self.cool_after_days)
        matches = [p for p in table if p != "default" and name.startswith(p.rstrip("/") + "/")]
        prefix = max(matches, key=len) if matches else "default"
        return table.get(prefix, 30), f"cool.after_days.{prefix}"

    def cool_days_for(self, name: str) -> int | None:
        return self.cool_rule(name)[0]

    def search_mode(self) -> str:
        """How a search with no mode given searches: both when a model is set, else words."""
        return "both" if self.search_model else "words"

    def as_dict(self) -> dict[str, Any]:
        return {
            "janitor": {"name": self.janitor_name, "email": self.janitor_email},
            "cool": {"never_types": list(self.never_cool_types), "summary": self.cool_summary,
                     "summary_timeout_seconds": self.cool_summary_timeout,
                     "after_days": {k: ("never" if v is None else v) for k, v in self.cool_after_days}},
            "archive": {"idle_days": self.archive_idle_days, "max_reads": self.archive_max_reads,
                        "remote": self.archive_remote, "prune": self.archive_prune,
                        "record_max_terms": self.record_max_terms},
            "promote": {"reads": self.promote_reads, "window_days": self.promote_window_days},
            "sync": {"remote": self.sync_remote},
            "limits": {"max_memory_bytes": self.max_memory_bytes},
            "hooks": {"secrets": self.check_secrets},
            "search": {"model": self.search_model, "meaning_weight": self.search_meaning_weight},
            "agent": {"prompt_hints": self.agent_prompt_hints, "prompt_min_score": self.agent_prompt_min_score,
                      "prompt_min_coverage": self.agent_prompt_min_coverage, "context_chars": self.agent_context_chars},
            "source": self.source,
        }


def _string(v: Any) -> str:
    if not isinstance(v, str):
        raise ValueError("must be a string")
    return v


def _count(v: Any) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or v < 0:
        raise ValueError("must be a whole number, 0 or more")
    return v


def _flag(v: Any) -> bool:
    if not isinstance(v, bool):
        raise ValueError("must be true or false")
    return v


def _words(v: Any) -> tuple[str, ...]:
    if not isinstance(v, list) or not all(isinstance(w, str) and w for w in v):
        raise ValueError("must be a list of words")
    return tuple(v)


def _summary_mode(v: Any) -> str:
    if not isinstance(v, str) or v not in ("none", "extractive", "command"):
        raise ValueError('must be "none", "extractive" or "command"')
    return v


def _seconds(v: Any) -> int:
    seconds = _count(v)
    if seconds < 1:
        raise ValueError("must be a whole number of seconds, 1 or more")
    return seconds


def _score(v: Any) -> float:
    if isinstance(v, bool) or not isinstance(v, int | float) or not 0 <= v < 1e6:
        raise ValueError("must be a number from 0 up")
    return float(v)


def _share(v: Any) -> float:
    if isinstance(v, bool) or not isinstance(v, int | float) or not 0 <= v <= 1:
        raise ValueError("must be a number from 0 to 1")
    return float(v)


def _days_or_never(v: Any) -> int | None:
    return None if v == "never" else _count(v)


# section -> key -> (Config field, validator)
_SCHEMA: dict[str, dict[str, tuple[str, Callable[[Any], Any]]]] = {
    "janitor": {"name": ("janitor_name", _string), "email": ("janitor_email", _string)},
    "cool": {"never_types": ("never_cool_types", _words), "summary": ("cool_summary", _summary_mode),
             "summary_timeout_seconds": ("cool_summary_timeout", _seconds)},
    "archive": {"idle_days": ("archive_idle_days", _count), "max_reads": ("archive_max_reads", _count),
                "remote": ("archive_remote", _string), "prune": ("archive_prune", _flag),
                "record_max_terms": ("record_max_terms", _count)},
    "promote": {"reads": ("promote_reads", _count), "window_days": ("promote_window_days", _count)},
    "sync": {"remote": ("sync_remote", _string)},
    "limits": {"max_memory_bytes": ("max_memory_bytes", _count)},
    "hooks": {"secrets": ("check_secrets", _flag)},
    "search": {"model": ("search_model", _string), "meaning_weight": ("search_meaning_weight", _share)},
    "agent": {"prompt_hints": ("agent_prompt_hints", _flag), "prompt_min_score": ("agent_prompt_min_score", _score),
              "prompt_min_coverage": ("agent_prompt_min_coverage", _share),
              "context_chars": ("agent_context_chars", _count)},
}


def _bad(key: str, source: str, why: str) -> BadConfig:
    return BadConfig(f"{source}: '{key}' {why}", f"fix or delete '{key}' in {source} (the template lists every key)")


def _cool_after(table: Any, source: str) -> tuple[tuple[str, int | None], ...]:
    if not isinstance(table, dict):
        raise _bad("cool.after_days", source, "must be a table of folder = days")
    merged: dict[str, int | None] = dict(DEFAULT_COOL_AFTER)
    for folder, value in table.items():
        key = f"cool.after_days.{folder}"
        if folder.startswith(("/", ".")) or ".." in folder.split("/") or not folder:
            raise _bad(key, source, "must name a folder under the tier, like projects or projects/clients")
        try:
            merged[folder] = _days_or_never(value)
        except ValueError as e:
            raise _bad(key, source, f"{e} or \"never\"") from None
    return tuple(sorted(merged.items()))


def parse(data: dict[str, Any], source: str = CONFIG_PATH) -> Config:
    """A Config from parsed TOML; raises BadConfig naming the first bad key."""
    values: dict[str, Any] = {"source": source}
    for section, table in data.items():
        if section not in _SCHEMA:
            raise _bad(section, source, "is not a known section")
        if not isinstance(table, dict):
            raise _bad(section, source, "must be a [table]")
        for key, value in table.items():
            if section == "cool" and key == "after_days":
                values["cool_after_days"] = _cool_after(value, source)
                continue
            if key not in _SCHEMA[section]:
                raise _bad(f"{section}.{key}", source, "is not a known key")
            name, check = _SCHEMA[section][key]
            try:
                values[name] = check(value)
            except ValueError as e:
                raise _bad(f"{section}.{key}", source, str(e)) from None
    return Config(**values)


LOCAL_PATH = f".git/{STATE_DIR}/config.toml"  # this clone's own settings (see the module doc)

# section.key -> (why it weakens, whether a value does): the shared file may set these only to
# values at least as protective as the default.
WEAKENING: dict[str, tuple[str, Callable[[Any], bool]]] = {
    "hooks.secrets": ("turns off the secret check of write, capture, sync and the commit hook", lambda v: v is False),
    "limits.max_memory_bytes": ("lets larger files into commits and the index",
                                lambda v: v > Config().max_memory_bytes),
}


def _cached(cache: str, stamp: list[Any]) -> object:
    try:
        with open(cache, encoding="utf-8") as f:
            entry = json.load(f)
        return entry["data"] if entry["stamp"] == stamp else None
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _stamp(path: str) -> list[int] | None:
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return None
    except OSError as e:
        raise BadConfig(f"{path}: cannot be read ({e.strerror})", "check the file") from None
    return [info.st_size, info.st_mtime_ns, info.st_ino]


def _toml(path: str, shown: str) -> dict[str, Any]:
    import tomllib

    try:
        with open(path, "rb") as f:
            return tomllib.load(f)
    except tomllib.TOMLDecodeError as e:
        raise BadConfig(f"{shown}: not valid TOML ({e})", f"fix the syntax in {shown}") from None
    except (OSError, UnicodeDecodeError) as e:
        raise BadConfig(f"{shown}: cannot be read ({e})", "check the file") from None


def merged(shared: dict[str, Any], local: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """The settings in force: the shared file's, less its weakening values (unless this clone's own
    file sets the same key), then this clone's own values; and one line per value left out."""
    out = {section: dict(table) if isinstance(table, dict) else table for section, table in shared.items()}
    ignored = []
    for key, (why, weakens) in WEAKENING.items():
        section, _, name = key.partition(".")
        table = out.get(section)
        if not isinstance(table, dict) or name not in table or name in local.get(section, {}):
            continue
        try:
            if not weakens(table[name]):
                continue
        except TypeError:
            continue  # a value of the wrong type: parse() names it
        ignored.append(f"{CONFIG_PATH} sets {key} = {json.dumps(table.pop(name))}, which {why}; it is ignored "
                       f"(shared settings may only tighten protection): set it in {LOCAL_PATH} on each clone "
                       "that wants it")
    for section, table in local.items():
        if isinstance(table, dict) and isinstance(out.get(section), dict):
            out[section] = {**out[section], **table}
        else:
            out[section] = table
    return out, ignored


def load(root: str, cache_dir: str | None = None) -> Config:
    """The repository's config (defaults when the files are absent); with `cache_dir` (the clone's
    state folder) this clone's own file there is read too (see the module doc).

    With `cache_dir` the parsed files are remembered by size, mtime and inode: importing tomllib
    costs ~7 ms, which every commit's hook would otherwise pay.
    """
    path = os.path.join(root, CONFIG_PATH)
    local = os.path.join(cache_dir, "config.toml") if cache_dir else None
    stamps = [_stamp(path), _stamp(local) if local else None]
    if stamps == [None, None]:
        return Config()
    cache = os.path.join(cache_dir, "config.json") if cache_dir else None
    data = _cached(cache, stamps) if cache else None
    if not (isinstance(data, list) and len(data) == 2 and all(isinstance(d, dict) for d in data)):
        data = [_toml(path, CONFIG_PATH) if stamps[0] else {}, _toml(local, LOCAL_PATH) if local and stamps[1] else {}]
        parse(data[1], LOCAL_PATH)  # this clone's own file is checked on its own: errors name it
        if cache:
            tmp = f"{cache}.{os.getpid()}.{os.urandom(4).hex()}.tmp"  # threads of one process too
            with open(tmp, "w", encoding="utf-8") as f:
                json.dump({"stamp": stamps, "data": data}, f)
            os.replace(tmp, cache)
    settings, ignored = merged(*data)
    return parse(settings, CONFIG_PATH)._replace(ignored=tuple(ignored))
