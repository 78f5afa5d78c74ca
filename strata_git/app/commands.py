"""Every `git strata` command, declared once: its name, one help string, its arguments and its handler.

The parser (cli._parser) is built from this table in one loop; a help command, man pages and shell
completion read the same table. Handlers are named by dotted path, so reading the table imports
nothing heavy: a handler's module is imported only when its command runs.
"""

from __future__ import annotations

from typing import Any, NamedTuple


class Arg(NamedTuple):
    """One argparse `add_argument(*flags, **options)` call."""

    flags: tuple[str, ...]
    options: dict[str, Any]


class Command(NamedTuple):
    name: str
    help: str  # the one-line help and the description of `git strata NAME -h`
    handler: str  # "module.function": takes the parsed arguments, returns the exit code
    args: tuple[Arg, ...] = ()
    # "module.function" the command line calls with the arguments as typed (after the command's
    # name), before it builds the parser or imports the handler's module: what waits on something
    # else (a sync's fetch) starts there, beside the loading. It must never fail or print.
    first: str = ""


def arg(*flags: str, **options: Any) -> Arg:
    return Arg(flags, options)


def _h(function: str) -> str:
    return f"strata_git.app.handlers.{function}"


# Arguments that several commands share, declared once.
TIER = arg("--tier", choices=("active", "cooled", "archive"), help="only this tier")
TYPE = arg("--type", help="only memories of this type")
PROJECT = arg("--project", metavar="NAME",
              help="only memories of this project (as they record it: github.com/org/app, or a folder's name)")
AS_OF = arg("--as-of", metavar="WHEN",
            help="as it was then: a date (2026-03-01), a commit of the memory (HEAD~3), or a revision of the code "
                 "repository you stand in (its commit's date); from history, changing and recording nothing")
MODE = arg("--mode", choices=("words", "meaning", "both"),
           help="words, meaning (a local model: search.model), or both fused (default: both when a model is set, "
                "else words)")
RECORD_PROJECT = arg("--project", metavar="NAME",
                     help="record the project it is about in its frontmatter: github.com/org/app (a remote URL "
                          "without scheme, user or .git), or a folder's name")
JSON = arg("--json", action="store_true", help="print the result as JSON (for agents)")  # every command has it

