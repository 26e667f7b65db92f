"""YAML read as a node tree with positions (PyYAML's composer), shared by the rule-pack
loader and the YAML-based scanners.

Nodes keep their 1-based line and column; aliases are followed with a bound on the number
of nodes visited (an "alias bomb" cannot blow up memory); duplicate mapping keys are
reported; ``<<`` merge keys are honoured.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import yaml

MAX_NODES = 200_000
"""Upper bound on nodes visited when converting one document (alias expansion included)."""


class YamlProblem(Exception):
    """YAML that cannot be read: syntax error, duplicate key, expansion over the bound.

    Attributes:
        line: 1-based line of the problem, if known.
        column: 1-based column on ``line`` where the parser stopped, if known.
    """

    def __init__(self, message: str, line: int | None = None, column: int | None = None) -> None:
        super().__init__(message)
        self.line = line
        self.column = column


@dataclass(frozen=True)
class Pos:
    """1-based line and column of a node's start."""

    line: int
    column: int


def pos(node: yaml.Node) -> Pos:
    """Return the 1-based start position of ``node``."""
    mark = node.start_mark
    return Pos(mark.line + 1, mark.column + 1)


_FAST_LOADER = getattr(yaml, "CSafeLoader", None)
"""libyaml's composer (same nodes and marks, ~10x faster); it refuses nesting deeper than
1000 levels itself."""

_PROBE = "k: é\nl: [€, 𝄞x, 'ß']\nm: {n: 日本 y}\n# ü\no: |\n  \u00a0x\n"
"""Non-ASCII text whose marks tell whether libyaml counts characters or bytes."""

_NOT_FAST = ("\ufeff", "\x85", "\u2028", "\u2029")
"""Characters around which libyaml's marks differ from the pure-Python composer's: a byte
order mark inside the text (libyaml gives it no column) and the line breaks of YAML 1.1
beyond CR and LF (NEL, LS, PS: where the two start a line differs)."""


def _marks(node: yaml.Node, out: list[tuple[int, ...]]) -> list[tuple[int, ...]]:
    start, end = node.start_mark, node.end_mark
    out.append((start.line, start.column, start.index, end.line, end.column, end.index))
    children = node.value if isinstance(node, (yaml.MappingNode, yaml.SequenceNode)) else []
    for child in children:
        for sub in child if isinstance(child, tuple) else (child,):
            _marks(sub, out)
    return out


@lru_cache(maxsize=1)
def fast_counts_characters() -> bool:
    """Whether this PyYAML's libyaml gives non-ASCII text the marks the pure-Python composer
    gives it (lines, character columns and offsets): checked once, on :data:`_PROBE`, so that
    a libyaml that counts bytes is never used on non-ASCII text."""
    if _FAST_LOADER is None:
        return False
    try:
        fast = yaml.compose(_PROBE, Loader=_FAST_LOADER)
        slow = yaml.compose(_PROBE, Loader=yaml.SafeLoader)
    except yaml.YAMLError:  # pragma: no cover - a libyaml that cannot read the probe
        return False
    return fast is not None and slow is not None and _marks(fast, []) == _marks(slow, [])


def fast_loader_fits(text: str) -> bool:
    """Whether libyaml composes ``text`` with the marks of the pure-Python composer: ASCII
    text always; other text when this libyaml counts characters
    (:func:`fast_counts_characters`) and ``text`` has none of :data:`_NOT_FAST` in it."""
    if _FAST_LOADER is None:
        return False
    return text.isascii() or (not any(ch in text for ch in _NOT_FAST) and fast_counts_characters())


@lru_cache(maxsize=8)
def documents(text: str) -> tuple[yaml.Node, ...]:
    """:func:`compose_documents` of ``text``, composed once per text: every YAML scanner
    offered the same file shares one parse. The nodes must not be modified.

    Raises:
        YamlProblem: syntax errors, with the line.
    """
    return tuple(compose_documents(text))


