"""Kustomize patches of launch args: JSON 6902 operations a kustomization applies to a target.

A kustomization's ``patchesJson6902:`` entries, and its ``patches:`` entries that name a
``target``, point at a patch file of JSON 6902 operations (RFC 6902: ``op``, ``path``,
``value``). An ``add`` or ``replace`` whose ``path`` is the args of a KServe predictor
(``/spec/predictor/model/args``, ``.../args/-``, ``.../args/3``) or of a pod container
(``/spec/template/spec/containers/0/args/-``, ``/spec/containers/0/args/3``) gives words of
that launch, checked where the patch file writes them. They count when the target runs vLLM:
a predictor's through its ``InferenceService`` (:data:`.kserve.SERVICE_KEY`), a container's
through :func:`container_references` (the ``kind/name/index`` of each container that launches
vLLM); their launch is merged into the target's (:data:`.base.APPENDED`).

A strategic-merge patch file (``patchesStrategicMerge:`` items, or a ``patches:`` entry whose
file is a Kubernetes object) of a pod object merges its containers by name: the ``args`` it
writes for a container that launches vLLM in the base are that launch's args as the overlay
deploys it (:func:`strategic_merge_facts`), checked where the patch writes them, with the
``env`` it adds; keyed :data:`CONTAINER_NAME_KEY`. A patch container that names a vLLM image
of its own is a launch by itself (read as a manifest), not merged.

An inline ``patch:`` written as a literal block scalar (``patch: |-``) is read as the patch
file it stands for, each word at its line and column in the kustomization (a fix edits it
there); an inline patch written as a one-line string is not read.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import replace

import yaml

from vllm_upgrade_check.model.facts import Fact, FactKind, Spans
from vllm_upgrade_check.parsing.words import Token
from vllm_upgrade_check.parsing.yamlnodes import YamlProblem, documents, get, items, scalar
from vllm_upgrade_check.parsing.yamlwords import scalar_word, sequence_words
from vllm_upgrade_check.sources.scanners.arg_facts import arg_facts
from vllm_upgrade_check.sources.scanners.base import (
    APPENDED,
    INDEXED_NOTE,
    Conditional,
    FileReference,
    Reference,
    SourceFile,
)
from vllm_upgrade_check.sources.scanners.kserve import SERVICE_KEY

KUSTOMIZATION_NAMES = frozenset({"kustomization.yaml", "kustomization.yml", "Kustomization"})
"""The names ``kustomize build`` reads a directory's kustomization from."""

CONTAINER_KEY = "k8s-container:"
"""Prefix of the key ``Kind/name/index`` of a pod container that launches vLLM."""

POD_KINDS = frozenset({"Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job", "Pod"})

CONTAINER_NAME_KEY = "k8s-container-name:"
"""Prefix of the key ``Kind/name/container name`` of a pod container that launches vLLM (what
a strategic-merge patch matches containers by)."""

_PREDICTOR_ARGS = re.compile(r"/spec/predictor/model/args(?:/(-|\d+))?")
_CONTAINER_ARGS = re.compile(r"(?:/spec/template)?/spec/containers/(\d+)/args(?:/(-|\d+))?")


def patch_entries(doc: yaml.Node, relpath: str) -> Iterator[tuple[str, str, str]]:
    """``(target kind, target name, patch file path)`` of each JSON 6902 patch a kustomization
    names by path (relative to the kustomization's folder, as kustomize reads it)."""
    folder = relpath.rpartition("/")[0]
    for key in ("patchesJson6902", "patches"):
        for entry in items(get(doc, key)):
            target = get(entry, "target")
            kind, name, path = scalar(get(target, "kind")), scalar(get(target, "name")), scalar(get(entry, "path"))
            if kind and name and path:
                yield kind, name, _joined(folder, path)


def strategic_merge_entries(doc: yaml.Node, relpath: str) -> Iterator[str]:
    """The patch files (joined to the kustomization's folder) a kustomization names that may
    be strategic-merge patches: ``patchesStrategicMerge:`` items and every ``patches:`` entry
    with a ``path`` (the file's content decides which kind of patch it is)."""
    folder = relpath.rpartition("/")[0]
    for entry in items(get(doc, "patchesStrategicMerge")):
        path = scalar(entry)
        if path and "\n" not in path:
            yield _joined(folder, path)
    for entry in items(get(doc, "patches")):
        path = scalar(get(entry, "path"))
        if path:
            yield _joined(folder, path)


