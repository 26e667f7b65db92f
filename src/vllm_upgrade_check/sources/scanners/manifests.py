"""YAML deployment manifests: docker-compose files and Kubernetes objects (multi-document).

Both describe containers: an image, an entry point (compose ``entrypoint`` / Kubernetes
``command``), its arguments (compose ``command`` / Kubernetes ``args``) and an environment;
one container is read by :mod:`.containers`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence

import yaml

from vllm_upgrade_check.model.evolve import evolve
from vllm_upgrade_check.model.facts import Fact, FactKind, Skipped, Span
from vllm_upgrade_check.parsing.yamlnodes import YamlProblem, documents, get, items, mapping_items, scalar
from vllm_upgrade_check.sources.scanners.base import (
    Conditional,
    FileReference,
    Reference,
    ScanItem,
    Scanner,
    SourceFile,
    shared_words,
)
from vllm_upgrade_check.sources.scanners.compose_env import project_dotenv_path, read_dotenv
from vllm_upgrade_check.sources.scanners.compose_merge import (
    OVERRIDE_NAMES,
    Layer,
    compose_links,
    env_file_links,
    is_compose_project,
)
from vllm_upgrade_check.sources.scanners.compose_project import compose_file_facts
from vllm_upgrade_check.sources.scanners.containers import container_env, container_facts
from vllm_upgrade_check.sources.scanners.envfiles import SystemdScanner
from vllm_upgrade_check.sources.scanners.helm_images import MAPPED_IMAGE_KEY
from vllm_upgrade_check.sources.scanners.images import is_vllm_image, split_image
from vllm_upgrade_check.sources.scanners.kserve import predictor_items, runtime_references
from vllm_upgrade_check.sources.scanners.kustomize import KUSTOMIZATION_NAMES, kustomization_items
from vllm_upgrade_check.sources.scanners.kustomize_containers import container_op_facts
from vllm_upgrade_check.sources.scanners.kustomize_images import container_references
from vllm_upgrade_check.sources.scanners.kustomize_ops import valueless_ops
from vllm_upgrade_check.sources.scanners.owners import launchers_only, read_by
from vllm_upgrade_check.sources.scanners.templates import (
    PLACEHOLDER,
    has_template_actions,
    is_templated,
    neutralise_templates,
)
from vllm_upgrade_check.sources.scanners.yamlenv import env_facts, key_env_fact

YAML_SUFFIXES = (".yaml", ".yml")

HELM_IMAGE_KEY = "helm-chart-vllm-image:"
"""Links a chart's templates to its values: facts of a template container whose image is
``{{ .Values... }}`` count when a values file in the chart directory names a vLLM image."""

MAX_CONTAINERS = 10_000
"""Containers read from one document at most (bounds what an alias bomb can produce)."""


def _containers(node: yaml.Node) -> Iterator[yaml.Node]:
    """Every container mapping under ``node``; each node is visited once, so aliases
    (even an alias bomb) cost no more than the text they are written in."""
    stack = [node]
    visited: set[int] = set()
    found = 0
    while stack and len(visited) < 100_000 and found < MAX_CONTAINERS:
        current = stack.pop()
        if id(current) in visited:
            continue
        visited.add(id(current))
        if isinstance(current, yaml.MappingNode):
            for key, _k, value in mapping_items(current):
                if key in ("containers", "initContainers", "ephemeralContainers") and isinstance(
                    value, yaml.SequenceNode
                ):
                    for container in items(value):
                        if isinstance(container, yaml.MappingNode) and id(container) not in visited:
                            visited.add(id(container))
                            found += 1
                            yield container
                else:
                    stack.append(value)
        elif isinstance(current, yaml.SequenceNode):
            stack.extend(items(current))


def chart_of(relpath: str) -> str | None:
    """The chart directory of a Helm template (``charts/llm`` for ``charts/llm/templates/x.yaml``,
    ``""`` for ``templates/x.yaml``), or ``None`` when the file is in no ``templates/`` folder."""
    parts = relpath.split("/")[:-1]
    if "templates" not in parts:
        return None
    index = len(parts) - 1 - parts[::-1].index("templates")
    return "/".join(parts[:index])


def _values_image(node: yaml.Node | None) -> bool:
    """Whether a container's ``image`` is nothing but template actions (neutralised), as in
    ``"{{ .Values.image.repository }}:{{ .Values.image.tag }}"``."""
    value = scalar(node)
    return bool(value) and is_templated(value) and not re.sub(rf"[{PLACEHOLDER}:@\s]", "", value or "")


def kubernetes_facts(
    text: str,
    doc: yaml.Node,
    path: str,
    scanner: str,
    chart_image: list[Fact] | None = None,
    mapped: dict[str, list[Fact]] | None = None,
) -> Iterator[Fact]:
    """Facts of a Kubernetes object: every container's image, command/args and env. With
    ``chart_image`` (a Helm template's), the facts of a container whose image is only
    template actions go there instead: they count when the chart's values name a vLLM image.
    With ``mapped``, a container whose image is no vLLM image and that launches nothing has
    its command and args read as vLLM's image would run them, by image repository: they
    count where a kustomization maps that repository to vLLM's image (:data:`MAPPED_IMAGE_KEY`)."""
    facts: list[Fact] = []
    others: list[tuple[Span, str]] = []
    for container in _containers(doc):
        env = container_env(get(container, "env"))
        command, args = get(container, "command"), get(container, "args")
        words = [command, args]
        image_node = get(container, "image")
        if chart_image is not None and _values_image(image_node):
            chart_image.extend(container_facts(text, path, scanner, image_node, command, args, env, assume_vllm=True))
            chart_image.extend(env_facts(text, get(container, "env"), path, scanner))
            continue
        found = list(container_facts(text, path, scanner, image_node, command, args, env))
        who = f"container {scalar(get(container, 'name')) or '?'}"
        if not any(f.kind == FactKind.LAUNCH for f in found):
            others.extend(read_by(words, who))
            repo = _plain_repository(image_node)
            if mapped is not None and repo is not None and (command is not None or args is not None):
                as_vllm = list(container_facts(text, path, scanner, image_node, command, args, env, assume_vllm=True))
                if any(f.kind == FactKind.LAUNCH for f in as_vllm):
                    as_vllm.extend(env_facts(text, get(container, "env"), path, scanner))
                    mapped.setdefault(repo, []).extend(evolve(f, owner=who) for f in as_vllm)
        found.extend(env_facts(text, get(container, "env"), path, scanner))
        facts.extend(evolve(f, owner=who) for f in found)
    yield from shared_words(launchers_only(facts), others)


def _plain_repository(node: yaml.Node | None) -> str | None:
    """The repository of a container's ``image`` when it is written out and is no vLLM image
    (what a kustomization's ``images:`` entry may name), else ``None``."""
    image = (scalar(node) or "").strip()
    if not image or "$" in image or is_templated(image) or is_vllm_image(image):
        return None
    return split_image(image)[0]


def is_compose(doc: yaml.Node) -> bool:
    """A compose document has a ``services`` mapping."""
    return isinstance(get(doc, "services"), yaml.MappingNode)


def is_kubernetes(doc: yaml.Node) -> bool:
    """A Kubernetes object has ``apiVersion`` and ``kind``."""
    return scalar(get(doc, "apiVersion")) is not None and scalar(get(doc, "kind")) is not None


def untemplated(facts: Iterator[Fact]) -> Iterator[Fact]:
    """Facts of a neutralised template (see :mod:`.templates`): none from inside an action.

    A flag or name written inside ``{{ ... }}`` is dropped; a value written there becomes
    ``None`` with ``resolved=False`` (only Helm knows it).
    """
    for fact in facts:
        if is_templated(fact.raw) or is_templated(fact.name):
            continue
        if fact.kind == FactKind.MODEL and is_templated(fact.value):
            continue
        if is_templated(fact.value):
            fact = evolve(fact, value=None, resolved=False)
        yield fact


def _config_maps(doc: yaml.Node) -> Iterator[tuple[str, yaml.Node]]:
    if scalar(get(doc, "kind")) == "ConfigMap":
        name = scalar(get(get(doc, "metadata"), "name"))
        if name:
            yield name, doc


def _env_from_refs(doc: yaml.Node) -> Iterator[str]:
    for container in _containers(doc):
        for source in items(get(container, "envFrom")):
            name = scalar(get(get(source, "configMapRef"), "name"))
            if name:
                yield name


CONFIG_MAP_KEY = "configmap:"
"""Prefix of the :class:`~.base.Conditional` key of a Kubernetes ConfigMap (``configmap:NAME``)."""


def config_map_env_facts(text: str, config_map: yaml.Node, path: str, scanner: str) -> Iterator[Fact]:
    """``env_var`` facts of a ConfigMap's ``data`` keys (each at its key's line)."""
    for key, key_node, value_node in mapping_items(get(config_map, "data")):
        yield key_env_fact(text, key, key_node, scalar(value_node), path, scanner, origin="configmap")


_JSON6902 = re.compile(
    r"""["']?\bop["']?\s*:.*?["']?/(?:spec/)?\S*?(?:(?:args|command|image)\b|containers(?:/(?:-|\d+))?(?![\w/-]))""", re.S
)


def json6902_like(text: str) -> bool:
    """Whether ``text`` reads like JSON 6902 operations on a container's or predictor's
    ``args``, ``command`` or ``image``, or on a pod's containers (an ``op:`` key, then a path
    ending in one of them), which a
    kustomization applies to a launch whether or not the file names vLLM."""
    words = ("args", "command", "image", "containers")
    return "op" in text and any(w in text for w in words) and _JSON6902.search(text) is not None


class ManifestScanner(Scanner):
    """docker-compose files and Kubernetes manifests (``*.yaml``/``*.yml`` that mention vLLM).

    Helm templates are read after their ``{{ ... }}`` actions are neutralised (see
    :mod:`.templates`). A ConfigMap's ``data`` keys are ``env_var`` facts when a container's
    ``envFrom.configMapRef`` names it, in whichever scanned file either side is: each
    ConfigMap is yielded as a :class:`~.base.Conditional` and each ``envFrom`` name as a
    :class:`~.base.Reference`, which the engine joins.
    """

    name = "manifest"
    reads_yaml = True

    def accepts(self, source: SourceFile) -> bool:
        return source.name.endswith(YAML_SUFFIXES)

    def accepts_name(self, name: str) -> bool | None:
        return name.endswith(YAML_SUFFIXES)

    def scan(self, source: SourceFile) -> Iterator[ScanItem]:
        yield from self._read(source, None)

    def referenced_file_matches(self, relpath: str, wanted: str) -> bool:
        """A kustomization names its patch files by their path (joined to its folder)."""
        return relpath == wanted

    def read_referenced(self, source: SourceFile) -> Iterator[Fact | Skipped | FileReference]:
        """A patch file a kustomization names that no scanner reads by its name (``p.json``):
        only why it cannot be read, when it is a JSON 6902 patch of args or a command that
        is no YAML (kustomize reads JSON as YAML) or writes a null arg
        (:func:`~.kustomize.valueless_ops`); its words come through the kustomization."""
        if not source.name.endswith(YAML_SUFFIXES) and json6902_like(source.text):
            try:
                documents(source.text)
            except YamlProblem as exc:
                yield Skipped(source.relpath, str(exc), configures_vllm=True, line=exc.line, column=exc.column)
                return
            yield from valueless_ops(source)
            yield from container_op_facts(source)

    def with_referenced(
        self, source: SourceFile, files: Sequence[str], read: Callable[[str], SourceFile | None]
    ) -> list[Fact | Conditional] | None:
        """A compose file read again with the base images of its services' Dockerfiles, its
        project's ``.env`` and the files it is merged with (:mod:`.compose_project`); a
        kustomization with the patch files it names."""
        names = set(files)
        return [item for item in self._read(source, read, names.__contains__) if isinstance(item, (Fact, Conditional))]

    def _read(
        self,
        source: SourceFile,
        read: Callable[[str], SourceFile | None] | None,
        exists: Callable[[str], bool] | None = None,
    ) -> Iterator[ScanItem]:
        if source.name in KUSTOMIZATION_NAMES and ("patch" in source.text or "images" in source.text):
            yield from kustomization_items(source, read)
        lower = source.text.lower()
        builds = "services" in lower and "build" in lower
        chart = chart_of(source.relpath)
        values = chart is not None and ".Values." in source.text
        kserve = "inferenceservice" in lower
        patch = json6902_like(lower)  # words a kustomization applies: no YAML is no silence
        composed = ("services" in lower or "include" in lower) and (
            source.name in OVERRIDE_NAMES or "extends" in lower or "include" in lower
        )
        # a container of another image, which a kustomization's images: may map to vLLM's
        mappable = "containers" in lower and ("args" in lower or "command" in lower)
        unread = not (
            "configmap" in lower or source.mentions_vllm() or builds or values or kserve or patch or composed
        )
        if unread and not mappable:
            return
        text = source.text
        templated = has_template_actions(text)
        if templated:
            text = neutralise_templates(text)
        try:
            docs = list(documents(text))
        except YamlProblem as exc:
            if source.mentions_vllm() or patch:
                yield Skipped(source.relpath, str(exc), configures_vllm=True, line=exc.line, column=exc.column)
            return
        if patch and read is None and not templated:
            yield from valueless_ops(source)
        if patch and not templated:
            yield from container_op_facts(source)
        facts: list[Fact] = []
        links: list[Conditional | Reference | FileReference] = []
        for doc in docs:
            if is_compose_project(doc):
                dotenv = read_dotenv(source.relpath, read) if read is not None and "$" in text else None
                layer = Layer(source.relpath, text, doc)
                facts.extend(compose_file_facts(layer, read, dotenv, source.mentions_vllm(), exists))
                links.extend(FileReference(rel, self.name) for rel in compose_links(doc, source.relpath))
                for rel, required, line in env_file_links(doc, source.relpath):  # read as dotenv files
                    links.append(FileReference(rel, SystemdScanner.name, source.relpath if required else "", line, "env_file"))
                if "$" in text:  # read again with the project's .env (compose interpolates it)
                    links.append(FileReference(project_dotenv_path(source.relpath), self.name))
            elif is_kubernetes(doc):
                chart_image: list[Fact] | None = [] if values and templated else None
                mapped: dict[str, list[Fact]] = {}
                pod_facts = list(kubernetes_facts(text, doc, source.relpath, "kubernetes", chart_image, mapped))
                links.extend(Conditional(MAPPED_IMAGE_KEY + repo, tuple(found)) for repo, found in mapped.items())
                links.extend(runtime_references(doc, pod_facts))
                links.extend(container_references(doc, pod_facts))
                facts.extend(pod_facts)
                if chart_image:
                    links.append(Conditional(HELM_IMAGE_KEY + (chart or ""), tuple(untemplated(iter(chart_image)))))
                for item in predictor_items(text, doc, source.relpath, "kserve"):
                    if isinstance(item, Fact):
                        facts.append(item)
                    else:
                        links.append(item)
                for name, node in _config_maps(doc):
                    env = config_map_env_facts(text, node, source.relpath, "kubernetes")
                    found = tuple(untemplated(env) if templated else env)
                    links.append(Conditional(CONFIG_MAP_KEY + name, found))
                links.extend(Reference(CONFIG_MAP_KEY + name) for name in _env_from_refs(doc))
        if unread:  # read only for the containers a kustomization may map to vLLM's image
            yield from (c for c in links if isinstance(c, Conditional) and c.key.startswith(MAPPED_IMAGE_KEY))
            return
        yield from untemplated(iter(facts)) if templated else facts
        yield from links
