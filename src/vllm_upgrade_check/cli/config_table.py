"""The schema of the project configuration (pydantic): the ``[tool.vllm-upgrade-check]``
table or a ``.vllm-upgrade-check.toml`` file as written. Imported only when a configuration
file is read (:func:`vllm_upgrade_check.cli.config.load_config`), so that a run without one
does not load pydantic.
"""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from vllm_upgrade_check.errors import UsageError
from vllm_upgrade_check.knowledge.versions import parse_version


def _version(value: str | None) -> str | None:
    if value is not None:
        try:
            parse_version(value, "version")
        except UsageError:
            raise ValueError(f"{value!r} is not a valid version (expected e.g. 0.27.0)") from None
    return value


class _Table(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, populate_by_name=True, defer_build=True)


class IgnoreEntry(_Table):
    """One ``[[ignore]]`` table: a rule id (or prefix) left out, why, where, until when."""

    id: Annotated[str, Field(min_length=1)]
    reason: Annotated[str, Field(min_length=1)]
    path: str | None = Field(default=None, description="glob of the paths it covers")
    expires: dt.date | None = None

    @field_validator("id", "reason")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be blank")
        return value

    @field_validator("expires", mode="before")
    @classmethod
    def _iso(cls, value: object) -> object:
        if isinstance(value, dt.datetime):  # a TOML datetime: its day
            return value.date()
        if isinstance(value, str):
            try:
                return dt.date.fromisoformat(value)
            except ValueError:
                raise ValueError("must be a date YYYY-MM-DD") from None
        return value


class ConfigTable(_Table):
    """The ``[tool.vllm-upgrade-check]`` table (or a ``.vllm-upgrade-check.toml`` file) as
    written: every key optional, none other allowed."""

    to: str | None = None
    from_: str | None = Field(default=None, alias="from")
    fail_on: Literal["blocker", "warning", "info", "never"] | None = Field(default=None, alias="fail-on")
    exclude: list[str] = Field(default_factory=list)
    rules: list[str] = Field(default_factory=list)
    ignore: list[IgnoreEntry] = Field(default_factory=list)

    _versions = field_validator("to", "from_")(_version)
