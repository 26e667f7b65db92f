"""The schema of a rule pack (pydantic): what one YAML file per vLLM release under ``rules/``
may say, with every field's constraints and description.

Packs are strict (``extra="forbid"``): an unknown key, a wrong type or a malformed version
is an error that names the file and line (see :mod:`vllm_upgrade_check.knowledge.registry`).
``vllm-upgrade-check rules schema`` prints the JSON Schema generated from these models.
A run holds packs as the plain records of :mod:`vllm_upgrade_check.model.pack`, which have
the same class names and fields: :func:`validate_pack` validates data and gives the
records, :func:`to_record` converts a validated model. Only what validates imports this
module (and pydantic): ``--rules``, ``rules validate``, ``rules schema``, derived rules.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, JsonValue, model_validator

from vllm_upgrade_check.model import evidence as evidence_records
from vllm_upgrade_check.model import pack as records
from vllm_upgrade_check.model.evidence_schema import Evidence, VersionStr, _Strict, _UrlEvidence
from vllm_upgrade_check.model.facts import MODEL_SETTINGS
from vllm_upgrade_check.model.pack import (
    RULE_ID_PATTERN,
    RULE_NAME_PATTERN,
    SNAKE_NAME,
    SPECIFIER_PATTERN,
    Applicability,
    FixAction,
    MatchKind,
    Severity,
)


def _check_specifier(value: str) -> str:
    if not re.fullmatch(SPECIFIER_PATTERN, value):
        raise ValueError(f"not a valid specifier: {value!r} (expected e.g. ==2.13.0 or >=2.13,<2.14)")
    try:
        SpecifierSet(value)
    except InvalidSpecifier as exc:
        raise ValueError(f"not a valid specifier: {value!r}") from exc
    return value


Specifier = Annotated[
    str,
    AfterValidator(_check_specifier),
    Field(json_schema_extra={"pattern": SPECIFIER_PATTERN}, description="A PEP 440 specifier set, e.g. ==2.13.0"),
]


class _MatchBase(_Strict):
    """What every kind of match may say: the subject's name, the origins of the facts it
    applies to, and the conditions on the host and the installed plugins."""

    kind: MatchKind
    name: str = Field(description="snake_case arg, env var, distribution, metric, module, ...")
    origins: list[str] | None = Field(
        default=None, description="Restrict to facts of these origins (cli, python, config, env, file, sampling)."
    )
    when: dict[str, Specifier] | None = Field(
        default=None,
        description=(
            "Fire only on hosts where every named platform fact (gpu_memory_gib, "
            "gpu_compute_capability, cuda_driver, python, ...) is inside its specifier; a host "
            "that is not known (no --env / env) never matches."
        ),
    )
    unless_installed: list[str] | None = Field(
        default=None,
        description=(
            "Fire only when none of these distributions is installed or asked for (e.g. the "
            "out-of-tree plugin a feature moved to): installed in the environment checked, or named "
            "by a requirement of the scanned files (requirements, pyproject, lock files, pip install)."
        ),
    )



_VALUES = Field(default=None, description="Fire only when the fact's value is one of these (case-insensitive).")


class EngineArgMatch(_MatchBase):
    """An engine arg in any form: CLI flag, ``LLM(...)``/``EngineArgs(...)`` keyword, ``--config`` key."""

    kind: Literal[MatchKind.ENGINE_ARG]
    name: str = Field(pattern=SNAKE_NAME, description="The engine arg, snake_case.")
    values: list[str] | None = _VALUES


class CliFlagMatch(_MatchBase):
    """A flag only the ``vllm serve`` command line (or its ``--config`` file) accepts."""

    kind: Literal[MatchKind.CLI_FLAG]
    name: str = Field(pattern=SNAKE_NAME, description="The flag without dashes, snake_case.")
    values: list[str] | None = _VALUES


class AbsentArgMatch(_MatchBase):
    """A launch that does **not** set ``name`` (a changed default only matters there),
    optionally only for models matching ``patterns``."""

    kind: Literal[MatchKind.ABSENT_ARG]
    name: str = Field(pattern=SNAKE_NAME, description="The engine arg, snake_case.")
    patterns: list[str] | None = Field(
        default=None, description="Only launches serving a model id matching one of these globs."
    )


class EnvVarMatch(_MatchBase):
    """An environment variable set anywhere vLLM reads it."""

    kind: Literal[MatchKind.ENV_VAR]
    values: list[str] | None = _VALUES


class DependencyMatch(_MatchBase):
    """A requirement in a file or an installed distribution, checked against ``specifier``."""

    kind: Literal[MatchKind.DEPENDENCY]
    specifier: Specifier | None = Field(
        default=None, description="What the target requires; fires when the user's is outside it."
    )



class PlatformMatch(_MatchBase):
    """A host property (``python``, ``cuda_driver``, ...) outside ``specifier``, or (``values``)
    not one of the allowed values (``machine``)."""

    model_config = ConfigDict(
        json_schema_extra={"anyOf": [{"required": ["specifier"]}, {"required": ["values"]}]}
    )

    kind: Literal[MatchKind.PLATFORM]
    specifier: Specifier | None = Field(default=None, description="The versions the target supports.")
    values: list[str] | None = Field(default=None, description="The values the target supports.")


    @model_validator(mode="after")
    def _says_what_is_allowed(self) -> PlatformMatch:
        if self.specifier is None and self.values is None:
            raise ValueError("a platform match needs a specifier or values (the allowed values)")
        return self


class MetricMatch(_MatchBase):
    """A ``vllm:`` Prometheus metric named in a query, dashboard or code."""

    kind: Literal[MatchKind.METRIC]


class ImportMatch(_MatchBase):
    """A Python import of module ``name`` (or, with ``names``, of these names from it)."""

    kind: Literal[MatchKind.IMPORT]
    names: list[str] | None = Field(default=None, description="Only these names imported from the module.")


class ModelMatch(_MatchBase):
    """The model a launch serves, by glob patterns on its id (case-insensitive)."""

    kind: Literal[MatchKind.MODEL]
    patterns: list[str] = Field(min_length=1, description="Glob patterns on the model id (case-insensitive).")
    unless_args: dict[Literal[MODEL_SETTINGS], str] | None = Field(  # type: ignore[valid-type]
        default=None,
        description=(
            "Not for a launch that sets each of these engine args to this value, e.g. "
            "{model_impl: transformers} (the Transformers backend does not use vLLM's own "
            "implementation of a removed architecture)."
        ),
    )


class ResponseFieldMatch(_MatchBase):
    """A field of a vLLM server's response read by client code."""

    kind: Literal[MatchKind.RESPONSE_FIELD]


