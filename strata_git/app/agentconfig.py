"""What git-strata owns in a harness's configuration files, and how it is added and removed
without touching anything else.

Owned: in a hooks file (`.claude/settings.json`, `.codex/hooks.json`) the hook entries whose
command is exactly what `command` writes, one group each under `hooks.EVENT`; in `.mcp.json` /
`~/.claude.json` the `mcpServers.git-strata` entry shaped as install writes it; in Codex's
`config.toml` the `[mcp_servers.git-strata]` table whose header carries MARK as its comment. A
user's hook that merely mentions `git-strata hook agent`, or a `git-strata` server written by
hand, is not ours: install refuses to overwrite it and uninstall leaves it.

JSON is edited as text (jsonedit), so every byte git-strata does not own stays as it was. TOML
is read with tomlkit (which sees the comment that marks our table and tells an inline table from
a standard one) and our table is added at the end of the file as text that tomlkit renders;
every result is read back with tomllib and must equal the input plus (or minus) our table.

Each editor's `add(path, text, harness, memory, events)` gives the new text and the containers
it created (names like "hooks.Stop"; `memory` None: the portable entries a project's files hold,
see `command`); `remove(path, text, harness, created)` takes those names back (None: not known,
then a container goes if it held only git-strata's entries). Whatever cannot
be merged safely is refused with BadConfig, one line saying what is wrong and how to fix it.
"""

from __future__ import annotations

import os
import shlex
import tomllib
from collections.abc import Callable
from typing import NamedTuple

import tomlkit
from tomlkit.exceptions import TOMLKitError
from tomlkit.items import InlineTable, Table

from strata_git.app import jsonedit
from strata_git.app.agents import EVENTS, SERVER, TIMEOUTS, executable
from strata_git.core.entries import shown
from strata_git.errors import BadConfig

MARK = "added by `git strata agent install`; `git strata agent uninstall` removes it"
PORTABLE = "git-strata"  # found on PATH by name
FIX = "fix the file (or move it aside), then run the command again"
_A = {"object": "an object", "array": "a list", "string": "a string", "number": "a number",
      "literal": "true, false or null"}


class Editor(NamedTuple):
    add: Callable[[str, str, str, str | None, tuple[str, ...] | None], tuple[str, set[str]]]
    remove: Callable[[str, str, str, frozenset[str] | None], str]


def command(event: str, harness: str, memory: str | None, exe: str | None = None) -> str:
    """A hook entry's command. `memory` None: the portable form a project's files hold (`git-strata`
    found on PATH, the memory found by where.memory on each machine); else this interpreter's
    git-strata and the memory by path (for a user's own files)."""
    if memory is None:
        return f"{shlex.quote(exe or PORTABLE)} hook agent {event} --harness {harness}"
    return f"{shlex.quote(exe or executable())} hook agent {event} --harness {harness} --memory {shlex.quote(memory)}"


def server(memory: str | None) -> dict:
    """The MCP server entry (`memory` None: the portable form, as for `command`)."""
    if memory is None:
        return {"command": PORTABLE, "args": ["mcp"]}
    return {"command": executable(), "args": ["mcp", "--memory", memory]}


def is_ours(cmd: object, event: str, harness: str) -> bool:
    """Whether a hook command is exactly one `command` writes (any git-strata executable, any memory
    or none)."""
    try:
        words = shlex.split(cmd) if isinstance(cmd, str) else []
    except ValueError:
        return False
    if len(words) not in (6, 8) or os.path.basename(words[0]) != "git-strata":
        return False
    return cmd == command(event, harness, words[7] if len(words) == 8 else None, words[0])


# -- JSON: the hooks -----------------------------------------------------------------------------------

