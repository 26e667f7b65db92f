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

from collections.abc import Callable, Iterator
from dataclasses import replace

import yaml

from vllm_upgrade_check.knowledge.known_args import known_args
from vllm_upgrade_check.knowledge.versions import version_from_tag
from vllm_upgrade_check.model.facts import Fact, FactKind, Location, Skipped, Span, Spans
from vllm_upgrade_check.parsing.words import Token
from vllm_upgrade_check.parsing.yamlnodes import (
    YamlProblem,
    documents,
    get,
    items,
    mapping_items,
    pos,
    scalar,
)
from vllm_upgrade_check.parsing.yamlwords import (
    entry_cuts,
    scalar_word,
    sequence_words,
    value_word,
)
from vllm_upgrade_check.sources.scanners.arg_facts import arg_facts, env_fact, normalise_flag
from vllm_upgrade_check.sources.scanners.base import (
    Conditional,
    FileReference,
    Reference,
    ScanItem,
    Scanner,
    SourceFile,
)
from vllm_upgrade_check.sources.scanners.helm_images import (
    MAPPED_IMAGE_KEY,
    image_pair,
    kustomize_image_facts,
    mapped_to_vllm,
    tag_version_at,
)
from vllm_upgrade_check.sources.scanners.images import image_fact, is_vllm_image
from vllm_upgrade_check.sources.scanners.manifests import HELM_IMAGE_KEY, YAML_SUFFIXES, untemplated
from vllm_upgrade_check.sources.scanners.templates import has_template_actions, neutralise_templates
from vllm_upgrade_check.sources.scanners.vllm_config import config_arg_fact, entry_spans
from vllm_upgrade_check.sources.scanners.yamlenv import env_facts

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


def _keyed_arg(
    text: str,
    flag: str,
    key_node: yaml.Node,
    value_node: yaml.Node,
    key: str,
    value: str | None,
    path: str,
    hint: tuple[str, str] | None,
    cuts: dict[int, Span | None],
) -> Fact:
    name, aliases = normalise_flag(flag)
    p = pos(key_node)
    # The key is the chart's name for the flag: a rename of the flag is not a rename of it.
    spans = replace(entry_spans(text, key_node, value_node, cuts), name=None)
    return config_arg_fact(key, value, path, p.line, p.column, "helm", aliases, name=name, hint=hint, spans=spans)


def model_spec_facts(text: str, spec: yaml.Node, path: str) -> Iterator[Fact]:
    """Facts of one production-stack ``servingEngineSpec.modelSpec[]`` entry."""
    images, hint, _ = image_pair(text, spec, path)
    yield from images
    names: set[str] = {"host", "port"}
    facts: list[Fact] = []
    model_node = get(spec, "modelURL")
    if scalar(model_node) and isinstance(model_node, yaml.ScalarNode):
        t = scalar_word(text, model_node)
        facts.append(
            Fact(FactKind.MODEL, t.text, Location(path, t.line, t.column), t.text, t.text, scanner="helm")
        )
        names.add("model")
    cuts = entry_cuts(text, spec)
    for key, key_node, value_node in mapping_items(spec):
        if key in MODEL_SPEC_FLAGS:
            flag, takes_value = MODEL_SPEC_FLAGS[key]
            value = scalar(value_node)
            if takes_value and value:
                facts.append(_keyed_arg(text, flag, key_node, value_node, key, value, path, hint, cuts))
            elif not takes_value and (value or "").lower() in _TRUE:
                facts.append(_keyed_arg(text, flag, key_node, value_node, key, None, path, hint, cuts))
    config = get(spec, "vllmConfig")
    cuts = entry_cuts(text, config)
    for key, key_node, value_node in mapping_items(config):
        value = scalar(value_node)
        if key in VLLM_CONFIG_FLAGS:
            facts.append(
                _keyed_arg(text, VLLM_CONFIG_FLAGS[key], key_node, value_node, key, value, path, hint, cuts)
            )
        elif key in VLLM_CONFIG_SWITCHES:
            flag = VLLM_CONFIG_SWITCHES[key]
            if (value or "").lower() not in _TRUE:
                flag = "--no-" + flag[2:]
            facts.append(_keyed_arg(text, flag, key_node, value_node, key, None, path, hint, cuts))
        elif key == "v0" and value == "1":
            p = pos(key_node)
            yield env_fact(
                "VLLM_USE_V1", "0", path, p.line, p.column, "helm", origin="helm", raw="v0: 1", spans=Spans()
            )
        elif key == "extraArgs":
            words = sequence_words(text, value_node)
            facts.extend(arg_facts(words, path, "helm", positional_model=False, hint=hint, syntax="yaml"))
    for fact in facts:
        if fact.kind == FactKind.ARG:
            names.add(fact.name)
            names.update(fact.aliases)
    yield from facts
    yield from env_facts(text, get(spec, "env"), path, "helm")
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


