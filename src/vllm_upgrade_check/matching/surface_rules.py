"""The built-in rules of the target-surface checks: ids, texts and evidence.

:mod:`vllm_upgrade_check.matching.surface_checks` decides what the target lacks (a
:class:`Rejection`); this module turns one into the rule a finding carries, as ``explain``
shows it.
"""

from __future__ import annotations

from dataclasses import dataclass

from packaging.version import Version

from vllm_upgrade_check.knowledge.known_args import DATA_FILE, known_args
from vllm_upgrade_check.model.pack import (
    Applicability,
    CliFlagMatch,
    Docs,
    EngineArgMatch,
    EnvVarMatch,
    Fix,
    FixAction,
    ImportMatch,
    Match,
    MatchKind,
    MetricMatch,
    ModelMatch,
    ResponseFieldMatch,
    Rule,
    Severity,
    WheelEvidence,
)

FLAG_ID = "VUC000-003"
ENGINE_ARG_ID = "VUC000-004"
SAMPLING_ID = "VUC000-005"
IMPORT_ID = "VUC000-006"
METRIC_ID = "VUC000-007"
ENV_VAR_ID = "VUC000-008"
VALUE_ID = "VUC000-009"
ARCHITECTURE_ID = "VUC000-014"
RESPONSE_ID = "VUC000-015"
SURFACE_IDS = (
    FLAG_ID,
    ENGINE_ARG_ID,
    SAMPLING_ID,
    IMPORT_ID,
    METRIC_ID,
    ENV_VAR_ID,
    VALUE_ID,
    ARCHITECTURE_ID,
    RESPONSE_ID,
)
"""Ids of the built-in surface rules, in order."""


@dataclass(frozen=True)
class Rejection:
    """What the target does with one fact it does not have.

    Attributes:
        rule_id: the built-in rule (one of :data:`SURFACE_IDS`).
        severity: what it means at the target.
        subject: the thing as the user wrote it (``--swap-space``, ``vllm:gpu_cache_usage_perc``).
        what: the kind of thing, in words (``flag``, ``keyword of LLM(...)``).
        detail: the history, in words (``last in 0.17.1, removed in 0.18.0``).
        suggestion: the closest thing the target has, or ``None``.
        ref: the wheel file that defined it in the newest release that had it, or ``None``.
        data_file: where the history was read from (package-relative).
    """

    rule_id: str
    severity: Severity
    subject: str
    what: str
    detail: str
    suggestion: str | None
    ref: str | None
    data_file: str


