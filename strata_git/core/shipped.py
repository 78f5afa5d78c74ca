"""Files shipped beside the package: the hook shim (hooks/) and the config template (.strata/).

Installed, they are the packages strata_git._hooks and strata_git._template
(see pyproject.toml); in a source checkout they are read from the folders.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

_SOURCE_FOLDERS = {"_hooks": "hooks", "_template": ".strata"}


def text(package: str, filename: str) -> str:
    try:
        return resources.files(f"strata_git.{package}").joinpath(filename).read_text(encoding="utf-8")
    except ModuleNotFoundError:
        folder = Path(__file__).resolve().parents[2] / _SOURCE_FOLDERS[package]
        return (folder / filename).read_text(encoding="utf-8")


def hook_shim() -> str:
    return text("_hooks", "shim.sh")


def config_template() -> str:
    return text("_template", "config.toml")