def _joined(folder: str, path: str) -> str:
    parts = [p for p in (folder.split("/") if folder else []) if p]
    for part in path.split("/"):
        if part == "..":
            if parts:
                parts.pop()
        elif part not in ("", "."):
            parts.append(part)
    return "/".join(parts)


def kustomization_items(
    source: SourceFile, read: Callable[[str], SourceFile | None] | None
) -> Iterator[FileReference | Conditional]:
    """A kustomization's patch files as :class:`~.base.FileReference` items (so it is read
    again with them), and once ``read`` is given, the :class:`~.base.Conditional` facts of
    the launch words each patch writes (:func:`patch_facts`)."""
    try:
        docs = documents(source.text)
    except YamlProblem:
        return
    for doc in docs:
        for kind, name, path in patch_entries(doc, source.relpath):
            yield FileReference(path, "manifest")
            patch = read(path) if read is not None else None
            if patch is not None:
                yield from patch_facts(patch, kind, name)
        for path in dict.fromkeys(strategic_merge_entries(doc, source.relpath)):
            yield FileReference(path, "manifest")
            patch = read(path) if read is not None else None
            if patch is not None:
                yield from strategic_merge_facts(patch)
        if read is None:  # inline patches: read once, with the kustomization's first reading
            yield from inline_patch_items(source, doc)


def inline_patch_items(source: SourceFile, doc: yaml.Node) -> Iterator[Conditional]:
    """The :class:`~.base.Conditional` facts of the ``patches:`` entries of kustomization
    ``doc`` that write their patch inline as a literal block scalar (``patch: |-``): a JSON
    6902 patch when the entry names a ``target``, else (or when its text is a pod object) a
    strategic-merge patch. The block's lines are read where they stand (the text before them
    blanked), so every word keeps its line and column in the kustomization."""
    lines = source.text.split("\n")
    for entry in items(get(doc, "patches")):
        node = get(entry, "patch")
        if not isinstance(node, yaml.ScalarNode) or node.style != "|":
            continue
        first = node.start_mark.line + 1  # 0-based: the block's text starts on the line after `|`
        stop = node.end_mark.line + (1 if node.end_mark.column else 0)  # it ends at a line's start
        text = "\n" * first + "\n".join(lines[first:stop])
        inline = SourceFile(source.relpath, text)
        target = get(entry, "target")
        kind, name = scalar(get(target, "kind")), scalar(get(target, "name"))
        if kind and name and "op:" in text:
            yield from patch_facts(inline, kind, name)
        else:
            yield from strategic_merge_facts(inline)


def strategic_merge_facts(patch: SourceFile) -> Iterator[Conditional]:
    """The launch words and env vars a strategic-merge patch file writes for each named
    container of a pod object (one :class:`~.base.Conditional` per container, keyed
    :data:`CONTAINER_NAME_KEY`, its launch an :data:`~.base.APPENDED` one at the ``args``
    key). A container with a vLLM image of its own is skipped: it is read as a launch."""
    from vllm_upgrade_check.sources.scanners.images import is_vllm_image
    from vllm_upgrade_check.sources.scanners.yamlenv import env_facts

    try:
        docs = documents(patch.text)
    except YamlProblem:
        return
    for doc in docs:
        kind, name = scalar(get(doc, "kind")), scalar(get(get(doc, "metadata"), "name"))
        if kind not in POD_KINDS or not name:
            continue
        spec = get(doc, "spec")
        pod = spec if kind == "Pod" else get(get(spec, "template"), "spec")
        for container in items(get(pod, "containers")):
            cname = scalar(get(container, "name"))
            image = scalar(get(container, "image")) or ""
            if not cname or is_vllm_image(image):
                continue
            facts: list[Fact] = []
            args = get(container, "args")
            tokens = sequence_words(patch.text, args) if isinstance(args, yaml.SequenceNode) else []
            if tokens:
                mark = args.start_mark if args is not None else None
                start = Token(APPENDED, mark.line + 1, mark.column + 1) if mark is not None else tokens[0]
                facts.extend(
                    arg_facts(
                        tokens, patch.relpath, "kustomize", positional_model=False, entry=APPENDED, start=start,
                        syntax="yaml",
                    )
                )
            facts.extend(env_facts(patch.text, get(container, "env"), patch.relpath, "kustomize"))
            if facts:
                yield Conditional(f"{CONTAINER_NAME_KEY}{kind}/{name}/{cname}", tuple(facts))


