"""KServe ``InferenceService`` predictors whose model runs on vLLM.

A KServe ``InferenceService`` may give its model no container at all, only
``spec.predictor.model: {modelFormat: {name: huggingface}, args: [...]}``; the Hugging Face
serving runtime (``kserve/huggingfaceserver``) runs vLLM by default and hands the args it
does not know itself to vLLM's own argument parser. ``ServingRuntime`` objects list ordinary
``containers`` and are read by :mod:`vllm_upgrade_check.sources.scanners.manifests` like any pod.

An ``InferenceService`` whose ``runtime`` (or ``modelFormat``) names a runtime of another
name runs vLLM when that runtime does: KServe appends the predictor's ``args`` to the
runtime container's own. Its facts are yielded as a :class:`~.base.Conditional` on the
runtime's name (or the formats it lists as ``supportedModelFormats``), which a
``ServingRuntime``/``ClusterServingRuntime`` whose container launches vLLM refers to
(:func:`runtime_references`). A patch of an ``InferenceService`` (a kustomize overlay's,
naming neither) counts when the ``InferenceService`` of its name runs vLLM.

Source: KServe's ``python/huggingfaceserver/huggingfaceserver/__main__.py`` (its parser
extends vLLM's ``AsyncEngineArgs.add_cli_args``) and ``kserve/model_server.py`` (the flags
every KServe model server takes).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

import yaml

from vllm_upgrade_check.model.facts import Fact, FactKind
from vllm_upgrade_check.parsing.words import Token
from vllm_upgrade_check.parsing.yamlnodes import get, items, scalar
from vllm_upgrade_check.parsing.yamlwords import sequence_words
from vllm_upgrade_check.sources.scanners.arg_facts import arg_facts
from vllm_upgrade_check.sources.scanners.base import APPENDED, Conditional, Reference
from vllm_upgrade_check.sources.scanners.yamlenv import env_facts

KSERVE_OWN_FLAGS = frozenset(
    """model_name model_id model_dir model_revision tokenizer_revision max_length
    disable_lower_case disable_special_tokens tensor_input_names task return_token_type_ids
    return_probabilities backend http_port grpc_port workers max_threads max_asyncio_workers
    enable_grpc enable_docs_url enable_latency_logging configure_logging log_config_file
    access_log_format predictor_host predictor_protocol predictor_use_ssl
    predictor_request_timeout_seconds""".split()
)
"""Flags the KServe Hugging Face server reads itself (never passed to vLLM)."""

HF_FORMATS = frozenset({"huggingface"})
"""``modelFormat.name`` values served by the Hugging Face runtime (vLLM backend)."""


def _runs_vllm(model: yaml.Node) -> bool:
    fmt = scalar(get(get(model, "modelFormat"), "name"))
    runtime = (scalar(get(model, "runtime")) or "").lower()
    if "vllm" in runtime:
        return True
    if (fmt or "").lower() not in HF_FORMATS:
        return False
    for child in items(get(model, "args")):
        text = (scalar(child) or "").replace("_", "-")
        if text.startswith("--backend") and "vllm" not in text and text != "--backend":
            return False
    return True


RUNTIME_KEY = "kserve-runtime:"
"""Prefix of the :class:`~.base.Conditional` key of the predictors a named runtime serves."""
FORMAT_KEY = "kserve-format:"
"""Prefix of the key of the predictors that name only a model format a runtime supports."""
SERVICE_KEY = "kserve-isvc:"
"""Prefix of the key of the patches of a named ``InferenceService``."""

RUNTIME_KINDS = frozenset({"ServingRuntime", "ClusterServingRuntime"})

SERVED_CONTAINER = "kserve-container"
"""The runtime container KServe merges a predictor's ``args`` into (else the first container)."""

HF_ENTRY = "kserve huggingfaceserver"
"""Entry point of the launch of a predictor the Hugging Face runtime serves with vLLM."""


