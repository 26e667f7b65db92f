"""YAML read as a node tree with positions (PyYAML's composer), shared by the rule-pack
loader and the YAML-based scanners.

Nodes keep their 1-based line and column; aliases are followed with a bound on the number
of nodes visited (an "alias bomb" cannot blow up memory); duplicate mapping keys are
reported; ``<<`` merge keys are honoured.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

import yaml

from vllm_upgrade_check.model.facts import Span
from vllm_upgrade_check.parsing.textpos import INDENT, ByteColumns, line_index, own_lines
from vllm_upgrade_check.parsing.words import Token, cut, link, unlink_at_comments

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
        problem = exc.problem or exc.context or "syntax error"
        raise YamlProblem(f"YAML syntax error: {problem}", line) from None
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
        YamlProblem: duplicate mapping key, a value its tag cannot construct (unknown tag,
            malformed ``!!binary``), a node that contains itself, nesting too deep for the
            interpreter, or more than ``max_nodes`` nodes.
    """
    loader = yaml.SafeLoader("")
    budget = [max_nodes, max_nodes]

    def construct(n: yaml.Node) -> Any:
        try:
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
            for key_node, _value in n.value:
                if isinstance(key_node, yaml.ScalarNode) and key_node.tag != "tag:yaml.org,2002:merge":
                    key = construct(key_node)
                    if key in explicit:
                        raise YamlProblem(f"duplicate key {key!r}", pos(key_node).line)
                    explicit.add(key)
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


# ---------------------------------------------------------------------------------------------
# Where nodes are written: spans, list words, scalar character positions


def node_span(node: yaml.Node) -> Span:
    """Where ``node`` is written (its quotes, brackets or block included), 1-based, end exclusive."""
    start, end = node.start_mark, node.end_mark
    return Span(start.line + 1, start.column + 1, end.line + 1, end.column + 1)


_ITEM_HEAD = re.compile(r"[ \t]*-[ \t]+")


def scalar_word(text: str, node: yaml.ScalarNode) -> Token:
    """A scalar as one word placed where it is written (``written`` is its source text,
    quotes included; the column is that of its first character inside the quotes)."""
    span = node_span(node)
    quoted = 1 if node.style in ("'", '"') else 0
    written = text[node.start_mark.index : node.end_mark.index]
    return Token(str(node.value), span.line, span.column + quoted, True, written, span)


def sequence_words(text: str, node: yaml.Node | None) -> list[Token]:
    """The scalar items of a YAML sequence as argv words placed where they are written: a
    block item is an element of whole lines (its dash and trailing comment included), a
    flow item a word between commas. Other items are left out (the words on either side of
    one are not linked across it)."""
    if not isinstance(node, yaml.SequenceNode):
        return []
    lines = text.split("\n")
    runs: list[list[Token]] = [[]]
    for child in node.value:
        if not isinstance(child, yaml.ScalarNode):
            runs.append([])
            continue
        word = scalar_word(text, child)
        assert word.span is not None
        if node.flow_style:
            start, end = _flow_line(lines, word.span)
            runs[-1].append(replace(word, line_start=start, line_end=end))
            continue
        element = own_lines(lines, word.span.start, word.span.end, _ITEM_HEAD)
        runs[-1].append(replace(word, element=element))
    tokens = [token for run in runs for token in unlink_at_comments(link(run), lines)]
    if not node.flow_style and len(runs) == 1 and tokens and all(t.element is not None for t in tokens):
        # A block list that loses every item reads as null (for a container: the image's
        # default command, not none): such a cut writes an empty flow list in its place.
        first, last = tokens[0].element, tokens[-1].element
        assert first is not None and last is not None
        indent = lines[first.line - 1][: len(lines[first.line - 1]) - len(lines[first.line - 1].lstrip())]
        whole = Span.between(first.start, last.end)
        tokens = [replace(t, whole=whole, empty=f"{indent}  []\n") for t in tokens]  # deeper than its key
    return tokens


_FLOW_TAIL = re.compile(r"[ \t]*,?[ \t]*(#.*)?")


def _flow_line(lines: Sequence[str], span: Span) -> tuple[tuple[int, int] | None, tuple[int, int] | None]:
    """``(line_start, line_end)`` of a flow list item at ``span`` (see :class:`Token`)."""
    line = lines[span.line - 1] if span.line <= len(lines) else ""
    end_line = lines[span.end_line - 1] if span.end_line <= len(lines) else ""
    starts = not line[: span.column - 1].strip()
    ends = _FLOW_TAIL.fullmatch(end_line[span.end_column - 1 :]) is not None and span.end_line < len(lines)
    return ((span.line, 1) if starts else None), ((span.end_line + 1, 1) if ends else None)


