"""A project's own files (which a team commits) name no personal path: `agent install` at project
scope writes `git-strata` by name and no memory, each machine finds its memory through
STRATA_MEMORY or `git config strata.memory` (install sets it), a machine without one is told in one
line, and the hint never proposes making the code project a memory repository."""

from __future__ import annotations

import json
import os
import subprocess
import tomllib
from pathlib import Path

from conftest import BIN, strata
from helpers.harness import run_hook
from strata_git.app import where


def code_project(tmp_path: Path) -> Path:
    project = tmp_path / "code"
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    return project


def files_text(project: Path) -> str:
    return "".join(p.read_text() for p in sorted(project.rglob("*")) if p.is_file() and ".git" not in p.parts)


def global_setting() -> str:
    proc = subprocess.run(["git", "config", "--global", "--get", where.SETTING], capture_output=True, text=True)
    return proc.stdout.strip()


def test_project_files_name_no_path_and_the_setting_finds_the_memory(mem: Path, tmp_path: Path):
    project = code_project(tmp_path)
    for harness in ("claude-code", "codex"):
        proc = strata(project, "agent", "install", harness, "--memory", str(mem))
        assert proc.returncode == 0, proc.stderr
    text = files_text(project)
    assert str(mem) not in text and str(BIN) not in text and os.environ["HOME"] not in text
    hooks = json.loads((project / ".claude/settings.json").read_text())["hooks"]
    assert hooks["SessionStart"][0]["hooks"][0]["command"] == "git-strata hook agent SessionStart --harness claude-code"
    assert json.loads((project / ".mcp.json").read_text())["mcpServers"]["git-strata"] == {"command": "git-strata",
                                                                                           "args": ["mcp"]}
    toml = tomllib.loads((project / ".codex/config.toml").read_text())
    assert toml["mcp_servers"]["git-strata"] == {"command": "git-strata", "args": ["mcp"]}
    assert global_setting() == str(mem)
    # what the installed entry runs, from the project folder: the memory comes from the setting
    out = run_hook(project, "SessionStart", {"cwd": str(project), "source": "startup"}, None)
    assert "# Memory context" in out["hookSpecificOutput"]["additionalContext"]


def test_the_environment_variable_comes_before_the_setting(mem: Path, tmp_path: Path):
    project = code_project(tmp_path)
    subprocess.run(["git", "config", "--global", where.SETTING, str(tmp_path / "elsewhere")], check=True)
    args = [str(BIN / "git-strata"), "hook", "agent", "SessionStart", "--harness", "claude-code"]
    proc = subprocess.run(args, cwd=project, input=b'{"source": "startup"}', capture_output=True,
                          env={**os.environ, where.ENV: str(mem)})
    assert "# Memory context" in json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]
    out = run_hook(project, "SessionStart", {"source": "startup"}, None)  # the setting names no memory: said so
    said = out["systemMessage"]
    assert "git config strata.memory names" in said and "not a memory repository" in said


def test_a_machine_without_a_memory_is_told_in_one_line(tmp_path: Path):
    project = code_project(tmp_path)
    out = run_hook(project, "SessionStart", {"cwd": str(project), "source": "startup"}, None)
    assert out == {"systemMessage": where.MISSING} and "\n" not in where.MISSING
    assert run_hook(project, "Stop", {"cwd": str(project)}, None) == {}
    status = strata(project, "agent", "status", "--json")
    assert status.returncode == 0 and json.loads(status.stdout)["missing"] == where.MISSING
    assert where.MISSING in strata(project, "agent", "status").stdout.decode()


def test_without_memory_the_hint_never_proposes_initialising_the_code_project(tmp_path: Path):
    project = code_project(tmp_path)
    before = files_text(project)
    proc = strata(project, "agent", "install", "claude-code")
    err = proc.stderr.decode()
    assert proc.returncode == 1 and len(err.splitlines()) == 2 and "--memory PATH" in err
    assert f"git strata init {project}" not in err and "git strata init PATH" in err
    assert files_text(project) == before and not (project / ".claude").exists()


def test_a_setting_that_names_another_memory_is_not_overwritten(mem: Path, tmp_path: Path):
    project = code_project(tmp_path)
    other = tmp_path / "other"
    assert strata(tmp_path, "init", str(other)).returncode == 0
    subprocess.run(["git", "config", "--global", where.SETTING, str(mem)], check=True)
    proc = strata(project, "agent", "install", "claude-code", "--memory", str(other))
    assert proc.returncode == 1 and b"git config strata.memory names" in proc.stderr
    assert global_setting() == str(mem) and not (project / ".claude").exists()
    assert strata(project, "agent", "install", "claude-code").returncode == 0  # the setting's own memory: fine


def test_user_scope_names_the_memory_by_path(mem: Path, tmp_path: Path):
    home = Path(os.environ["HOME"])
    assert strata(tmp_path, "agent", "install", "claude-code", "--scope", "user", "--memory", str(mem)).returncode == 0
    stop = json.loads((home / ".claude/settings.json").read_text())["hooks"]["Stop"][0]["hooks"][0]["command"]
    assert stop.endswith(f"--memory {mem}") and global_setting() == ""  # a user's own file may hold paths
    status = json.loads(strata(tmp_path, "agent", "status", "claude-code", "--json").stdout)
    user = [i for i in status["installed"] if i["scope"] == "user"][0]
    assert user["memories"] == [str(mem)] and "Stop" in user["events"]


def test_no_prompt_hook_while_hints_are_off_and_one_once_they_are_on(mem: Path, tmp_path: Path):
    project = code_project(tmp_path)
    assert strata(project, "agent", "install", "claude-code", "--memory", str(mem)).returncode == 0
    assert "UserPromptSubmit" not in json.loads((project / ".claude/settings.json").read_text())["hooks"]
    cfg = mem / ".strata/config.toml"
    template = cfg.read_text()
    cfg.write_text(template.replace("prompt_hints = false", "prompt_hints = true"))
    assert strata(project, "agent", "install", "claude-code", "--memory", str(mem)).returncode == 0
    assert "UserPromptSubmit" in json.loads((project / ".claude/settings.json").read_text())["hooks"]
    cfg.write_text(template)
    assert strata(project, "agent", "install", "claude-code").returncode == 0  # a reinstall takes it out again
    assert "UserPromptSubmit" not in json.loads((project / ".claude/settings.json").read_text())["hooks"]
    status = json.loads(strata(project, "agent", "status", "claude-code", "--json").stdout)
    assert status["installed"][0]["events"] == ["SessionStart", "PreCompact", "Stop", "SessionEnd"]
    assert status["installed"][0]["memories"] == [None] and status["memory"] == str(mem)
