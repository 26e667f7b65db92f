"""Helm values files: the vLLM production-stack chart and generic charts running a vLLM image.

The production-stack chart (``vllm-project/production-stack``, ``helm/values.yaml`` and
``helm/templates/deployment-vllm-multi.yaml``) turns each
``servingEngineSpec.modelSpec[]`` entry into a ``vllm serve`` container:

- ``repository`` + ``tag`` form the image; ``modelURL`` is the served model;
- ``enableLoRA`` -> ``--enable-lora``, ``enableTool`` -> ``--enable-auto-tool-choice``,
  ``toolCallParser`` -> ``--tool-call-parser``, ``chatTemplate`` -> ``--chat-template``;
- ``vllmConfig`` keys: see :data:`VLLM_CONFIG_FLAGS`; ``enableChunkedPrefill`` and
  ``enablePrefixCaching`` become the flag or its ``--no-`` form; ``extraArgs`` is a list of
  raw flags appended as written; ``v0: 1`` sets ``VLLM_USE_V1=0``;
- ``env`` is the container's environment.

Any other values file is read for mappings whose ``image`` (``repository`` + ``tag``) is a
vLLM image: the ``args`` / ``extraArgs`` list and ``env`` / ``extraEnv`` next to it are what
the container runs with (vLLM flags, environment).
"""

from __future__ import annotations

from collections.abc import Iterator

import yaml

from vllm_upgrade_check.model.facts import Fact, FactKind, Location, Skipped
from vllm_upgrade_check.scanners.base import Scanner, SourceFile
from vllm_upgrade_check.scanners.launch import (
    arg_facts,
    env_fact,
    image_fact,
    image_hint,
    is_vllm_image,
    normalise_flag,
)
from vllm_upgrade_check.scanners.manifests import YAML_SUFFIXES, _env_facts, untemplated
from vllm_upgrade_check.scanners.templates import has_template_actions, neutralise_templates
from vllm_upgrade_check.scanners.vllm_config import config_arg_fact
from vllm_upgrade_check.shellparse import Token
from vllm_upgrade_check.yamlnodes import (
    YamlProblem,
    documents,
    get,
    items,
    mapping_items,
    pos,
    scalar,
)

VLLM_CONFIG_FLAGS = {
    "maxModelLen": "--max-model-len",
    "dtype": "--dtype",
    "tensorParallelSize": "--tensor-parallel-size",
    "maxNumSeqs": "--max-num-seqs",
    "gpuMemoryUtilization": "--gpu_memory_utilization",
    "maxLoras": "--max_loras",
}
"""production-stack ``vllmConfig`` keys that take a value, and the flag the chart writes."""

VLLM_CONFIG_SWITCHES = {
    "enableChunkedPrefill": "--enable-chunked-prefill",
    "enablePrefixCaching": "--enable-prefix-caching",
}
"""``vllmConfig`` booleans: ``true`` writes the flag, ``false`` its ``--no-`` form."""

MODEL_SPEC_FLAGS = {
    "enableLoRA": ("--enable-lora", False),
    "enableTool": ("--enable-auto-tool-choice", False),
    "toolCallParser": ("--tool-call-parser", True),
    "chatTemplate": ("--chat-template", True),
}
"""``modelSpec`` keys the chart turns into flags: ``key -> (flag, takes a value)``."""

_TRUE = frozenset({"true", "yes", "on", "1"})


def _token(node: yaml.Node, text: str | None = None) -> Token:
    p = pos(node)
    quoted = 1 if getattr(node, "style", None) in ("'", '"') else 0
    value = scalar(node) if text is None else text
    return Token(value or "", p.line, p.column + quoted, True, value or "")


def _keyed_arg(
    flag: str, key_node: yaml.Node, key: str, value: str | None, path: str, hint: tuple[str, str] | None
) -> Fact:
    name, aliases = normalise_flag(flag)
    p = pos(key_node)
    return config_arg_fact(key, value, path, p.line, p.column, "helm", aliases, name=name, hint=hint)


def _list_tokens(node: yaml.Node | None) -> list[Token]:
    return [_token(child) for child in items(node) if scalar(child) is not None]


def _image(mapping: yaml.Node, path: str) -> tuple[list[Fact], tuple[str, str] | None, bool]:
    """Image facts of ``repository`` + ``tag`` in ``mapping`` (or its ``image`` mapping)."""
    holder = get(mapping, "image")
    if isinstance(holder, yaml.ScalarNode):
        reference = scalar(holder) or ""
        if not is_vllm_image(reference):
            return [], None, False
        return [image_fact(_token(holder), path, "helm")], image_hint(reference, path, pos(holder).line), True
    if not isinstance(holder, yaml.MappingNode):
        holder = mapping
    repo_node = get(holder, "repository")
    repo = scalar(repo_node)
    if repo_node is None or not repo:
        return [], None, False
    tag = (scalar(get(holder, "tag")) or "").strip()  # a `tag: |` block scalar ends in a newline
    reference = f"{repo}:{tag}" if tag else repo
    if not is_vllm_image(reference):
        return [], None, False
    p = pos(repo_node)
    quoted = 1 if getattr(repo_node, "style", None) in ("'", '"') else 0
    token = Token(reference, p.line, p.column + quoted, True, repo)
    return [image_fact(token, path, "helm")], image_hint(reference, path, p.line), True