def values_facts(text: str, doc: yaml.Node, path: str) -> Iterator[Fact]:
    """Facts of one values document: production-stack model specs, then generic vLLM images."""
    specs = items(get(get(doc, "servingEngineSpec"), "modelSpec"))
    spec_ids = {id(s) for s in specs}
    for spec in specs:
        yield from model_spec_facts(text, spec, path)
    read: set[int] = set()  # the lists read as a vLLM image's args
    hints: list[tuple[str, str] | None] = []
    for mapping in _mappings(doc):
        if id(mapping) in spec_ids:
            continue
        images, hint, vllm = image_pair(text, mapping, path)
        if not vllm or (get(mapping, "image") is None and mapping is not doc and _is_image_holder(mapping)):
            continue
        yield from images
        hints.append(hint)
        for key in ("args", "extraArgs"):
            node = get(mapping, key)
            tokens = sequence_words(text, node)
            if tokens:
                read.add(id(node))
                yield from arg_facts(tokens, path, "helm", positional_model=False, hint=hint, syntax="yaml")
        for key in ("env", "extraEnv"):
            yield from env_facts(text, get(mapping, key), path, "helm")
    if len(hints) == 1 and not specs:
        yield from _flag_lists(text, doc, path, read, hints[0])


def _flag_lists(
    text: str, doc: yaml.Node, path: str, read: set[int], hint: tuple[str, str] | None
) -> Iterator[Fact]:
    """Lists of vLLM flags elsewhere in a values file that runs one vLLM image: a chart's
    templates pass them to the container (``args: {{ toYaml .Values.server.args }}``, the
    shape ``helm create`` charts grow), so they are that image's flags even when they do not
    stand beside it. A list counts when its first item is a flag some vLLM release knows."""
    known = known_args()
    for mapping in _mappings(doc):
        for _key, _key_node, value in mapping_items(mapping):
            if not isinstance(value, yaml.SequenceNode) or id(value) in read:
                continue
            first = scalar(items(value)[0]) if items(value) else None
            if not first or not first.startswith("--"):
                continue
            name, _aliases = normalise_flag(first.split("=", 1)[0])
            if not known.is_known(name):
                continue
            read.add(id(value))
            tokens = sequence_words(text, value)
            if tokens:
                yield from arg_facts(tokens, path, "helm", positional_model=False, hint=hint, syntax="yaml")


def _is_image_holder(mapping: yaml.Node) -> bool:
    """A bare ``{repository, tag}`` mapping is the ``image`` of its parent (read there)."""
    return {k for k, _kn, _v in mapping_items(mapping)} <= {"repository", "tag", "pullPolicy", "registry"}


KUSTOMIZATION_NAMES = frozenset({"kustomization.yaml", "kustomization.yml", "Kustomization"})
"""The names ``kustomize build`` reads a directory's kustomization from."""


def is_values_name(name: str) -> bool:
    """``values*.yaml`` and override names such as ``prod-values.yaml`` / ``prod.values.yaml``."""
    stem = name.rsplit(".", 1)[0]
    return name.startswith("values") or stem.endswith(("-values", ".values", "_values"))


def is_values_file(source: SourceFile) -> bool:
    """Values files (:func:`is_values_name`), and any YAML holding a production-stack
    ``servingEngineSpec``."""
    return is_values_name(source.name) or "servingEngineSpec" in source.text