def add_hooks(path: str, text: str, harness: str, memory: str | None,
              events: tuple[str, ...] | None = None) -> tuple[str, set[str]]:
    """`text` with git-strata's hook for each of `events` (default: all the harness has), and
    without its hooks for the harness's other events."""
    text, made = text if text.strip() else "{}\n", set()
    if _at(path, text, ["hooks"], "object") is None:
        text = jsonedit.insert(text, _there(path, text, [], "object"), "hooks", {})
        made.add("hooks")
    wanted = EVENTS[harness] if events is None else events
    for event in EVENTS[harness]:
        if event not in wanted:  # (an event's list left empty by that goes too)
            stripped = _strip(path, text, harness, event)
            groups = _at(path, stripped, ["hooks", event], "array", lenient=True)
            text = _drop(path, stripped, ["hooks", event]) if stripped != text and groups is not None \
                and not groups.members else stripped
            continue
        group = {"hooks": [{"type": "command", "command": command(event, harness, memory), "timeout": TIMEOUTS[event]}]}
        groups = _at(path, text, ["hooks", event], "array")
        if groups is None:
            text = jsonedit.insert(text, _there(path, text, ["hooks"], "object"), event, [group])
            made.add(f"hooks.{event}")
            continue
        spots = _spots(text, groups, event, harness)
        if len(spots) == 1 and spots[0][0] is groups and _load(text, groups, spots[0][1]) == group:
            continue  # installed as it should be
        text = _strip(path, text, harness, event)
        text = jsonedit.insert(text, _there(path, text, ["hooks", event], "array"), None, group)
    return text, made


def remove_hooks(path: str, text: str, harness: str, created: frozenset[str] | None) -> str:
    if not text.strip() or _at(path, text, ["hooks"], "object", lenient=True) is None:
        return text
    emptied = False
    for event in EVENTS[harness]:
        stripped = _strip(path, text, harness, event)
        groups = _at(path, stripped, ["hooks", event], "array", lenient=True)
        if groups is not None and not groups.members and _goes(created, f"hooks.{event}", stripped != text):
            stripped, emptied = _drop(path, stripped, ["hooks", event]), True
        text = stripped
    if not _there(path, text, ["hooks"], "object").members and _goes(created, "hooks", emptied):
        text = _drop(path, text, ["hooks"])
    return text


def _spots(text: str, groups: jsonedit.Node, event: str, harness: str) -> list[tuple[jsonedit.Node, int]]:
    """(container, index) of each of git-strata's entries under one event: the whole group where
    the group holds nothing else, else the entry in the group's list."""
    spots = []
    for g, group in enumerate(groups.members):
        found = group.value.get("hooks") if group.value.kind == "object" else []
        entries = found[0].value if len(found) == 1 and found[0].value.kind == "array" else None
        if entries is None:
            continue  # not a group git-strata could have written into
        mine = [i for i, entry in enumerate(entries.members) if _our_entry(text, entry.value, event, harness)]
        spots += [(groups, g)] if mine and len(mine) == len(entries.members) else [(entries, i) for i in mine]
    return spots


def _load(text: str, container: jsonedit.Node, index: int) -> object:
    return jsonedit.load(text, container.members[index].value)


def _our_entry(text: str, entry: jsonedit.Node, event: str, harness: str) -> bool:
    if entry.kind != "object":
        return False
    kind, cmd = entry.get("type"), entry.get("command")
    return len(kind) == 1 and len(cmd) == 1 and jsonedit.load(text, kind[0].value) == "command" \
        and is_ours(jsonedit.load(text, cmd[0].value), event, harness)


def _strip(path: str, text: str, harness: str, event: str) -> str:
    """`text` without git-strata's entries under `hooks.EVENT` (one at a time, from the last)."""
    while True:
        groups = _at(path, text, ["hooks", event], "array", lenient=True)
        spots = _spots(text, groups, event, harness) if groups is not None else []
        if not spots:
            return text
        text = jsonedit.remove(text, *spots[-1])


# -- JSON: the MCP server ------------------------------------------------------------------------------

def add_server(path: str, text: str, harness: str, memory: str | None,
               events: tuple[str, ...] | None = None) -> tuple[str, set[str]]:
    text, made = text if text.strip() else "{}\n", set()
    want = server(memory)
    if _at(path, text, ["mcpServers"], "object") is None:
        text = jsonedit.insert(text, _there(path, text, [], "object"), "mcpServers", {})
        made.add("mcpServers")
    old = _at(path, text, ["mcpServers", SERVER], None)
    if old is None:
        return jsonedit.insert(text, _there(path, text, ["mcpServers"], "object"), SERVER, want), made
    if not _our_server(text, old):
        raise BadConfig(f'{shown(path)}: "mcpServers.{SERVER}" was not written by git-strata; nothing was changed',
                        "rename or remove that entry, then run the command again")
    value = jsonedit.load(text, old)
    assert isinstance(value, dict)  # _our_server checked its shape
    if {"command": value["command"], "args": value["args"]} == want:
        return text, made
    return jsonedit.replace(text, old, want), made


