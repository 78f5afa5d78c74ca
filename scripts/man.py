"""Write the man pages (man/man1/git-strata*.1) from the command table; the wheel installs them
under share/man/man1. tests/app/test_help.py fails when the files are not what this writes.

    python scripts/man.py
"""

from __future__ import annotations

import sys
from pathlib import Path

from strata_git.app import manpage

FOLDER = Path(__file__).resolve().parent.parent / "man" / "man1"


def main() -> int:
    FOLDER.mkdir(parents=True, exist_ok=True)
    pages = manpage.pages()
    for old in FOLDER.glob("git-strata*.1"):
        if old.name not in pages:
            old.unlink()
    for name, text in pages.items():
        (FOLDER / name).write_text(text, encoding="utf-8")
    print(f"{len(pages)} man pages in {FOLDER}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
