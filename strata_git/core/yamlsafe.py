"""Strict, bounded YAML for frontmatter.

Two passes: first the event stream is walked (no node is built) to refuse what can
expand or execute (anchors, aliases, tags, directives, merge keys, several documents)
and to bound nesting; then a loader that refuses duplicate keys and keeps dates and
yes/no/on/off as strings builds the value.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

from strata_git.errors import BadMemory

_Base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class StrictLoader(_Base):  # type: ignore[misc,valid-type]
    """SafeLoader with YAML 1.2 booleans, string dates and unique keys."""


StrictLoader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag not in ("tag:yaml.org,2002:bool", "tag:yaml.org,2002:timestamp")]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
StrictLoader.add_implicit_resolver(
    "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF"))


def _unique_mapping(loader: StrictLoader, node: yaml.MappingNode, deep: bool = False) -> dict:
    result: dict = {}
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        if not isinstance(key, str):
            raise yaml.constructor.ConstructorError(None, None, f"the key {key!r} is not a string", key_node.start_mark)
        if key in result:
            raise yaml.constructor.ConstructorError(None, None, f"the key {key!r} appears twice", key_node.start_mark)
        result[key] = loader.construct_object(value_node, deep=True)
    return result


StrictLoader.add_constructor("tag:yaml.org,2002:map", _unique_mapping)


def _refusal(where: str, line: int, why: str,
             hint: str = "use plain 'key: value' YAML without anchors, aliases or tags") -> BadMemory:
    return BadMemory(f"{where}:{line}: frontmatter {why}", hint)


def _walk_events(text: str, where: str, first_line: int, max_depth: int) -> None:
    depth = 0
    documents = 0
    for event in yaml.parse(text, Loader=_Base):
        assert event.start_mark is not None  # the parser marks every event it makes
        line = first_line + event.start_mark.line
        if isinstance(event, yaml.DocumentStartEvent):
            documents += 1
            if documents > 1:
                raise _refusal(where, line, "holds more than one YAML document")
            if event.version or event.tags:
                raise _refusal(where, line, "uses a %YAML or %TAG directive")
        if isinstance(event, yaml.AliasEvent):
            raise _refusal(where, line, "uses an alias (*name)")
        if getattr(event, "anchor", None):
            raise _refusal(where, line, "uses an anchor (&name)")
        tag = getattr(event, "tag", None)
        if tag and not isinstance(event, yaml.DocumentStartEvent):
            raise _refusal(where, line, f"uses the explicit tag {tag!r}")
        if isinstance(event, yaml.ScalarEvent) and not event.style:
            if event.value == "<<":
                raise _refusal(where, line, "uses a merge key (<<)")
            if len(event.value) > 1000 and event.value.lstrip("+-").isdigit():
                raise _refusal(where, line, "holds a number too large to read", "quote it to keep it as text")
        if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            depth += 1
            if depth > max_depth:
                raise _refusal(where, line, f"is nested deeper than {max_depth} levels")
        elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            depth -= 1


def load(text: str, where: str, first_line: int = 1, max_depth: int = 8) -> Any:
    """The value of one YAML document, or BadMemory with the line of the problem."""
    try:
        _walk_events(text, where, first_line, max_depth)
        return yaml.load(text, Loader=StrictLoader)
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        line = first_line + (mark.line if mark else 0)
        problem = e.problem or e.context or "is not valid YAML"
        raise BadMemory(f"{where}:{line}: frontmatter is not valid YAML ({problem})",
                        "fix the YAML between the '---' lines") from None
    except yaml.reader.ReaderError as e:
        line = first_line + text[: e.position].count("\n")
        raise BadMemory(f"{where}:{line}: frontmatter contains the unprintable character U+{e.character:04X}",
                        "remove it, or write it as an escape inside double quotes") from None
    except ValueError:
        raise BadMemory(f"{where}: frontmatter holds a value YAML cannot read", "quote it to keep it as text") from None
    except (yaml.YAMLError, RecursionError) as e:
        raise BadMemory(f"{where}: frontmatter is not valid YAML ({type(e).__name__})",
                        "fix the YAML between the '---' lines") from None