def remove_server(path: str, text: str, harness: str, created: frozenset[str] | None) -> str:
    if not text.strip():
        return text
    old = _at(path, text, ["mcpServers", SERVER], None, lenient=True)
    ours = old is not None and _our_server(text, old)
    if ours:
        text = _drop(path, text, ["mcpServers", SERVER])
    servers = _at(path, text, ["mcpServers"], "object", lenient=True)
    if servers is not None and not servers.members and _goes(created, "mcpServers", ours):
        text = _drop(path, text, ["mcpServers"])
    return text


def _our_server(text: str, node: jsonedit.Node) -> bool:
    """Shaped as install writes it; Claude Code's own defaults ("type": "stdio", "env": {}) may be added."""
    value = jsonedit.load(text, node)
    if not isinstance(value, dict) or len(value) != len(node.members) \
            or not {"command", "args"} <= value.keys() <= {"type", "command", "args", "env"}:
        return False
    args = value["args"]
    return isinstance(value["command"], str) and os.path.basename(value["command"]) == "git-strata" \
        and value.get("type", "stdio") == "stdio" and value.get("env", {}) == {} and isinstance(args, list) \
        and (args == ["mcp"] or len(args) == 3 and args[:2] == ["mcp", "--memory"] and isinstance(args[2], str))


# -- JSON: finding things --------------------------------------------------------------------------------

def _there(path: str, text: str, keys: list[str], kind: str | None) -> jsonedit.Node:
    """_at() of a value the caller has just found or inserted."""
    node = _at(path, text, keys, kind)
    assert node is not None
    return node


def _at(path: str, text: str, keys: list[str], kind: str | None, lenient: bool = False) -> jsonedit.Node | None:
    """The value at `keys` (objects down to it; [] the document's own), None if absent. Refused when
    a key on the way appears twice, or a value is not of the kind expected (lenient: None then)."""
    try:
        node = jsonedit.parse(text)
    except jsonedit.Invalid as e:
        raise BadConfig(f"{shown(path)} is not valid JSON ({e}); nothing was changed", FIX) from None
    if node.kind != "object":
        raise BadConfig(f"{shown(path)} does not hold a JSON object; nothing was changed", FIX)
    for depth, key in enumerate(keys, 1):
        found, name = node.get(key), ".".join(keys[:depth])
        if len(found) > 1:
            raise BadConfig(f'{shown(path)}: "{name}" appears {len(found)} times; nothing was changed',
                            "keep one of them, then run the command again")
        if not found:
            return None
        node = found[0].value
        want = kind if depth == len(keys) else "object"
        if want is not None and node.kind != want:
            if lenient:
                return None
            raise BadConfig(f'{shown(path)}: "{name}" is {_A[node.kind]}, not {_A[want]}; nothing was changed',
                            f"make it {_A[want]} (or remove it), then run the command again")
    return node


def _drop(path: str, text: str, keys: list[str]) -> str:
    parent = _there(path, text, keys[:-1], "object")
    return jsonedit.remove(text, parent, parent.index(keys[-1]))


def _goes(created: frozenset[str] | None, name: str, held_ours: bool) -> bool:
    """Whether an emptied container is removed: when install created it (with no record of that:
    when it held git-strata's entries and nothing else)."""
    return name in created if created is not None else held_ours


# -- TOML: Codex's MCP server ------------------------------------------------------------------------------

def add_server_toml(path: str, text: str, harness: str, memory: str | None,
                    events: tuple[str, ...] | None = None) -> tuple[str, set[str]]:
    bom, body = ("\ufeff", text[1:]) if text.startswith("\ufeff") else ("", text)
    doc = _toml(path, body)
    want = server(memory)
    old = _our_table(path, doc, lenient=False)
    if old is not None:
        if old == want:
            return text, set()
        body = _cut(path, body, doc)
    nl = "\r\n" if "\r\n" in body else "\n"
    ends = body.endswith("\n")
    sep = ("" if ends or not body else nl) if not body.strip() else (nl if ends else nl + nl)
    new = body + sep + _table_text(want, nl)
    after = tomllib.loads(new)
    if after["mcp_servers"][SERVER] != want or repr(_rest(after)) != repr(_rest(tomllib.loads(body))):
        raise AssertionError(f"the TOML written to {path} would not read back as written")  # a bug; nothing written
    return bom + new, set()


def remove_server_toml(path: str, text: str, harness: str, created: frozenset[str] | None) -> str:
    bom, body = ("\ufeff", text[1:]) if text.startswith("\ufeff") else ("", text)
    if not body.strip():
        return text
    doc = _toml(path, body)
    return text if _our_table(path, doc, lenient=True) is None else bom + _cut(path, body, doc)


