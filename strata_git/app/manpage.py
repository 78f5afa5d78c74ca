"""Help pages built from the command table (commands.py), so they never drift from the parser:
man pages (roff) for `git strata --help` / `man git-strata-search`, the same page as plain text
for `git strata help [COMMAND]`, and bash and zsh completion scripts.

A page has a NAME, a SYNOPSIS (the arguments as argparse spells them), a DESCRIPTION (the one
help string) and OPTIONS (each argument's help, its choices and default); the overview page
lists every command. `scripts/man.py` writes the pages into man/man1/, which the wheel installs
under share/man/man1 (a test checks the files are what this module makes).
"""

from __future__ import annotations

from typing import Any, NamedTuple

from strata_git.app.commands import JSON, TABLE, Arg, Command

TITLE = "git-strata"
SUMMARY = "an AI agent's memory in a git repository"
ABOUT = ("git-strata keeps an agent's memory as Markdown files in a git repository, in three strata: active/ "
         "(full detail, writable), cooled/ (read-only, still searchable) and archive/ (pushed to a cheap git "
         "remote and pruned from local disk, yet found through a shadow index and rehydrated on demand). A janitor "
         "moves memories down the strata by age and reads, and every move is a commit. Every command takes --json "
         "for agents. `git strata help COMMAND` shows a command's page.")
SEE_ALSO = ("git(1), the git-strata documentation in docs/ (quick start, the strata, sync, the agent hooks), "
            "and `git strata COMMAND -h`.")


class Option(NamedTuple):
    spelled: str  # "--tier {active,cooled,archive}" or "NAME"
    help: str


def _metavar(a: Arg) -> str:
    o: dict[str, Any] = a.options
    if o.get("action") in ("store_true", "store_false", "count"):
        return ""
    if "metavar" in o:
        return str(o["metavar"])
    if "choices" in o:
        return "{" + ",".join(str(c) for c in o["choices"]) + "}"
    return a.flags[-1].lstrip("-").upper().replace("-", "_")


def _spelled(a: Arg) -> str:
    meta = _metavar(a)
    if not a.flags[0].startswith("-"):  # a positional argument
        name = meta if "metavar" in a.options or "choices" in a.options else a.flags[0].upper()
        nargs = a.options.get("nargs")
        return f"[{name}]" if nargs == "?" else f"[{name} ...]" if nargs == "*" else f"{name} ..." \
            if nargs == "+" else name
    return ", ".join(a.flags) + (f" {meta}" if meta else "")


def options(c: Command) -> list[Option]:
    found = []
    for a in (*c.args, JSON):
        text = str(a.options.get("help", ""))
        default = a.options.get("default")
        if default not in (None, False, "") and "default" not in text:
            text += f" (default: {default})"
        found.append(Option(_spelled(a), text))
    return found


def synopsis(c: Command) -> str:
    parts = []
    for a in (*c.args, JSON):
        s = _spelled(a)
        if a.flags[0].startswith("-"):
            parts.append(f"[{a.flags[0]}{' ' + _metavar(a) if _metavar(a) else ''}]")
        else:
            parts.append(s)
    return f"git strata {c.name} " + " ".join(parts)


def text(name: str | None = None) -> str:
    """The page of one command (or the overview) as plain text."""
    if name is None:
        width = max(len(c.name) for c in TABLE)
        rows = "\n".join(f"    {c.name:<{width}}  {c.help}" for c in TABLE)
        return (f"NAME\n    git-strata - {SUMMARY}\n\nSYNOPSIS\n    git strata COMMAND [ARGS] [--json]\n"
                f"    git strata help [COMMAND]\n\nDESCRIPTION\n{_wrap(ABOUT)}\n\nCOMMANDS\n{rows}\n\n"
                f"SEE ALSO\n{_wrap(SEE_ALSO)}\n")
    c = _command(name)
    opts = "\n".join(f"    {o.spelled}\n{_wrap(o.help, 8)}" for o in options(c))
    return (f"NAME\n    git-strata-{c.name} - {c.help}\n\nSYNOPSIS\n{_wrap(synopsis(c))}\n\n"
            f"DESCRIPTION\n{_wrap(c.help[0].upper() + c.help[1:] + '.')}\n\nOPTIONS\n{opts}\n\n"
            f"SEE ALSO\n    git-strata(1)\n")


