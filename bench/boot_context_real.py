"""The boot context of a memory made from real sessions: the tuning part's Claude Code and Codex
sessions of four public projects (tests/corpus) captured into one memory repository, each from a
code folder whose remote is the session's real repository, then the context one of them sees.

    .venv/bin/python bench/boot_context_real.py [--project github.com/apanloco/random] [--budget 1000]
    .venv/bin/python bench/boot_context_real.py --before OLD/bin/git-strata    # a version before projects

Prints the context text as SessionStart would give it to an agent in that project (`git strata
context --project`), and how many of its standing lines are that project's, general, or another's.
`--before` runs another git-strata (one installed from an older checkout, such as 1312cac, before
the boot context told decisions and knew projects): its capture reads the same transcripts and its
`context` is asked without a project, as it was then.
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchlib import BIN, hermetic_env, progress, sh

CORPUS = Path(__file__).resolve().parent.parent / "tests" / "corpus"
SESSIONS = {  # remote URL of the session's public repository: its tuning-part transcripts
    "https://github.com/Smartagent-so/Personal_AI_Infrastructure.git": ["claude/pai-loop.jsonl",
                                                                         "claude/pai-voice.jsonl"],
    "git@github.com:apanloco/random.git": ["claude/random.jsonl"],
    "https://github.com/definitelyreal/speakfree": ["claude/speakfree.jsonl"],
    "https://github.com/Hoper-J/cpolar-connect.git": ["codex/cpolar-connect.jsonl"],
}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--project", default="github.com/apanloco/random")
    p.add_argument("--budget", type=int, default=1000)
    p.add_argument("--before", metavar="GIT_STRATA", help="an older git-strata executable, for the before text")
    args = p.parse_args()
    with tempfile.TemporaryDirectory(prefix="strata-boot-real-") as tmp:
        root = Path(tmp)
        env = hermetic_env(root / "home")
        (root / "home").mkdir()
        git_strata = args.before or str(BIN / "git-strata")
        sh([git_strata, "init", str(root / "mem")], root, env)
        for i, (url, transcripts) in enumerate(SESSIONS.items()):
            code = root / f"code{i}"
            code.mkdir()
            sh(["git", "init", "-q"], code, env)
            sh(["git", "remote", "add", "origin", url], code, env)
            for t in transcripts:
                progress(f"capturing {t}")
                where = [] if args.before else ["--workdir", str(code)]
                sh([git_strata, "capture", str(CORPUS / t), *where], root / "mem", env)
        project = [] if args.before else ["--project", args.project]
        text = sh([git_strata, "context", "--budget", str(args.budget), *project], root / "mem", env)
    print(text)
    lists = text.split("## Other projects'")
    mine = len(re.findall(r"^- `", lists[0], re.M))
    others = len(re.findall(r"^- `", lists[1].split("<<end")[0], re.M)) if len(lists) > 1 else 0
    print(f"standing lines: {mine} of this project or general, then {others} of other projects")


if __name__ == "__main__":
    main()