def _toml(path: str, body: str) -> tomlkit.TOMLDocument:
    try:
        tomllib.loads(body)  # the standard's own reader decides what is valid; tomlkit then keeps the comments
        return tomlkit.parse(body)
    except (tomllib.TOMLDecodeError, TOMLKitError) as e:
        raise BadConfig(f"{shown(path)} is not valid TOML ({e}); nothing was changed", FIX) from None


def _our_table(path: str, doc: tomlkit.TOMLDocument, lenient: bool) -> dict | None:
    """The values of git-strata's `[mcp_servers.git-strata]` table, None if there is none. Refused
    (lenient: None) where no such table can be added safely: mcp_servers is an inline table or not a
    table, or a `git-strata` entry without our mark is there."""
    try:
        return _marked_table(path, doc)
    except BadConfig:
        if lenient:
            return None
        raise


def _marked_table(path: str, doc: tomlkit.TOMLDocument) -> dict | None:
    servers = doc.get("mcp_servers")
    if servers is None:
        return None
    if isinstance(servers, InlineTable):
        raise BadConfig(f"{shown(path)}: mcp_servers is an inline table (mcp_servers = {{...}}), which TOML does not "
                        "let git-strata add a server to; nothing was changed",
                        "write each server as a [mcp_servers.NAME] table, then run the command again")
    if not isinstance(servers, dict):
        raise BadConfig(f"{shown(path)}: mcp_servers is not a table; nothing was changed",
                        "make it a table of [mcp_servers.NAME] tables, then run the command again")
    table = servers.get(SERVER)
    if table is None:
        return None
    if isinstance(table, Table) and table.trivia.comment.lstrip("#").strip() == MARK:
        return table.unwrap()
    raise BadConfig(f"{shown(path)}: [mcp_servers.{SERVER}] was not written by git-strata (its header lacks "
                    "git-strata's comment); nothing was changed",
                    "rename or remove that table, then run the command again")


def _cut(path: str, body: str, doc: tomlkit.TOMLDocument) -> str:
    """`body` without git-strata's table. Its text as install wrote it (and the blank line before
    it) is cut where that leaves exactly the same TOML less our table, so a look-alike inside a
    multi-line string is never cut; a table edited by hand is removed by tomlkit instead."""
    nl = "\r\n" if "\r\n" in body else "\n"
    rest = repr(_rest(tomllib.loads(body)))
    block = _table_text(doc["mcp_servers"][SERVER].unwrap(), nl)
    at = body.find(block)
    while at != -1:
        start = at - len(nl) if body[:at].endswith(nl + nl) else at
        cut = body[:start] + body[at + len(block):]
        if _is_rest(cut, rest):
            return cut
        at = body.find(block, at + 1)
    del doc["mcp_servers"][SERVER]
    cut = tomlkit.dumps(doc)
    if not _is_rest(cut, rest):
        raise BadConfig(f"{shown(path)}: git-strata's [mcp_servers.{SERVER}] table cannot be removed without changing "
                        "the rest of the file; nothing was changed", f"remove that table by hand from {shown(path)}")
    return cut


def _is_rest(text: str, rest: str) -> bool:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return False
    return SERVER not in data.get("mcp_servers", {}) and repr(_rest(data)) == rest


def _rest(data: dict) -> dict:
    """The TOML's values less git-strata's server (and an mcp_servers table it leaves empty);
    compared by repr, since nan != nan."""
    servers = {k: v for k, v in data.get("mcp_servers", {}).items() if k != SERVER}
    return {**{k: v for k, v in data.items() if k != "mcp_servers"}, **({"mcp_servers": servers} if servers else {})}


def _table_text(values: dict, nl: str) -> str:
    """`[mcp_servers.git-strata]` with MARK as its comment, strings escaped by tomlkit (any Unicode)."""
    table = tomlkit.table()
    table.comment(MARK)
    for key, value in values.items():
        table.add(key, value)
    servers = tomlkit.table(is_super_table=True)
    servers.add(SERVER, table)
    doc = tomlkit.document()
    doc.add("mcp_servers", servers)
    return tomlkit.dumps(doc).replace("\n", nl)


HOOKS = Editor(add_hooks, remove_hooks)
SERVERS_JSON = Editor(add_server, remove_server)
SERVERS_TOML = Editor(add_server_toml, remove_server_toml)
