"""The deployment host: GPUs and their driver, read from ``nvidia-smi`` (fallback
``/proc/driver/nvidia/version``) and ``amd-smi`` / ``rocm-smi``.

A host without GPUs or without these tools is a fact (no GPU found), not an error; a tool
that hangs is given up after :data:`SMI_TIMEOUT_S` seconds and the reason is kept.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from vllm_upgrade_check.model.environment import Gpu, HostInfo
from vllm_upgrade_check.model.facts import Fact, FactKind, Location

SMI_TIMEOUT_S = 20.0
"""Seconds ``nvidia-smi`` / ``amd-smi`` / ``rocm-smi`` may run."""

NVIDIA_QUERY = ["--query-gpu=name,compute_cap,driver_version,memory.total", "--format=csv,noheader"]
"""Arguments of the ``nvidia-smi`` query (one CSV line per GPU)."""

PROC_NVIDIA_VERSION = Path("/proc/driver/nvidia/version")


def _run(argv: list[str], timeout: float) -> tuple[str | None, str | None]:
    """``(stdout, None)`` or ``(None, reason)``."""
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return None, f"{Path(argv[0]).name} did not answer within {timeout:g} s"
    except OSError as exc:
        return None, f"{Path(argv[0]).name} could not run: {exc.strerror or exc}"
    if done.returncode != 0:
        last = (done.stderr.strip() or done.stdout.strip() or "no output").splitlines()[-1]
        return None, f"{Path(argv[0]).name} exited {done.returncode}: {last}"
    return done.stdout, None


def _int(text: str) -> int | None:
    found = re.search(r"\d+", text)
    return int(found.group()) if found else None


def parse_nvidia_smi(text: str) -> list[tuple[Gpu, str]]:
    """Parse ``nvidia-smi --query-gpu=name,compute_cap,driver_version,memory.total
    --format=csv,noheader`` output: ``[(gpu, driver version)]``, one per line
    (``NVIDIA H200, 9.0, 580.159.03, 143771 MiB``)."""
    out = []
    for line in text.splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) < 4 or not parts[0]:
            continue
        name, cap, driver, memory = parts[0], parts[1], parts[2], parts[3]
        cap_value = cap if re.fullmatch(r"\d+\.\d+", cap) else None
        out.append((Gpu("nvidia", name, cap_value, _int(memory)), driver))
    return out


def parse_proc_nvidia_version(text: str) -> str | None:
    """The driver version in ``/proc/driver/nvidia/version`` (``NVRM version: NVIDIA UNIX
    x86_64 Kernel Module  580.159.03  ...``)."""
    found = re.search(r"Kernel Module(?: for \S+)?\s+(\d+\.\d+(?:\.\d+)?)", text)
    return found.group(1) if found else None


def _nvidia(timeout: float) -> tuple[list[Gpu], str | None, str | None, list[str]]:
    problems: list[str] = []
    smi = shutil.which("nvidia-smi")
    if smi:
        text, problem = _run([smi, *NVIDIA_QUERY], timeout)
        if text is not None:
            parsed = parse_nvidia_smi(text)
            if parsed:
                return [g for g, _ in parsed], parsed[0][1], "nvidia-smi", problems
            problems.append("nvidia-smi printed no GPU line")
        elif problem:
            problems.append(problem)
    try:
        proc = PROC_NVIDIA_VERSION.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return [], None, None, problems
    driver = parse_proc_nvidia_version(proc)
    return [], driver, (str(PROC_NVIDIA_VERSION) if driver else None), problems


def _walk(data: Any) -> Iterator[dict[str, Any]]:
    if isinstance(data, dict):
        yield data
        for value in data.values():
            yield from _walk(value)
    elif isinstance(data, list):
        for value in data:
            yield from _walk(value)


def parse_amd_smi_static(text: str) -> list[Gpu]:
    """Parse ``amd-smi static --asic --vram --json``: one GPU per ``asic`` object
    (``market_name``, ``target_graphics_version``) with its ``vram.size`` (MB or a
    ``{"value", "unit"}`` object)."""
    try:
        data = json.loads(text)
    except ValueError:
        return []
    if isinstance(data, dict):
        data = data.get("gpu_data", [data])
    gpus = []
    for item in data if isinstance(data, list) else []:
        if not isinstance(item, dict) or not isinstance(item.get("asic"), dict):
            continue
        asic = item["asic"]
        vram = item.get("vram")
        size = vram.get("size") if isinstance(vram, dict) else None
        if isinstance(size, dict):
            size = size.get("value")
        memory = _int(str(size)) if size is not None else None
        gpus.append(
            Gpu(
                "amd",
                str(asic.get("market_name") or "AMD GPU"),
                str(asic.get("target_graphics_version") or "") or None,
                memory,
            )
        )
    return gpus


def _amd(timeout: float) -> tuple[list[Gpu], str | None, list[str]]:
    problems: list[str] = []
    rocm = None
    amd = shutil.which("amd-smi")
    if amd:
        text, problem = _run([amd, "version"], timeout)
        if text is not None:
            found = re.search(r"ROCm version:\s*([\d.]+)", text)
            rocm = found.group(1) if found else None
        text, problem2 = _run([amd, "static", "--asic", "--vram", "--json"], timeout)
        if text is not None:
            return parse_amd_smi_static(text), rocm, problems
        problems.extend(p for p in (problem, problem2) if p)
    rocm_smi = shutil.which("rocm-smi")
    if rocm_smi:
        text, problem = _run([rocm_smi, "--showproductname", "--json"], timeout)
        if text is None:
            problems.append(problem or "rocm-smi failed")
            return [], rocm, problems
        try:
            data = json.loads(text)
        except ValueError:
            problems.append("rocm-smi printed no JSON")
            return [], rocm, problems
        gpus = [
            Gpu(
                "amd",
                str(card.get("Card Series") or card.get("Card series") or "AMD GPU"),
                card.get("GFX Version"),
                None,
            )
            for key, card in (data.items() if isinstance(data, dict) else [])
            if key.startswith("card") and isinstance(card, dict)
        ]
        return gpus, rocm, problems
    return [], rocm, problems


def read_host(timeout: float = SMI_TIMEOUT_S) -> HostInfo:
    """Probe the host's GPUs and drivers; never raises (no GPU is an empty :class:`HostInfo`)."""
    nvidia, driver, source, problems = _nvidia(timeout)
    amd, rocm, amd_problems = _amd(timeout)
    return HostInfo(tuple(nvidia + amd), driver, rocm, source, tuple(problems + amd_problems))


