"""The image a kustomize patch gives a pod container that launches vLLM.

An overlay that changes a Deployment's image deploys that image, not its base's: a JSON 6902
``add`` or ``replace`` of ``/spec/template/spec/containers/0/image`` (or
``/spec/containers/0/image`` of a Pod), and a strategic-merge patch that sets a container's
``image:`` (matched by the container's name), give the ``image`` fact of the launch the
overlay deploys, checked and bumped where the patch writes it. Each is a
:class:`~.base.Conditional` keyed as the base's container is (``kind/name/index`` for JSON
6902, ``kind/name/container name`` for a strategic merge): it counts when that container
launches vLLM in the base (a patch of a sidecar's image says nothing of vLLM's). Its version
hint is its own tag's (the version that overlay runs). A value that does not say which image
runs (none, null, no string, a ``${VAR}`` placeholder kustomize does not expand) is a
:class:`~vllm_upgrade_check.model.facts.Skipped` ``unresolved: ...`` naming its line.

A strategic-merge patch *file* with a vLLM image is also a manifest of its own, whose image
the manifest scanner reads; only an inline one (in the kustomization) is read here. A
kustomization's ``images:`` transformer is read by :func:`~.helm_images.kustomize_image_facts`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import replace

import yaml

from vllm_upgrade_check.model.facts import Fact, FactKind, Skipped
from vllm_upgrade_check.parsing.yamlnodes import YamlProblem, documents, get, items, scalar
from vllm_upgrade_check.parsing.yamlwords import scalar_word
from vllm_upgrade_check.sources.scanners.base import Conditional, Reference, SourceFile
from vllm_upgrade_check.sources.scanners.images import image_fact, image_hint, is_vllm_image

CONTAINER_KEY = "k8s-container:"
"""Prefix of the key ``Kind/name/index`` of a pod container that launches vLLM."""

CONTAINER_NAME_KEY = "k8s-container-name:"
"""Prefix of the key ``Kind/name/container name`` of a pod container that launches vLLM (what
a strategic-merge patch matches containers by)."""

POD_KINDS = frozenset({"Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job", "Pod"})

CONTAINER_IMAGE = re.compile(r"(?:/spec/template)?/spec/containers/(\d+)/image")
"""A pod container's image path (the container's index)."""

PLACEHOLDER = re.compile(r"\$\{[^}]*\}|\$\([^)]*\)")
"""A ``${VAR}`` / ``$(VAR)`` placeholder: kustomize writes it as it is (a pipeline that
substitutes it runs outside the repository)."""


def _unresolved(value: yaml.Node | None) -> str:
    """Why a patch's image ``value`` does not say which image runs (``""``: it does)."""
    if value is None or (isinstance(value, yaml.ScalarNode) and value.tag.endswith(":null")):
        return "writes no value (null)"
    if not isinstance(value, yaml.ScalarNode):
        return "writes no string"
    text = str(value.value).strip()
    if not text:
        return "writes an empty image"
    if PLACEHOLDER.search(text):
        return f"writes {text}, a placeholder kustomize does not expand"
    return ""


def _fact(patch: SourceFile, value: yaml.ScalarNode) -> Fact:
    """The image fact of a patch's scalar image ``value``, with its own tag's version hint."""
    word = scalar_word(patch.text, value)
    fact = image_fact(word, patch.relpath, "kustomize", syntax="yaml")
    hint = image_hint(word.text, patch.relpath, word.line)
    return replace(fact, version_hint=hint[0], hint_source=hint[1]) if hint else fact


def _json6902(patch: SourceFile) -> Iterator[yaml.Node]:
    """The operations of a JSON 6902 patch text (none when it is no YAML)."""
    try:
        docs = documents(patch.text)
    except YamlProblem:
        return
    for doc in docs:
        if isinstance(doc, yaml.SequenceNode):
            yield from items(doc)