def predictor_items(text: str, doc: yaml.Node, path: str, scanner: str) -> Iterator[Fact | Conditional | Reference]:
    """The facts of an ``InferenceService``'s predictor (:func:`predictor_facts`): its own
    when it runs vLLM by itself (the Hugging Face runtime, a runtime named ``*vllm*``), else
    a :class:`~.base.Conditional` on the runtime (or model format) it names, or for a patch
    naming neither, on the ``InferenceService`` it patches; with a :class:`~.base.Reference`
    (or ``refers``) that makes the patches of this ``InferenceService`` count.

    The predictor's launch is an :data:`~.base.APPENDED` one: once the runtime it names (or
    one supporting its format) is a scanned vLLM runtime, it is merged into that runtime's
    launch (and replaces the launch a predictor that runs vLLM by itself has of its own).
    """
    if scalar(get(doc, "kind")) != "InferenceService":
        return
    model = get(get(get(doc, "spec"), "predictor"), "model")
    if model is None:
        return
    service = SERVICE_KEY + (scalar(get(get(doc, "metadata"), "name")) or "")
    runtime = scalar(get(model, "runtime"))
    fmt = scalar(get(get(model, "modelFormat"), "name"))
    key = RUNTIME_KEY + runtime if runtime else FORMAT_KEY + fmt.lower() if fmt else None
    facts = tuple(predictor_facts(text, model, path, scanner))
    if _runs_vllm(model):
        entry = f"kserve runtime {runtime}" if runtime else HF_ENTRY
        own = [replace(f, name=entry, raw=entry) if f.kind == FactKind.LAUNCH else f for f in facts]
        yield from own
        yield Reference(service)
        if key is not None:  # a scanned runtime of that name (or format) runs it: its launch
            yield Conditional(key, tuple(f for f in facts if f.kind == FactKind.LAUNCH), refers=(service,))
        return
    if key is not None:
        yield Conditional(key, facts, refers=(service,))
    elif facts:
        yield Conditional(service, facts)


def runtime_references(doc: yaml.Node, facts: list[Fact]) -> Iterator[Reference]:
    """For a ``ServingRuntime``/``ClusterServingRuntime`` whose containers launch vLLM
    (``facts``: its containers' facts), the references that make the predictors it serves
    count: its name, and each ``supportedModelFormats`` name."""
    if scalar(get(doc, "kind")) not in RUNTIME_KINDS or not any(f.kind == FactKind.LAUNCH for f in facts):
        return
    launches = [f for f in facts if f.kind == FactKind.LAUNCH]
    # KServe merges the predictor into the runtime container named kserve-container (else the first)
    served = next((f for f in launches if f.owner == f"container {SERVED_CONTAINER}"), launches[0])
    group = served.group or ""
    name = scalar(get(get(doc, "metadata"), "name"))
    if name:
        yield Reference(RUNTIME_KEY + name, launch=group, template=True)
    for fmt in items(get(get(doc, "spec"), "supportedModelFormats")):
        fmt_name = scalar(get(fmt, "name"))
        if fmt_name:
            yield Reference(FORMAT_KEY + fmt_name.lower(), launch=group, template=True)


def predictor_facts(text: str, model: yaml.Node, path: str, scanner: str, entry: str = APPENDED) -> Iterator[Fact]:
    """``arg``, ``launch`` and ``env_var`` facts of an ``InferenceService``'s
    ``spec.predictor.model`` read as vLLM's, the launch placed at ``model``'s first key.

    ``entry``: :data:`HF_ENTRY` when the predictor runs vLLM by itself; else
    :data:`~.base.APPENDED` (words KServe appends to its runtime container's args, merged
    into that launch once the runtime is known; their first positional is the model a
    ``vllm serve`` runtime serves). Args that are KServe's own (:data:`KSERVE_OWN_FLAGS`)
    are left out, and so is the value after ``--backend``; ``--model_id`` becomes a
    ``model`` fact.
    """
    tokens = sequence_words(text, get(model, "args"))
    mark = model.start_mark
    start = Token(entry, mark.line + 1, mark.column + 1)
    positional = entry == APPENDED
    model_id: str | None = None
    for fact in arg_facts(tokens, path, scanner, positional_model=positional, entry=entry, start=start, syntax="yaml"):
        if fact.kind == FactKind.LAUNCH:
            names = {n for n in fact.args if n not in KSERVE_OWN_FLAGS} | ({"model"} if model_id else set())
            yield replace(fact, args=frozenset(names), model=fact.model or model_id)
            continue
        if fact.kind == FactKind.ARG and fact.name in KSERVE_OWN_FLAGS:
            if fact.name == "model_id" and fact.value:
                model_id = fact.value
                yield Fact(
                    FactKind.MODEL, fact.value, fact.location, fact.value, fact.value, scanner=scanner, group=fact.group
                )
            continue
        yield fact
    yield from env_facts(text, get(model, "env"), path, scanner)