# In the order `git strata -h` lists them.
TABLE: tuple[Command, ...] = (
    Command("init", "make a folder or an existing git repository a memory repository", _h("cmd_init"), (
        arg("dir", nargs="?", default=".", help="folder (default: here)"),
    )),
    Command("write", "create an active memory (from -m, --file or stdin) in one commit; --replace or --append "
            "for one that exists", _h("cmd_write"), (
        arg("name", help="memory name relative to the tier, e.g. projects/koda"),
        arg("--replace", action="store_true", help="replace the memory if it exists (history keeps the old version)"),
        arg("--append", action="store_true", help="add the text to the end of the memory's body (or create it)"),
        arg("-m", "--message", help="the content"),
        arg("--file", help="read the content from this file ('-' for stdin)"),
        arg("--title", help="set 'title' in the frontmatter"),
        arg("--tags", help="set 'tags' in the frontmatter (comma-separated)"),
        arg("--type", help="set 'type' in the frontmatter (note, decision, rejection, ...)"),
        RECORD_PROJECT,
    )),
    Command("read", "print a memory from whichever tier holds it (records an access)", _h("cmd_read"), (
        arg("name", help="memory name, e.g. projects/koda"),
        arg("--summary", action="store_true", help="print the summary made when it cooled, not the memory"),
        AS_OF,
    )),
    Command("list", "list memories with tier, type, title and tags", _h("cmd_list"), (TIER, TYPE, PROJECT, AS_OF)),
    Command("status", "counts and sizes per tier, hooks, config in force, problems", _h("cmd_status"), (AS_OF,)),
    Command("reject", "record a rejection (\"we said no to X\") in one commit: never cooled, always in the boot "
            "context", _h("cmd_reject"), (
        arg("text", help='what was said no to, in one line: "use MongoDB for the event store"'),
        arg("--why", help="the reason, kept in the memory's body"),
        arg("--name", help="memory name (default: rejections/<words of the text>)"),
        RECORD_PROJECT,
    )),
    Command("context", "print the boot context an agent loads after a restart: rejections, decisions, recent "
            "memories", _h("cmd_context"), (
        arg("--budget", type=int, default=None, help="token budget (default 1000; estimate: UTF-8 bytes / 3)"),
        arg("--type", help="only memories of this type beside the rejections and decisions"),
        arg("--project", metavar="NAME",
            help="the current project: its memories first, then those of no project, other projects' only as far "
                 "as the budget allows"),
        AS_OF,
    )),
    Command("stats", "memories and bytes per tier, migrations per week, reads, index freshness, tokens and bytes "
            "saved; --chart draws memory over time", _h("cmd_stats"), (
        arg("--chart", action="store_true",
            help="also draw memories per tier at each week's end and the week's moves (cooled, archived, "
                 "rehydrated, captured), from history"),
        arg("--weeks", type=int, default=26, metavar="N", help="with --chart: the last N weeks (default 26)"),
    )),
    Command("mcp", "run the MCP server on stdio (for agents: see docs/agents.md for registering it)", _h("cmd_mcp"), (
        arg("--agent", help="the agent's name, recorded with every change it makes"),
        arg("--memory", metavar="PATH",
            help="the memory repository (default: STRATA_MEMORY, `git config strata.memory`, or the one here)"),
    )),
    Command("edit", "open an active memory in your editor and commit the result", _h("cmd_edit"), (
        arg("name", help="active memory to edit"),
        arg("--recall", action="store_true", help="if it is cooled or archived, bring it back first"),
    )),
    Command("forget", "remove an active memory in one commit (history keeps it)", _h("cmd_forget"), (
        arg("name", help="active memory to remove"),
    )),
    Command("recall", "bring cooled or archived memories (by name, or the best match for a query) back to active/",
            _h("cmd_recall"), (
        arg("name", nargs="+", help="memory names to bring back (with --query: words to search for)"),
        arg("--query", action="store_true",
            help="an argument that names no memory is a query: recall its best cooled or archived match"),
        MODE,
    )),
    Command("search", "search all tiers (active, cooled, and archive through the shadow index) for any text",
            _h("cmd_search"), (
        arg("query", help="any text: words, a question, quotes, CJK..."),
        TIER,
        TYPE,
        PROJECT,
        arg("--limit", type=int, default=10, help="at most this many hits (default 10)"),
        arg("--rank", choices=("merged", "cascade"), default="merged",
            help="merged: best score first, any tier (default); cascade: active, then cooled, then archive"),
        MODE,
        AS_OF,
    )),
    Command("archive", "push archived content to the archive remote, verify it there, then prune it locally",
            _h("cmd_archive"), (
        arg("--dry-run", action="store_true", help="say what would be pruned"),
    )),
    Command("reindex", "upgrade old shadow records, rebuild the shadow index from history and the search index "
            "from disk", _h("cmd_reindex")),
    Command("sync", "fetch, merge by memory name (never losing an edit) and push: memory, access and archive "
            "records", _h("cmd_sync"), (
        arg("--remote", help="the git remote to sync with (default: sync.remote, origin)"),
        arg("--dry-run", action="store_true", help="fetch and say what would be committed, merged, pushed"),
    ), first="strata_git.ops.sync.early.begin"),
    Command("resolve", "close a conflict a sync left: --keep current, copy or both", _h("cmd_resolve"), (
        arg("name", help="the memory, or its conflict copy (NAME.conflict-XXXXXXXX)"),
        arg("--keep", required=True, choices=("current", "copy", "both"),
            help="current: delete the copy; copy: the copy replaces the memory; both: keep both memories"),
    )),
    Command("clone", "clone a memory repository without its archived content (archive stays searchable)",
            _h("cmd_clone"), (
        arg("url", help="the memory repository's git url"),
        arg("dir", nargs="?", help="folder to clone into (default: from the url)"),
    )),
    Command("index", "regenerate index.md (the router) and print it", _h("cmd_index")),
    Command("janitor", "plan the tier migrations the rules call for, and apply them as one commit (--dry-run: "
            "show only)", _h("cmd_janitor"), (
        arg("--dry-run", action="store_true", help="show the plan with rules and evidence; change nothing"),
        arg("--now", metavar="WHEN", help="plan as if it were WHEN (2027-01-31, @<unix time>, +30d)"),
    )),
    Command("serve", "run the janitor on a schedule (first cycle dry unless --live); --stop stops it",
            _h("cmd_serve"), (
        arg("--interval", default="15m", help="time between cycles: 90, 30s, 15m (default), 2h"),
        arg("--live", action="store_true", help="apply from the first cycle (default: the first is a dry run)"),
        arg("--once", action="store_true", help="run one cycle and exit"),
        arg("--sync", action="store_true", help="after each cycle, run `git strata sync` (unattended machines)"),
        arg("--stop", action="store_true", help="stop the daemon running for this repository"),
    )),
    Command("log", "list the janitor's migrations with their rules and evidence", _h("cmd_log"), (
        arg("name", nargs="?", help="only this memory's migrations"),
        arg("--limit", type=int, default=50, help="at most this many (default 50)"),
    )),
    Command("history", "list a memory's versions and moves: commit, date, author, machine and why; --diff shows "
            "what each changed", _h("cmd_history"), (
        arg("name", help="memory name, e.g. projects/koda (in any tier, or no longer in any)"),
        arg("--diff", action="store_true", help="show what each version changed in the text"),
        arg("--limit", type=int, default=100, help="at most this many, newest first (default 100)"),
    )),
    Command("ui", "serve a read-only page of this memory on 127.0.0.1 (browse, search, as-of, history, the "
            "janitor's plan, memory over time); prints its URL first", _h("cmd_ui"), (
        arg("--port", type=int, default=0, help="the port (default: any free one)"),
        arg("--no-browser", action="store_true", help="only print the URL; do not open a browser"),
    )),
    Command("why", "say where a memory is, since when, by which rule, and when it moves next", _h("cmd_why"), (
        arg("name", help="memory name, e.g. projects/koda"),
        arg("--now", metavar="WHEN", help="explain as if it were WHEN"),
    )),
    Command("scan", "find secrets already in history (every ref, commit messages too); exit 1 if any; "
            "--allow FINGERPRINT allows a false positive", _h("cmd_scan"), (
        arg("--allow", metavar="FINGERPRINT", action="append",
            help="allow a false positive in this clone by the fingerprint a scan or a refusal printed "
                 "(repeatable); nothing is scanned"),
    )),
    Command("install-hooks", "install git-strata's hook shims (keeping your own hooks)", _h("cmd_install_hooks")),
    Command("uninstall-hooks", "remove git-strata's hook shims (restoring your own hooks)",
            _h("cmd_uninstall_hooks")),
    Command("capture", "turn an agent transcript (Claude Code or Codex JSONL) into typed memories, "
            "from where the last capture stopped", _h("cmd_capture"), (
        arg("transcript", help="the transcript file (the harness's transcript_path)"),
        arg("--format", choices=("auto", "claude-code", "codex"), default="auto",
            help="the transcript's format (default: told by its first line)"),
        arg("--session", help="the session id (default: the one the transcript names)"),
        arg("--log", action="store_true",
            help="also write the outcome, or the error, as one line of .git/strata/agent.log (the agent "
                 "hooks' background captures do)"),
        arg("--dry-run", action="store_true", help="list the memories it would write; write and commit nothing"),
        arg("--workdir", metavar="DIR",
            help="the folder the session worked in (the hooks pass it): nothing is captured when its project "
                 "says `git config strata.capture false`, and what is captured records its project"),
        arg("--project", metavar="NAME",
            help="the project the memories record (default: --workdir's, from its remote URL or folder name)"),
    )),
    Command("agent", "install or uninstall the Claude Code / Codex hooks and MCP server entry "
            "(`agent install claude-code`), or show where they are (`agent status`)", _h("cmd_agent"), (
        arg("action", choices=("install", "uninstall", "status")),
        arg("harness", nargs="?", choices=("claude-code", "codex"), help="(status: both when left out)"),
        arg("--scope", choices=("project", "user"), default="project",
            help="project: the project's own config files, which name no path (default; the memory is found by "
                 "`git config strata.memory`, which install sets, or STRATA_MEMORY); user: your home folder's, "
                 "which name this memory by its path"),
        arg("--memory", metavar="PATH",
            help="the memory repository the hooks use (default: STRATA_MEMORY, `git config strata.memory`, "
                 "or the one here)"),
        arg("--project", metavar="DIR", help="the project folder for --scope project (default: here)"),
        arg("--dry-run", action="store_true", help="print the diff of each file; change nothing"),
        arg("--summarizer", choices=("claude", "codex", "command", "rules"),
            help="who takes capture's notes in the memory repository: the claude or codex CLI (a small model), "
                 "the command in `git config strata.captureCommand`, or the rules alone (sets "
                 "`git config strata.captureSummarizer`)"),
    )),
    Command("help", "show a command's page (or the list of commands), the same text as its man page",
            _h("cmd_help"), (
        arg("topic", metavar="COMMAND", nargs="?", help="the command (default: the overview)"),
    )),
    Command("completion", "print a shell completion script: `eval \"$(git strata completion bash)\"`",
            _h("cmd_completion"), (
        arg("shell", choices=("bash", "zsh")),
    )),
    Command("hook", "run a hook's work (called by the installed shims; `hook agent EVENT` by agent harnesses)",
            "strata_git.app.handlers.cmd_hook", (
        arg("hook_name", metavar="HOOK", help="pre-commit, post-commit, post-checkout, post-merge, post-rewrite"),
        arg("hook_args", nargs="*", help="arguments git passed to the hook"),
    )),
)

BY_NAME: dict[str, Command] = {c.name: c for c in TABLE}
