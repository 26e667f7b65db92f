"""Derive rules from two vLLM releases: extract each release's public surface
statically (:mod:`.surface`) and diff two surfaces (:mod:`.diff`)."""

from vllm_upgrade_check.knowledge.derive.diff import (
    CategoryDiff,
    NameChange,
    Rename,
    RequirementChange,
    SurfaceDiff,
    ValueChange,
    diff_surfaces,
)
from vllm_upgrade_check.knowledge.derive.surface import (
    NAME_CATEGORIES,
    TAKES_VALUES,
    Deprecation,
    FlagArity,
    ReleaseSurface,
    SourceRef,
    extract_surface,
)

__all__ = [
    "CategoryDiff",
    "NAME_CATEGORIES",
    "Deprecation",
    "FlagArity",
    "NameChange",
    "ReleaseSurface",
    "Rename",
    "RequirementChange",
    "SourceRef",
    "SurfaceDiff",
    "TAKES_VALUES",
    "ValueChange",
    "diff_surfaces",
    "extract_surface",
]
