"""Inline kustomize patches: a ``patches:`` / ``patchesJson6902:`` entry that writes its patch
in the kustomization (``patch:``) rather than naming a file (``path:``).

A literal block scalar (``patch: |-``) is read as the patch file it stands for, each word at
its line and column in the kustomization (a fix edits it there). One written as a quoted,
folded or plain string is read from the string's value (:class:`Mover`), each word placed
where the string writes it when it can be aligned, else at the ``patch:`` key; a fix never
edits inside such a string (:data:`INLINE_NOTE`). An inline patch that is no YAML, holds
operations but no target, reads as neither operations nor an object, or is no string is a
:class:`~vllm_upgrade_check.model.facts.Skipped` naming its line, ``unresolved: ...``; one
that writes nothing at all (blank, comments only, ``[]``) is a ``Skipped`` whose reason
starts with :data:`EMPTY_PATCH`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace

import yaml

from vllm_upgrade_check.model.facts import Fact, FactKind, Location, Skipped, Spans
from vllm_upgrade_check.parsing.textpos import line_index
from vllm_upgrade_check.parsing.yamlnodes import YamlProblem, documents, get, items, scalar
from vllm_upgrade_check.parsing.yamlwords import scalar_offsets
from vllm_upgrade_check.sources.scanners.base import SourceFile
from vllm_upgrade_check.sources.scanners.kustomize_targets import Target, target_of, target_problem

EMPTY_PATCH = "the inline kustomize patch at line"
"""Start of the reason of the :class:`~vllm_upgrade_check.model.facts.Skipped` of an inline
patch that writes nothing (``... N writes nothing ...``), or whose strategic merge clears a
container's args (``... N sets args: [] ...``): what a fix that would leave one so is
refused for (:mod:`vllm_upgrade_check.fixing.verify`)."""


INLINE_NOTE = (
    "written in an inline kustomize patch given as a quoted, folded or plain YAML string: "
    "the tool does not edit inside it; change it there by hand"
)
"""Note of the facts of an inline patch that is not a literal block: they are placed where
their words are written when the string can be aligned with its value, else at the
``patch:`` key, and a fix leaves them to a person."""


class Mover:
    """Places what is read in the value of an inline patch string (its ``node``, in ``text``)
    where it is written in the kustomization: each character where
    :func:`~vllm_upgrade_check.parsing.yamlwords.scalar_offsets` aligns it, or every one at
    the ``patch:`` key (``key``; else the string's start) when the value cannot be aligned."""

    def __init__(self, text: str, node: yaml.ScalarNode, key: yaml.Node | None = None) -> None:
        self.offsets = scalar_offsets(text, node)
        self.value_starts = line_index(str(node.value)).starts
        self.index = line_index(text)
        home = key if key is not None else node
        self.home = (home.start_mark.line + 1, home.start_mark.column + 1)

    def at(self, line: int, column: int) -> tuple[int, int]:
        """Where the 1-based ``line``/``column`` of the value is written in the text."""
        if self.offsets is None or not 0 < line <= len(self.value_starts):
            return self.home
        offset = min(self.value_starts[line - 1] + column - 1, len(self.offsets) - 1)
        return self.index.line_col(self.offsets[offset])

    def line(self, line: int) -> int:
        """Where line ``line`` of the value starts in the text."""
        return self.at(line, 1)[0]

    def group(self, group: str | None) -> str | None:
        """A launch's group (``line:column`` in the value) as the text places it."""
        if group is None:
            return None
        line, _, column = group.partition(":")
        return "{}:{}".format(*self.at(int(line), int(column)))

    def fact(self, fact: Fact) -> Fact:
        """``fact`` placed in the text; an arg or env var with :data:`INLINE_NOTE` and no
        spans a fix could edit (a launch keeps its note)."""
        loc = fact.location
        line, column = self.at(loc.line or 1, loc.column or 1)
        end = self.at(loc.end_line, loc.end_column or 1) if loc.end_line is not None and self.offsets else (None, None)
        spans = fact.spans
        if fact.kind != FactKind.LAUNCH:
            spans = Spans(syntax=spans.syntax if spans is not None else "", note=INLINE_NOTE)
        return replace(fact, location=Location(loc.path, line, column, *end), group=self.group(fact.group), spans=spans)


@dataclass(frozen=True)
class InlinePatch:
    """One ``patches:`` entry that writes its patch inline.

    Attributes:
        source: the patch's text as a file of the kustomization's path (a literal block's
            lines where they stand, the text before them blanked; else the string's value).
        target: the entry's ``target`` (:class:`~.kustomize_targets.Target`).
        json6902: whether it is read as JSON 6902 operations (a list of them; else an object).
        mover: places the value's positions in the kustomization (``None``: a literal
            block, already in place).
    """

    source: SourceFile
    target: Target
    json6902: bool
    mover: Mover | None


def inline_patches(source: SourceFile, doc: yaml.Node) -> Iterator[InlinePatch | Skipped]:
    """The inline patches of the ``patches:``/``patchesJson6902:`` entries of ``doc``: a literal
    block scalar (``patch: |-``) read where it stands; a quoted, folded or plain string read
    from its value (see :class:`Mover`). A string whose value is no YAML, or a ``patch:``
    that is no string, is a :class:`~vllm_upgrade_check.model.facts.Skipped` naming its line
    (never passed over in silence); so is one that writes nothing (:data:`EMPTY_PATCH`)."""
    lines = source.text.split("\n")
    for entry in entries(doc):
        node = get(entry, "patch")
        if node is None:
            continue
        target = target_of(get(entry, "target"))
        key = next((k for k, _v in entry.value if scalar(k) == "patch"), None) if isinstance(entry, yaml.MappingNode) else None
        where = (key or node).start_mark.line + 1
        if not isinstance(node, yaml.ScalarNode):
            reason = f"the inline patch at line {where} is not a string (kustomize reads a string there): not read"
            yield Skipped(source.relpath, reason, configures_vllm=source.mentions_vllm(), line=where)
            continue
        mover: Mover | None = None
        if node.style == "|":
            first = node.start_mark.line + 1  # 0-based: the block's text starts on the line after `|`
            stop = node.end_mark.line + (1 if node.end_mark.column else 0)  # it ends at a line's start
            text = "\n" * first + "\n".join(lines[first:stop]) + ("\n" if stop < len(lines) else "")
            # (with its last line's break: a cut of the last item's lines takes it)
        else:
            text = str(node.value)
            mover = Mover(source.text, node, key)
        if _blank(text):
            reason = f"{EMPTY_PATCH} {where} writes nothing (no operation, no object), so the entry patches nothing"
            yield Skipped(source.relpath, reason, configures_vllm=False, line=where)
            continue
        why = target_problem(target) or _unread(text, target.given)
        if why:
            mentions = any(w in text.lower() for w in ("vllm", "args", "command"))
            reason = f"unresolved: the inline patch at line {where} {why}; its words were not checked"
            yield Skipped(source.relpath, reason, configures_vllm=mentions, line=where)
            continue
        json6902 = any(isinstance(d, yaml.SequenceNode) for d in documents(text))
        yield InlinePatch(SourceFile(source.relpath, text), target, json6902, mover)


def entries(doc: yaml.Node) -> list[yaml.Node]:
    """The ``patches:`` and ``patchesJson6902:`` entries of a kustomization (either may write
    its patch inline)."""
    return [*items(get(doc, "patches")), *items(get(doc, "patchesJson6902"))]


def _blank(text: str) -> bool:
    """Whether an inline patch's text writes nothing: blank, comments only, or an empty list
    of operations (``[]``)."""
    try:
        docs = documents(text)
    except YamlProblem:
        return False
    return all(isinstance(d, yaml.SequenceNode) and not d.value for d in docs)


def _unread(text: str, targeted: bool) -> str:
    """Why an inline patch's text cannot be read as a patch (``""``: it can): no YAML, JSON
    6902 operations without a target, or neither operations nor an object."""
    if not text.strip():
        return ""
    try:
        docs = documents(text)
    except YamlProblem as exc:
        return f"is no YAML ({exc})"
    if not docs:
        return ""  # comments only: no patch at all
    if any(isinstance(d, yaml.SequenceNode) for d in docs):
        return "" if targeted else "holds JSON 6902 operations but names no target"
    if any(isinstance(d, yaml.MappingNode) for d in docs):
        return ""
    return "reads as neither JSON 6902 operations nor an object"

