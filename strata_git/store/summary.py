"""Summaries made when a memory cools (`[cool] summary` in .strata/config.toml).

- `none` (the default): cooling is a pure rename.
- `extractive`: no model: the title, the headings, the first paragraph, lines that record a
  decision or an outcome, and the URLs, shell commands and file paths found in the text.
- `command`: a command of this clone's own choosing (`git config strata.summaryCommand
  "llm -s 'Summarize this note'"`; never read from the committed config, which any clone
  could change) runs with the memory on stdin and no shell; its output is the summary.

A summary is a file of its own, `.strata/summaries/NAME.md`, committed in the same janitor
commit as the move, so the memory itself still moves as a pure rename and its text stays
retrievable byte for byte. It stays beside the memory as it moves on to archive/, where
the full text may be pruned from this clone while the summary remains. A summary that
cannot be made (the command fails, times out, prints nothing, or prints a secret) never
stops the cycle: the memory cools without one and the commit's `Strata-Summary` trailer
says why. The cycle holds the repository lock, so all of a cycle's commands together get
three timeouts; after a timeout, or once that is spent, the rest cool without summaries.
A memory that cools without a new summary, or goes back to active, loses its old one.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import time
from typing import NamedTuple

from strata_git.core import contract, memory, names
from strata_git.core.config import Config
from strata_git.gitio.git import Repo

MAX_BYTES = 8 * 1024
_DECISION = re.compile(r"^\s*(?:[-*]\s+)?(?:\*\*)?(?:decision|decided|outcome|result|conclusion|resolved|"
                       r"we (?:chose|decided|will|won't|will not)|rejected|fixed|lesson)\b", re.IGNORECASE)
_URL = re.compile(r"https?://[^\s)>\]\"'`]+")
_PATH = re.compile(r"(?<![\w/.:-])(?:~|\.{1,2})?(?:/[\w.@+-]{1,100}){2,20}/?"
                   r"|\b[\w.-]{1,100}/[\w./-]{0,256}\.[A-Za-z0-9]{1,6}\b")
LINE_LIMIT = 2000  # longer lines are not searched for paths and links (bounded work under the lock)
_FENCE = re.compile(r"^```\s*(sh|bash|shell|console|zsh)?\s*$")


class Made(NamedTuple):
    name: str  # with .md
    text: str | None  # None: no summary
    why: str  # how it was made, or why it was not

    def trailer(self, mode: str) -> str:
        record = {"name": names.display(self.name), "mode": mode, "made": self.text is not None, "why": self.why}
        return f"{contract.SUMMARY}: {contract.trailer_value(record)}"


def path(name: str) -> str:
    return f"{contract.SUMMARIES}/{name}"


def extractive(raw: bytes, where: str) -> str:
    text = memory.decode(raw, where)
    fm, body, _ = memory.split(text, where)
    meta = memory.parse_frontmatter(fm, where) if fm is not None else {}
    parsed = memory.Memory(raw, meta, body)
    lines = body.splitlines()
    headings, decisions, commands, fence = [], [], [], None
    paragraph: list[str] = []
    for line in lines:
        stripped = line.strip()
        if fence is not None:
            if stripped.startswith("```"):
                fence = None
            elif fence and stripped:
                commands.append(stripped.removeprefix("$ "))
            continue
        match = _FENCE.match(stripped)
        if match or stripped.startswith("```"):
            fence = bool(match and match.group(1))
            continue
        if stripped.startswith("#"):
            headings.append(stripped.lstrip("#").strip())
        elif stripped.startswith("$ "):
            commands.append(stripped[2:])
        elif _DECISION.match(stripped):
            decisions.append(stripped.lstrip("-* ").strip())
        if not paragraph or (paragraph[-1] and not stripped.startswith("#")):
            if stripped and not stripped.startswith("#"):
                paragraph.append(stripped)
            elif paragraph and not stripped:
                paragraph.append("")
    first = " ".join(p for p in paragraph if p)[:500]
    short = "\n".join(line for line in lines if len(line) <= LINE_LIMIT)
    urls = list(dict.fromkeys(_URL.findall(short)))
    paths = [p for p in dict.fromkeys(_PATH.findall(short)) if not any(p in u for u in urls)][:50]
    out = [f"# {parsed.title}", ""]
    if first:
        out += [first, ""]
    for label, items in (("Headings", headings[1:] if headings and headings[0] == parsed.title else headings),
                         ("Decisions and outcomes", decisions), ("Links", urls), ("Commands", commands),
                         ("Paths", paths)):
        if items:
            out += [f"{label}:", *(f"- {item}" for item in list(dict.fromkeys(items))[:12]), ""]
    return _cap("\n".join(out).rstrip() + "\n")


def _cap(text: str) -> str:
    data = text.encode("utf-8")
    if len(data) <= MAX_BYTES:
        return text
    return data[:MAX_BYTES].decode("utf-8", "ignore").rsplit("\n", 1)[0] + "\n…\n"


def command(repo: Repo, key: str = "strata.summaryCommand", what: str = "summary") -> tuple[list[str], str]:
    """This clone's `what` command (git config `key`) as an argument list, or ([], why there is
    none). The program is looked up on PATH or given as an absolute path: a relative one would
    run a file from the working tree, which a sync can change."""
    value = repo.git("config", "--get", key, check=False).decode("utf-8", "replace").strip()
    unset = f'no {what} command is set (git config {key} "...")'
    if not value:
        return [], unset
    try:
        argv = shlex.split(value)
    except ValueError as e:
        return [], f"{key} cannot be split into words: {e}"
    if not argv:
        return [], unset
    if "/" in argv[0] and not os.path.isabs(argv[0]):
        return [], f"{key} must name a program on PATH or by its absolute path"
    import shutil  # (here: a search loads this module, and shutil costs it about 4 ms)

    found = argv[0] if os.path.isabs(argv[0]) else shutil.which(argv[0])
    if not found:
        return [], f"the {what} command {argv[0]!r} is not on PATH"
    return [found, *argv[1:]], ""


def run_command(argv: list[str], raw: bytes, timeout: float, cwd: str, what: str = "summary",
                cap: bool = True, env: dict[str, str] | None = None) -> tuple[str | None, str]:
    """(its output, or None, and what happened) of a local command fed `raw` on stdin (`env`:
    variables added to this process's environment)."""
    try:
        proc = subprocess.run(argv, input=raw, capture_output=True, timeout=timeout, cwd=cwd, check=False,
                              env={**os.environ, **env} if env else None)
    except subprocess.TimeoutExpired:
        return None, f"the {what} command timed out after {timeout:.3g} s"
    except OSError as e:
        return None, f"the {what} command could not start: {e.strerror}"
    if proc.returncode != 0:
        err = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        return None, f"the {what} command exited with status {proc.returncode}" + (f": {err[-1][:200]}" if err else "")
    try:
        text = proc.stdout.decode("utf-8")
    except UnicodeDecodeError:
        return None, f"the {what} command printed something that is not UTF-8 text"
    if not text.strip():
        return None, f"the {what} command printed nothing"
    return (_cap(text.strip() + "\n") if cap else text), f"made by {argv[0]}"


def make(repo: Repo, cfg: Config, items: list[tuple[str, bytes | None]]) -> list[Made]:
    """A summary (or the reason there is none) for each (name, content) about to cool."""
    if cfg.cool_summary == "none":
        return []
    argv, missing = command(repo) if cfg.cool_summary == "command" else ([], "")
    made, gave_up = [], ""
    # The cycle holds the repository lock: all commands together get three timeouts' worth of time.
    deadline = time.monotonic() + 3 * cfg.cool_summary_timeout
    for name, raw in items:
        if raw is None:
            made.append(Made(name, None, "its content is not in this clone"))
            continue
        if cfg.cool_summary == "extractive":
            try:
                made.append(Made(name, extractive(raw, name), "extractive"))
            except Exception as e:  # noqa: BLE001 - a memory the parser refuses cools without a summary
                made.append(Made(name, None, f"could not be read: {e}"))
            continue
        if not argv:
            made.append(Made(name, None, missing))
            continue
        left = deadline - time.monotonic()
        if left <= 0 and not gave_up:
            gave_up = f"this cycle's time for summaries ({3 * cfg.cool_summary_timeout} s) ran out"
        if gave_up:
            made.append(Made(name, None, gave_up))
            continue
        text, why = run_command(argv, raw, min(cfg.cool_summary_timeout, left), repo.root)
        if "timed out" in why:
            gave_up = "an earlier summary command timed out in this cycle"
        if text is not None and cfg.check_secrets:
            from strata_git.core import secrets

            if secrets.scan(text):
                text, why = None, "the summary command's output looks like it holds a secret"
        made.append(Made(name, text, why))
    return made


def gist(text: str) -> str:
    """A summary's first line of prose (headings skipped), for one-line listings."""
    return next((t.strip() for t in text.splitlines() if t.strip() and not t.startswith("#")), "")


def read(root: str, name: str) -> str | None:
    """The summary's text; None when there is none or it cannot be read (a summary made larger by
    hand is cut at 32 KiB rather than failing every listing that shows it)."""
    from strata_git.errors import StrataError
    from strata_git.gitio import safefs

    if safefs.kind(root, path(name)) != "file":
        return None
    try:
        return safefs.read(root, path(name), MAX_BYTES * 4).decode("utf-8", "replace")
    except StrataError:  # too large: safefs refuses to read past the limit
        return _head(os.path.join(root, path(name)), MAX_BYTES * 4)
    except OSError:
        return None


def _head(full: str, limit: int) -> str | None:
    try:
        with open(full, "rb") as f:
            return f.read(limit).decode("utf-8", "ignore") + "\n…\n"
    except OSError:
        return None
