"""Scanners: each reads one kind of source and yields facts or skipped records.

:func:`default_scanners` is the ordered list the engine offers every file to; each file is
read by every scanner that accepts it.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import overload

from vllm_upgrade_check.sources.scanners.base import Scanner, SourceFile


def default_scanners(response_fields: frozenset[str] | None = None) -> list[Scanner]:
    """A fresh instance of every built-in file scanner; ``response_fields``: the response
    fields the Python scanner reports reads of, beyond its built-in ones."""
    from vllm_upgrade_check.sources.scanners.ciyaml import CiYamlScanner
    from vllm_upgrade_check.sources.scanners.conda import CondaEnvironmentScanner
    from vllm_upgrade_check.sources.scanners.dockerfile_entry import LinkedDockerfileScanner
    from vllm_upgrade_check.sources.scanners.envfiles import SystemdScanner
    from vllm_upgrade_check.sources.scanners.freeze import FreezeSnapshotScanner
    from vllm_upgrade_check.sources.scanners.helm_links import (
        LinkedHelmValuesScanner,
        LinkedMakefileScanner,
        LinkedShellScanner,
    )
    from vllm_upgrade_check.sources.scanners.launchlines import LaunchLineScanner
    from vllm_upgrade_check.sources.scanners.manifests import ManifestScanner
    from vllm_upgrade_check.sources.scanners.model_config import ModelConfigScanner
    from vllm_upgrade_check.sources.scanners.monitoring import MonitoringScanner
    from vllm_upgrade_check.sources.scanners.nvidia_smi import NvidiaSmiCaptureScanner
    from vllm_upgrade_check.sources.scanners.python.scanner import PythonSourceScanner
    from vllm_upgrade_check.sources.scanners.requirements import RequirementsScanner
    from vllm_upgrade_check.sources.scanners.serving import ServingConfigScanner
    from vllm_upgrade_check.sources.scanners.vllm_config import VllmConfigScanner

    return [
        LinkedShellScanner(),
        LinkedDockerfileScanner(),
        ManifestScanner(),
        RequirementsScanner(),
        PythonSourceScanner(response_fields),
        VllmConfigScanner(),
        LinkedHelmValuesScanner(),
        ServingConfigScanner(),
        LinkedMakefileScanner(),
        SystemdScanner(),
        MonitoringScanner(),
        NvidiaSmiCaptureScanner(),
        FreezeSnapshotScanner(),
        LaunchLineScanner(),
        ModelConfigScanner(),
        CondaEnvironmentScanner(),
        CiYamlScanner(),
    ]


class LazyScanners(Sequence[Scanner]):
    """:func:`default_scanners`, made on first use: a scan that finds no file to read (an
    empty directory, a tree the ignore rules exclude) never imports the scanner modules and
    their parsers."""

    def __init__(self, response_fields: frozenset[str] | None = None) -> None:
        self._response_fields = response_fields
        self._made: list[Scanner] | None = None

    def _all(self) -> list[Scanner]:
        if self._made is None:
            self._made = default_scanners(self._response_fields)
        return self._made

    @overload
    def __getitem__(self, index: int) -> Scanner: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[Scanner]: ...

    def __getitem__(self, index: int | slice) -> Scanner | Sequence[Scanner]:
        return self._all()[index]

    def __len__(self) -> int:
        return len(self._all())

    def __iter__(self) -> Iterator[Scanner]:
        return iter(self._all())


__all__ = ["LazyScanners", "Scanner", "SourceFile", "default_scanners"]
