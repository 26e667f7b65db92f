"""The schema of a rule's evidence (:data:`Evidence`, one pydantic model per ``kind``), and
the field types the pack schema shares (a strict model, a vLLM release string).

These models validate what users give (``--rules`` packs, ``rules validate``, the JSON
Schema of ``rules schema``); a run holds the result as the plain records of
:mod:`vllm_upgrade_check.model.evidence`, which have the same names and fields.
:mod:`vllm_upgrade_check.model.pack_schema` re-exports every name.
"""

from __future__ import annotations

import re
from typing import Annotated, Literal

from packaging.version import InvalidVersion, Version
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, JsonValue, model_validator

from vllm_upgrade_check.model.evidence import HTTPS_URL_PATTERN, VERSION_PATTERN, WHEEL_PATH_PATTERN

__all__ = ["HTTPS_URL_PATTERN", "VERSION_PATTERN", "WHEEL_PATH_PATTERN"]


class _Strict(BaseModel):
    # defer_build: the core schema is built on the first validation, not at import (a run
    # whose packs come pre-parsed from the wheel never validates one).
    model_config = ConfigDict(extra="forbid", frozen=True, str_strip_whitespace=True, defer_build=True)


def _check_version(value: str) -> str:
    if not re.fullmatch(VERSION_PATTERN, value):
        raise ValueError(f"not a valid version: {value!r} (expected e.g. 0.27.0)")
    try:
        Version(value)
    except InvalidVersion as exc:  # pragma: no cover - the pattern admits only PEP 440 forms
        raise ValueError(f"not a valid version: {value!r}") from exc
    return value


VersionStr = Annotated[
    str,
    AfterValidator(_check_version),
    Field(json_schema_extra={"pattern": VERSION_PATTERN}, description="A vLLM release, e.g. 0.27.0"),
]


class _EvidenceBase(_Strict):
    """What every kind of evidence says: its kind."""

    kind: str


_WHEEL_SCHEMA: dict[str, JsonValue] = {
    "anyOf": [{"required": ["line"]}, {"required": ["finding"]}],
    "dependentRequired": {"end_line": ["line"]},
    "if": {"required": ["path"], "properties": {"path": {"pattern": "/$"}}},
    "then": {"not": {"required": ["line"]}},
}
"""What :meth:`WheelEvidence._consistent` checks, said in JSON Schema (``end_line`` not
before ``line`` is the loader's alone: JSON Schema cannot compare two values)."""


class WheelEvidence(_EvidenceBase):
    """A fact read from a file (or, for an absence, a directory) of a vLLM release wheel.

    Several lines of one file are several items. Without ``line`` (an absence, a whole
    file), ``finding`` says what was read.
    """

    model_config = ConfigDict(json_schema_extra=_WHEEL_SCHEMA)

    kind: Literal["wheel"]
    release: VersionStr = Field(description="The vLLM release whose wheel was read.")
    path: str = Field(
        pattern=WHEEL_PATH_PATTERN,
        description="File inside the wheel (vllm/envs.py), or a directory ending in / (vllm/) for an absence.",
    )
    line: int | None = Field(default=None, ge=1, description="1-based line of the file.")
    end_line: int | None = Field(
        default=None, ge=1, description="Last line of a range starting at line (not before it)."
    )
    finding: str | None = Field(
        default=None,
        description="What was read there (e.g. '--swap-space defined', 'absent from every source file').",
    )

    @model_validator(mode="after")
    def _consistent(self) -> WheelEvidence:
        if self.end_line is not None and (self.line is None or self.end_line < self.line):
            raise ValueError("end_line needs a line and must not be before it")
        if self.path.endswith("/") and self.line is not None:
            raise ValueError("a directory (path ending in /) has no line")
        if self.line is None and not self.finding:
            raise ValueError("wheel evidence without a line needs a finding (what was read there)")
        return self


class _UrlEvidence(_EvidenceBase):
    url: str = Field(pattern=HTTPS_URL_PATTERN, description="The https:// address of the text cited.")
    finding: str | None = Field(default=None, description="What was read there, in a few words.")


class ReleaseNoteEvidence(_UrlEvidence):
    """vLLM's release notes of a release."""

    kind: Literal["release-note"]


class PullRequestEvidence(_UrlEvidence):
    """The vLLM pull request that made the change."""

    kind: Literal["pull-request"]


class DocsEvidence(_UrlEvidence):
    """Documentation: vLLM's docs, or a vendor's (e.g. NVIDIA's driver table)."""

    kind: Literal["docs"]


class IssueEvidence(_UrlEvidence):
    """A vLLM issue that reports the breakage."""

    kind: Literal["issue"]


class UnverifiedEvidence(_EvidenceBase):
    """Why the rule could not be checked against the wheels."""

    kind: Literal["unverified"]
    reason: str = Field(min_length=1, pattern=r"\S", description="Why it is not verified.")


class PolicyEvidence(_EvidenceBase):
    """An organisation's own decision: the rule states a policy (``we do not run
    --enforce-eager in production``), not a fact of a vLLM release, so there is no wheel to
    cite. Only an organisation's packs use it; the bundled packs cite wheels."""

    kind: Literal["policy"]
    owner: str = Field(min_length=1, pattern=r"\S", description="Who decided it: a team, a role or a document.")
    reason: str = Field(min_length=1, pattern=r"\S", description="What the policy says and why.")
    url: str | None = Field(
        default=None, pattern=HTTPS_URL_PATTERN, description="The https:// address of the policy, if published."
    )


Evidence = Annotated[
    WheelEvidence
    | ReleaseNoteEvidence
    | PullRequestEvidence
    | DocsEvidence
    | IssueEvidence
    | UnverifiedEvidence
    | PolicyEvidence,
    Field(discriminator="kind"),
]
"""Where a rule's fact comes from; each ``kind`` takes only its own keys.

``kind: wheel`` cites a file (and line) of a release wheel that was read to verify the
rule; ``release-note`` / ``pull-request`` / ``docs`` / ``issue`` cite public text by its
https URL; ``unverified`` says why the rule could not be checked against the wheels;
``policy`` marks an organisation's own rule (who decided it and why), which has no wheel to
cite.

Examples (YAML)::

    - {kind: wheel, release: 0.26.0, path: vllm/engine/arg_utils.py, line: 530,
       finding: EngineArgs.max_num_partial_prefills defined}
    - {kind: wheel, release: 0.27.0, path: vllm/, finding: absent from every source file}
    - {kind: release-note, url: "https://github.com/vllm-project/vllm/releases/tag/v0.27.0"}
    - {kind: unverified, reason: the removal is in a compiled extension}
    - {kind: policy, owner: platform team, reason: eager mode halves throughput}
"""
