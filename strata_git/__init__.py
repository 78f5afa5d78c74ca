"""git-strata: an AI agent's memory as a git repository of Markdown files in three strata."""

__version__ = "0.1.0"
