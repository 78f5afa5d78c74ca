"""Memory per project: what a memory is about travels with it (its frontmatter, its shadow record) as
a name that is the same on every machine, never a path; list, search, the boot context, the hints,
capture and the MCP tools all know it."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest
from mcp import ClientSession
from mcp.client.stdio import stdio_client

from conftest import git, strata
from helpers.harness import claude_line, run_hook
from helpers.mcp import params, served
from strata_git.core import projects
from strata_git.errors import BadName
from strata_git.store import records


@pytest.mark.parametrize(("url", "name"), [
    ("https://me:ghp_tok3n@GitHub.com/Org/App.git", "github.com/org/app"),
    ("git@github.com:org/app", "github.com/org/app"),
    ("ssh://git@gitlab.example.com:2222/team/sub/app.git/", "gitlab.example.com/team/sub/app"),
    ("https://dev.azure.com/org/proj/_git/app?x=1#y", "dev.azure.com/org/proj/_git/app"),
    ("git://[::1]/app.git", "::1/app" if projects.valid("::1/app") else None),
    ("/home/me/repos/app.git", None),
    ("file:///home/me/repos/app.git", None),
    ("../app.git", None),
    ("C:\\repos\\app", None),
    ("", None),
])
def test_a_remote_url_becomes_a_name_without_credentials_or_paths(url: str, name: str | None):
    assert projects.of_url(url) == name


@pytest.mark.parametrize("bad", ["/home/me/app", "~/app", "a/../b", "app\nx", "x" * 201, "", "white space"])
def test_a_project_name_given_by_hand_is_checked(bad: str):
    with pytest.raises(BadName):
        projects.check(bad)


def test_a_name_given_by_hand_is_normalised():
    assert projects.check(" GitHub.com/Org/App.git/ ") == "github.com/org/app"
    assert projects.of_folder("My App (2)") == "my-app-2"


def _code(tmp_path: Path, name: str, remote: str | None) -> Path:
    code = tmp_path / name
    code.mkdir()
    git(code, "init", "-q")
    if remote:
        git(code, "remote", "add", "origin", remote)
    return code


def test_the_project_of_a_folder_is_its_remote_else_its_repositorys_folder_name(mem: Path, tmp_path: Path):
    from strata_git.app import where

    app = _code(tmp_path, "app", "https://me:secret@github.com/Org/App.git")
    (app / "src").mkdir()
    assert where.project(str(app / "src")) == "github.com/org/app"
    assert where.project(str(_code(tmp_path, "Local Only", None))) == "local-only"
    assert where.project(str(_code(tmp_path, "pathy", str(tmp_path / "elsewhere.git")))) == "pathy"
    assert where.project(str(mem)) is None  # the memory repository itself is no project
    (tmp_path / "plain").mkdir()
    assert where.project(str(tmp_path / "plain")) is None  # outside a repository: a folder is no project


def test_write_records_the_project_and_list_and_search_find_by_it(mem: Path):
    assert strata(mem, "write", "decisions/auth", "--project", "GitHub.com/Org/App", "--type", "decision",
                  "-m", "Passkeys for login.").returncode == 0
    assert strata(mem, "write", "decisions/ci", "--project", "other", "--type", "decision",
                  "-m", "Passkeys are out of scope for CI.").returncode == 0
    assert strata(mem, "write", "notes/general", "-m", "Passkeys everywhere, one day.").returncode == 0
    assert "project: github.com/org/app\n" in (mem / "active/decisions/auth.md").read_text()
    listed = json.loads(strata(mem, "list", "--project", "github.com/org/app", "--json").stdout)
    assert [e["name"] for e in listed] == ["decisions/auth"] and listed[0]["project"] == "github.com/org/app"
    hits = json.loads(strata(mem, "search", "passkeys", "--project", "other", "--json").stdout)
    assert [h["name"] for h in hits] == ["decisions/ci"] and hits[0]["project"] == "other"
    assert len(json.loads(strata(mem, "search", "passkeys", "--json").stdout)) == 3
    refused = strata(mem, "search", "passkeys", "--project", "/home/me/app")
    assert refused.returncode != 0 and b"bad project name" in refused.stderr and b"\n" == refused.stderr[-1:]
    assert strata(mem, "write", "notes/x", "--project", "../up", "-m", "x").returncode != 0
    assert not (mem / "active/notes/x.md").exists()


def test_an_archived_memory_keeps_its_project_in_its_shadow_record(mem: Path):
    strata(mem, "write", "notes/old", "--project", "github.com/org/app", "-m", "zebrafish tanks need heaters")
    assert strata(mem, "janitor", "--now", "+40d").returncode == 0
    assert strata(mem, "janitor", "--now", "+200d").returncode == 0
    hits = json.loads(strata(mem, "search", "zebrafish", "--tier", "archive", "--project", "github.com/org/app",
                             "--json").stdout)
    assert [(h["name"], h["project"]) for h in hits] == [("notes/old", "github.com/org/app")]
    assert json.loads(strata(mem, "search", "zebrafish", "--project", "other", "--json").stdout) == []


def test_a_shadow_record_with_a_forged_project_is_refused():
    rec = json.loads(records.make(b"---\nproject: app\n---\nhello\n", "a" * 40))
    assert rec["j"] == "app"
    assert isinstance(records.parse(json.dumps(rec).encode(), "a" * 40), records.Record)
    for forged in ("/home/me", ["app"], "x" * 300, "a/../b"):
        assert records.parse(json.dumps({**rec, "j": forged}).encode(), "a" * 40) == \
            "a project that is not a project name"
    plain = records.make(b"hello\n", "b" * 40)  # no project: the record it always had
    assert b'"j"' not in plain


def _decision(mem: Path, name: str, project: str | None, text: str) -> None:
    args = ["write", name, "--type", "decision", "-m", text] + (["--project", project] if project else [])
    assert strata(mem, *args).returncode == 0


def test_the_boot_context_puts_the_current_project_first_and_others_as_far_as_the_budget_allows(mem: Path):
    _decision(mem, "decisions/app-db", "app", "Postgres for the app.")
    _decision(mem, "decisions/general", None, "Conventional commits everywhere.")
    for i in range(12):
        _decision(mem, f"decisions/web-{i}", "web", f"Web choice {i}: " + "detail " * 20)
    assert strata(mem, "reject", "use MongoDB", "--project", "web").returncode == 0
    text = strata(mem, "context", "--project", "app").stdout.decode()
    assert text.index("decisions/app-db") < text.index("decisions/general")
    assert "## Other projects' rejections and decisions" in text and "use MongoDB [web]\n" in text
    assert text.index("decisions/general") < text.index("## Other projects'")
    tight = json.loads(strata(mem, "context", "--project", "app", "--budget", "200", "--json").stdout)
    assert "decisions/app-db" in tight["decisions"] and "decisions/general" in tight["decisions"]
    assert "rejections/use-mongodb" not in tight["rejections"]  # another project's: only if there is room
    everyone = json.loads(strata(mem, "context", "--budget", "200", "--json").stdout)
    assert "rejections/use-mongodb" in everyone["rejections"]  # without a current project: every rejection


def test_other_projects_get_the_budget_only_after_everything_of_this_one(mem: Path):
    _decision(mem, "decisions/web-db", "web", "Postgres for the web.")
    for i in range(4):
        proc = strata(mem, "write", f"notes/app-{i}", "--project", "app", "-m", f"App note {i}: " + "word " * 30)
        assert proc.returncode == 0, proc.stderr
    assert strata(mem, "write", "notes/web-note", "--project", "web", "-m", "A web note.").returncode == 0
    squeezed = 0
    for budget in range(150, 700, 25):  # at every budget: another project's only once all of this one's are in
        found = json.loads(strata(mem, "context", "--project", "app", "--budget", str(budget), "--json").stdout)
        ours = len(found["full"]) + len([n for n in found["listed"] if n.startswith("notes/app-")])
        theirs = "decisions/web-db" in found["decisions"] or "notes/web-note" in found["listed"]
        assert ours == 4 or not theirs, (budget, found)
        squeezed += ours < 4
    assert squeezed  # (some budgets were too small for all of this project's)
    roomy = strata(mem, "context", "--project", "app", "--budget", "3000").stdout.decode()
    assert "decisions/web-db" in roomy and "## Other projects' active memories" in roomy
    assert "`notes/web-note`" in roomy.split("## Other projects' active memories", 1)[1]


def test_the_rest_comes_by_recency_and_use(mem: Path):
    assert strata(mem, "write", "notes/old", "-m", "An old note, read often.").returncode == 0
    env = {"GIT_COMMITTER_DATE": "2026-11-20T12:00:00+00:00", "GIT_AUTHOR_DATE": "2026-11-20T12:00:00+00:00"}
    assert strata(mem, "write", "notes/new", "-m", "A newer note, never read.", env=env).returncode == 0
    first = json.loads(strata(mem, "context", "--json").stdout)["full"]
    assert first.index("notes/new") < first.index("notes/old")
    assert strata(mem, "read", "notes/old").returncode == 0  # read now: used after the newer one changed
    second = json.loads(strata(mem, "context", "--json").stdout)["full"]
    assert second.index("notes/old") < second.index("notes/new")


def test_the_hooks_name_the_sessions_project_and_capture_records_it(mem: Path, tmp_path: Path):
    app = _code(tmp_path, "app", "git@github.com:org/app.git")
    _decision(mem, "decisions/app-db", "github.com/org/app", "Postgres for the app.")
    for i in range(30):
        _decision(mem, f"decisions/web-{i:02d}", "web", f"Web choice {i}: " + "detail " * 30)
    out = run_hook(app, "SessionStart", {"hook_event_name": "SessionStart", "cwd": str(app), "source": "startup"},
                   mem)
    context = out["hookSpecificOutput"]["additionalContext"]
    assert context.index("decisions/app-db") < context.index("decisions/web-")
    transcript = tmp_path / "s.jsonl"
    transcript.write_text(claude_line("user", "Decision: use sqlc for queries.", "p-1"))
    done = strata(mem, "capture", str(transcript), "--workdir", str(app), "--json")
    made = json.loads(done.stdout)["memories"]
    for name in made:
        assert "project: github.com/org/app\n" in (mem / "active" / f"{name}.md").read_text()
    refused = strata(mem, "capture", str(transcript), "--project", str(app))
    assert refused.returncode != 0 and b"bad project name" in refused.stderr


def test_the_mcp_tools_take_a_project_and_write_records_the_servers_own(mem: Path, tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch):
    app = _code(tmp_path, "app", "https://github.com/org/app")
    monkeypatch.setenv("STRATA_MEMORY", str(mem))
    _decision(mem, "decisions/web-db", "web", "MySQL for web.")

    async def main():
        async with stdio_client(params(app)) as (r, w), ClientSession(r, w) as s:
            await s.initialize()
            wrote = await s.call_tool("write", {"name": "decisions/app-db", "content": "Postgres for app.",
                                                "type": "decision"})
            found = await s.call_tool("search", {"query": "mysql", "project": "web"})
            listed = await s.call_tool("list", {"project": "github.com/org/app"})
            bad = await s.call_tool("search", {"query": "mysql", "project": "/home/me"})
            return wrote, found, listed, bad

    wrote, found, listed, bad = anyio.run(main)
    assert not wrote.is_error
    assert "project: github.com/org/app\n" in (mem / "active/decisions/app-db.md").read_text()
    blocks = served(found.content[0].text)
    assert [h["name"] for h, _ in blocks] == ["decisions/web-db"]
    assert "decisions/app-db" in listed.content[0].text and "web-db" not in listed.content[0].text
    assert bad.is_error and "bad project name" in bad.content[0].text


def test_prompt_hints_name_the_sessions_project_before_anothers(mem: Path, tmp_path: Path):
    app = _code(tmp_path, "app", "https://github.com/org/app")
    cfg = mem / ".strata/config.toml"
    cfg.write_text(cfg.read_text().replace("prompt_hints = false", "prompt_hints = true")
                   .replace("prompt_min_score = 5.0", "prompt_min_score = 0.5"))
    git(mem, "commit", "-qam", "hints on")
    for i in range(3):  # another project's memories that match the prompt better
        _decision(mem, f"decisions/web-cache-{i}", "web", "Cache invalidation with redis keys. Redis cache redis.")
    _decision(mem, "decisions/app-cache", "github.com/org/app", "Cache invalidation: an in-process LRU, no redis.")
    prompt = {"hook_event_name": "UserPromptSubmit", "prompt": "how do we do cache invalidation with redis",
              "cwd": str(app)}
    hints = run_hook(app, "UserPromptSubmit", prompt, mem)["hookSpecificOutput"]["additionalContext"]
    named = [line.split(" (")[0].removeprefix("- ") for line in hints.splitlines() if line.startswith("- ")]
    assert named[0] == "decisions/app-cache" and len(named) == 3, hints
    elsewhere = run_hook(tmp_path, "UserPromptSubmit", {**prompt, "cwd": str(tmp_path)}, mem)
    assert "decisions/app-cache" not in elsewhere["hookSpecificOutput"]["additionalContext"].split("\n- ")[1]
