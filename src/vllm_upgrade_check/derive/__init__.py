"""Derive rules from two vLLM releases: extract each release's public surface
statically (:mod:`.surface`) and diff two surfaces (:mod:`.diff`)."""

from vllm_upgrade_check.derive.diff import (
    CategoryDiff,
    NameChange,
    Rename,
    RequirementChange,
    SurfaceDiff,
    ValueChange,
    diff_surfaces,
)
from vllm_upgrade_check.derive.surface import (
    NAME_CATEGORIES,
    Deprecation,
    ReleaseSurface,
    SourceRef,
    extract_surface,
)

__all__ = [
    "CategoryDiff",
    "NAME_CATEGORIES",
    "Deprecation",
    "NameChange",
    "ReleaseSurface",
    "Rename",
    "RequirementChange",
    "SourceRef",
    "SurfaceDiff",
    "ValueChange",
    "diff_surfaces",
    "extract_surface",
]