def compose_documents(text: str, lines_only: bool = False) -> list[yaml.Node]:
    """Parse every document of ``text`` into node trees (empty documents are dropped).

    Uses libyaml when its marks are those of the pure-Python composer
    (:func:`fast_loader_fits`: ASCII text, and non-ASCII text when this libyaml counts
    characters) or when the caller needs exact lines only (``lines_only``), else the
    pure-Python composer (a text libyaml cannot encode, lone surrogates, goes there too).

    Raises:
        YamlProblem: on a syntax error, with its line.
    """
    loader: Any = yaml.SafeLoader
    if _FAST_LOADER is not None and (lines_only or fast_loader_fits(text)):
        loader = _FAST_LOADER
    try:
        try:
            return [doc for doc in yaml.compose_all(text, Loader=loader) if doc is not None]
        except UnicodeEncodeError:  # libyaml reads UTF-8: the pure-Python composer reports it
            return [doc for doc in yaml.compose_all(text, Loader=yaml.SafeLoader) if doc is not None]
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        column = mark.column + 1 if mark is not None else None
        problem = exc.problem or exc.context or "syntax error"
        raise YamlProblem(f"YAML syntax error: {problem}", line, column) from None
    except yaml.YAMLError as exc:  # pragma: no cover - reader errors (bad characters)
        raise YamlProblem(f"YAML error: {str(exc).splitlines()[0] if str(exc) else 'unreadable'}") from None
    except RecursionError:
        raise YamlProblem("YAML nested too deeply to read") from None


def scalar(node: yaml.Node | None) -> str | None:
    """The text of a scalar node, or ``None`` for any other node."""
    if isinstance(node, yaml.ScalarNode):
        return str(node.value)
    return None


def mapping_items(
    node: yaml.Node | None, budget: list[int] | None = None
) -> Iterator[tuple[str, yaml.Node, yaml.Node]]:
    """Yield ``(key text, key node, value node)`` of a mapping, merge keys (``<<``) expanded.

    Non-scalar keys are skipped. Keys from an explicit entry win over merged ones, and an
    earlier merge source over a later one. Each mapping is expanded at most once per call: a
    merge diamond (``aN: &aN {<<: [*aN-1, *aN-1]}``) costs the number of distinct mappings,
    not 2^N, and a mapping merging itself (``&a {<<: *a}``) cannot loop.

    Args:
        budget: if given, ``[nodes left, bound]`` (shared with :func:`to_python`): every
            entry of every mapping expanded takes one.

    Raises:
        YamlProblem: ``budget`` runs out.
    """
    if not isinstance(node, yaml.MappingNode):
        return
    seen: set[str] = set()
    done: set[int] = set()
    pending: list[tuple[yaml.Node, int]] = [(node, 0)]  # (mapping, merge depth)
    while pending:  # depth first, in source order: the first source that has a key wins
        current, depth = pending.pop()
        if not isinstance(current, yaml.MappingNode) or id(current) in done:
            continue
        done.add(id(current))
        merged: list[yaml.Node] = []
        for key_node, value_node in current.value:
            if budget is not None:
                _spend(budget, key_node)
            key = scalar(key_node)
            if key is None:
                continue
            if key == "<<" and key_node.tag == "tag:yaml.org,2002:merge":
                merged.extend(value_node.value if isinstance(value_node, yaml.SequenceNode) else [value_node])
                continue
            if depth == 0 or key not in seen:  # a repeated explicit key is the caller's to report
                seen.add(key)
                yield key, key_node, value_node
        pending.extend((source, depth + 1) for source in reversed(merged))


def _spend(budget: list[int], node: yaml.Node) -> None:
    budget[0] -= 1
    if budget[0] < 0:
        limit = budget[1] if len(budget) > 1 else MAX_NODES
        raise YamlProblem(f"more than {limit} nodes once aliases and merge keys are expanded", pos(node).line)


def get(node: yaml.Node | None, key: str) -> yaml.Node | None:
    """The value node of ``key`` in a mapping node, or ``None``: the first entry written with
    that key, else the first a merge key (``<<``) brings, as :func:`mapping_items` orders them."""
    if not isinstance(node, yaml.MappingNode):
        return None
    merges = False
    for key_node, value in node.value:  # the entries written here come first: no walk needed
        if not isinstance(key_node, yaml.ScalarNode):
            continue
        if key_node.tag == _MERGE_TAG and key_node.value == "<<":
            merges = True
        elif key_node.value == key:
            return value
    if not merges:
        return None
    for name, _k, value in mapping_items(node):
        if name == key:
            return value
    return None


_MERGE_TAG = "tag:yaml.org,2002:merge"


def items(node: yaml.Node | None) -> list[yaml.Node]:
    """The item nodes of a sequence node (empty for any other node)."""
    return list(node.value) if isinstance(node, yaml.SequenceNode) else []


_CONSTRUCTOR = yaml.SafeLoader.construct_scalar

