"""Static extraction of the public surface of a vLLM release.

Everything here reads files only: Python sources are parsed with :mod:`ast`,
``METADATA`` with :mod:`email.parser`, compiled extensions with a small ELF
dynamic-section reader.  Nothing from the release is imported or executed.

A release can be given as a ``.whl`` file, an unpacked wheel directory, or a
``site-packages`` directory holding ``vllm/`` and ``vllm-*.dist-info``.
:func:`extract_surface` (:mod:`.extract`) reads one into a
:class:`ReleaseSurface` (:mod:`.model`).
"""

from vllm_upgrade_check.knowledge.derive.surface.extract import extract_surface
from vllm_upgrade_check.knowledge.derive.surface.model import (
    NAME_CATEGORIES,
    TAKES_VALUES,
    Deprecation,
    FlagArity,
    ReleaseSurface,
    SourceRef,
)

__all__ = [
    "NAME_CATEGORIES",
    "TAKES_VALUES",
    "Deprecation",
    "FlagArity",
    "ReleaseSurface",
    "SourceRef",
    "extract_surface",
]