_MATCH: dict[str, type[Match]] = {
    FLAG_ID: CliFlagMatch,
    ENGINE_ARG_ID: EngineArgMatch,
    SAMPLING_ID: EngineArgMatch,
    IMPORT_ID: ImportMatch,
    METRIC_ID: MetricMatch,
    ENV_VAR_ID: EnvVarMatch,
    VALUE_ID: CliFlagMatch,
    ARCHITECTURE_ID: ModelMatch,
    RESPONSE_ID: ResponseFieldMatch,
}
_KIND: dict[str, MatchKind] = {
    FLAG_ID: MatchKind.CLI_FLAG,
    ENGINE_ARG_ID: MatchKind.ENGINE_ARG,
    SAMPLING_ID: MatchKind.ENGINE_ARG,
    IMPORT_ID: MatchKind.IMPORT,
    METRIC_ID: MatchKind.METRIC,
    ENV_VAR_ID: MatchKind.ENV_VAR,
    VALUE_ID: MatchKind.CLI_FLAG,
    ARCHITECTURE_ID: MatchKind.MODEL,
    RESPONSE_ID: MatchKind.RESPONSE_FIELD,
}
_NAMES = {
    FLAG_ID: "flag-not-in-target",
    ENGINE_ARG_ID: "engine-arg-not-in-target",
    SAMPLING_ID: "sampling-param-not-in-target",
    IMPORT_ID: "import-not-in-target",
    METRIC_ID: "metric-not-exported-by-target",
    ENV_VAR_ID: "env-var-not-read-by-target",
    VALUE_ID: "value-not-accepted-by-target",
    ARCHITECTURE_ID: "architecture-not-served-by-target",
    RESPONSE_ID: "response-field-not-returned-by-target",
}
_DOCS = {
    FLAG_ID: Docs(
        why="vLLM's argument parser rejects a flag it does not define, so `vllm serve` exits before it starts; "
        "a key of a --config file is read as the same flag.",
        example="vllm serve my-model --disable-frontend-multiprocessing   # at 0.28.0",
        instead="vllm serve my-model",
    ),
    ENGINE_ARG_ID: Docs(
        why="LLM(...), EngineArgs(...) and AsyncEngineArgs(...) pass their keywords to the EngineArgs dataclass, "
        "which raises TypeError for a field it does not have (LLM(...) of some releases drops a few with a warning).",
        example="EngineArgs(model='m', swap_space=4)   # at 0.28.0",
        instead="EngineArgs(model='m')",
    ),
    SAMPLING_ID: Docs(
        why="SamplingParams raises TypeError for a keyword that is not one of its fields.",
        example="SamplingParams(temperature=0.2, use_beam_search=True)",
        instead="SamplingParams(temperature=0.2)",
    ),
    IMPORT_ID: Docs(
        why="An import of a module the target's wheel no longer ships, or of a name its module no longer defines "
        "or re-exports, raises ImportError, and reading an env var vllm.envs no longer defines raises "
        "AttributeError, when the program starts. A name a `from vllm.M import *` brought and the target's M "
        "no longer binds raises NameError where the file uses it (a file that also star-imports a module that "
        "is not vLLM's may get the name from there: it is not judged). Each module's names are read from the "
        "wheels with ast.",
        example="from vllm.utils import FlexibleArgumentParser   # at 0.28.0",
        instead="from vllm.utils.argparse_utils import FlexibleArgumentParser",
    ),
    METRIC_ID: Docs(
        why="A metric the target does not export makes an alert that can never fire again, and an empty panel or "
        "scrape; vLLM's metric names are read from each release's wheel.",
        example="expr: vllm:gpu_cache_usage_perc > 0.9",
        instead="expr: vllm:kv_cache_usage_perc > 0.9",
    ),
    ENV_VAR_ID: Docs(
        why="vLLM reads only the env vars its vllm/envs.py registers; one it no longer reads is silently ignored.",
        example="export VLLM_USE_V1=1   # at a release that no longer reads it",
        instead="Remove it, or use the flag that replaced it.",
    ),
    VALUE_ID: Docs(
        why="A value argparse does not accept (choices), or a quantization method or load format the target does "
        "not register, stops vllm serve at start-up; the same literal given as an engine-arg keyword in Python "
        "(LLM(m, quantization=...)) fails when the engine config is built.",
        example="vllm serve my-model --quantization deepspeedfp   # at 0.28.0",
        instead="A value the target accepts.",
    ),
    ARCHITECTURE_ID: Docs(
        why="vLLM loads a model by the architecture its config names (config.json's architectures, or "
        "--hf-overrides '{\"architectures\": [...]}'); one the model registry no longer has stops the server "
        "(a removed model names the last release that served it). Only the architectures key of --hf-overrides "
        "names what the registry serves (JSON, a Python dict or dict(...)); a launch with --model-impl "
        "transformers may be served by the Transformers backend instead, so there it is a warning.",
        example="vllm serve my-model --hf-overrides '{\"architectures\": [\"MllamaForConditionalGeneration\"]}'",
        instead="Stay on the last release that serves it, or serve another model.",
    ),
    RESPONSE_ID: Docs(
        why="The OpenAI-compatible server's response models are read from each wheel: chat completions "
        "(ChatCompletionResponse, ChatMessage, DeltaMessage, UsageInfo), completions (CompletionResponse, its "
        "choice's text and logprobs, the stream chunk) and embeddings (EmbeddingResponse, its data's embedding); "
        "a field the target no longer returns reads as None or raises KeyError in the client. A file is judged "
        "by the API it calls, and only when its client talks to a vLLM server (base_url or URL literal).",
        example="message.reasoning_content   # at 0.28.0",
        instead="message.reasoning",
    ),
}