def patch_facts(patch: SourceFile, kind: str, name: str) -> Iterator[Conditional]:
    """The launch words the ``add``/``replace`` operations of a JSON 6902 patch file of
    target ``kind``/``name`` write, in order, as one :class:`~.base.Conditional` per launch
    they patch (its launch an :data:`~.base.APPENDED` one, placed at the first operation)."""
    try:
        docs = documents(patch.text)
    except YamlProblem:
        return
    words: dict[str, tuple[Token, list[Token]]] = {}
    indexed: dict[str, str] = {}  # key -> where an operation addresses one element by its index
    for doc in docs:
        for op in items(doc):
            verb = scalar(get(op, "op"))
            where, value = scalar(get(op, "path")) or "", get(op, "value")
            if kind == "InferenceService" and (m := _PREDICTOR_ARGS.fullmatch(where)):
                key, index = SERVICE_KEY + name, m.group(1)
            elif kind in POD_KINDS and (m := _CONTAINER_ARGS.fullmatch(where)):
                key, index = f"{CONTAINER_KEY}{kind}/{name}/{m.group(1)}", m.group(2)
            else:
                continue
            mark = op.start_mark
            if index is not None and index.isdigit():
                indexed.setdefault(key, f"{patch.relpath}:{mark.line + 1}")
                words.setdefault(key, (Token(APPENDED, mark.line + 1, mark.column + 1), []))
            if verb not in ("add", "replace"):
                continue
            if isinstance(value, yaml.SequenceNode):
                tokens = sequence_words(patch.text, value)
            elif isinstance(value, yaml.ScalarNode):
                tokens = [scalar_word(patch.text, value)]
            else:
                continue
            words.setdefault(key, (Token(APPENDED, mark.line + 1, mark.column + 1), []))[1].extend(tokens)
    for key, (start, tokens) in words.items():
        facts = list(arg_facts(tokens, patch.relpath, "kustomize", positional_model=False, entry=APPENDED, start=start, syntax="yaml"))
        if key in indexed:  # the patched args' list keeps its positions: say so on the launch
            note = f"{INDEXED_NOTE} (kustomize patch {indexed[key]}): removing a word would shift what it patches"
            facts = [replace(f, spans=Spans(note=note)) if f.kind == FactKind.LAUNCH else f for f in facts]
        yield Conditional(key, tuple(facts))


def container_references(doc: yaml.Node, facts: list[Fact]) -> Iterator[Reference]:
    """For a pod object (``Deployment``, ``Pod``, ...), a :class:`~.base.Reference` per
    container that launches vLLM (``facts``: the object's facts, each container's with
    ``owner`` ``container NAME``), keyed ``Kind/name/index`` and naming its launch."""
    kind, name = scalar(get(doc, "kind")), scalar(get(get(doc, "metadata"), "name"))
    if kind not in POD_KINDS or not name:
        return
    spec = get(doc, "spec")
    pod = spec if kind == "Pod" else get(get(spec, "template"), "spec")
    for index, container in enumerate(items(get(pod, "containers"))):
        who = f"container {scalar(get(container, 'name')) or '?'}"
        launch = next((f for f in facts if f.kind == FactKind.LAUNCH and f.owner == who), None)
        if launch is not None and launch.group:
            yield Reference(f"{CONTAINER_KEY}{kind}/{name}/{index}", launch=launch.group)
            if scalar(get(container, "name")):
                yield Reference(f"{CONTAINER_NAME_KEY}{kind}/{name}/{who[len('container '):]}", launch=launch.group)
