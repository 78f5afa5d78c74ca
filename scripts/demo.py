"""The quick-start demo: a memory repository and a local bare remote in a temporary folder.

It drives the real `git strata` command the way a person or an agent would:
init, write, read, a commit made by hand with plain git, a refused commit, a
sync to the remote, index.md, a janitor cycle 30 days ahead, the archive (200
days ahead: archived, pushed, verified, pruned), search over every tier, a second
machine that clones without the archive and brings one memory back, both machines
editing one memory and syncing (a conflict kept side by side, then resolved), a memory's
history, status, and stats with the chart of memory over time.
Pass --keep to keep the folder.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile


def show(title: str) -> None:
    print(f"\n\033[1m== {title}\033[0m" if sys.stdout.isatty() else f"\n== {title}")


def run(*args: str, cwd: str, input: str | None = None, expect_fail: bool = False) -> str:
    print("$ " + " ".join(a if " " not in a else repr(a) for a in args))
    proc = subprocess.run(args, cwd=cwd, input=input, capture_output=True, text=True)
    output = (proc.stdout + proc.stderr).rstrip()
    if output:
        print(output)
    if (proc.returncode != 0) != expect_fail:
        raise SystemExit(f"demo failed: {' '.join(args)} exited with {proc.returncode}")
    return proc.stdout


def mcp_session(mem: str) -> None:
    """List the tools, write a memory and read it back, as an agent would."""
    import anyio
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    async def session() -> None:
        params = StdioServerParameters(command="git", args=["strata", "mcp", "--agent", "demo-agent"], cwd=mem,
                                       env=dict(os.environ))
        async with stdio_client(params) as (r, w), ClientSession(r, w) as s:
            await s.initialize()
            tools = (await s.list_tools()).tools
            print("tools:", ", ".join(t.name for t in tools))
            page = {"name": "projects/site", "content": "# Site\nLaunch page copy is final.\n"}
            wrote = await s.call_tool("write", page)
            print("write:", wrote.content[0].text.replace("\n", " ")[:160])
            read = await s.call_tool("read", {"name": "projects/site"})
            print(read.content[0].text.rstrip())

    anyio.run(session)


def main() -> int:
    keep = "--keep" in sys.argv
    base = tempfile.mkdtemp(prefix="git-strata-demo-")
    os.environ.update({"GIT_AUTHOR_NAME": "Demo Agent", "GIT_AUTHOR_EMAIL": "agent@demo.invalid",
                       "GIT_COMMITTER_NAME": "Demo Agent", "GIT_COMMITTER_EMAIL": "agent@demo.invalid",
                       "GIT_CONFIG_NOSYSTEM": "1", "HOME": base})
    mem, remote = os.path.join(base, "memory"), os.path.join(base, "remote.git")
    try:
        show("a bare remote and a new memory repository")
        run("git", "init", "-q", "--bare", "-b", "main", remote, cwd=base)
        run("git", "--git-dir", remote, "config", "uploadpack.allowFilter", "true", cwd=base)
        run("git", "--git-dir", remote, "config", "uploadpack.allowAnySHA1InWant", "true", cwd=base)
        run("git", "strata", "init", mem, cwd=base)
        run("git", "remote", "add", "origin", remote, cwd=mem)

        show("an agent writes memories (each is one commit)")
        run("git", "strata", "write", "projects/koda", "--title", "Koda launch plan", "--type", "decision",
            "--tags", "launch,q3", input="# Koda\n\nShip the beta on 2026-12-01; Mia owns the rollout.\n", cwd=mem)
        run("git", "strata", "write", "entities/mia", "-m", "---\ntitle: Mia\ntype: entity\n---\nRelease manager.\n",
            cwd=mem)
        run("git", "strata", "write", "gtd/inbox", "-m", "- [ ] draft the launch post\n", cwd=mem)
        run("git", "strata", "read", "projects/koda", cwd=mem)

        show("a person edits a memory by hand and commits with plain git (hooks check it)")
        with open(os.path.join(mem, "active/gtd/inbox.md"), "a", encoding="utf-8") as f:
            f.write("- [ ] book the demo room\n")
        run("git", "commit", "-q", "-am", "inbox: add demo room", cwd=mem)

        show("bad input is refused with the reason and the fix; nothing is written")
        run("git", "strata", "write", "../../etc/passwd", "-m", "x", cwd=mem, expect_fail=True)
        token = "AKIA" + "Q7RZ2MPLX4NB8KDW"
        with open(os.path.join(mem, "active/projects/creds.md"), "w", encoding="utf-8") as f:
            f.write(f"aws key {token}\n")
        run("git", "add", "active/projects/creds.md", cwd=mem)
        run("git", "commit", "-q", "-m", "oops", cwd=mem, expect_fail=True)
        run("git", "rm", "-q", "--cached", "active/projects/creds.md", cwd=mem)
        os.remove(os.path.join(mem, "active/projects/creds.md"))

        show("sync to the remote")
        run("git", "strata", "sync", cwd=mem)
        run("git", "--git-dir", remote, "log", "--oneline", cwd=base)

        show("index.md: the router an agent reads first (generated, never committed)")
        with open(os.path.join(mem, "index.md"), encoding="utf-8") as f:
            print(f.read().rstrip())
        show("the janitor: what would cool 30 days from now, then do it (one auditable commit)")
        run("git", "strata", "janitor", "--dry-run", "--now", "+30d", cwd=mem)
        run("git", "strata", "janitor", "--now", "+30d", cwd=mem)
        run("git", "strata", "log", cwd=mem)
        run("git", "strata", "why", "gtd/inbox", "--now", "+30d", cwd=mem)

        show("200 days later: cooled memories are archived, pushed, verified on the remote, pruned here")
        run("git", "strata", "janitor", "--now", "+200d", cwd=mem)
        run("git", "strata", "archive", cwd=mem)
        run("git", "strata", "list", "--tier", "archive", cwd=mem)
        show("search covers every tier, the pruned archive included (through the shadow index)")
        run("git", "strata", "search", "who owns the rollout?", cwd=mem)

        show("a second machine joins: history, active and cooled, but none of the archive's content")
        laptop = os.path.join(base, "laptop")
        run("git", "strata", "clone", remote, laptop, cwd=base)
        run("git", "strata", "search", "Mia rollout", cwd=laptop)
        run("git", "strata", "recall", "projects/koda", cwd=laptop)  # fetched from the remote in one batch
        run("git", "strata", "read", "projects/koda", cwd=laptop)

        show("both machines edit the same memory, then sync: nothing is lost, nothing stops")
        run("git", "strata", "sync", cwd=laptop)
        run("git", "strata", "sync", cwd=mem)
        run("git", "strata", "write", "projects/koda", "--replace", "-m",
            "# Koda\n\nShip the beta on 2026-12-08 (slipped a week).\n", cwd=laptop)
        run("git", "strata", "write", "projects/koda", "--replace", "-m",
            "# Koda\n\nShip the beta on 2026-12-01; Leo joins QA.\n", cwd=mem)
        run("git", "strata", "sync", cwd=laptop)
        run("git", "strata", "sync", cwd=mem)  # keeps the laptop's text in place, this one beside it
        run("git", "strata", "sync", cwd=laptop)
        run("git", "strata", "status", cwd=laptop)
        import json

        status = subprocess.run(["git", "strata", "status", "--json"], cwd=laptop, capture_output=True, text=True)
        copy = json.loads(status.stdout)["conflicts"][0]["copy"]
        run("git", "strata", "resolve", copy, "--keep", "both", cwd=laptop)
        run("git", "strata", "sync", cwd=laptop)
        run("git", "strata", "sync", cwd=mem)  # the resolution reaches the first machine too

        show("agents: a rejection, then the boot context an agent loads after a restart")
        run("git", "strata", "reject", "rewrite the launch site in a new framework", "--why", "no time before beta",
            cwd=mem)
        run("git", "strata", "context", "--budget", "300", cwd=mem)
        show("agents over MCP: the SDK's own client talks to `git strata mcp`")
        mcp_session(mem)

        show("a memory's history: every version and move, with what changed")
        run("git", "strata", "history", "projects/koda", "--diff", "--limit", "3", cwd=mem)

        show("status, stats and memory over time (the janitor's commits above are dated ahead: they count this week)")
        run("git", "strata", "status", cwd=mem)
        run("git", "strata", "stats", "--chart", "--weeks", "3", cwd=mem)
    finally:
        if keep:
            print(f"\nkept: {base}; to look at it in a browser: cd {mem} && git strata ui")
        else:
            shutil.rmtree(base, ignore_errors=True)
    print("\ndemo finished: every step above ran real git and git-strata commands")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
