"""What a rule cites for the fact it states (:data:`Evidence`, one record per ``kind``), as
a run holds it, and the patterns the pack schema checks evidence with.

These are plain records (:class:`~vllm_upgrade_check.model.records.Record`); the schema
that validates them, with every field's constraints and description, is
:mod:`~vllm_upgrade_check.model.evidence_schema` (``tests/test_pack_construct.py`` checks
that both have the same fields; the four schema models of public text are one record here,
:class:`UrlEvidence`). :mod:`vllm_upgrade_check.model.pack` re-exports every name.
"""

from __future__ import annotations

from typing import Literal

from vllm_upgrade_check.model.records import Record

VERSION_PATTERN = r"^[0-9]+(\.[0-9]+)*((a|b|rc)[0-9]+)?(\.post[0-9]+)?(\.dev[0-9]+)?$"
"""A release as vLLM numbers them (``0.27.0``, ``0.10.1.1``, ``0.7.3.post1``, ``0.9.0rc1``)."""
WHEEL_PATH_PATTERN = r"^[A-Za-z0-9_.+-]+(/[A-Za-z0-9_.+-]+)*/?$"
"""A file or directory inside a wheel, posix, relative (``vllm/envs.py``,
``vllm-0.27.0.dist-info/METADATA``, ``vllm/`` for the whole package)."""
HTTPS_URL_PATTERN = r"^https://[^\s/]+(/\S*)?$"
"""A public web address; packs cite only ``https://`` ones."""


class _EvidenceBase(Record):
    """What every kind of evidence says: its kind."""

    kind: str

    @property
    def text(self) -> str:  # pragma: no cover - every kind overrides it
        """One human-readable line for ``explain`` and reports."""
        return self.kind


class WheelEvidence(_EvidenceBase):
    """A fact read from a file (or, for an absence, a directory) of a vLLM release wheel:
    ``path`` inside the wheel of ``release``, its 1-based ``line`` (to ``end_line``), or
    without a line a ``finding`` saying what was read."""

    kind: Literal["wheel"]
    release: str
    path: str
    line: int | None = None
    end_line: int | None = None
    finding: str | None = None

    @property
    def where(self) -> str:
        """``path``, ``path:line`` or ``path:line-end_line``."""
        if self.line is None:
            return self.path
        if self.end_line is not None and self.end_line != self.line:
            return f"{self.path}:{self.line}-{self.end_line}"
        return f"{self.path}:{self.line}"

    @property
    def text(self) -> str:
        """``vllm-0.27.0 wheel: vllm/envs.py:666 (finding)``."""
        out = f"vllm-{self.release} wheel: {self.where}"
        return out + (f" ({self.finding})" if self.finding else "")


class UrlEvidence(_EvidenceBase):
    """Public text cited by its ``https://`` ``url``, with what was read there: vLLM's
    release notes (``kind: release-note``), the pull request that made the change
    (``pull-request``), documentation, vLLM's or a vendor's (``docs``), or an issue that
    reports the breakage (``issue``). The schema has one model per kind; their fields are
    the same, so a run holds them as one record."""

    kind: Literal["release-note", "pull-request", "docs", "issue"]
    url: str
    finding: str | None = None

    @property
    def text(self) -> str:
        """``release-note: https://... (finding)``."""
        return f"{self.kind}: {self.url}" + (f" ({self.finding})" if self.finding else "")


class UnverifiedEvidence(_EvidenceBase):
    """Why the rule could not be checked against the wheels."""

    kind: Literal["unverified"]
    reason: str

    @property
    def text(self) -> str:
        """``unverified: reason``."""
        return f"unverified: {self.reason}"


class PolicyEvidence(_EvidenceBase):
    """An organisation's own decision (``owner``, ``reason``, optionally the ``url`` where it
    is published): the rule states a policy, not a fact of a vLLM release."""

    kind: Literal["policy"]
    owner: str
    reason: str
    url: str | None = None

    @property
    def text(self) -> str:
        """``policy (platform team): reason <url>``."""
        return f"policy ({self.owner}): {self.reason}" + (f" <{self.url}>" if self.url else "")


Evidence = WheelEvidence | UrlEvidence | UnverifiedEvidence | PolicyEvidence
"""Where a rule's fact comes from; each ``kind`` has only its own fields (see
:data:`vllm_upgrade_check.model.evidence_schema.Evidence` for what each may hold)."""