def override_tag(doc: yaml.Node) -> yaml.ScalarNode | None:
    """The ``image.tag`` of a values override that sets the tag and not the repository
    (``image: {tag: v0.20.0}``): the release of the chart's image this override deploys."""
    image = get(doc, "image")
    if not isinstance(image, yaml.MappingNode) or get(image, "repository") is not None:
        return None
    tag = get(image, "tag")
    return tag if isinstance(tag, yaml.ScalarNode) and (scalar(tag) or "").strip() else None


def override_facts(text: str, doc: yaml.Node, path: str, repository: str | None = None) -> Iterator[Fact]:
    """Facts of a values override file that names no vLLM image (``values-prod.yaml`` beside
    a chart): its top-level ``args``/``extraArgs`` lists, any other list whose first item is
    a vLLM flag, and ``env``/``extraEnv``, each at this file's lines. They count only where
    the chart of this directory runs a vLLM image (the scanner yields them as a
    :class:`~.base.Conditional`).

    An override that sets only the image's tag (:func:`override_tag`) deploys that release:
    its facts run it (their version hint is the tag's), and with the chart's ``repository``
    known, the tag is an image fact a bump sets there."""
    hint: tuple[str, str] | None = None
    tag_node = override_tag(doc)
    if tag_node is not None:
        tag = (scalar(tag_node) or "").strip()
        found = version_from_tag(tag)
        line = pos(tag_node).line
        if found is not None:
            hint = (str(found), f"{path}:{line} image tag {tag}")
        if repository is not None and is_vllm_image(repository):
            word = value_word(text, tag_node)
            version, note = tag_version_at(text, tag_node)
            token = Token(f"{repository}:{tag}", word.line, word.column, True, tag)
            yield image_fact(token, path, "helm", version=version, note=note, syntax="yaml")
    read: set[int] = set()
    for key in ("args", "extraArgs"):
        node = get(doc, key)
        tokens = sequence_words(text, node)
        if tokens:
            read.add(id(node))
            yield from arg_facts(tokens, path, "helm", positional_model=False, hint=hint, syntax="yaml")
    yield from _flag_lists(text, doc, path, read, hint)
    for key in ("env", "extraEnv"):
        for fact in env_facts(text, get(doc, key), path, "helm"):
            yield replace(fact, version_hint=hint[0], hint_source=hint[1]) if hint and not fact.version_hint else fact


def chart_values_path(chart: str) -> str:
    """The report path of the ``values.yaml`` of chart directory ``chart``."""
    return f"{chart}/values.yaml" if chart else "values.yaml"


def override_image_facts(
    source: SourceFile, read: Callable[[str], SourceFile | None]
) -> list[Conditional] | None:
    """For a values override beside a chart that sets only the image's tag, the image fact
    of that tag (the chart's ``values.yaml``, read with ``read``, names the repository), as
    the :class:`~.base.Conditional` of the chart's vLLM image; ``None`` when it sets no tag."""
    try:
        text, _templated, docs = _read_values(source)
    except YamlProblem:
        return None
    tagged = [d for d in docs if isinstance(d, yaml.MappingNode) and scalar(get(d, "kind")) is None and override_tag(d)]
    if not tagged:
        return None
    chart = source.relpath.rpartition("/")[0]
    values = read(chart_values_path(chart))
    repository = chart_repository(values) if values is not None else None
    if repository is None:
        return None
    images = tuple(
        f for doc in tagged for f in override_facts(text, doc, source.relpath, repository) if f.kind == FactKind.IMAGE
    )
    return [Conditional(HELM_IMAGE_KEY + chart, images)] if images else None


def chart_repository(source: SourceFile) -> str | None:
    """The vLLM image repository a chart's ``values.yaml`` runs, when it runs one (an
    override's ``image.tag`` is that repository's tag); ``None`` when none or several."""
    try:
        text, _templated, docs = _read_values(source)
    except YamlProblem:
        return None
    found = {f.name for doc in docs for f in values_facts(text, doc, source.relpath) if f.kind == FactKind.IMAGE}
    return found.pop() if len(found) == 1 else None


