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

import yaml

from vllm_upgrade_check.model.facts import Fact, FactKind
from vllm_upgrade_check.parsing.yamlnodes import get, items, scalar
from vllm_upgrade_check.parsing.yamlwords import sequence_words
from vllm_upgrade_check.sources.scanners.arg_facts import arg_facts
from vllm_upgrade_check.sources.scanners.base import Conditional, Reference
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


def predictor_items(text: str, doc: yaml.Node, path: str, scanner: str) -> Iterator[Fact | Conditional | Reference]:
    """The facts of an ``InferenceService``'s predictor (:func:`predictor_facts`): its own
    when it runs vLLM by itself (the Hugging Face runtime, a runtime named ``*vllm*``), else
    a :class:`~.base.Conditional` on the runtime (or model format) it names, or for a patch
    naming neither, on the ``InferenceService`` it patches; with a :class:`~.base.Reference`
    (or ``refers``) that makes the patches of this ``InferenceService`` count."""
    if scalar(get(doc, "kind")) != "InferenceService":
        return
    model = get(get(get(doc, "spec"), "predictor"), "model")
    if model is None:
        return
    service = SERVICE_KEY + (scalar(get(get(doc, "metadata"), "name")) or "")
    facts = tuple(predictor_facts(text, model, path, scanner))
    if _runs_vllm(model):
        yield from facts
        yield Reference(service)
        return
    runtime = scalar(get(model, "runtime"))
    fmt = scalar(get(get(model, "modelFormat"), "name"))
    if runtime:
        yield Conditional(RUNTIME_KEY + runtime, facts, refers=(service,))
    elif fmt:
        yield Conditional(FORMAT_KEY + fmt.lower(), facts, refers=(service,))
    elif facts:
        yield Conditional(service, facts)


def runtime_references(doc: yaml.Node, facts: list[Fact]) -> Iterator[Reference]:
    """For a ``ServingRuntime``/``ClusterServingRuntime`` whose containers launch vLLM
    (``facts``: its containers' facts), the references that make the predictors it serves
    count: its name, and each ``supportedModelFormats`` name."""
    if scalar(get(doc, "kind")) not in RUNTIME_KINDS or not any(f.kind == FactKind.LAUNCH for f in facts):
        return
    name = scalar(get(get(doc, "metadata"), "name"))
    if name:
        yield Reference(RUNTIME_KEY + name)
    for fmt in items(get(get(doc, "spec"), "supportedModelFormats")):
        fmt_name = scalar(get(fmt, "name"))
        if fmt_name:
            yield Reference(FORMAT_KEY + fmt_name.lower())


def predictor_facts(text: str, model: yaml.Node, path: str, scanner: str) -> Iterator[Fact]:
    """``arg`` and ``env_var`` facts of an ``InferenceService``'s ``spec.predictor.model``
    read as vLLM's.

    Args that are KServe's own (:data:`KSERVE_OWN_FLAGS`) are left out, and so is the
    value after ``--backend``; ``--model_id`` becomes a ``model`` fact.
    """
    tokens = sequence_words(text, get(model, "args"))
    for fact in arg_facts(tokens, path, scanner, positional_model=False, syntax="yaml"):
        if fact.kind == FactKind.ARG and fact.name in KSERVE_OWN_FLAGS:
            if fact.name == "model_id" and fact.value:
                yield Fact(FactKind.MODEL, fact.value, fact.location, fact.value, fact.value, scanner=scanner)
            continue
        yield fact
    yield from env_facts(text, get(model, "env"), path, scanner)