def scalar_offsets(text: str, node: yaml.ScalarNode) -> list[int] | None:
    """The offset in ``text`` of each character of the scalar's value, and of the place just
    past it (one more entry than the value has characters); ``None`` when the value cannot
    be aligned with its source exactly.

    Quotes, escapes, folded line breaks and block indentation are what YAML adds around
    the value's characters; everything else must be the character itself.
    """
    value = str(node.value)
    start, end = node.start_mark.index, node.end_mark.index
    source = text[start:end]
    style = node.style
    j = 0
    if style in ("'", '"'):
        j = 1
        source_end = len(source) - 1
    elif style in ("|", ">"):
        newline = source.find("\n")
        if newline < 0:
            return None
        j = newline + 1
        source_end = len(source)
    else:
        source_end = len(source)
    out: list[int] = []
    skippable = " \t\n"
    for ch in value:
        while j < source_end:
            got = source[j]
            if got == ch:
                break
            if style == '"' and got == "\\" and j + 1 < source_end:
                escape = source[j + 1]
                decoded = _ESCAPES.get(escape)
                if decoded == ch:
                    break
                if escape == "\n":  # an escaped line break: nothing
                    j += 2
                    continue
                return None
            if style == "'" and got == "'" and ch == "'":
                break
            if ch == " " and got == "\n":  # a folded line break
                break
            if got in skippable:
                j += 1
                continue
            return None
        if j >= source_end:
            return None
        out.append(start + j)
        if style == '"' and source[j] == "\\":
            j += 2
        elif style == "'" and source[j] == "'":
            j += 2
        else:
            j += 1
    out.append(start + j if style not in ("'", '"') else start + min(j, source_end))
    return out


_ESCAPES = {"n": "\n", "t": "\t", '"': '"', "\\": "\\", "/": "/", " ": " ", "0": "\0", "r": "\r", "e": "\x1b"}
"""YAML double-quoted escapes of one character (``\\x..`` and the like are not aligned)."""


def scalar_locator(text: str, node: yaml.ScalarNode) -> Callable[[int, int], tuple[int, int]] | None:
    """A map from a position in the scalar's value (0-based row, UTF-8 byte column, as
    tree-sitter gives them) to where that character is written in ``text`` (1-based line and
    column); ``None`` when :func:`scalar_offsets` cannot align the value."""
    offsets = scalar_offsets(text, node)
    if offsets is None:
        return None
    value = str(node.value)
    rows = value.split("\n")
    row_starts = [0]
    for row in rows[:-1]:
        row_starts.append(row_starts[-1] + len(row) + 1)
    index = line_index(text)
    columns: dict[int, ByteColumns] = {}

    def locate(row: int, byte_col: int) -> tuple[int, int]:
        if row >= len(rows):
            return index.line_col(offsets[-1])
        if row not in columns:
            columns[row] = ByteColumns(rows[row])
        chars = columns[row].chars(byte_col)
        at = min(row_starts[row] + chars, len(offsets) - 1)
        return index.line_col(offsets[at])

    return locate




def value_word(text: str, node: yaml.ScalarNode) -> Token:
    """The scalar's value, blanks around it dropped, as a word placed where that text is
    written inside the node (after an anchor or a tag, inside quotes, on the line of a
    one-line block scalar); without spans when it is not written there exactly once."""
    value = str(node.value).strip()
    begin, end = node.start_mark.index, node.end_mark.index
    found = text.find(value, begin, end) if value else -1
    index = line_index(text)
    if found < 0 or text.find(value, found + 1, end) >= 0 or "\n" in value:
        line, column = pos(node).line, pos(node).column
        return Token(value, line, column, True, value)
    line, column = index.line_col(found)
    return Token(value, line, column, True, value, Span(line, column, line, column + len(value)))


def anchor_of(text: str, node: yaml.Node) -> str | None:
    """The anchor written on ``node`` (``&name`` before its value), if any."""
    head = text[node.start_mark.index : node.end_mark.index]
    match = re.match(r"&([^\s,\[\]{}]+)", head)
    return match.group(1) if match else None


def alias_used(text: str, anchor: str) -> bool:
    """Whether ``*anchor`` is used anywhere in ``text``."""
    return re.search(rf"\*{re.escape(anchor)}(?![^\s,\]}}])", text) is not None


def entry_cuts(text: str, node: yaml.Node | None) -> dict[int, Span | None]:
    """What to delete to remove each entry of a mapping, by ``id`` of its key node: the whole
    lines of a block mapping entry (trailing comment included; ``None`` when the entry
    shares a line), or the entry and one comma of a flow mapping (a JSON object)."""
    if not isinstance(node, yaml.MappingNode):
        return {}
    lines = text.split("\n")
    out: dict[int, Span | None] = {}
    if not node.flow_style:
        for key_node, value_node in node.value:
            out[id(key_node)] = own_lines(lines, node_span(key_node).start, node_span(value_node).end, INDENT)
        return out
    entries = [
        Token("", 0, 0, span=Span.between(node_span(k).start, node_span(v).end)) for k, v in node.value
    ]
    for (key_node, _value), token in zip(node.value, unlink_at_comments(link(entries), lines), strict=True):
        out[id(key_node)] = cut([token])
    return out
