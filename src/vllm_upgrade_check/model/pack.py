"""Pydantic models of a rule pack: one YAML file per vLLM release under ``rules/``.

Packs are strict (``extra="forbid"``): an unknown key, a wrong type or a malformed version
is an error that names the file and line (see :mod:`vllm_upgrade_check.knowledge.registry`).
``vllm-upgrade-check rules schema`` prints the JSON Schema generated from these models.
"""

from __future__ import annotations

import re
from enum import Enum
from typing import Annotated, Literal

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from vllm_upgrade_check.model.facts import MODEL_SETTINGS

RULE_ID_PATTERN = r"^[A-Z][A-Z0-9]*-[0-9]{3,4}$"
RULE_NAME_PATTERN = r"^[a-z0-9]+(-[a-z0-9]+)*$"
SCHEMA_VERSION = 1


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, str_strip_whitespace=True)


def _check_version(value: str) -> str:
    try:
        Version(value)
    except InvalidVersion as exc:
        raise ValueError(f"not a valid version: {value!r}") from exc
    return value


VersionStr = Annotated[str, Field(description="A PEP 440 version, e.g. 0.27.0")]


class Severity(str, Enum):
    """How bad a finding is, by what the user sees.

    ``blocker``: the deployment fails (startup error, install conflict). ``warning``: it runs
    but differently (a setting silently ignored, a changed default, a dead metric).
    ``info``: advisory.
    """

    BLOCKER = "blocker"
    WARNING = "warning"
    INFO = "info"

    @property
    def rank(self) -> int:
        """2 for blocker, 1 for warning, 0 for info (for ``--fail-on`` comparisons)."""
        return {"blocker": 2, "warning": 1, "info": 0}[self.value]


class Applicability(str, Enum):
    """Fix safety, as in Ruff: only ``safe`` fixes apply by default."""

    SAFE = "safe"
    UNSAFE = "unsafe"
    DISPLAY_ONLY = "display-only"


class MatchKind(str, Enum):
    """Which kind of fact a rule matches (see :class:`~vllm_upgrade_check.model.facts.FactKind`)."""

    ENGINE_ARG = "engine_arg"
    """An engine arg in any form: CLI flag, ``LLM(...)``/``EngineArgs(...)`` keyword, ``--config`` key."""
    CLI_FLAG = "cli_flag"
    """A flag only the ``vllm serve`` command line (or its ``--config`` file) accepts."""
    ENV_VAR = "env_var"
    DEPENDENCY = "dependency"
    """A requirement in a file or an installed distribution, checked against ``specifier``."""
    METRIC = "metric"
    IMPORT = "import"
    MODEL = "model"
    """The model a launch serves, by glob patterns on its id (case-insensitive)."""
    RESPONSE_FIELD = "response_field"
    ABSENT_ARG = "absent_arg"
    """A launch that does **not** set ``name``: a changed default only matters there."""
    PLATFORM = "platform"
    """A host property (``python``, ``cuda_driver``, ...) outside ``specifier``, or (``values``)
    not one of the allowed values (``machine``)."""
    IMAGE = "image"
    """A container image repository, optionally with tags in ``values``."""


