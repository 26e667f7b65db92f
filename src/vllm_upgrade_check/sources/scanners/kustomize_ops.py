"""The JSON 6902 operations of a kustomize patch on launch args that a fix may not take, or
that write no word: where their paths point, why their removal is left to a person
(:data:`OP_NOTE`), and the operations that write a null arg (:func:`valueless_ops`). RFC 6902
operations (``op``, ``path``, ``value``); the args paths are those kustomize patches of a
KServe predictor or a pod container name (see :mod:`.kustomize`)."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import replace

import yaml

from vllm_upgrade_check.model.facts import Fact, FactKind, Skipped, Span
from vllm_upgrade_check.parsing.words import contiguous
from vllm_upgrade_check.parsing.yamlnodes import YamlProblem, documents, get, items, scalar
from vllm_upgrade_check.sources.scanners.base import SourceFile
from vllm_upgrade_check.sources.scanners.kustomize_removal import Op

PREDICTOR_ARGS = re.compile(r"/spec/predictor/model/args(?:/(-|\d+))?")
"""A KServe predictor's args path (the list, ``.../-`` or an index)."""

CONTAINER_ARGS = re.compile(r"(?:/spec/template)?/spec/containers/(\d+)/args(?:/(-|\d+))?")
"""A pod container's args path (the container's index, then the list, ``.../-`` or an index)."""


OP_NOTE = (
    "written as the value of a JSON 6902 operation that replaces an arg, adds one at an index, "
    "or is in a patch that addresses args by index: removing the operation would change what "
    "the patch writes or points at; change the patch by hand"
)
"""Note of a flag whose removal would take the whole operation of a patch that addresses
args by index or replaces one: that changes what other words the patch writes."""


SPLIT_NOTE = (
    "its value is written by a later JSON 6902 operation of the patch, with another operation "
    "between them: remove both operations by hand"
)
"""Note of a flag whose words are written by operations of a patch that are not next to each
other (the vLLM image's between a flag and its value): no one cut takes them."""


def split_ops(ops: Sequence[Op]) -> bool:
    """Whether two of the ``add`` operations of ``.../args/-`` in ``ops`` (one launch's, in
    order) are not next to each other in their patch (another operation between them)."""
    appends = [op.item for op in ops if op.verb == "add" and op.index == "-" and op.item is not None]
    return any(not contiguous(a, b) for a, b in zip(appends, appends[1:], strict=False))


def unsplit(fact: Fact) -> Fact:
    """``fact`` (an arg whose words a split patch writes, :func:`split_ops`) with
    :data:`SPLIT_NOTE` when the scan found no cut for it and says nothing of why."""
    spans = fact.spans
    if spans is None or spans.cut is not None or spans.note or fact.kind != FactKind.ARG:
        return fact
    return replace(fact, spans=replace(spans, note=SPLIT_NOTE))


def uncut(fact: Fact, kept: Sequence[Span]) -> Fact:
    """``fact`` without its cut (with :data:`OP_NOTE`) when the cut touches a span of
    ``kept``: an operation's scalar value, which is never cut alone (``value:`` would be
    left null, ``"value": }`` no JSON) and whose operation a removal may not take."""
    spans = fact.spans
    if spans is None or spans.cut is None or not any(_overlaps(spans.cut, k) for k in kept):
        return fact
    return replace(fact, spans=replace(spans, cut=None, emptied="", listed=None, left="", note=OP_NOTE))


def _overlaps(a: Span, b: Span) -> bool:
    return a.start < b.end and b.start < a.end


def valueless_ops(patch: SourceFile) -> Iterator[Skipped]:
    """A :class:`~vllm_upgrade_check.model.facts.Skipped` (``unresolved: ...``, counted as
    configuring vLLM) per ``add`` or ``replace`` of launch args in a JSON 6902 patch whose
    ``value`` is missing or null (``value:``, ``"value": null``): kustomize would write a
    null arg, and no word of it is checked; and those of the container images the patch
    writes that say no image (:func:`~.kustomize_images.unresolved_image_ops`). None when the
    text is no YAML (reported as such by its reader)."""
    from vllm_upgrade_check.sources.scanners.kustomize_images import unresolved_image_ops

    yield from unresolved_image_ops(patch)
    try:
        docs = documents(patch.text)
    except YamlProblem:
        return
    for doc in docs:
        for op in items(doc) if isinstance(doc, yaml.SequenceNode) else ():
            where = scalar(get(op, "path")) or ""
            if scalar(get(op, "op")) not in ("add", "replace"):
                continue
            if not (CONTAINER_ARGS.fullmatch(where) or PREDICTOR_ARGS.fullmatch(where)):
                continue
            value = get(op, "value")
            if value is None or (isinstance(value, yaml.ScalarNode) and value.tag.endswith(":null")):
                line = op.start_mark.line + 1
                reason = f"unresolved: the JSON 6902 operation at line {line} writes no value to {where} (null)"
                yield Skipped(patch.relpath, reason, configures_vllm=True, line=line)