def surface_rule(rejected: Rejection, target: Version) -> Rule:
    """The built-in rule of one rejection, with its message, fix text and evidence."""
    hint = f"; did you mean {rejected.suggestion}?" if rejected.suggestion else ""
    where = rejected.ref or ("vllm/envs.py" if rejected.rule_id == ENV_VAR_ID else "vllm/")
    path, _, line = where.partition(":")
    kind = _MATCH[rejected.rule_id]
    if kind is ModelMatch:
        match: Match = ModelMatch(kind=MatchKind.MODEL, name=rejected.subject, patterns=[rejected.subject])
    else:
        # the kind of each class is the one _KIND pairs with it (mypy sees any member's)
        match = kind(kind=_KIND[rejected.rule_id], name=rejected.subject)  # type: ignore[call-arg, arg-type]
    # Built without validation: the name is the thing as written, which a pack's checks refuse.
    return Rule(
        id=rejected.rule_id,
        name=_NAMES[rejected.rule_id],
        severity=rejected.severity,
        match=match,
        message=f"{rejected.subject} ({rejected.what}) is not in vLLM {target}: {rejected.detail}{hint}",
        fix=Fix(
            summary=f"Use {rejected.suggestion}."
            if rejected.suggestion
            else f"Remove or replace {rejected.subject}.",
            action=FixAction.NONE,
            applicability=Applicability.DISPLAY_ONLY,
        ),
        docs=_DOCS[rejected.rule_id],
        evidence=[
            WheelEvidence(
                kind="wheel",
                release=str(target),
                path=path if path.endswith((".py", "/")) else "vllm/",
                line=int(line) if line.isdigit() else None,
                finding=f"{rejected.detail}, as read from the wheels into vllm_upgrade_check/{rejected.data_file}",
            )
        ],
        tags=["target-surface"],
    )


_GENERIC = {
    FLAG_ID: (
        "a CLI flag or --config key",
        "the flag was defined by another release than the target",
        DATA_FILE,
    ),
    ENGINE_ARG_ID: (
        "a keyword of LLM/EngineArgs/AsyncEngineArgs",
        "the target's EngineArgs has no such field",
        "data/surface/history.json",
    ),
    SAMPLING_ID: (
        "a keyword of SamplingParams",
        "the target's SamplingParams has no such field",
        "data/surface/history.json",
    ),
    IMPORT_ID: (
        "an imported vLLM module, name or vllm.envs attribute",
        "the target's wheel has no such module, or its module no such name",
        "data/surface/modules.json, data/surface/names.json",
    ),
    METRIC_ID: ("a vllm: metric", "the target does not export it", "data/surface/history.json"),
    ENV_VAR_ID: ("a VLLM_ env var", "the target's vllm/envs.py no longer reads it", DATA_FILE),
    VALUE_ID: (
        "a flag value or literal engine-arg keyword value",
        "the target's parser or registry does not accept it",
        "data/surface/history.json",
    ),
    ARCHITECTURE_ID: (
        "a model architecture",
        "the target's model registry does not serve it",
        "data/surface/history.json",
    ),
    RESPONSE_ID: (
        "a field of a chat completion, completion or embedding response",
        "the target's server no longer returns it",
        "data/surface/history.json",
    ),
}


def documented_surface_rule(rule_id: str) -> Rule:
    """The built-in rule ``rule_id`` as ``explain`` shows it (no particular fact), judged
    against the newest release the data covers."""
    subject, detail, data_file = _GENERIC[rule_id]
    severity = Severity.WARNING if rule_id in (ENV_VAR_ID, RESPONSE_ID) else Severity.BLOCKER
    target = known_args().newest or Version("0")
    rule = surface_rule(
        Rejection(rule_id, severity, subject, "any release", detail, None, None, data_file), target
    )
    message = (
        f"{subject[0].upper()}{subject[1:]} that the target release does not have: {detail} "
        "(checked against the target whatever the version in use)"
    )
    return rule.replace(message=message)
