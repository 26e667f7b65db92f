"""Serving frameworks that hand vLLM its engine args in their own config files.

- **Ray Serve LLM** (``ray.serve.llm``) YAML: ``applications[].args.llm_configs[]`` (or a
  file holding one LLM config at its top level). ``engine_kwargs`` keys are vLLM engine
  args (``arg`` facts, origin ``config``); ``model_loading_config.model_source`` (else
  ``model_id``) is the model; ``runtime_env.env_vars`` of the LLM config and of the
  application are ``env_var`` facts. Source: Ray's ``LLMConfig`` (``ray/llm/_internal/serve/
  configs/server_models.py``), whose ``engine_kwargs`` go to vLLM's ``AsyncEngineArgs``.
- **Triton Inference Server vLLM backend**: ``model.json`` in a model repository holds
  ``AsyncEngineArgs`` keyword arguments as a JSON object (``triton-inference-server/
  vllm_backend``, ``src/model.py``); each key is an ``arg`` fact, origin ``config``.
- **SkyPilot** task YAML: ``setup`` and ``run`` are shell scripts (read with the shell
  helpers, positions mapped into the YAML), ``envs`` are their variables and ``env_var``
  facts, ``resources.image_id: docker:IMAGE`` is the container image.

Python launchers (``LLMConfig(engine_kwargs=...)``, Modal apps) are Python source and are
read by the Python scanner.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

import yaml

from vllm_upgrade_check.model.facts import Fact, FactKind, Location, Skipped, Span
from vllm_upgrade_check.parsing.shell import Token
from vllm_upgrade_check.parsing.yamlnodes import (
    YamlProblem,
    documents,
    get,
    items,
    mapping_items,
    pos,
    scalar,
)
from vllm_upgrade_check.parsing.yamlwords import entry_cuts
from vllm_upgrade_check.sources.scanners.arg_facts import env_fact
from vllm_upgrade_check.sources.scanners.base import Scanner, SourceFile
from vllm_upgrade_check.sources.scanners.containers import scalar_relocator
from vllm_upgrade_check.sources.scanners.images import image_fact, image_hint, is_vllm_image
from vllm_upgrade_check.sources.scanners.manifests import YAML_SUFFIXES
from vllm_upgrade_check.sources.scanners.shell import Relocate, shell_facts
from vllm_upgrade_check.sources.scanners.vllm_config import config_arg_fact, entry_spans

SKYPILOT_KEYS = frozenset({"resources", "envs", "num_nodes", "file_mounts", "workdir", "service", "secrets"})
"""Top-level keys of a SkyPilot task besides ``setup``/``run`` (one of them marks a task)."""


def _launch(names: set[str], entry: str, path: str, line: int, column: int, scanner: str) -> Fact:
    return Fact(
        FactKind.LAUNCH,
        entry,
        Location(path, line, column),
        raw=entry,
        origin="config",
        args=frozenset(names),
        scanner=scanner,
    )


def _env_map(node: yaml.Node | None, path: str, scanner: str) -> Iterator[Fact]:
    for key, key_node, value_node in mapping_items(node):
        p = pos(key_node)
        yield env_fact(key, scalar(value_node), path, p.line, p.column, scanner)


# --- Ray Serve LLM ---------------------------------------------------------------------------


def llm_config_facts(text: str, config: yaml.Node, path: str) -> Iterator[Fact]:
    """Facts of one Ray Serve ``LLMConfig`` mapping."""
    scanner = "ray-serve"
    loading = get(config, "model_loading_config")
    model_node = get(loading, "model_source") or get(loading, "model_id")
    model = scalar(model_node)
    names: set[str] = set()
    if model and model_node is not None:
        p = pos(model_node)
        yield Fact(FactKind.MODEL, model, Location(path, p.line, p.column), model, model, scanner=scanner)
        names.add("model")
    kwargs = get(config, "engine_kwargs")
    cuts = entry_cuts(text, kwargs)
    for key, key_node, value_node in mapping_items(kwargs):
        p = pos(key_node)
        spans = entry_spans(text, key_node, value_node, cuts)
        fact = config_arg_fact(key, scalar(value_node), path, p.line, p.column, scanner, spans=spans)
        names.add(fact.name)
        yield fact
    yield from _env_map(get(get(config, "runtime_env"), "env_vars"), path, scanner)
    p = pos(config)
    yield _launch(names, "ray serve llm", path, p.line, p.column, scanner)


def ray_serve_facts(text: str, doc: yaml.Node, path: str) -> Iterator[Fact]:
    """Facts of a Serve config (``applications``) or of a file holding one LLM config."""
    if get(doc, "engine_kwargs") is not None and get(doc, "model_loading_config") is not None:
        yield from llm_config_facts(text, doc, path)
        return
    for app in items(get(doc, "applications")):
        configs = items(get(get(app, "args"), "llm_configs"))
        if not configs:
            continue
        yield from _env_map(get(get(app, "runtime_env"), "env_vars"), path, "ray-serve")
        for config in configs:
            if isinstance(config, yaml.MappingNode):
                yield from llm_config_facts(text, config, path)


# --- SkyPilot --------------------------------------------------------------------------------


def is_skypilot(doc: yaml.Node) -> bool:
    """A SkyPilot task: ``run`` or ``setup`` text and one of :data:`SKYPILOT_KEYS`."""
    keys = {k for k, _kn, _v in mapping_items(doc)}
    return bool(keys & {"run", "setup"}) and bool(keys & SKYPILOT_KEYS)


def skypilot_facts(text: str, doc: yaml.Node, path: str) -> Iterator[Fact]:
    """Facts of a SkyPilot task: image, ``envs``, and the ``setup``/``run`` scripts."""
    scanner = "skypilot"
    hint = None
    image_node = get(get(doc, "resources"), "image_id")
    image = scalar(image_node) or ""
    if image.startswith("docker:") and image_node is not None and is_vllm_image(image[7:]):
        p = pos(image_node)
        quoted = 1 if getattr(image_node, "style", None) in ("'", '"') else 0
        token = Token(image[7:], p.line, p.column + quoted + 7, True, image[7:])
        yield image_fact(token, path, scanner)
        hint = image_hint(image[7:], path, p.line)
    variables: dict[str, list[Token]] = {}
    for key, key_node, value_node in mapping_items(get(doc, "envs")):
        value = scalar(value_node)
        p = pos(key_node)
        yield env_fact(key, value, path, p.line, p.column, scanner)
        if value is not None:
            v = pos(value_node)
            variables[key] = [Token(value, v.line, v.column, True, value)]
    placed = {(t.line, t.column) for tokens in variables.values() for t in tokens}
    for key in ("setup", "run"):
        node = get(doc, key)
        script = scalar(node)
        if node is None or not script:
            continue
        inner = scalar_relocator(text, node)

        def move(token: Token, inner: Relocate = inner) -> Token:
            # a word taken from ``envs`` is already placed at its value
            return (
                token
                if (token.line, token.column) in placed and not token.written.startswith("$")
                else inner(token)
            )

        facts, _ = shell_facts(script, path, scanner, variables=dict(variables), hint=hint, relocate=move)
        yield from facts


# --- Triton vLLM backend ---------------------------------------------------------------------


def triton_model_json_facts(text: str, data: dict[str, object], path: str) -> Iterator[Fact]:
    """``arg`` facts of a Triton vLLM backend ``model.json`` (top-level keys, in order).

    The JSON is also read as YAML nodes (JSON is YAML) for where each key and value is
    written, so a fix can remove a key with its comma; when that reading fails the facts
    are placed by searching for the keys, without spans."""
    scanner = "triton"
    cursor = 0
    names: set[str] = set()
    nodes: dict[str, tuple[yaml.Node, yaml.Node]] = {}
    cuts: dict[int, Span | None] = {}
    try:
        (doc,) = documents(text)
        if isinstance(doc, yaml.MappingNode):
            nodes = {scalar(k) or "": (k, v) for k, v in doc.value}
            cuts = entry_cuts(text, doc)
    except (YamlProblem, ValueError):
        nodes = {}
    for key, value in data.items():
        match = re.compile(re.escape(json.dumps(key)) + r"\s*:").search(text, cursor)
        if match is None:
            continue
        cursor = match.end()
        line = text.count("\n", 0, match.start()) + 1
        column = match.start() - (text.rfind("\n", 0, match.start()) + 1) + 2
        written = value if isinstance(value, str) else json.dumps(value)
        if key == "model" and isinstance(value, str):
            yield Fact(FactKind.MODEL, value, Location(path, line, column), value, value, scanner=scanner)
        found = nodes.get(key)
        spans = entry_spans(text, found[0], found[1], cuts, syntax="json") if found else None
        fact = config_arg_fact(key, written, path, line, column, scanner, spans=spans)
        names.add(fact.name)
        yield fact
    yield _launch(names, "triton vllm backend", path, 1, 1, scanner)


class ServingConfigScanner(Scanner):
    """Ray Serve LLM YAML, SkyPilot task YAML and Triton vLLM backend ``model.json``."""

    name = "serving"
    reads_yaml = True

    def accepts_name(self, name: str) -> bool | None:
        return name.endswith(YAML_SUFFIXES) or name == "model.json"

    def accepts(self, source: SourceFile) -> bool:
        return source.name.endswith(YAML_SUFFIXES) or source.name == "model.json"

    def scan(self, source: SourceFile) -> Iterator[Fact | Skipped]:
        if source.name == "model.json":
            yield from self._triton(source)
            return
        text = source.text
        if not source.mentions_vllm() and "engine_kwargs" not in text:
            return
        try:
            docs = documents(text)
        except YamlProblem:
            return  # the manifest scanner reports YAML that cannot be read
        for doc in docs:
            if scalar(get(doc, "apiVersion")) is not None and scalar(get(doc, "kind")) is not None:
                continue
            yield from ray_serve_facts(text, doc, source.relpath)
            if is_skypilot(doc):
                yield from skypilot_facts(text, doc, source.relpath)

    def _triton(self, source: SourceFile) -> Iterator[Fact | Skipped]:
        try:
            data = json.loads(source.text)
        except ValueError as exc:
            yield Skipped(
                source.relpath, f"JSON error: {exc}", configures_vllm=True, line=getattr(exc, "lineno", None)
            )
            return
        if isinstance(data, dict) and isinstance(data.get("model"), str):
            yield from triton_model_json_facts(source.text, data, source.relpath)