_PLAIN_SCALARS: dict[str, Any] = {
    tag: yaml.SafeLoader.yaml_constructors[tag]
    for tag in (f"tag:yaml.org,2002:{name}" for name in ("str", "int", "float", "bool", "null"))
}
"""The constructors of the scalar tags that stand for plain values: called directly, as
``construct_object`` would call them (it keeps a memo of every node, for aliases of
collections), once per scalar of a large mapping."""


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
        YamlProblem: duplicate mapping key, a value its tag cannot construct (unknown tag,
            malformed ``!!binary``), a node that contains itself, nesting too deep for the
            interpreter, or more than ``max_nodes`` nodes.
    """
    loader = yaml.SafeLoader("")
    budget = [max_nodes, max_nodes]

    def construct(n: yaml.Node) -> Any:
        try:
            plain = _PLAIN_SCALARS.get(n.tag)
            if plain is not None:  # a str, int, float, bool or null: its constructor, no memo
                return plain(loader, n)
            return loader.construct_object(n, deep=True)
        except (yaml.YAMLError, ValueError, TypeError, OverflowError) as exc:
            # unknown tag (``!x``), bad ``!!binary``/``!!timestamp``/``!!int`` text, ...
            reason = getattr(exc, "problem", None) or str(exc).splitlines()[0] or type(exc).__name__
            raise YamlProblem(f"cannot read value: {reason}", pos(n).line) from None

    def walk(n: yaml.Node, path: tuple[Any, ...]) -> Any:
        _spend(budget, n)
        if positions is not None:
            positions.setdefault(path, pos(n).line)
        if isinstance(n, yaml.ScalarNode):
            return construct(n)
        if id(n) in active:
            raise YamlProblem("recursive alias (a node that contains itself)", pos(n).line)
        active.add(id(n))
        try:
            return walk_collection(n, path)
        finally:
            active.discard(id(n))

    def walk_collection(n: yaml.Node, path: tuple[Any, ...]) -> Any:
        if isinstance(n, yaml.SequenceNode):
            return [walk(child, (*path, i)) for i, child in enumerate(n.value)]
        if isinstance(n, yaml.MappingNode):
            out: dict[Any, Any] = {}
            explicit: set[Any] = set()
            merges = False
            for key_node, _value in n.value:
                if not isinstance(key_node, yaml.ScalarNode):
                    continue
                if key_node.tag == _MERGE_TAG:
                    merges = True
                    continue
                key = construct(key_node)
                if key in explicit:
                    raise YamlProblem(f"duplicate key {key!r}", pos(key_node).line)
                explicit.add(key)
            if not merges:  # what mapping_items yields, entry by entry, without its walk
                for key_node, value_node in n.value:
                    _spend(budget, key_node)
                    if isinstance(key_node, yaml.ScalarNode):
                        name = str(key_node.value)
                        out[name] = walk(value_node, (*path, name))
                return out
            for key, _key_node, value_node in mapping_items(n, budget):
                out[key] = walk(value_node, (*path, key))
            return out
        return None  # pragma: no cover

    active: set[int] = set()
    try:
        return walk(node, ())
    except RecursionError:
        raise YamlProblem("YAML nested too deeply to read", pos(node).line) from None


# ---------------------------------------------------------------------------------------------
# Where a key's value is written: the lines a comment above the key speaks of


def key_blocks(docs: Sequence[yaml.Node], keys_at: set[int]) -> list[tuple[int, int]]:
    """``(key line, last line of its value)`` (1-based) of every mapping entry of ``docs``
    whose key is written on a line of ``keys_at`` and whose value is a collection or a
    block scalar (``args:`` and its list, ``command: >`` and its folded lines).

    Each node is visited once (an alias is its anchor's node, walked where it is written),
    so the cost is that of the text. A value's end mark that falls at the start of the next
    line (a block collection or a block scalar) counts as the line before.
    """
    out: list[tuple[int, int]] = []
    seen: set[int] = set()
    pending: list[yaml.Node] = list(docs)
    while pending:
        node = pending.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, yaml.SequenceNode):
            pending.extend(node.value)
        elif isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                pending.append(value)
                line = key.start_mark.line + 1
                if line not in keys_at or value.start_mark.line == value.end_mark.line:
                    continue
                end = value.end_mark.line + (1 if value.end_mark.column else 0)
                if end > line:
                    out.append((line, end))
    return sorted(out)
