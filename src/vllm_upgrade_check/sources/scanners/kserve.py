"""KServe ``InferenceService`` predictors whose model runs on vLLM.

A KServe ``InferenceService`` may give its model no container at all, only
``spec.predictor.model: {modelFormat: {name: huggingface}, args: [...]}``; the Hugging Face
serving runtime (``kserve/huggingfaceserver``) runs vLLM by default and hands the args it
does not know itself to vLLM's own argument parser. ``ServingRuntime`` objects list ordinary
``containers`` and are read by :mod:`vllm_upgrade_check.sources.scanners.manifests` like any pod.

Source: KServe's ``python/huggingfaceserver/huggingfaceserver/__main__.py`` (its parser
extends vLLM's ``AsyncEngineArgs.add_cli_args``) and ``kserve/model_server.py`` (the flags
every KServe model server takes).
"""

from __future__ import annotations

from collections.abc import Iterator

import yaml

from vllm_upgrade_check.model.facts import Fact, FactKind
from vllm_upgrade_check.parsing.yamlnodes import get, items, scalar, sequence_words
from vllm_upgrade_check.sources.scanners.arg_facts import arg_facts
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


def predictor_facts(text: str, doc: yaml.Node, path: str, scanner: str) -> Iterator[Fact]:
    """``arg`` and ``env_var`` facts of ``spec.predictor.model`` of an ``InferenceService`` run by vLLM.

    Args that are KServe's own (:data:`KSERVE_OWN_FLAGS`) are left out, and so is the
    value after ``--backend``; ``--model_id`` becomes a ``model`` fact.
    """
    if scalar(get(doc, "kind")) != "InferenceService":
        return
    model = get(get(get(doc, "spec"), "predictor"), "model")
    if model is None or not _runs_vllm(model):
        return
    tokens = sequence_words(text, get(model, "args"))
    for fact in arg_facts(tokens, path, scanner, positional_model=False, syntax="yaml"):
        if fact.kind == FactKind.ARG and fact.name in KSERVE_OWN_FLAGS:
            if fact.name == "model_id" and fact.value:
                yield Fact(FactKind.MODEL, fact.value, fact.location, fact.value, fact.value, scanner=scanner)
            continue
        yield fact
    yield from env_facts(text, get(model, "env"), path, scanner)
