"""`source scripts/setup.sh` in an interactive shell changes no shell option and never closes it."""

from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent


def _shell(script: str) -> list[str]:
    out = subprocess.run(["bash", "--norc", "-i", "-c", script], capture_output=True, text=True, timeout=60)
    return out.stdout.splitlines()


def test_sourcing_it_leaves_the_shell_as_it_was(tmp_path: Path):
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    fake = venv / "bin" / "python"  # stands in for the venv's python: `-m pip install` succeeds
    fake.write_text("#!/bin/sh\nexit 0\n")
    fake.chmod(0o755)
    lines = _shell(f"before=$-; STRATA_VENV={venv} source {ROOT}/scripts/setup.sh; echo \"status $?\"; "
                   f"[ \"$-\" = \"$before\" ] && echo same-options; false; echo still-open; "
                   f"case :$PATH: in *:{venv}/bin:*) echo on-path ;; esac")
    assert lines == ["status 0", "same-options", "still-open", "on-path"]


def test_a_failure_returns_instead_of_closing_the_shell():
    lines = _shell(f"PYTHON=no-such-python source {ROOT}/scripts/setup.sh; echo \"status $?\"; echo still-open")
    assert lines == ["status 1", "still-open"]