class ImageMatch(_MatchBase):
    """A container image repository, optionally only with the tags in ``values``."""

    kind: Literal[MatchKind.IMAGE]
    values: list[str] | None = _VALUES


Match = Annotated[
    EngineArgMatch
    | CliFlagMatch
    | AbsentArgMatch
    | EnvVarMatch
    | DependencyMatch
    | PlatformMatch
    | MetricMatch
    | ImportMatch
    | ModelMatch
    | ResponseFieldMatch
    | ImageMatch,
    Field(discriminator="kind"),
]
"""A structured match on one kind of fact, never a free regex over raw text; each ``kind``
takes only its own keys, so the JSON Schema says exactly what the loader accepts.

Examples (YAML)::

    match: {kind: engine_arg, name: max_num_partial_prefills}
    match: {kind: engine_arg, name: quantization, values: [bitsandbytes]}
    match: {kind: dependency, name: torch, specifier: "==2.13.0"}
    match: {kind: absent_arg, name: max_num_batched_tokens}
"""


_NEEDS_REPLACEMENT: list[JsonValue] = ["rename", "replace_value", "set_specifier", "move_to_config"]

_FIX_SCHEMA: dict[str, JsonValue] = {
    "allOf": [
        {
            "if": {"required": ["action"], "properties": {"action": {"enum": _NEEDS_REPLACEMENT}}},
            "then": {"required": ["replacement"], "properties": {"replacement": {"type": "string", "pattern": "\\S"}}},
        },
        {
            "if": {"required": ["action"], "properties": {"action": {"const": "move_to_config"}}},
            "then": {"properties": {"replacement": {"pattern": "^\\s*[a-z0-9_]+\\.[a-z0-9_]+\\s*$"}}},
        },
        {
            "if": {"anyOf": [{"not": {"required": ["action"]}}, {"properties": {"action": {"const": "none"}}}]},
            "then": {"properties": {"applicability": {"const": "display-only"}}},
        },
    ]
}
"""What :meth:`Fix._consistent` checks, said in JSON Schema."""


