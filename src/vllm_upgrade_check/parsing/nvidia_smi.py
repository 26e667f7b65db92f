"""``nvidia-smi`` output, as the tool prints it and as teams keep it in a file: the table
(its banner ``| NVIDIA-SMI 565.57.01  Driver Version: 565.57.01  CUDA Version: 12.7 |`` and
one row per GPU) and ``--query-gpu=... --format=csv`` output (with or without its header;
without a header the columns are those of :data:`FULL_QUERY`, or ``driver_version`` alone).

One parser for the probe (:mod:`vllm_upgrade_check.sources.host.gpus`), for ``--nvidia-smi
FILE`` and for captures kept in a scanned repository; it records the line of every value.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from vllm_upgrade_check.model.environment import Gpu

FULL_QUERY = ("name", "compute_cap", "driver_version", "memory.total")
"""The ``--query-gpu`` fields the probe asks for, in order."""

DRIVER = re.compile(r"^\d{3,4}\.\d{1,3}(?:\.\d{1,3})?$")
"""An NVIDIA Linux driver version (``550.54.15``, ``580.65.06``, ``470.82``)."""

_BANNER = re.compile(
    r"NVIDIA-SMI\s+(?P<smi>\S+)\s+(?:KMD\s+)?Driver\s+Version:\s*(?P<driver>\d{3,4}\.\d{1,3}(?:\.\d{1,3})?)"
    r"(?:\s+(?:CUDA\s+Version|CUDA\s+UMD\s+Version):\s*(?P<cuda>\d+\.\d+|N/A))?"
)
_GPU_ROW = re.compile(r"^\|\s+(?P<index>\d+)\s+(?P<name>\S.*?)\s+(?:On|Off)\s+\|")
_MEMORY = re.compile(r"(\d+)\s*MiB\s*/\s*(\d+)\s*MiB")


@dataclass(frozen=True)
class SmiReading:
    """What one ``nvidia-smi`` output says.

    Attributes:
        form: ``table`` (the banner and GPU rows), ``csv`` (a query with a header) or
            ``csv-noheader``.
        driver: the driver version, ``None`` when the output names none.
        driver_line: its 1-based line.
        cuda: the highest CUDA version the driver supports (the banner's ``CUDA Version``),
            ``None`` when not shown.
        gpus: ``(gpu, line)`` per GPU row; compute capability only from a CSV
            ``compute_cap`` column (the table does not show it).
    """

    form: str
    driver: str | None
    driver_line: int | None
    cuda: str | None
    gpus: tuple[tuple[Gpu, int], ...]


def _int(text: str) -> int | None:
    found = re.search(r"\d+", text)
    return int(found.group()) if found else None


def _cap(text: str) -> str | None:
    return text if re.fullmatch(r"\d+\.\d+", text) else None


def _table(lines: list[str]) -> SmiReading | None:
    driver = cuda = None
    driver_line = None
    gpus: list[tuple[Gpu, int]] = []
    for number, line in enumerate(lines, start=1):
        banner = _BANNER.search(line)
        if banner and driver is None:
            driver, driver_line = banner.group("driver"), number
            cuda = banner.group("cuda") if banner.group("cuda") not in (None, "N/A") else None
            continue
        row = _GPU_ROW.match(line)
        if driver is not None and row:
            memory = _MEMORY.search(lines[number]) if number < len(lines) else None
            total = int(memory.group(2)) if memory else None
            gpus.append((Gpu("nvidia", row.group("name").strip(), None, total), number))
    if driver is None:
        return None
    return SmiReading("table", driver, driver_line, cuda, tuple(gpus))


def _header_fields(line: str) -> list[str]:
    """``name, driver_version, memory.total [MiB]`` -> ``["name", "driver_version", "memory.total"]``."""
    return [re.sub(r"\s*\[.*\]\s*$", "", cell.strip()).lower() for cell in line.split(",")]


def _csv(lines: list[str]) -> SmiReading | None:
    numbered = [(n, line) for n, line in enumerate(lines, start=1) if line.strip()]
    if not numbered:
        return None
    form = "csv-noheader"
    fields: list[str] | None = None
    head = _header_fields(numbered[0][1])
    if "driver_version" in head:
        fields, form, numbered = head, "csv", numbered[1:]
    driver = driver_line = None
    gpus: list[tuple[Gpu, int]] = []
    for number, line in numbered:
        cells = [c.strip() for c in line.split(",")]
        names = fields
        if names is None:
            if len(cells) == len(FULL_QUERY):
                names = list(FULL_QUERY)
            elif len(cells) == 1 and DRIVER.match(cells[0]):
                names = ["driver_version"]
            else:
                return None
        if len(cells) != len(names):
            return None
        row = dict(zip(names, cells, strict=True))
        version = row.get("driver_version", "")
        if not DRIVER.match(version):
            return None
        if driver is None:
            driver, driver_line = version, number
        if row.get("name"):
            memory = row.get("memory.total")
            gpu = Gpu(
                "nvidia", row["name"], _cap(row.get("compute_cap", "")), _int(memory) if memory else None
            )
            gpus.append((gpu, number))
    if driver is None:
        return None
    return SmiReading(form, driver, driver_line, None, tuple(gpus))


def parse_nvidia_smi_output(text: str) -> SmiReading | None:
    """Read a table (banner) or CSV ``nvidia-smi`` output; ``None`` when it is neither (no
    banner, and not CSV rows that each carry a driver version)."""
    lines = text.splitlines()
    return _table(lines) or _csv(lines)


def looks_like_nvidia_smi(text: str) -> bool:
    """Cheap test: the text holds an ``nvidia-smi`` banner, or starts with a CSV header that
    has a ``driver_version`` column."""
    if "NVIDIA-SMI" in text and _BANNER.search(text):
        return True
    first = next((line for line in text.splitlines() if line.strip()), "")
    return "driver_version" in _header_fields(first)
