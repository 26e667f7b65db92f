"""A rule pack as a run holds it: one YAML file per vLLM release under ``rules/``.

These are plain frozen records (:class:`~vllm_upgrade_check.model.records.Record`): making
their classes and the 66 bundled packs costs a run almost nothing. What a pack may say, with
every constraint and description, is the schema of
:mod:`~vllm_upgrade_check.model.pack_schema` (pydantic): user packs are validated by it and
converted to these records, ``vllm-upgrade-check rules schema`` prints its JSON Schema, and
the bundled packs, which the test suite validates, are built straight from their data
(:mod:`~vllm_upgrade_check.model.construct`). Both have the same classes, names and fields
(``tests/test_pack_construct.py``).
"""

from __future__ import annotations

from enum import Enum
from functools import cache
from typing import Literal

from packaging.version import Version

from vllm_upgrade_check.model.evidence import (
    HTTPS_URL_PATTERN as HTTPS_URL_PATTERN,
)
from vllm_upgrade_check.model.evidence import (
    VERSION_PATTERN as VERSION_PATTERN,
)
from vllm_upgrade_check.model.evidence import (
    WHEEL_PATH_PATTERN as WHEEL_PATH_PATTERN,
)
from vllm_upgrade_check.model.evidence import (
    Evidence as Evidence,
)
from vllm_upgrade_check.model.evidence import (
    PolicyEvidence as PolicyEvidence,
)
from vllm_upgrade_check.model.evidence import (
    UnverifiedEvidence as UnverifiedEvidence,
)
from vllm_upgrade_check.model.evidence import (
    UrlEvidence as UrlEvidence,
)
from vllm_upgrade_check.model.evidence import (
    WheelEvidence as WheelEvidence,
)
from vllm_upgrade_check.model.records import Record, field

RULE_ID_PATTERN = r"^[A-Z][A-Z0-9]*-[0-9]{3,4}$"
RULE_NAME_PATTERN = r"^[a-z0-9]+(-[a-z0-9]+)*$"
SCHEMA_VERSION = 1


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


SNAKE_NAME = r"^[a-z0-9_.]+$"
"""An engine arg as vLLM's ``EngineArgs`` names it (``max_num_partial_prefills``)."""
SPECIFIER_PATTERN = (
    r"^\s*(~=|===|==|!=|<=|>=|<|>)\s*[A-Za-z0-9.*+!_-]+"
    r"(\s*,\s*(~=|===|==|!=|<=|>=|<|>)\s*[A-Za-z0-9.*+!_-]+)*\s*$"
)
"""The shape of a PEP 440 specifier set (``>=2.13,<2.14``); :mod:`packaging` checks the rest."""


class _MatchBase(Record):
    """What every kind of match may say: the subject's ``name``, the ``origins`` of the facts
    it applies to, the host conditions (``when``: platform fact -> specifier) and the
    distributions whose presence turns it off (``unless_installed``)."""

    kind: MatchKind
    name: str
    origins: list[str] | None = None
    when: dict[str, str] | None = None
    unless_installed: list[str] | None = None

    def describe(self) -> str:
        """One line for ``explain``: ``engine_arg quantization = bitsandbytes``,
        ``dependency torch outside ==2.13.0``, ``model x matching *plamo*``."""
        detail = f"{self.kind.value} {self.name}"
        values = getattr(self, "values", None)
        if values:
            detail += f" = {', '.join(values)}"
        specifier = getattr(self, "specifier", None)
        if specifier:
            detail += f" outside {specifier}"
        patterns = getattr(self, "patterns", None)
        if patterns:
            detail += f" matching {', '.join(patterns)}"
        return detail


class _ValuedMatch(_MatchBase):
    """A match that may restrict the fact's value to ``values`` (case-insensitive)."""

    values: list[str] | None = None


class EngineArgMatch(_ValuedMatch):
    """An engine arg (snake_case ``name``) in any form: CLI flag, ``LLM(...)`` keyword, ``--config`` key."""

    kind: Literal[MatchKind.ENGINE_ARG]


class CliFlagMatch(_ValuedMatch):
    """A flag only the ``vllm serve`` command line (or its ``--config`` file) accepts."""

    kind: Literal[MatchKind.CLI_FLAG]


