"""Captured ``nvidia-smi`` output kept in a deployment repository (a node inventory, a
support bundle, CI's record of the runner): the driver and GPUs it shows become ``platform``
facts at their file and line, so the CUDA driver floor of the target release is checked
there as it is on a probed host. Recognised by content (the ``Driver Version:`` banner, or
``--query-gpu`` CSV with a ``driver_version`` header), read with the parser the probe uses
(:mod:`vllm_upgrade_check.parsing.nvidia_smi`).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

from vllm_upgrade_check.model.facts import Fact, Location
from vllm_upgrade_check.parsing.nvidia_smi import looks_like_nvidia_smi, parse_nvidia_smi_output
from vllm_upgrade_check.sources.host.gpus import host_facts, host_from_reading
from vllm_upgrade_check.sources.scanners.base import Scanner, SourceFile

SUFFIXES = (".txt", ".log", ".out", ".csv")
"""File name endings a capture is kept under (others are never read for it)."""


class NvidiaSmiCaptureScanner(Scanner):
    """``platform`` facts (``cuda_driver``, ``gpu_compute_capability``, ``gpu_memory_gib``)
    of an ``nvidia-smi`` capture, each at the line that shows it."""

    name = "nvidia-smi"

    def accepts_name(self, name: str) -> bool | None:
        lowered = name.lower()
        if "nvidia" in lowered or lowered.endswith(SUFFIXES):
            return None
        return False

    def accepts(self, source: SourceFile) -> bool:
        lowered = source.name.lower()
        return ("nvidia" in lowered or lowered.endswith(SUFFIXES)) and looks_like_nvidia_smi(source.text)

    def scan(self, source: SourceFile) -> Iterator[Fact]:
        reading = parse_nvidia_smi_output(source.text)
        if reading is None or reading.driver is None:
            return
        host = host_from_reading(reading, f"{source.relpath}:{reading.driver_line}")
        lines: dict[str, int] = {}
        for gpu, number in reading.gpus:
            lines.setdefault(gpu.name, number)
        for fact in host_facts(host):
            at = next((n for name, n in lines.items() if fact.raw.startswith(name + " (")), None)
            line = reading.driver_line if fact.name == "cuda_driver" or at is None else at
            yield replace(fact, location=Location(source.relpath, line), origin="file", scanner=self.name)
