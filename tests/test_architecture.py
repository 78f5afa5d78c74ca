"""The layers hold, and the contract that says so bites.

`bash scripts/test.sh` runs import-linter on the package before the suite; these tests show that
the same contracts fail on a copy of the package with a deliberately wrong import: one pointing
up a layer at the top of a module, one hidden inside a function, and a cycle between two
modules of one layer. Without them, a contract that silently matched nothing would pass forever.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LINT = Path(sys.executable).with_name("lint-imports")
LAYERS = ("app", "ops", "store", "gitio", "core")


def lint(root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(LINT), "--no-cache"], cwd=root, capture_output=True, text=True, timeout=300)


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    """The package and its contracts, copied where an import can be broken without harm."""
    shutil.copytree(ROOT / "strata_git", tmp_path / "strata_git", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    return tmp_path


def test_every_module_is_in_a_layer():
    """Beside the layer packages sit only errors.py (the bottom layer) and the package's own dunder files."""
    top = sorted(p.name for p in (ROOT / "strata_git").iterdir() if not p.name.startswith("__"))
    assert top == sorted(["errors.py", *LAYERS])


def test_the_package_keeps_its_contracts(copy: Path):
    proc = lint(copy)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "2 kept, 0 broken" in proc.stdout


@pytest.mark.parametrize("where, line, broken", [
    ("core/names.py", "from strata_git.app import vault\n", "strata_git.core is not allowed to import strata_git.app"),
    ("store/catalog.py", "\n\ndef later():\n    from strata_git.ops import janitor\n    return janitor\n",
     "strata_git.store is not allowed to import strata_git.ops"),
    ("gitio/safefs.py", "from strata_git.store import shadow\n",
     "strata_git.gitio is not allowed to import strata_git.store"),
])
def test_an_upward_import_breaks_the_build(copy: Path, where: str, line: str, broken: str):
    with open(copy / "strata_git" / where, "a", encoding="utf-8") as f:
        f.write(line)
    proc = lint(copy)
    assert proc.returncode != 0 and broken in proc.stdout, proc.stdout


def test_a_cycle_inside_a_layer_breaks_the_build(copy: Path):
    """store.search imports store.catalog; catalog importing search back closes a cycle."""
    with open(copy / "strata_git" / "store" / "catalog.py", "a", encoding="utf-8") as f:
        f.write("\n\ndef later():\n    from strata_git.store import search\n    return search\n")
    proc = lint(copy)
    assert proc.returncode != 0 and "No cycles are allowed in strata_git.store" in proc.stdout, proc.stdout
