"""`git strata agent install|uninstall` edits the harnesses' config files like a careful person:
every byte it does not own stays, a file unchanged since install comes back byte for byte, a
user's edit made since survives uninstall, and what cannot be merged safely is refused with one
line and the file untouched. The round-trip table runs through the library; a subset through the
real CLI."""

from __future__ import annotations

import json
import os
import stat
import tomllib
from pathlib import Path

import pytest

from conftest import strata
from strata_git.app import agentconfig, install, jsonedit
from strata_git.app.agents import EVENTS, TIMEOUTS, executable
from strata_git.errors import StrataError

MEMORY = "/srv/memory \U0001f600 it's \"quoted\" \\ back\tslash"  # non-BMP, quotes, backslash, a control character
BLOCK = f"[mcp_servers.git-strata] # {agentconfig.MARK}\n"  # what a careless text search would cut at
SERVER = {"command": executable(), "args": ["mcp", "--memory", MEMORY]}


@pytest.fixture(autouse=True)
def state_in_home(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("XDG_STATE_HOME", raising=False)  # the originals state goes under HOME, checked with it


# -- the round-trip table ---------------------------------------------------------------------------------------

SETTINGS = ("claude-code", ".claude/settings.json")
MCP = ("claude-code", ".mcp.json")
CODEX_HOOKS = ("codex", ".codex/hooks.json")
TOML = ("codex", ".codex/config.toml")

CASES = {
    "settings absent": (SETTINGS, None),
    "settings empty file": (SETTINGS, ""),
    "settings whitespace only": (SETTINGS, "  \n\n"),
    "settings {} without newline": (SETTINGS, "{}"),
    "settings with a hook of the user": (SETTINGS, '{\n  "permissions": {"allow": ["Bash(ls)"]},\n  "hooks": {"Stop": '
                                                   '[{"hooks": [{"type": "command", "command": "echo mine"}]}]}\n}\n'),
    "settings indented with tabs": (SETTINGS, '{\n\t"model": "opus",\n\t"env": {\n\t\t"A": "1"\n\t}\n}\n'),
    "settings with CRLF line endings": (SETTINGS, '{\r\n  "model": "opus",\r\n  "hooks": {\r\n'
                                                  '    "Stop": []\r\n  }\r\n}\r\n'),
    "settings with a BOM": (SETTINGS, '\ufeff{\n  "model": "opus"\n}\n'),
    "settings without final newline, 4 spaces": (SETTINGS, '{\n    "model": "opus",\n    "x": [1, 2]\n}'),
    "settings with number spellings": (SETTINGS, '{"a": 1e5, "b": 1e400, "c": -0.0, "d": 12345678901234567890123, '
                                                 '"e": 1.50}\n'),
    "settings with duplicate keys": (SETTINGS, '{\n  "model": "a",\n  "model": "b",\n  "env": {"X": 1, "X": 2}\n}\n'),
    "settings with other harness events": (SETTINGS, '{\n  "hooks": {\n    "Notification": [{"hooks": [{"type": '
                                                     '"command", "command": "notify-send hi"}]}],\n    "PreToolUse": '
                                                     '[{"matcher": "Bash", "hooks": [{"type": "command", "command": '
                                                     '"check.sh"}]}]\n  }\n}\n'),
    "settings with hooks mentioning git-strata": (SETTINGS, json.dumps({"hooks": {"Stop": [{"hooks": [
        {"type": "command", "command": 'echo "git-strata hook agent" >> log'},
        {"type": "command", "command": "git-strata hook agent Stop --harness claude-code --memory /m && echo hi"},
        {"type": "command", "command": "git-strata hook agent Stop --harness codex --memory /m"}]}]}},
        indent=2) + "\n"),
    "settings compact on one line": (SETTINGS, '{"hooks":{"Stop":[]},"model":"x"}'),
    "settings with escapes in values": (SETTINGS, '{"name": "caf\\u00e9 \\ud83d\\ude00 \\"q\\" \\n", "raw": "é😀"}\n'),
    "settings with empty hooks": (SETTINGS, '{\n  "hooks": {}\n}\n'),
    "codex hooks with another event": (CODEX_HOOKS, '{\n  "hooks": {\n    "PostToolUse": [{"hooks": '
                                                    '[{"type": "command", "command": "lint"}]}]\n  }\n}\n'),
    "mcp absent": (MCP, None),
    "mcp one line, no final newline": (MCP, '{"mcpServers": {"other": {"command": "other-server"}}}'),
    "mcp other servers, 4 spaces": (MCP, '{\n    "mcpServers": {\n        "a": {\n            "command": "a",\n'
                                         '            "args": []\n        },\n        "b": {"command": "b"}\n'
                                         '    }\n}\n'),
    "mcp empty servers": (MCP, '{"mcpServers": {}}\n'),
    "toml absent": (TOML, None),
    "toml empty file": (TOML, ""),
    "toml whitespace only": (TOML, " \n\t\n"),
    "toml comments, tables, profiles": (TOML, '# my codex settings\nmodel = "o4"  # keep this comment\n\n'
                                              '[mcp_servers.docs]\ncommand = "docs-mcp"\n\n[profiles.work]\n'
                                              'model = "o3"\n'),
    "toml multi-line string holding our block": (TOML, f'notes = """\n{BLOCK}command = "x"\n"""\n\n'
                                                       f"[profiles.work]\nmodel = 'o3'\n"),
    "toml mcp_servers table with others": (TOML, '[mcp_servers]\n\n[mcp_servers.docs]\ncommand = "docs"\n'
                                                 'args = ["--port", "1"]  # trailing comment\n'),
    "toml dotted keys": (TOML, 'mcp_servers.other.command = "x"\nmcp_servers.other.args = []\n'),
    "toml array of tables": (TOML, '[[profiles]]\nname = "a"\n\n[[profiles]]\nname = "b"\n'),
    "toml CRLF line endings": (TOML, 'model = "o4"\r\n\r\n[mcp_servers.docs]\r\ncommand = "d"\r\n'),
    "toml without final newline": (TOML, 'model = "o4"'),
    "toml with a BOM": (TOML, '\ufeffmodel = "o4"\n'),
    "toml tabs and odd spacing": (TOML, '[tui]\n\tnotifications   =   true\t# tabbed\n\n\n'),
    "toml special floats": (TOML, "a = nan\nb = -inf\nc = 1e400\n"),
}


def _setup(tmp_path: Path, where: tuple[str, str], original: str | None) -> tuple[Path, Path, Path]:
    project, home = tmp_path / "project", tmp_path / "home"
    project.mkdir()
    path = project / where[1]
    if original is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(original.encode("utf-8"))
    return project, home, path


def tree(*folders: Path) -> dict[str, bytes | None]:
    """Every file (bytes) and folder (None) under the folders, but ~/.local/state, the XDG folder
    the originals state is kept in (its git-strata folder counts)."""
    out: dict[str, bytes | None] = {}
    for folder in folders:
        for p in sorted(folder.rglob("*")):
            if not (p.is_dir() and str(p).endswith(("/home/.local", "/home/.local/state"))):
                out[str(p)] = p.read_bytes() if p.is_file() else None
    return out


def want_hooks(harness: str, memory: str = MEMORY) -> dict:
    return {event: {"hooks": [{"type": "command", "command": agentconfig.command(event, harness, memory),
                               "timeout": TIMEOUTS[event]}]} for event in EVENTS[harness]}


def reference(where: tuple[str, str], original: str | None) -> object:
    """What a full parse, edit and re-serialise would give: the installed file must parse to it."""
    harness, name = where
    if name.endswith(".toml"):
        data = tomllib.loads((original or "").lstrip("\ufeff"))
        data.setdefault("mcp_servers", {})["git-strata"] = SERVER
        return data
    data = json.loads((original or "").lstrip("\ufeff")) if (original or "").strip() else {}
    if name == ".mcp.json":
        data.setdefault("mcpServers", {})["git-strata"] = SERVER
        return data
    for event, group in want_hooks(harness).items():
        groups = data.setdefault("hooks", {}).setdefault(event, [])
        for g in groups:
            g["hooks"] = [h for h in g["hooks"] if not agentconfig.is_ours(h.get("command"), event, harness)]
        data["hooks"][event] = [g for g in groups if g["hooks"]] + [group]
    return data


def parsed(path: Path) -> object:
    text = path.read_bytes().decode("utf-8").lstrip("\ufeff")
    return tomllib.loads(text) if path.suffix == ".toml" else json.loads(text)


def ours_left(path: Path, harness: str) -> bool:
    data = parsed(path)
    if path.suffix == ".toml" or path.name == ".mcp.json":
        return "git-strata" in data.get("mcp_servers" if path.suffix == ".toml" else "mcpServers", {})
    return any(agentconfig.is_ours(h.get("command"), event, harness)
               for event, groups in data.get("hooks", {}).items() for g in groups for h in g["hooks"])


def user_edit(text: str, toml: bool) -> str:
    """An edit elsewhere in the file: a new first key."""
    bom = "\ufeff" if text.startswith("\ufeff") else ""
    if toml:
        return bom + "zz_user = 1\n" + text[len(bom):]
    at = text.index("{") + 1
    return text[:at] + '"zz_user": 1,' + text[at:]


@pytest.mark.parametrize("case", CASES)
def test_install_then_uninstall_gives_back_every_byte(tmp_path: Path, case: str):
    where, original = CASES[case]
    project, home, path = _setup(tmp_path, where, original)
    before = tree(project, home)
    changes = install.install(where[0], "project", MEMORY, str(project), str(home))
    assert str(path) in [c.path for c in changes]
    assert repr(parsed(path)) == repr(reference(where, original))  # repr: nan != nan
    assert install.install(where[0], "project", MEMORY, str(project), str(home)) == []  # twice changes nothing
    install.uninstall(where[0], "project", str(project), str(home))
    assert tree(project, home) == before  # the other file and the folders it made are gone too, and the state


@pytest.mark.parametrize("case", CASES)
def test_a_user_edit_after_install_survives_uninstall(tmp_path: Path, case: str):
    where, original = CASES[case]
    project, home, path = _setup(tmp_path, where, original)
    toml = path.suffix == ".toml"
    mine = (str(path), str(path.parent))
    others = {k: v for k, v in tree(project, home).items() if k not in mine}
    install.install(where[0], "project", MEMORY, str(project), str(home))
    path.write_bytes(user_edit(path.read_bytes().decode("utf-8"), toml).encode("utf-8"))
    install.uninstall(where[0], "project", str(project), str(home))
    assert {k: v for k, v in tree(project, home).items() if k not in mine} == others  # the other file: gone
    text = path.read_bytes().decode("utf-8")
    empty_root = not toml and (not (original or "").strip() or json.loads(original.lstrip("\ufeff")) == {})
    if empty_root:  # no key to put the edit before in the original: compare what it means
        assert json.loads(text.lstrip("\ufeff")) == {"zz_user": 1, **json.loads((original or "").strip() or "{}")}
    elif case == "toml without final newline":  # the newline install put before its table stays
        assert text == user_edit(original, toml) + "\n"
    else:
        assert text == user_edit(original or "", toml)
    assert not ours_left(path, where[0]) and not install.load_state(str(home)).files


def test_a_user_hook_that_mentions_git_strata_survives_and_an_old_entry_of_ours_is_replaced(tmp_path: Path):
    users = ['echo "git-strata hook agent" >> log',
             "git-strata hook agent Stop --harness claude-code --memory /m && echo hi"]
    old = agentconfig.command("Stop", "claude-code", "/old/memory")
    original = json.dumps({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": c} for c in [*users, old]]}]}})
    project, home, path = _setup(tmp_path, SETTINGS, original)
    install.install("claude-code", "project", MEMORY, str(project), str(home))
    stop = [h["command"] for g in parsed(path)["hooks"]["Stop"] for h in g["hooks"]]
    assert stop == [*users, agentconfig.command("Stop", "claude-code", MEMORY)]
    path.write_text(path.read_text() + "\n")  # edited since: no byte-for-byte return
    install.uninstall("claude-code", "project", str(project), str(home))
    assert [h["command"] for g in parsed(path)["hooks"]["Stop"] for h in g["hooks"]] == users


@pytest.mark.parametrize("cmd, ours", [
    (agentconfig.command("Stop", "codex", "/m"), True),
    (agentconfig.command("Stop", "codex", MEMORY), True),
    (agentconfig.command("Stop", "codex", None), True),  # the portable form a project's files hold
    ("git-strata hook agent Stop --harness codex", True),
    ("/usr/bin/git-strata hook agent Stop --harness codex", True),
    ("git-strata hook agent Stop --harness codex --memory", False),
    ("git-strata hook agent Stop --harness claude-code", False),
    ("git-strata hook agent Stop --harness codex --memory /m", True),
    ("/opt/bin/git-strata hook agent Stop --harness codex --memory '/a b'", True),
    ("git-strata hook agent Stop --harness codex --memory /m --extra", False),
    ("git-strata hook agent Stop --harness claude-code --memory /m", False),  # another harness's
    ("git-strata hook agent Stop --harness codex --memory \"$(rm -rf ~)\"", False),  # not quoted as we quote
    ("git-strata  hook agent Stop --harness codex --memory /m", False),
    ("my-git-strata hook agent Stop --harness codex --memory /m", False),
    ('echo "git-strata hook agent Stop"', False),
    ("git-strata hook agent Stop --harness codex --memory '/m", False),  # unbalanced quote
    (42, False),
])
def test_our_hook_is_recognised_by_its_exact_shape(cmd: object, ours: bool):
    assert agentconfig.is_ours(cmd, "Stop", "codex") is ours


# -- refusals -------------------------------------------------------------------------------------------------

REFUSED = {
    "hooks not an object": (SETTINGS, '{"hooks": []}\n', '"hooks" is a list, not an object'),
    "an event's value is a string": (SETTINGS, '{"hooks": {"Stop": "echo hi"}}\n',
                                     '"hooks.Stop" is a string, not a list'),
    "duplicate hooks keys": (SETTINGS, '{"hooks": {}, "hooks": {}}\n', '"hooks" appears 2 times'),
    "duplicate event keys": (SETTINGS, '{"hooks": {"Stop": [], "Stop": []}}\n', '"hooks.Stop" appears 2 times'),
    "not JSON": (SETTINGS, "{ not json", "is not valid JSON (Expecting property name enclosed in double quotes at "
                                         "line 1 column 3)"),
    "JSON with a comment": (SETTINGS, '{\n  // mine\n}\n', "is not valid JSON"),
    "JSON with NaN": (SETTINGS, '{"a": NaN}\n', "is not valid JSON (NaN is not JSON)"),
    "JSON not an object": (SETTINGS, "[1, 2]\n", "does not hold a JSON object"),
    "not UTF-8": (SETTINGS, b'{"a": "\xff"}\n', "is not UTF-8 text (byte 7)"),
    "a hand-written MCP server": (MCP, '{"mcpServers": {"git-strata": {"command": "my-wrapper"}}}',
                                  '"mcpServers.git-strata" was not written by git-strata'),
    "mcpServers not an object": (MCP, '{"mcpServers": []}', '"mcpServers" is a list, not an object'),
    "an inline mcp_servers table": (TOML, 'mcp_servers = { docs = { command = "d" } }\n', "is an inline table"),
    "mcp_servers an array of tables": (TOML, '[[mcp_servers]]\nname = "x"\n', "mcp_servers is not a table"),
    "a hand-written TOML server": (TOML, '[mcp_servers.git-strata]\ncommand = "mine"\n',
                                   "[mcp_servers.git-strata] was not written by git-strata"),
    "a hand-written TOML server, dotted": (TOML, 'mcp_servers.git-strata.command = "mine"\n',
                                           "[mcp_servers.git-strata] was not written by git-strata"),
    "not TOML": (TOML, 'a = \n', "is not valid TOML (Invalid value (at line 1, column 5))"),
    "TOML with a duplicate key": (TOML, 'a = 1\na = 2\n', "is not valid TOML"),
}


@pytest.mark.parametrize("case", REFUSED)
def test_install_refuses_what_it_cannot_merge_and_writes_nothing(tmp_path: Path, case: str):
    where, original, said = REFUSED[case]
    project, home, path = _setup(tmp_path, where, None)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(original if isinstance(original, bytes) else original.encode())
    before = tree(project, home)
    with pytest.raises(StrataError) as refused:
        install.install(where[0], "project", MEMORY, str(project), str(home))
    assert said in refused.value.message and "\n" not in refused.value.message and refused.value.hint
    assert tree(project, home) == before  # the other file of the pair is not written either


def test_a_read_only_file_is_refused(tmp_path: Path):
    project, home, path = _setup(tmp_path, SETTINGS, '{"model": "x"}\n')
    path.chmod(0o444)
    before = tree(project, home)
    with pytest.raises(StrataError, match="is read-only; nothing was changed"):
        install.install("claude-code", "project", MEMORY, str(project), str(home))
    assert tree(project, home) == before and stat.S_IMODE(path.stat().st_mode) == 0o444


def test_a_file_another_program_wrote_meanwhile_is_not_overwritten(tmp_path: Path):
    """Between reading and the rename, a running harness writes the file: nothing of ours is written
    to it, and no temporary file is left."""
    project, home, path = _setup(tmp_path, MCP, '{"mcpServers": {}}\n')
    changes = install.install("claude-code", "project", MEMORY, str(project), str(home), dry_run=True)
    path.write_text('{"numStartups": 7, "mcpServers": {}}\n')
    with pytest.raises(StrataError, match="changed while git-strata was editing it") as refused:
        install.apply(changes, install.load_state(str(home)), str(home))
    assert "\n" not in refused.value.message
    assert path.read_text() == '{"numStartups": 7, "mcpServers": {}}\n'
    assert sorted(p.name for p in path.parent.iterdir()) == [".claude", ".mcp.json"]  # settings written first
    assert install.install("claude-code", "project", MEMORY, str(project), str(home))  # again: now it goes in
    assert parsed(path)["numStartups"] == 7


# -- the file itself: mode, owner, symlinks, folders --------------------------------------------------------

def test_mode_and_owner_are_kept(tmp_path: Path):
    project, home, path = _setup(tmp_path, MCP, '{"secret": "token"}\n')
    path.chmod(0o600)
    if os.geteuid() == 0:
        os.chown(path, 4321, 4321)
    install.install("claude-code", "project", MEMORY, str(project), str(home))
    st = path.stat()
    assert stat.S_IMODE(st.st_mode) == 0o600 and "git-strata" in parsed(path)["mcpServers"]
    if os.geteuid() == 0:
        assert (st.st_uid, st.st_gid) == (4321, 4321)
    state = Path(install.originals_path(str(home)))
    assert stat.S_IMODE(state.stat().st_mode) == 0o600  # it holds a copy of the file
    path.write_text(path.read_text() + " ")
    install.uninstall("claude-code", "project", str(project), str(home))
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and parsed(path) == {"secret": "token"}


def test_a_symlinked_settings_file_stays_a_symlink(tmp_path: Path):
    project, home, path = _setup(tmp_path, SETTINGS, None)
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    (dotfiles / "settings.json").write_text('{\n  "model": "opus"\n}\n')
    path.parent.mkdir()
    path.symlink_to(dotfiles / "settings.json")
    install.install("claude-code", "project", MEMORY, str(project), str(home))
    assert path.is_symlink() and "hooks" in json.loads((dotfiles / "settings.json").read_text())
    assert sorted(p.name for p in dotfiles.iterdir()) == ["settings.json"]  # no temporary file left beside it
    install.uninstall("claude-code", "project", str(project), str(home))
    assert path.is_symlink() and (dotfiles / "settings.json").read_text() == '{\n  "model": "opus"\n}\n'


def test_a_dangling_symlink_is_refused(tmp_path: Path):
    project, home, path = _setup(tmp_path, SETTINGS, None)
    path.parent.mkdir()
    path.symlink_to(tmp_path / "nowhere.json")
    with pytest.raises(StrataError, match="symbolic link to a file that does not exist"):
        install.install("claude-code", "project", MEMORY, str(project), str(home))
    assert not (tmp_path / "nowhere.json").exists()


def test_uninstall_deletes_the_files_and_folder_install_created_when_nothing_else_is_there(tmp_path: Path):
    project, home, path = _setup(tmp_path, TOML, None)
    install.install("codex", "project", MEMORY, str(project), str(home))
    assert (project / ".codex/config.toml").exists() and (project / ".codex/hooks.json").exists()
    install.uninstall("codex", "project", str(project), str(home))
    assert not (project / ".codex").exists() and not Path(install.originals_path(str(home))).exists()
    install.install("codex", "project", MEMORY, str(project), str(home))
    (project / ".codex/notes.txt").write_text("mine\n")
    install.uninstall("codex", "project", str(project), str(home))
    assert sorted(p.name for p in (project / ".codex").iterdir()) == ["notes.txt"]


def test_a_created_file_the_user_added_to_is_kept_without_our_entries(tmp_path: Path):
    project, home, path = _setup(tmp_path, TOML, None)
    install.install("codex", "project", MEMORY, str(project), str(home))
    path.write_text(path.read_text() + '\n[profiles.mine]\nmodel = "o3"\n')
    install.uninstall("codex", "project", str(project), str(home))
    assert path.read_text() == '\n[profiles.mine]\nmodel = "o3"\n' and not (project / ".codex/hooks.json").exists()


# -- re-installs and a lost state -----------------------------------------------------------------------------

def test_reinstalling_for_another_memory_replaces_our_entries_and_uninstall_still_restores(tmp_path: Path):
    where, original = CASES["settings with a hook of the user"]
    project, home, path = _setup(tmp_path, where, original)
    mcp = project / ".mcp.json"
    mcp.write_text('{\n  "mcpServers": {\n    "a": {"command": "a"}\n  }\n}\n')
    mcp_before = mcp.read_bytes()
    install.install("claude-code", "project", "/first", str(project), str(home))
    install.install("claude-code", "project", MEMORY, str(project), str(home))
    assert parsed(path)["hooks"] == reference(where, original)["hooks"]
    assert list(parsed(mcp)["mcpServers"]) == ["a", "git-strata"]
    assert parsed(mcp)["mcpServers"]["git-strata"]["args"] == ["mcp", "--memory", MEMORY]
    install.uninstall("claude-code", "project", str(project), str(home))
    assert path.read_text() == original and mcp.read_bytes() == mcp_before


def test_a_reinstall_after_a_user_edit_keeps_the_edit_on_uninstall(tmp_path: Path):
    project, home, path = _setup(tmp_path, TOML, 'model = "o4"\n')
    install.install("codex", "project", "/first", str(project), str(home))
    path.write_text(path.read_text().replace('model = "o4"', 'model = "o5"'))
    install.install("codex", "project", MEMORY, str(project), str(home))
    install.uninstall("codex", "project", str(project), str(home))
    assert path.read_text() == 'model = "o5"\n'


def test_without_the_state_uninstall_removes_only_ours_and_the_containers_that_held_only_ours(tmp_path: Path):
    where, original = CASES["settings with other harness events"]
    project, home, path = _setup(tmp_path, where, original)
    install.install("claude-code", "project", MEMORY, str(project), str(home))
    os.unlink(install.originals_path(str(home)))
    install.uninstall("claude-code", "project", str(project), str(home))
    assert path.read_text() == original
    assert (project / ".mcp.json").read_text() == "{}\n"  # not known to be ours: the file stays, emptied


def test_the_first_state_format_is_still_read(tmp_path: Path):
    project, home, path = _setup(tmp_path, TOML, None)
    install.install("codex", "project", MEMORY, str(project), str(home))
    state = Path(install.originals_path(str(home)))
    state.write_text(json.dumps({str(path): None, str(project / ".codex/hooks.json"): None,
                                 str(project / ".codex") + "/": None}))
    install.uninstall("codex", "project", str(project), str(home))
    assert not (project / ".codex").exists()


def test_our_group_inside_a_users_group_is_removed_alone(tmp_path: Path):
    ours = agentconfig.command("Stop", "claude-code", "/m")
    original = json.dumps({"hooks": {"Stop": [{"matcher": "", "hooks": [
        {"type": "command", "command": "echo mine"}, {"type": "command", "command": ours}]}]}}, indent=2)
    project, home, path = _setup(tmp_path, SETTINGS, original)
    install.install("claude-code", "project", MEMORY, str(project), str(home))
    os.unlink(install.originals_path(str(home)))
    install.uninstall("claude-code", "project", str(project), str(home))
    mine = {"type": "command", "command": "echo mine"}
    assert parsed(path) == {"hooks": {"Stop": [{"matcher": "", "hooks": [mine]}]}}


def test_our_toml_table_edited_by_hand_is_still_removed_and_only_it(tmp_path: Path):
    where, original = CASES["toml comments, tables, profiles"]
    project, home, path = _setup(tmp_path, where, original)
    install.install("codex", "project", MEMORY, str(project), str(home))
    path.write_text(path.read_text().replace("args = [", 'env = { A = "1" }\nargs = ['))
    install.uninstall("codex", "project", str(project), str(home))
    assert path.read_text() == original + "\n"  # tomlkit removed the table; the blank line before it stays


def test_claude_codes_own_defaults_on_our_server_still_mark_it_ours(tmp_path: Path):
    entry = {"type": "stdio", "command": "/usr/bin/git-strata", "args": ["mcp", "--memory", "/m"], "env": {}}
    project, home, path = _setup(tmp_path, MCP, json.dumps({"mcpServers": {"git-strata": entry}}))
    install.uninstall("claude-code", "project", str(project), str(home))
    assert json.loads(path.read_text()) == {}


def test_the_json_editor_keeps_what_a_reserialise_would_lose():
    text = '{"n": 1e5, "big": 1e400, "n": 2, "s": "\\u00e9"}'
    added = jsonedit.insert(text, jsonedit.parse(text), "k", {"v": [1]})
    assert added == '{"n": 1e5, "big": 1e400, "n": 2, "s": "\\u00e9", "k": {"v": [1]}}'
    assert jsonedit.remove(added, jsonedit.parse(added), 4) == text
    assert jsonedit.remove(added, jsonedit.parse(added), 0) == '{"big": 1e400, "n": 2, "s": "\\u00e9", "k": {"v": [1]}}'


# -- through the CLI ---------------------------------------------------------------------------------------------

def test_cli_codex_keeps_profiles_after_a_multi_line_string_holding_our_marker(mem: Path, tmp_path: Path):
    project = tmp_path / "project"
    (project / ".codex").mkdir(parents=True)
    original = CASES["toml multi-line string holding our block"][1]
    (project / ".codex/config.toml").write_text(original)
    proc = strata(project, "agent", "install", "codex", "--scope", "project", "--memory", str(mem))
    assert proc.returncode == 0, proc.stderr
    data = tomllib.loads((project / ".codex/config.toml").read_text())
    assert data["profiles"] == {"work": {"model": "o3"}} and BLOCK in data["notes"]
    assert data["mcp_servers"]["git-strata"] == {"command": "git-strata", "args": ["mcp"]}  # no path in the project
    proc = strata(project, "agent", "uninstall", "codex")
    assert proc.returncode == 0 and proc.stdout.decode().splitlines() == [
        f"removed {project}/.codex/hooks.json", f"changed {project}/.codex/config.toml"]
    assert (project / ".codex/config.toml").read_text() == original and not (project / ".codex/hooks.json").exists()


def test_cli_user_scope_keeps_a_private_claude_json_private(mem: Path, tmp_path: Path):
    home = Path(os.environ["HOME"])
    claude = home / ".claude.json"
    claude.write_text('{\n  "numStartups": 3,\n  "oauthAccount": {"token": "t"},\n  "tipsHistory": {"a": 1e5}\n}\n')
    claude.chmod(0o600)
    original = claude.read_bytes()
    proc = strata(tmp_path, "agent", "install", "claude-code", "--scope", "user", "--memory", str(mem))
    assert proc.returncode == 0, proc.stderr
    assert stat.S_IMODE(claude.stat().st_mode) == 0o600 and b'"a": 1e5' in claude.read_bytes()
    claude.write_text(claude.read_text().replace('"numStartups": 3', '"numStartups": 4'))  # Claude Code runs meanwhile
    assert strata(tmp_path, "agent", "uninstall", "claude-code", "--scope", "user").returncode == 0
    assert claude.read_bytes() == original.replace(b'"numStartups": 3', b'"numStartups": 4')
    assert stat.S_IMODE(claude.stat().st_mode) == 0o600 and not (home / ".claude").exists()


def test_cli_symlinked_settings_and_a_users_git_strata_hook(mem: Path, tmp_path: Path):
    project = tmp_path / "project"
    (project / ".claude").mkdir(parents=True)
    real = tmp_path / "settings.json"
    original = CASES["settings with hooks mentioning git-strata"][1]
    real.write_text(original)
    (project / ".claude/settings.json").symlink_to(real)
    assert strata(project, "agent", "install", "claude-code", "--memory", str(mem)).returncode == 0
    assert (project / ".claude/settings.json").is_symlink() and "--harness claude-code --memory" in real.read_text()
    assert strata(project, "agent", "uninstall", "claude-code").returncode == 0
    assert real.read_text() == original and (project / ".claude/settings.json").is_symlink()
    assert not (project / ".mcp.json").exists()


@pytest.mark.parametrize("where, original, said", [
    (TOML, 'mcp_servers = { docs = { command = "d" } }\n', b"is an inline table"),
    (SETTINGS, '{"hooks": {"Stop": "echo hi"}}\n', b'"hooks.Stop" is a string, not a list'),
    (MCP, '{"mcpServers": {"git-strata": {"command": "mine"}}}\n', b"was not written by git-strata"),
])
def test_cli_refusals_are_one_line_exit_1_and_change_nothing(mem: Path, tmp_path: Path, where, original, said):
    project = tmp_path / "project"
    path = project / where[1]
    path.parent.mkdir(parents=True)
    path.write_text(original)
    before = tree(project)
    proc = strata(project, "agent", "install", where[0], "--memory", str(mem))
    assert proc.returncode == 1 and said in proc.stderr
    lines = proc.stderr.decode().splitlines()
    assert len(lines) == 2 and lines[0].startswith("git-strata: error: ") and lines[1].startswith("hint: ")
    assert tree(project) == before