class AbsentArgMatch(_MatchBase):
    """A launch that does **not** set ``name``, optionally only for models matching ``patterns``."""

    kind: Literal[MatchKind.ABSENT_ARG]
    patterns: list[str] | None = None


class EnvVarMatch(_ValuedMatch):
    """An environment variable set anywhere vLLM reads it."""

    kind: Literal[MatchKind.ENV_VAR]


class DependencyMatch(_MatchBase):
    """A requirement in a file or an installed distribution, checked against ``specifier``."""

    kind: Literal[MatchKind.DEPENDENCY]
    specifier: str | None = None


class PlatformMatch(_MatchBase):
    """A host property outside ``specifier``, or not one of the allowed ``values``."""

    kind: Literal[MatchKind.PLATFORM]
    specifier: str | None = None
    values: list[str] | None = None


class MetricMatch(_MatchBase):
    """A ``vllm:`` Prometheus metric named in a query, dashboard or code."""

    kind: Literal[MatchKind.METRIC]


class ImportMatch(_MatchBase):
    """A Python import of module ``name`` (or, with ``names``, of these names from it)."""

    kind: Literal[MatchKind.IMPORT]
    names: list[str] | None = None


class ModelMatch(_MatchBase):
    """The model a launch serves, by glob ``patterns`` on its id (case-insensitive), except
    a launch setting each engine arg of ``unless_args`` to its value."""

    kind: Literal[MatchKind.MODEL]
    patterns: list[str]
    unless_args: dict[str, str] | None = None


class ResponseFieldMatch(_MatchBase):
    """A field of a vLLM server's response read by client code."""

    kind: Literal[MatchKind.RESPONSE_FIELD]


class ImageMatch(_ValuedMatch):
    """A container image repository, optionally only with the tags in ``values``."""

    kind: Literal[MatchKind.IMAGE]


Match = (
    EngineArgMatch | CliFlagMatch | AbsentArgMatch | EnvVarMatch | DependencyMatch | PlatformMatch
    | MetricMatch | ImportMatch | ModelMatch | ResponseFieldMatch | ImageMatch
)
"""A structured match on one kind of fact, never a free regex over raw text; each ``kind``
has only its own fields (the schema's :data:`~vllm_upgrade_check.model.pack_schema.Match`
says what each may hold)."""

VALUED = _ValuedMatch
"""The kinds of match that may restrict the fact's value (``values``)."""


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


class Fix(Record):
    """How to fix a finding: the ``summary`` shown with it, the mechanical ``action`` and its
    ``replacement``, how safe it is to apply, and the first release where the replacement
    works (``available_in``)."""

    summary: str
    action: FixAction = FixAction.NONE
    replacement: str | None = None
    applicability: Applicability = Applicability.DISPLAY_ONLY
    available_in: str | None = None


class Docs(Record):
    """Documentation rendered by ``explain``: ``why`` it breaks, an ``example`` that
    triggers it, what to use ``instead``."""

    why: str
    example: str | None = None
    instead: str | None = None


class Rule(Record):
    """One breaking change of one release, as data."""

    id: str
    name: str
    severity: Severity
    deprecated_in: str | None = None
    match: Match
    message: str
    fix: Fix
    docs: Docs
    evidence: list[Evidence]
    tags: list[str] = field(default_factory=list)


class WheelFacts(Record):
    """Facts read from the release wheel's METADATA and compiled extensions (for env/plan):
    ``Requires-Python``, the ``Requires-Dist`` lines, the CUDA major its extensions link
    against, its platform tag."""

    requires_python: str | None = None
    requires_dist: list[str] = field(default_factory=list)
    cuda_major: int | None = None
    platform_tag: str | None = None


class Pack(Record):
    """A rule pack: the breaking changes of one vLLM release."""

    schema_version: int = SCHEMA_VERSION
    release: str
    previous: str | None = None
    released_on: str | None = None
    notes_url: str | None = None
    summary: str | None = None
    wheel: WheelFacts | None = None
    rules: list[Rule] = field(default_factory=list)

    @property
    def version(self) -> Version:
        """The release as a :class:`packaging.version.Version` (parsed once per release
        string: the registry compares it for every pack on every look-up)."""
        return _release_version(self.release)


@cache
def _release_version(release: str) -> Version:
    """``Version(release)``, parsed once per string.

    Raises:
        packaging.version.InvalidVersion: for a release that is no version (not cached).
    """
    return Version(release)
