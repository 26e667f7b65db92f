"""YAML read as a node tree with positions (PyYAML's composer), shared by the rule-pack
loader and the YAML-based scanners.

Nodes keep their 1-based line and column; aliases are followed with a bound on the number
of nodes visited (an "alias bomb" cannot blow up memory); duplicate mapping keys are
reported; ``<<`` merge keys are honoured.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import yaml

MAX_NODES = 200_000
"""Upper bound on nodes visited when converting one document (alias expansion included)."""


class YamlProblem(Exception):
    """YAML that cannot be read: syntax error, duplicate key, expansion over the bound.

    Attributes:
        line: 1-based line of the problem, if known.
    """

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.line = line


@dataclass(frozen=True)
class Pos:
    """1-based line and column of a node's start."""

    line: int
    column: int


def pos(node: yaml.Node) -> Pos:
    """Return the 1-based start position of ``node``."""
    mark = node.start_mark
    return Pos(mark.line + 1, mark.column + 1)


def compose_documents(text: str) -> list[yaml.Node]:
    """Parse every document of ``text`` into node trees (empty documents are dropped).

    Raises:
        YamlProblem: on a syntax error, with its line.
    """
    try:
        return [doc for doc in yaml.compose_all(text, Loader=yaml.SafeLoader) if doc is not None]
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        problem = exc.problem or exc.context or "syntax error"
        raise YamlProblem(f"YAML syntax error: {problem}", line) from None
    except yaml.YAMLError as exc:  # pragma: no cover - reader errors (bad characters)
        raise YamlProblem(f"YAML error: {exc}") from None


def scalar(node: yaml.Node | None) -> str | None:
    """The text of a scalar node, or ``None`` for any other node."""
    if isinstance(node, yaml.ScalarNode):
        return str(node.value)
    return None


def mapping_items(node: yaml.Node | None) -> Iterator[tuple[str, yaml.Node, yaml.Node]]:
    """Yield ``(key text, key node, value node)`` of a mapping, merge keys (``<<``) expanded.

    Non-scalar keys are skipped. Keys from an explicit entry win over merged ones.
    """
    if not isinstance(node, yaml.MappingNode):
        return
    seen: set[str] = set()
    merged: list[yaml.Node] = []
    for key_node, value_node in node.value:
        key = scalar(key_node)
        if key is None:
            continue
        if key == "<<" and key_node.tag == "tag:yaml.org,2002:merge":
            merged.extend(value_node.value if isinstance(value_node, yaml.SequenceNode) else [value_node])
            continue
        seen.add(key)
        yield key, key_node, value_node
    for source in merged:
        for key, key_node, value_node in mapping_items(source):
            if key not in seen:
                seen.add(key)
                yield key, key_node, value_node


def get(node: yaml.Node | None, key: str) -> yaml.Node | None:
    """The value node of ``key`` in a mapping node, or ``None``."""
    for name, _k, value in mapping_items(node):
        if name == key:
            return value
    return None


def items(node: yaml.Node | None) -> list[yaml.Node]:
    """The item nodes of a sequence node (empty for any other node)."""
    return list(node.value) if isinstance(node, yaml.SequenceNode) else []


_CONSTRUCTOR = yaml.SafeLoader.construct_scalar


def to_python(
    node: yaml.Node,
    positions: dict[tuple[Any, ...], int] | None = None,
    max_nodes: int = MAX_NODES,
) -> Any:
    """Convert a node tree to Python data with YAML 1.1 safe types.

    Args:
        node: the document's root node.
        positions: if given, filled with ``path tuple -> 1-based line`` for every node
            (``("rules", 0, "id") -> 12``), for error messages.
        max_nodes: bound on nodes visited, alias expansion included.

    Raises:
        YamlProblem: duplicate mapping key, or more than ``max_nodes`` nodes.
    """
    loader = yaml.SafeLoader("")
    budget = [max_nodes]

    def walk(n: yaml.Node, path: tuple[Any, ...]) -> Any:
        budget[0] -= 1
        if budget[0] < 0:
            raise YamlProblem(f"more than {max_nodes} nodes (alias expansion?)", pos(n).line)
        if positions is not None:
            positions.setdefault(path, pos(n).line)
        if isinstance(n, yaml.ScalarNode):
            return loader.construct_object(n, deep=True)
        if isinstance(n, yaml.SequenceNode):
            return [walk(child, (*path, i)) for i, child in enumerate(n.value)]
        if isinstance(n, yaml.MappingNode):
            out: dict[Any, Any] = {}
            explicit: set[Any] = set()
            for key_node, _value in n.value:
                if isinstance(key_node, yaml.ScalarNode) and key_node.tag != "tag:yaml.org,2002:merge":
                    key = loader.construct_object(key_node, deep=True)
                    if key in explicit:
                        raise YamlProblem(f"duplicate key {key!r}", pos(key_node).line)
                    explicit.add(key)
            for key, _key_node, value_node in mapping_items(n):
                out[key] = walk(value_node, (*path, key))
            return out
        return None  # pragma: no cover

    return walk(node, ())