def model_spec_facts(spec: yaml.Node, path: str) -> Iterator[Fact]:
    """Facts of one production-stack ``servingEngineSpec.modelSpec[]`` entry."""
    images, hint, _ = _image(spec, path)
    yield from images
    names: set[str] = {"host", "port"}
    facts: list[Fact] = []
    model_node = get(spec, "modelURL")
    if scalar(model_node) and model_node is not None:
        t = _token(model_node)
        facts.append(
            Fact(FactKind.MODEL, t.text, Location(path, t.line, t.column), t.text, t.text, scanner="helm")
        )
        names.add("model")
    for key, key_node, value_node in mapping_items(spec):
        if key in MODEL_SPEC_FLAGS:
            flag, takes_value = MODEL_SPEC_FLAGS[key]
            value = scalar(value_node)
            if takes_value and value:
                facts.append(_keyed_arg(flag, key_node, key, value, path, hint))
            elif not takes_value and (value or "").lower() in _TRUE:
                facts.append(_keyed_arg(flag, key_node, key, None, path, hint))
    config = get(spec, "vllmConfig")
    for key, key_node, value_node in mapping_items(config):
        value = scalar(value_node)
        if key in VLLM_CONFIG_FLAGS:
            facts.append(_keyed_arg(VLLM_CONFIG_FLAGS[key], key_node, key, value, path, hint))
        elif key in VLLM_CONFIG_SWITCHES:
            flag = VLLM_CONFIG_SWITCHES[key]
            if (value or "").lower() not in _TRUE:
                flag = "--no-" + flag[2:]
            facts.append(_keyed_arg(flag, key_node, key, None, path, hint))
        elif key == "v0" and value == "1":
            p = pos(key_node)
            yield env_fact("VLLM_USE_V1", "0", path, p.line, p.column, "helm", origin="helm", raw="v0: 1")
        elif key == "extraArgs":
            facts.extend(arg_facts(_list_tokens(value_node), path, "helm", positional_model=False, hint=hint))
    for fact in facts:
        if fact.kind == FactKind.ARG:
            names.add(fact.name)
            names.update(fact.aliases)
    yield from facts
    yield from _env_facts(get(spec, "env"), path, "helm")
    p = pos(spec)
    yield Fact(
        FactKind.LAUNCH,
        "helm production-stack",
        Location(path, p.line, p.column),
        raw="servingEngineSpec.modelSpec",
        origin="config",
        args=frozenset(names),
        scanner="helm",
        version_hint=hint[0] if hint else None,
        hint_source=hint[1] if hint else None,
    )


def _mappings(node: yaml.Node) -> Iterator[yaml.Node]:
    stack = [node]
    budget = 100_000
    while stack and budget:
        budget -= 1
        current = stack.pop()
        if isinstance(current, yaml.MappingNode):
            yield current
            stack.extend(value for _k, _kn, value in mapping_items(current))
        elif isinstance(current, yaml.SequenceNode):
            stack.extend(items(current))


def values_facts(doc: yaml.Node, path: str) -> Iterator[Fact]:
    """Facts of one values document: production-stack model specs, then generic vLLM images."""
    specs = items(get(get(doc, "servingEngineSpec"), "modelSpec"))
    spec_ids = {id(s) for s in specs}
    for spec in specs:
        yield from model_spec_facts(spec, path)
    for mapping in _mappings(doc):
        if id(mapping) in spec_ids:
            continue
        images, hint, vllm = _image(mapping, path)
        if not vllm or (get(mapping, "image") is None and mapping is not doc and _is_image_holder(mapping)):
            continue
        yield from images
        for key in ("args", "extraArgs"):
            tokens = _list_tokens(get(mapping, key))
            if tokens:
                yield from arg_facts(tokens, path, "helm", positional_model=False, hint=hint)
        for key in ("env", "extraEnv"):
            yield from _env_facts(get(mapping, key), path, "helm")


def _is_image_holder(mapping: yaml.Node) -> bool:
    """A bare ``{repository, tag}`` mapping is the ``image`` of its parent (read there)."""
    return {k for k, _kn, _v in mapping_items(mapping)} <= {"repository", "tag", "pullPolicy", "registry"}


def is_values_file(source: SourceFile) -> bool:
    """``values*.yaml`` files, and any YAML holding a production-stack ``servingEngineSpec``."""
    return source.name.startswith("values") or "servingEngineSpec" in source.text


class HelmValuesScanner(Scanner):
    """Helm values files (``values*.yaml``) that mention vLLM."""

    name = "helm"

    def accepts_name(self, name: str) -> bool | None:
        return None if name.endswith(YAML_SUFFIXES) else False

    def accepts(self, source: SourceFile) -> bool:
        return source.name.endswith(YAML_SUFFIXES) and is_values_file(source)

    def scan(self, source: SourceFile) -> Iterator[Fact | Skipped]:
        if not source.mentions_vllm():
            return
        text = source.text
        templated = has_template_actions(text)
        if templated:
            text = neutralise_templates(text)
        try:
            docs = documents(text)
        except YamlProblem as exc:
            yield Skipped(source.relpath, str(exc), configures_vllm=True, line=exc.line)
            return
        for doc in docs:
            if scalar(get(doc, "apiVersion")) is not None and scalar(get(doc, "kind")) is not None:
                continue
            facts = values_facts(doc, source.relpath)
            yield from untemplated(facts) if templated else facts