class Fix(_Strict):
    """How to fix a finding."""

    model_config = ConfigDict(json_schema_extra=_FIX_SCHEMA)

    summary: str = Field(description="What to do, in one sentence shown with every finding.")
    action: FixAction = FixAction.NONE
    replacement: str | None = None
    applicability: Applicability = Applicability.DISPLAY_ONLY
    available_in: VersionStr | None = Field(
        default=None,
        description="First release where the replacement works: from there the fix can land before the upgrade.",
    )


    @model_validator(mode="after")
    def _consistent(self) -> Fix:
        if self.action in (
            FixAction.RENAME,
            FixAction.REPLACE_VALUE,
            FixAction.SET_SPECIFIER,
            FixAction.MOVE_TO_CONFIG,
        ):
            if not self.replacement:
                raise ValueError(f"fix action {self.action.value} needs a replacement")
        if self.action == FixAction.MOVE_TO_CONFIG and not re.fullmatch(
            r"[a-z0-9_]+\.[a-z0-9_]+", self.replacement or ""
        ):
            raise ValueError("move_to_config needs a replacement like structured_outputs_config.backend (the engine arg of a JSON config flag, a dot, the key)")
        if self.action == FixAction.NONE and self.applicability != Applicability.DISPLAY_ONLY:
            raise ValueError("a fix with action none is display-only")
        return self


class Docs(_Strict):
    """Documentation rendered by ``explain`` (sections as in Ruff's rule docs)."""

    why: str = Field(description="Why this breaks (what the user sees).")
    example: str | None = Field(default=None, description="What a deployment that triggers it looks like.")
    instead: str | None = Field(default=None, description="What to use instead.")






class Rule(_Strict):
    """One breaking change of one release, as data."""

    id: str = Field(pattern=RULE_ID_PATTERN, description="Stable id, e.g. VUC0270-001.")
    name: str = Field(pattern=RULE_NAME_PATTERN, description="kebab-case name of the flagged pattern.")
    severity: Severity
    deprecated_in: VersionStr | None = Field(
        default=None, description="Release that deprecated it, when a deprecation came first."
    )
    match: Match
    message: str
    fix: Fix
    docs: Docs
    evidence: list[Evidence] = Field(
        min_length=1,
        json_schema_extra={
            "contains": {"required": ["kind"], "properties": {"kind": {"enum": ["wheel", "unverified", "policy"]}}}
        },
    )
    tags: list[str] = Field(default_factory=list)


    @model_validator(mode="after")
    def _verified_or_says_so(self) -> Rule:
        kinds = {e.kind for e in self.evidence}
        if not kinds & {"wheel", "unverified", "policy"}:
            raise ValueError(
                "evidence must include a 'wheel' item (the fact read from the release wheel), "
                "an 'unverified' item saying why it could not be checked, or a 'policy' item "
                "(an organisation's own rule: owner and reason)"
            )
        return self


class WheelFacts(_Strict):
    """Facts read from the release wheel's METADATA and compiled extensions (for env/plan)."""

    requires_python: str | None = None
    requires_dist: list[str] = Field(default_factory=list)
    cuda_major: int | None = Field(
        default=None, description="CUDA major the wheel's extensions link against."
    )
    platform_tag: str | None = None


class Pack(_Strict):
    """A rule pack: the breaking changes of one vLLM release."""

    schema_version: Literal[1] = 1
    release: VersionStr
    previous: VersionStr | None = Field(default=None, description="The release this pack diffs against.")
    released_on: str | None = Field(default=None, description="ISO date of the release.")
    notes_url: str | None = None
    summary: str | None = None
    wheel: WheelFacts | None = None
    rules: list[Rule] = Field(default_factory=list)


def _record_class(model: type[BaseModel]) -> type[Any]:
    """The plain record of schema model ``model``: the one of the same name, or for the
    models of public text (release notes, pull requests, docs, issues)
    :class:`~vllm_upgrade_check.model.evidence.UrlEvidence`."""
    if issubclass(model, _UrlEvidence):
        return evidence_records.UrlEvidence
    found = getattr(records, model.__name__, None) or getattr(evidence_records, model.__name__)
    return found


def to_record(value: Any) -> Any:
    """``value`` with every validated model in it (a :class:`Pack`, a :class:`Rule`, ...)
    turned into the plain record of the same name and fields, lists and mappings item by
    item; other values as they are.

    Raises:
        AttributeError: a model with no record of its name (a schema class without a twin).
    """
    if isinstance(value, BaseModel):
        record = _record_class(type(value))
        return record._from_values(tuple(to_record(getattr(value, name)) for name in record._fields))
    if isinstance(value, list):
        return [to_record(item) for item in value]
    if isinstance(value, dict):
        return {key: to_record(item) for key, item in value.items()}
    return value


def validate_pack(data: Any) -> records.Pack:
    """The pack record of ``data`` (a mapping as YAML gives it), validated.

    Raises:
        pydantic.ValidationError: ``data`` is not a valid pack.
    """
    return to_record(Pack.model_validate(data))


def validate_rule(data: Any) -> records.Rule:
    """The rule record of ``data``, validated.

    Raises:
        pydantic.ValidationError: ``data`` is not a valid rule.
    """
    return to_record(Rule.model_validate(data))
