"""Starting `git strata mcp` for the MCP SDK's client, and reading the memory blocks it serves."""

from __future__ import annotations

import os
import re
from pathlib import Path

from mcp import StdioServerParameters

from conftest import BIN

SERVER = [str(BIN / "git-strata"), "mcp"]


def params(root: Path, agent: str | None = None) -> StdioServerParameters:
    return StdioServerParameters(command=SERVER[0], args=SERVER[1:] + (["--agent", agent] if agent else []),
                                 cwd=str(root), env=dict(os.environ))


def served(text: str) -> list[tuple[dict, str]]:
    """The (header, body) blocks of a response, checking each block's markers share its token."""
    blocks = []
    for m in re.finditer(r"^<<memory (.*?) token=([0-9a-f]{16})>>\n(.*?)\n<<end \2>>$", text, re.S | re.M):
        header = dict(item.split("=", 1) for item in m.group(1).split(" ") if "=" in item)
        blocks.append((header, m.group(3)))
    return blocks
