"""Where YAML nodes are written: spans, the words of a list, scalar character positions and
the cuts that remove an entry, for the scanners that record edits and the fixer that makes
them (the node tree itself: :mod:`.yamlnodes`)."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from functools import lru_cache

import yaml

from vllm_upgrade_check.model.evolve import evolve
from vllm_upgrade_check.model.facts import Span
from vllm_upgrade_check.parsing.textpos import INDENT, ByteColumns, line_index, own_lines
from vllm_upgrade_check.parsing.words import Token, cut, link, unlink_at_comments
from vllm_upgrade_check.parsing.yamlnodes import pos


def node_span(node: yaml.Node) -> Span:
    """Where ``node`` is written (its quotes, brackets or block included), 1-based, end exclusive."""
    start, end = node.start_mark, node.end_mark
    return Span(start.line + 1, start.column + 1, end.line + 1, end.column + 1)


_ITEM_HEAD = re.compile(r"[ \t]*-[ \t]+")


@lru_cache(maxsize=4)
def text_lines(text: str) -> tuple[str, ...]:
    """``text.split("\n")``, made once per text: the words of every list and the cuts of
    every mapping of one file read the same lines (a split per node made a file of many
    lists quadratic). A few texts are kept, the files being read now."""
    return tuple(text.split("\n"))


def scalar_word(text: str, node: yaml.ScalarNode) -> Token:
    """A scalar as one word placed where it is written (``written`` is its source text,
    quotes included; the column is that of its first character inside the quotes)."""
    span = node_span(node)
    quoted = 1 if node.style in ("'", '"') else 0
    written = text[node.start_mark.index : node.end_mark.index]
    return Token(str(node.value), span.line, span.column + quoted, True, written, span)


def scalar_text_span(text: str, node: yaml.ScalarNode) -> Span | None:
    """Where the scalar's value is written, as ``sub_span(scalar_word(text, node), 0,
    len(value))`` gives it (inside one pair of quotes; ``None`` when it is not written as
    its value on one line), without making the word: asked once per key of a mapping."""
    start, end = node.start_mark, node.end_mark
    if start.line != end.line:
        return None
    value = str(node.value)
    written = text[start.index : end.index] or value
    if written == value:
        shift = 0
    elif len(written) == len(value) + 2 and written[0] == written[-1] and written[0] in "\"'":
        if written[1:-1] != value:
            return None
        shift = 1
    else:
        return None
    if end.column - start.column != len(written):
        return None
    column = start.column + 1 + shift
    return Span(start.line + 1, column, start.line + 1, column + len(value))


def sequence_words(text: str, node: yaml.Node | None) -> list[Token]:
    """The scalar items of a YAML sequence as argv words placed where they are written: a
    block item is an element of whole lines (its dash and trailing comment included), a
    flow item a word between commas. Other items are left out (the words on either side of
    one are not linked across it)."""
    if not isinstance(node, yaml.SequenceNode):
        return []
    lines = text_lines(text)
    runs: list[list[Token]] = [[]]
    for child in node.value:
        if not isinstance(child, yaml.ScalarNode):
            runs.append([])
            continue
        word = scalar_word(text, child)
        assert word.span is not None
        if node.flow_style:
            start, end = _flow_line(lines, word.span)
            runs[-1].append(evolve(word, line_start=start, line_end=end))
            continue
        element = own_lines(lines, word.span.start, word.span.end, _ITEM_HEAD)
        runs[-1].append(evolve(word, element=element))
    tokens = [token for run in runs for token in unlink_at_comments(link(run), lines)]
    if not node.flow_style and len(runs) == 1 and tokens and all(t.element is not None for t in tokens):
        # A block list that loses every item reads as null (for a container: the image's
        # default command, not none): the cuts that take every item write `key: []`.
        whole, left, empty = _block_list_extent(text, lines, [t.element for t in tokens if t.element is not None])
        tokens = [evolve(t, whole=whole, empty=empty, left=left) for t in tokens]
    return tokens


def sequence_items(text: str, node: yaml.Node | None) -> list[Token]:
    """One placeholder word per item of a YAML sequence, of any kind (a mapping too), written
    where the item is, linked to its neighbours as :func:`sequence_words` links words: a
    block item is an element of whole lines (its dash, its nested lines and trailing comment),
    a flow item (a JSON list's object) a span between commas. A word read inside an item (a
    JSON 6902 operation's ``value``) that stands for the whole item takes these places
    (:func:`stand_for`), so that removing the word removes the item. Each word's ``text`` is
    ``""``; ``[]`` for anything but a sequence."""
    if not isinstance(node, yaml.SequenceNode) or not node.value:
        return []
    lines = text_lines(text)
    run: list[Token] = []
    for child in node.value:
        span = Span.between(node_span(child).start, _written_end(child))
        word = Token("", span.line, span.column, span=span)
        if node.flow_style:
            start, end = _flow_line(lines, span)
            if child is node.value[-1] and len(node.value) > 1 and not lines[span.end_line - 1][span.end_column - 1 :].strip():
                end = None  # the last item's lines would leave the comma before them (no JSON)
            run.append(evolve(word, line_start=start, line_end=end))
        else:
            run.append(evolve(word, element=own_lines(lines, span.start, span.end, _ITEM_HEAD)))
    tokens = unlink_at_comments(link(run), lines)
    if not node.flow_style and all(t.element is not None for t in tokens):
        whole, left, empty = _block_list_extent(text, lines, [t.element for t in tokens if t.element is not None])
        tokens = [evolve(t, whole=whole, empty=empty, left=left) for t in tokens]
    return tokens


def _written_end(node: yaml.Node) -> tuple[int, int]:
    """Where the text of ``node`` ends: a block collection's end mark is where the next
    token starts (the next item's dash), so its end is that of its last value."""
    while not getattr(node, "flow_style", True) and isinstance(node, yaml.CollectionNode) and node.value:
        last = node.value[-1]
        node = last[1] if isinstance(node, yaml.MappingNode) else last
    return node_span(node).end


def stand_for(word: Token, item: Token) -> Token:
    """``word`` (read inside a list item) standing for the whole ``item`` (one of
    :func:`sequence_items`): it keeps its text and span (where its name and value are
    edited), and a removal takes the item, with the item's neighbours and list."""
    flow = item.element is None
    return evolve(
        word,
        element=item.element,
        item=item.span if flow else None,
        prev_end=item.prev_end,
        next_start=item.next_start,
        line_start=item.line_start,
        line_end=item.line_end,
        whole=item.whole,
        empty=item.empty,
        left=item.left,
    )


_KEY_COLON = re.compile(r":((?:[ \t]+[&!][^ \t#]*)*)[ \t]*(?:#.*)?$")
"""The colon that ends a block mapping key, with what may follow it on its line: an anchor
or tag of the value (kept before the ``[]``), blanks, a comment."""


def _block_list_extent(
    text: str, lines: Sequence[str], elements: Sequence[Span], empty: str = "[]", root: bool = False
) -> tuple[Span, str, str]:
    """``(whole, left, empty)`` of a block list whose items are written as ``elements``
    (whole lines, in order): where it is written from just after its key's colon
    (``args:| # flags``), what remains of that text when every item is cut (the rest of the
    key's line, the comment lines between the items) and what to write there instead
    (`` []`` before it; after the value's anchor or tag, ``x-flags: &flags []``). Where
    there is no key line, the list starts at its first item and ``[]`` goes on a line of
    its own, deeper than the dash (at the dash's column for a document's root list).
    ``empty``: the empty collection (``{}`` for a block mapping's entries); ``root``: the
    collection is the document's (no key above it, whatever line is there: ``---``)."""
    first, last = elements[0], elements[-1]
    row = first.line - 2
    while row >= 0 and (not lines[row].strip() or lines[row].lstrip().startswith("#")):
        row -= 1
    if root:
        row = -1
    colon = _KEY_COLON.search(lines[row]) if row >= 0 else None
    on_key = colon is not None
    start = (row + 1, colon.end(1) + 1) if colon is not None else first.start
    whole = Span.between(start, last.end)
    index = line_index(text)
    begin, end = index.offset(*whole.start), index.offset(*whole.end)
    kept, cursor = [], begin
    for element in elements:
        a, b = index.offset(*element.start), index.offset(*element.end)
        kept.append(text[cursor:a])
        cursor = b
    kept.append(text[cursor:end])
    left = "".join(kept)
    if on_key:
        return whole, left, f" {empty}" + left
    line = lines[first.line - 1]
    indent = line[: len(line) - len(line.lstrip())]
    if row < 0:  # the document's root (a patch file of JSON 6902 operations): no key to be under
        return whole, left, f"{indent}{empty}\n" + left
    return whole, left, f"{indent}  {empty}\n" + left  # deeper than its key


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


class EntryCuts(dict[int, "Span | None"]):
    """The cuts of a mapping's entries by ``id`` of their key nodes (:func:`entry_cuts`), and
    ``extent``: for a block mapping whose every entry has a cut, ``(whole, left, empty)`` as
    :func:`_block_list_extent` gives them with ``{}``: the cuts that take every entry write
    ``key: {}`` (a document's ``{}``), never a null that changes the value's type (vLLM's
    ``--config`` file is read with ``yaml.safe_load`` and iterated with ``.items()``,
    vllm/utils/argparse_utils.py ``FlexibleArgumentParser.load_config_file``)."""

    extent: tuple[Span, str, str] | None = None


def entry_cuts(text: str, node: yaml.Node | None) -> EntryCuts:
    """What to delete to remove each entry of a mapping, by ``id`` of its key node: the whole
    lines of a block mapping entry (trailing comment included; ``None`` when the entry
    shares a line), or the entry and one comma of a flow mapping (a JSON object), whose
    braces stay when every entry goes. A block mapping records what replaces it when every
    entry is cut (:attr:`EntryCuts.extent`)."""
    out = EntryCuts()
    if not isinstance(node, yaml.MappingNode):
        return out
    lines = text_lines(text)
    if not node.flow_style:
        for key_node, value_node in node.value:
            start, end = key_node.start_mark, value_node.end_mark  # node_span's points, unmade
            out[id(key_node)] = own_lines(lines, (start.line + 1, start.column + 1), (end.line + 1, end.column + 1), INDENT)
        elements = [c for c in out.values() if c is not None]
        if elements and len(elements) == len(node.value):
            root = node.value[0][0].start_mark.column == 0  # only a document's mapping starts there
            out.extent = _block_list_extent(text, lines, elements, "{}", root)
        return out
    entries = [
        Token("", 0, 0, span=Span.between(node_span(k).start, node_span(v).end)) for k, v in node.value
    ]
    for (key_node, _value), token in zip(node.value, unlink_at_comments(link(entries), lines), strict=True):
        out[id(key_node)] = cut([token])
    return out