def host_facts(host: HostInfo) -> Iterator[Fact]:
    """``platform`` facts: ``cuda_driver``, ``rocm``, and per distinct GPU model
    ``gpu_compute_capability`` (NVIDIA ``9.0``) and ``gpu_memory_gib`` (``140.4``)."""
    env = Location(None)

    def fact(name: str, value: str, raw: str) -> Fact:
        return Fact(FactKind.PLATFORM, name, env, raw=raw, value=value, origin="env", scanner="host")

    if host.nvidia_driver:
        yield fact("cuda_driver", host.nvidia_driver, f"NVIDIA driver {host.nvidia_driver}")
    if host.rocm:
        yield fact("rocm", host.rocm, f"ROCm {host.rocm}")
    seen: set[Gpu] = set()
    for gpu in host.gpus:
        if gpu in seen:
            continue
        seen.add(gpu)
        if gpu.vendor == "nvidia" and gpu.compute_capability:
            yield fact(
                "gpu_compute_capability",
                gpu.compute_capability,
                f"{gpu.name} (compute capability {gpu.compute_capability})",
            )
        if gpu.memory_gib is not None:
            yield fact("gpu_memory_gib", f"{gpu.memory_gib:g}", f"{gpu.name} ({gpu.memory_gib:g} GiB)")