def _read_values(source: SourceFile) -> tuple[str, bool, list[yaml.Node]]:
    """``(text read, whether it had template actions, its documents)`` of a values file, its
    ``{{ ... }}`` actions neutralised in place (positions kept).

    Raises:
        YamlProblem: the text does not parse."""
    text = source.text
    templated = has_template_actions(text)
    if templated:
        text = neutralise_templates(text)
    return text, templated, list(documents(text))


class HelmValuesScanner(Scanner):
    """Helm values files (``values*.yaml``) that mention vLLM."""

    name = "helm"
    reads_yaml = True

    def accepts_name(self, name: str) -> bool | None:
        return None if name.endswith(YAML_SUFFIXES) else False

    def accepts(self, source: SourceFile) -> bool:
        if source.name in KUSTOMIZATION_NAMES:
            return True
        return source.name.endswith(YAML_SUFFIXES) and is_values_file(source)

    def scan(self, source: SourceFile) -> Iterator[ScanItem]:
        if source.name in KUSTOMIZATION_NAMES:
            if source.mentions_vllm():
                yield from self._kustomization(source)
            return
        if not source.mentions_vllm():
            if is_values_name(source.name):
                yield from self._override(source)
            return
        try:
            text, templated, docs = _read_values(source)
        except YamlProblem as exc:
            yield Skipped(source.relpath, str(exc), configures_vllm=True, line=exc.line, column=exc.column)
            return
        override = is_values_name(source.name) and source.name not in ("values.yaml", "values.yml")
        chart = source.relpath.rpartition("/")[0]
        for doc in docs:
            if scalar(get(doc, "apiVersion")) is not None and scalar(get(doc, "kind")) is not None:
                continue
            facts = list(values_facts(text, doc, source.relpath))
            if override and isinstance(doc, yaml.MappingNode) and not any(f.kind == FactKind.IMAGE for f in facts):
                # an override that names vLLM (a VLLM_ env var) but no image: its args and env
                # count where this directory's chart runs vLLM, as for one that names nothing
                extra = list(override_facts(text, doc, source.relpath))
                placed = {(f.kind, f.name, f.location.line, f.location.column) for f in extra}
                facts = [f for f in facts if (f.kind, f.name, f.location.line, f.location.column) not in placed]
                if extra:
                    yield Conditional(HELM_IMAGE_KEY + chart, tuple(untemplated(iter(extra)) if templated else extra))
                if override_tag(doc) is not None:
                    yield FileReference(chart_values_path(chart), self.name)
            yield from untemplated(iter(facts)) if templated else facts
            if any(f.kind == FactKind.IMAGE for f in facts):  # the chart's templates run it
                yield Reference(HELM_IMAGE_KEY + chart)

    def _override(self, source: SourceFile) -> Iterator[ScanItem]:
        """A values override naming no vLLM: its facts count where this directory's chart
        values run a vLLM image (``Reference(HELM_IMAGE_KEY + dir)``)."""
        try:
            text, templated, docs = _read_values(source)
        except YamlProblem:
            return  # not known to configure vLLM: nothing to report
        chart = source.relpath.rpartition("/")[0]
        for doc in docs:
            if not isinstance(doc, yaml.MappingNode) or scalar(get(doc, "kind")) is not None:
                continue
            facts = list(override_facts(text, doc, source.relpath))
            if facts:
                facts = list(untemplated(iter(facts))) if templated else facts
                yield Conditional(HELM_IMAGE_KEY + chart, tuple(facts))
            if override_tag(doc) is not None:  # its tag is the chart's image's: read with the chart
                yield FileReference(chart_values_path(chart), self.name)

    def _kustomization(self, source: SourceFile) -> Iterator[Fact | Skipped | Reference]:
        try:
            docs = documents(source.text)
        except YamlProblem as exc:
            yield Skipped(source.relpath, str(exc), configures_vllm=True, line=exc.line, column=exc.column)
            return
        for doc in docs:
            yield from kustomize_image_facts(source.text, doc, source.relpath)
            yield from (Reference(MAPPED_IMAGE_KEY + name) for name in mapped_to_vllm(doc))
