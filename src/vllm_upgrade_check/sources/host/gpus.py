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
from dataclasses import replace
from pathlib import Path
from typing import Any

from vllm_upgrade_check.errors import UsageError
from vllm_upgrade_check.model.environment import Gpu, HostInfo
from vllm_upgrade_check.model.facts import Fact, FactKind, Location
from vllm_upgrade_check.parsing.nvidia_smi import SmiReading, parse_nvidia_smi_output

SMI_TIMEOUT_S = 20.0
"""Seconds ``nvidia-smi`` / ``amd-smi`` / ``rocm-smi`` may run."""

NVIDIA_QUERY = ["--query-gpu=name,compute_cap,driver_version,memory.total", "--format=csv,noheader"]
"""Arguments of the ``nvidia-smi`` query (one CSV line per GPU)."""

NVIDIA_DRIVER_QUERY = ("--query-gpu=driver_version", "--format=csv,noheader")
"""The fallback query: the driver version alone (some stand-ins and old tools answer only it)."""

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
    reading = parse_nvidia_smi_output(text)
    if reading is None or reading.driver is None:
        return []
    return [(gpu, reading.driver) for gpu, _line in reading.gpus]


def parse_proc_nvidia_version(text: str) -> str | None:
    """The driver version in ``/proc/driver/nvidia/version`` (``NVRM version: NVIDIA UNIX
    x86_64 Kernel Module  580.159.03  ...``)."""
    found = re.search(r"Kernel Module(?: for \S+)?\s+(\d+\.\d+(?:\.\d+)?)", text)
    return found.group(1) if found else None


def host_from_reading(reading: SmiReading, source: str, problems: tuple[str, ...] = ()) -> HostInfo:
    """A :class:`HostInfo` from one ``nvidia-smi`` reading; ``source`` says where it came from."""
    return HostInfo(
        tuple(g for g, _line in reading.gpus),
        reading.driver,
        None,
        source,
        problems,
        gpu_source=source if reading.gpus else None,
        driver_cuda=reading.cuda,
    )


def read_nvidia_smi_file(path: Path) -> HostInfo:
    """Read a captured ``nvidia-smi`` output (the table, or ``--query-gpu`` CSV) for
    ``--nvidia-smi FILE``.

    Raises:
        UsageError: unreadable file, or no banner / driver CSV in it (naming the file).
    """
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise UsageError(f"cannot read nvidia-smi output: {exc.strerror or exc}", str(path)) from None
    reading = parse_nvidia_smi_output(text)
    if reading is None or reading.driver is None:
        raise UsageError(
            "not nvidia-smi output (expected its table with the 'Driver Version:' banner, or "
            "--query-gpu CSV with a driver_version column)",
            str(path),
        )
    line = f":{reading.driver_line}" if reading.driver_line else ""
    host = host_from_reading(reading, f"{path}{line} (captured nvidia-smi {reading.form})")
    if reading.gpus:
        first = reading.gpus[0][1]
        host = replace(host, gpu_source=f"{path}:{first} (captured nvidia-smi {reading.form})")
    return host


def _nvidia(timeout: float) -> tuple[HostInfo | None, list[str]]:
    """Ask ``nvidia-smi`` the full query, then the driver alone, then its table; then read
    ``/proc/driver/nvidia/version``. ``(host or None, problems)``."""
    problems: list[str] = []
    smi = shutil.which("nvidia-smi")
    if smi:
        asks: tuple[tuple[list[str], str], ...] = (
            ([*NVIDIA_QUERY], "nvidia-smi --query-gpu"),
            (list(NVIDIA_DRIVER_QUERY), "nvidia-smi --query-gpu=driver_version"),
            ([], "nvidia-smi (table)"),
        )
        for argv, label in asks:
            text, problem = _run([smi, *argv], timeout)
            reading = parse_nvidia_smi_output(text) if text is not None else None
            if reading is not None and reading.driver is not None:
                return host_from_reading(reading, label, tuple(problems)), problems
            said = problem or f"{label} printed no driver version"
            if said not in problems:  # one tool failing the same way for every ask is said once
                problems.append(said)
            if problem and "did not answer" in problem:
                break  # a hanging tool is not asked again
    try:
        proc = PROC_NVIDIA_VERSION.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None, problems
    driver = parse_proc_nvidia_version(proc)
    if driver is None:
        return None, problems
    return HostInfo((), driver, None, str(PROC_NVIDIA_VERSION), tuple(problems)), problems


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
    nvidia, problems = _nvidia(timeout)
    amd, rocm, amd_problems = _amd(timeout)
    if nvidia is None:
        return HostInfo(tuple(amd), None, rocm, None, tuple(problems + amd_problems))
    from dataclasses import replace

    # A fallback that answered: the failed asks before it are not problems of the host.
    return replace(nvidia, gpus=nvidia.gpus + tuple(amd), rocm=rocm, problems=tuple(amd_problems))


def host_facts(host: HostInfo) -> Iterator[Fact]:
    """``platform`` facts: ``cuda_driver``, ``rocm``, and per distinct GPU model
    ``gpu_compute_capability`` (NVIDIA ``9.0``) and ``gpu_memory_gib`` (``140.4``)."""
    env = Location(None)

    def fact(name: str, value: str, raw: str) -> Fact:
        return Fact(FactKind.PLATFORM, name, env, raw=raw, value=value, origin="env", scanner="host")

    if host.nvidia_driver:
        where = f" ({host.driver_source})" if host.driver_source else ""
        yield fact("cuda_driver", host.nvidia_driver, f"NVIDIA driver {host.nvidia_driver}{where}")
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