class Match(_Strict):
    """A structured match on one kind of fact; never a free regex over raw text.

    Examples (YAML)::

        match: {kind: engine_arg, name: max_num_partial_prefills}
        match: {kind: engine_arg, name: quantization, values: [bitsandbytes]}
        match: {kind: dependency, name: torch, specifier: "==2.13.0"}
        match: {kind: absent_arg, name: max_num_batched_tokens}
    """

    kind: MatchKind
    name: str = Field(description="snake_case arg, env var, distribution, metric, module, ...")
    values: list[str] | None = Field(
        default=None, description="Fire only when the fact's value is one of these (case-insensitive)."
    )
    specifier: str | None = Field(
        default=None,
        description="dependency/platform: what the target requires; fires when the user's is outside it.",
    )
    patterns: list[str] | None = Field(
        default=None, description="model: glob patterns on the model id (case-insensitive)."
    )
    names: list[str] | None = Field(
        default=None, description="import: only these names imported from the module."
    )
    origins: list[str] | None = Field(
        default=None, description="Restrict to facts of these origins (cli, python, config, env, file)."
    )
    when: dict[str, str] | None = Field(
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
    unless_args: dict[str, str] | None = Field(
        default=None,
        description=(
            "model: not for a launch that sets each of these engine args to this value, e.g. "
            "{model_impl: transformers} (the Transformers backend does not use vLLM's own "
            "implementation of a removed architecture)."
        ),
    )

    @field_validator("specifier")
    @classmethod
    def _valid_specifier(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                SpecifierSet(value)
            except InvalidSpecifier as exc:
                raise ValueError(f"not a valid specifier: {value!r}") from exc
        return value

    @model_validator(mode="after")
    def _fits_kind(self) -> Match:
        kind = self.kind
        if kind in (MatchKind.ENGINE_ARG, MatchKind.CLI_FLAG, MatchKind.ABSENT_ARG):
            if not re.fullmatch(r"[a-z0-9_.]+", self.name):
                raise ValueError(f"{kind.value} name must be snake_case: {self.name!r}")
        if kind == MatchKind.MODEL and not self.patterns:
            raise ValueError("a model match needs patterns")
        if self.patterns is not None and kind not in (MatchKind.MODEL, MatchKind.ABSENT_ARG):
            raise ValueError("patterns only apply to kind: model or absent_arg (the launch's model)")
        for key, spec in (self.when or {}).items():
            try:
                SpecifierSet(spec)
            except InvalidSpecifier as exc:
                raise ValueError(f"when.{key}: not a valid specifier: {spec!r}") from exc
        if self.unless_args is not None and kind != MatchKind.MODEL:
            raise ValueError("unless_args only applies to kind: model")
        for key in self.unless_args or {}:
            if key not in MODEL_SETTINGS:
                raise ValueError(f"unless_args.{key}: not one of {', '.join(MODEL_SETTINGS)}")
        if self.names is not None and kind != MatchKind.IMPORT:
            raise ValueError("names only apply to kind: import")
        if self.specifier is not None and kind not in (MatchKind.DEPENDENCY, MatchKind.PLATFORM):
            raise ValueError("specifier only applies to kind: dependency or platform")
        if kind == MatchKind.PLATFORM and self.specifier is None and self.values is None:
            raise ValueError("a platform match needs a specifier or values (the allowed values)")
        return self


class FixAction(str, Enum):
    """What a machine-applicable fix does to the matched text."""

    NONE = "none"
    """Nothing mechanical: a person must decide (the summary says what)."""
    REMOVE_ARG = "remove_arg"
    """Drop the flag / keyword / key together with its value."""
    RENAME = "rename"
    """Rename the flag / keyword / key / env var / metric to ``replacement``."""
    REPLACE_VALUE = "replace_value"
    """Replace the value with ``replacement``."""
    SET_SPECIFIER = "set_specifier"
    """Replace the requirement's specifier with ``replacement`` (e.g. ``==2.13.0``)."""
    BUMP_IMAGE = "bump_image"
    """Set the image tag to the target release."""
    MOVE_TO_CONFIG = "move_to_config"
    """Move a flag's value into a key of a JSON config flag: ``replacement`` names the flag's
    engine arg and the key (``structured_outputs_config.backend``), so that
    ``--guided-decoding-backend xgrammar`` becomes
    ``--structured-outputs-config '{"backend": "xgrammar"}'``."""


class Fix(_Strict):
    """How to fix a finding."""

    summary: str = Field(description="What to do, in one sentence shown with every finding.")
    action: FixAction = FixAction.NONE
    replacement: str | None = None
    applicability: Applicability = Applicability.DISPLAY_ONLY
    available_in: VersionStr | None = Field(
        default=None,
        description="First release where the replacement works: from there the fix can land before the upgrade.",
    )

    _v = field_validator("available_in")(lambda v: v if v is None else _check_version(v))

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


class Evidence(_Strict):
    """Where a rule's fact comes from.

    ``kind: wheel`` cites a file (and line) of the release wheel that was read to verify the
    rule; ``release-note`` / ``pull-request`` / ``docs`` cite public text; ``unverified`` says
    why the rule could not be checked against the wheels.
    """

    kind: Literal["wheel", "release-note", "pull-request", "docs", "issue", "unverified"]
    ref: str = Field(description="URL, or 'vllm-X wheel: path:line', or the reason it is unverified.")
    detail: str | None = None


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
    evidence: list[Evidence] = Field(min_length=1)
    tags: list[str] = Field(default_factory=list)

    _v = field_validator("deprecated_in")(lambda v: v if v is None else _check_version(v))

    @model_validator(mode="after")
    def _verified_or_says_so(self) -> Rule:
        kinds = {e.kind for e in self.evidence}
        if "wheel" not in kinds and "unverified" not in kinds:
            raise ValueError(
                "evidence must include a 'wheel' item (the fact read from the release wheel) "
                "or an 'unverified' item saying why it could not be checked"
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

    _v = field_validator("release", "previous")(lambda v: v if v is None else _check_version(v))

    @property
    def version(self) -> Version:
        """The release as a :class:`packaging.version.Version`."""
        return Version(self.release)