def image_op_facts(patch: SourceFile, kind: str, name: str) -> Iterator[Conditional]:
    """One :class:`~.base.Conditional` per vLLM container image an ``add``/``replace`` of a
    JSON 6902 patch of target ``kind``/``name`` writes (the last one per container: what the
    overlay deploys), keyed ``CONTAINER_KEY kind/name/index``."""
    if kind not in POD_KINDS:
        return
    found: dict[str, Fact] = {}
    for op in _json6902(patch):
        m = CONTAINER_IMAGE.fullmatch(scalar(get(op, "path")) or "")
        value = get(op, "value")
        if m is None or scalar(get(op, "op")) not in ("add", "replace") or _unresolved(value):
            continue
        assert isinstance(value, yaml.ScalarNode)
        if not is_vllm_image(str(value.value)):  # another image runs there: no vLLM version
            found.pop(f"{CONTAINER_KEY}{kind}/{name}/{m.group(1)}", None)
            continue
        found[f"{CONTAINER_KEY}{kind}/{name}/{m.group(1)}"] = _fact(patch, value)
    for key, fact in found.items():
        yield Conditional(key, (fact,))


def unresolved_image_ops(patch: SourceFile) -> Iterator[Skipped]:
    """A :class:`~vllm_upgrade_check.model.facts.Skipped` (``unresolved: ...``) per ``add`` or
    ``replace`` of a container's image in a JSON 6902 patch whose value does not say which
    image runs; counted as configuring vLLM when the patch text names vLLM."""
    mentions = "vllm" in patch.text.lower()
    for op in _json6902(patch):
        where = scalar(get(op, "path")) or ""
        if not CONTAINER_IMAGE.fullmatch(where) or scalar(get(op, "op")) not in ("add", "replace"):
            continue
        why = _unresolved(get(op, "value"))
        if why:
            line = op.start_mark.line + 1
            reason = f"unresolved: the JSON 6902 operation at line {line} {why} to {where}; which image runs is not known"
            yield Skipped(patch.relpath, reason, configures_vllm=mentions, line=line)


def container_image(patch: SourceFile, container: yaml.Node, key: str) -> Iterator[Conditional | Skipped]:
    """The vLLM image an inline strategic-merge patch's ``container`` sets, as a
    :class:`~.base.Conditional` keyed ``key`` (``CONTAINER_NAME_KEY kind/name/container
    name``); an image that does not say which one runs is a ``Skipped`` ``unresolved: ...``.
    (A patch file's own image is read with the file, as a manifest.)"""
    node = get(container, "image")
    if node is None:
        return
    why = _unresolved(node)
    if why:
        line = node.start_mark.line + 1
        reason = f"unresolved: the strategic-merge patch's image at line {line} {why}; which image runs is not known"
        yield Skipped(patch.relpath, reason, configures_vllm="vllm" in patch.text.lower(), line=line)
        return
    assert isinstance(node, yaml.ScalarNode)
    if is_vllm_image(str(node.value)):
        yield Conditional(key, (_fact(patch, node),))


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


def by_image(found: Iterable[Conditional | Skipped]) -> Iterator[Conditional | Skipped]:
    """``found`` (what one patch writes) with the version hint of the vLLM image it gives a
    container on each fact it writes for that container that has none: the overlay runs its
    launch words with that release, not the base's."""
    items_ = list(found)
    hints: dict[str, Fact] = {}
    for c in items_:
        if isinstance(c, Conditional):
            for f in c.facts:
                if f.kind == FactKind.IMAGE and f.version_hint:
                    hints[c.key] = f
    for c in items_:
        image = hints.get(c.key) if isinstance(c, Conditional) else None
        if image is None or not isinstance(c, Conditional):
            yield c
            continue
        facts = tuple(
            f if f.version_hint else replace(f, version_hint=image.version_hint, hint_source=image.hint_source)
            for f in c.facts
        )
        yield Conditional(c.key, facts, c.refers)
