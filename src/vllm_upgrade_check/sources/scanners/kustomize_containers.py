"""Whole containers a kustomize JSON 6902 patch adds or replaces.

An ``add`` or ``replace`` whose ``path`` is a pod's container (``/spec/template/spec/containers/-``,
``.../containers/0``, a Pod's ``/spec/containers/1``) and whose ``value`` is a container
mapping (``name``, ``image``, ``command``, ``args``, ``env``), or one of the whole list
(``.../containers``) whose ``value`` is a list of them, puts that container in the pod the
overlay deploys. Each such container is read as a manifest's container is
(:func:`~.containers.container_facts`): its image, its launch and flags (a vLLM image's
``args``, or a ``command`` that runs vLLM), its ``env``, each where the patch writes it, so a
fix edits them there. A container that launches no vLLM (a sidecar) gives nothing. The facts
stand by themselves (the container is the patch's, not the base's): the patch text alone says
them, so a reading of the patch file (or of the kustomization, for an inline patch) has them.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import replace

import yaml

from vllm_upgrade_check.model.facts import Fact, FactKind
from vllm_upgrade_check.parsing.yamlnodes import YamlProblem, documents, get, items, scalar
from vllm_upgrade_check.sources.scanners.base import SourceFile
from vllm_upgrade_check.sources.scanners.containers import container_env, container_facts
from vllm_upgrade_check.sources.scanners.yamlenv import env_facts

CONTAINER_PATH = re.compile(r"(?:/spec/template)?/spec/containers(?:/(-|\d+))?")
"""A pod's containers list (no index), or one container of it (``-`` or an index)."""


def _containers(op: yaml.Node) -> list[yaml.Node]:
    """The container mappings an operation writes into a pod's containers (none for other
    paths and operations)."""
    m = CONTAINER_PATH.fullmatch(scalar(get(op, "path")) or "")
    if m is None or scalar(get(op, "op")) not in ("add", "replace"):
        return []
    value = get(op, "value")
    if m.group(1) is not None:
        return [value] if isinstance(value, yaml.MappingNode) else []
    return [c for c in items(value) if isinstance(c, yaml.MappingNode)] if isinstance(value, yaml.SequenceNode) else []


def container_op_facts(patch: SourceFile, scanner: str = "kustomize") -> Iterator[Fact]:
    """The facts of each container a JSON 6902 patch text adds or replaces whole that
    launches vLLM, with ``owner`` ``container NAME`` (none when the text is no YAML)."""
    try:
        docs = documents(patch.text)
    except YamlProblem:
        return
    for doc in docs:
        if not isinstance(doc, yaml.SequenceNode):
            continue
        for op in items(doc):
            for container in _containers(op):
                env = container_env(get(container, "env"))
                command, args = get(container, "command"), get(container, "args")
                found = list(container_facts(patch.text, patch.relpath, scanner, get(container, "image"), command, args, env))
                if not any(f.kind == FactKind.LAUNCH for f in found):
                    continue  # a sidecar: nothing of vLLM's
                found.extend(env_facts(patch.text, get(container, "env"), patch.relpath, scanner))
                who = f"container {scalar(get(container, 'name')) or '?'}"
                yield from (replace(f, owner=who) for f in found)