def roff(name: str | None = None) -> str:
    """The page of one command (or the overview) as a man page."""
    from strata_git import __version__

    title = TITLE if name is None else f"{TITLE}-{_command(name).name}"
    head = f'.TH "{title.upper()}" 1 "" "git-strata {__version__}" "git-strata manual"\n'
    if name is None:
        rows = "".join(f".TP\n.B {_esc(c.name)}\n{_esc(c.help)}\n" for c in TABLE)
        return (head + f".SH NAME\ngit-strata \\- {_esc(SUMMARY)}\n.SH SYNOPSIS\n.B git strata\n"
                f"COMMAND [ARGS] [--json]\n.br\n.B git strata help\n[COMMAND]\n.SH DESCRIPTION\n{_esc(ABOUT)}\n"
                f".SH COMMANDS\n{rows}.SH SEE ALSO\n{_esc(SEE_ALSO)}\n")
    c = _command(name)
    opts = "".join(f".TP\n.B {_esc(o.spelled)}\n{_esc(o.help)}\n" for o in options(c))
    return (head + f".SH NAME\ngit-strata-{_esc(c.name)} \\- {_esc(c.help)}\n.SH SYNOPSIS\n{_esc(synopsis(c))}\n"
            f".SH DESCRIPTION\n{_esc(c.help[0].upper() + c.help[1:])}.\n.SH OPTIONS\n{opts}"
            f".SH SEE ALSO\n.BR git-strata (1)\n")


def pages() -> dict[str, str]:
    """{file name: man page} of the overview and every command."""
    return {"git-strata.1": roff(), **{f"git-strata-{c.name}.1": roff(c.name) for c in TABLE}}


def completion(shell: str) -> str:
    """A completion script for bash or zsh: commands, then each command's options."""
    words = {c.name: " ".join(f for a in (*c.args, JSON) for f in a.flags if f.startswith("-")) for c in TABLE}
    names = " ".join(words)
    if shell == "bash":
        words["help"] += " " + names  # `git strata help COMMAND`
        cases = "".join(f'        {n}) opts="{o}" ;;\n' for n, o in words.items())
        return ("# bash completion for git-strata (git strata COMMAND and git-strata COMMAND)\n"
                "_git_strata_words() {\n    local cur=$1 cmd=$2 opts\n"
                f'    if [ -z "$cmd" ]; then COMPREPLY=($(compgen -W "{names}" -- "$cur")); return; fi\n'
                f'    case "$cmd" in\n{cases}        *) opts="" ;;\n    esac\n'
                '    COMPREPLY=($(compgen -W "$opts" -- "$cur"))\n}\n'
                "_git_strata() {  # called by git's own completion for `git strata`\n"
                "    local i cmd=\n    for ((i = 2; i < COMP_CWORD; i++)); do\n"
                '        case "${COMP_WORDS[i]}" in -*) ;; *) cmd=${COMP_WORDS[i]}; break ;; esac\n    done\n'
                '    _git_strata_words "${COMP_WORDS[COMP_CWORD]}" "$cmd"\n}\n'
                "_git_strata_direct() {\n    local i cmd=\n    for ((i = 1; i < COMP_CWORD; i++)); do\n"
                '        case "${COMP_WORDS[i]}" in -*) ;; *) cmd=${COMP_WORDS[i]}; break ;; esac\n    done\n'
                '    _git_strata_words "${COMP_WORDS[COMP_CWORD]}" "$cmd"\n}\n'
                "complete -F _git_strata_direct git-strata\n")
    if shell == "zsh":
        words["help"] += " " + names
        cases = "".join(f"    {n}) opts=({o}) ;;\n" for n, o in words.items())
        return ("#compdef git-strata\n# zsh completion for git-strata; git's zsh completion finds _git-strata for "
                "`git strata`\n_git-strata() {\n  local -a commands opts\n"
                f"  commands=({names})\n"
                "  local first=${words[(i)strata]}\n  (( first > CURRENT )) && first=1\n"
                "  if (( CURRENT == first + 1 )); then compadd -a commands; return; fi\n"
                "  case ${words[first+1]} in\n" + cases + "  esac\n"
                "  compadd -a opts\n}\n_git-strata \"$@\"\n")
    raise ValueError(shell)


def _command(name: str) -> Command:
    from strata_git.app.commands import BY_NAME
    from strata_git.errors import NotFound

    if name not in BY_NAME:
        raise NotFound(f"no command {name!r}", f"the commands: {', '.join(BY_NAME)}")
    return BY_NAME[name]


def _esc(value: str) -> str:
    """Text for roff: backslashes doubled, a leading dot or quote escaped, dashes kept as hyphens."""
    out = value.replace("\\", "\\\\").replace("-", "\\-")
    return "\n".join(("\\&" + line) if line.startswith((".", "'")) else line for line in out.split("\n"))


def _wrap(value: str, indent: int = 4) -> str:
    import textwrap

    return textwrap.fill(value, width=100, initial_indent=" " * indent, subsequent_indent=" " * indent)
