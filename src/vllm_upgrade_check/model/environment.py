"""Records of the environment a deployment runs in: the Python environment (distributions,
interpreter, torch's build, vLLM's compiled extensions) and the host (GPUs and drivers).

They are read by :mod:`vllm_upgrade_check.sources.host` and used by the matcher (as facts),
the planner and the reporters.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from packaging.utils import canonicalize_name


@dataclass(frozen=True)
class TorchBuild:
    """torch's build, read from ``torch/version.py`` as text (or a freeze file's local label).

    Attributes:
        version: ``__version__`` (``2.11.0+cu130``).
        cuda: the CUDA toolkit torch was built with (``13.0``), ``None`` for CPU/ROCm builds.
        hip: the ROCm/HIP version of a ROCm build (``6.4.43482``), else ``None``.
        source: the file (or freeze line) it was read from.
    """

    version: str | None
    cuda: str | None
    hip: str | None
    source: str


@dataclass(frozen=True)
class Environment:
    """What is installed where the deployment runs.

    Attributes:
        distributions: canonical distribution name -> version.
        python: the interpreter version (``3.11.7``), ``None`` when unknown (a freeze file).
        machine: CPU architecture (``x86_64``), ``None`` when unknown.
        source: where it was read (``current interpreter ...``, an interpreter path, a freeze file).
        glibc: the C library version (``2.35``) when it is glibc, else ``None``.
        requires: canonical distribution name -> its ``Requires-Dist`` lines.
        unversioned: canonical names installed without a known version (``-e`` / ``@ URL`` lines).
        paths: the ``sys.path`` directories the distributions were read from.
        torch: torch's build, when torch is installed and its build could be read.
        vllm_cuda_major: CUDA major of the installed ``vllm/_C*.so`` (``DT_NEEDED`` of
            ``libcudart.so.N``), ``None`` when not installed or not a CUDA build.
        vllm_cuda_source: the extension file ``vllm_cuda_major`` was read from.
        markers: PEP 508 marker environment of the interpreter (for ``Requires-Dist`` markers).
    """

    distributions: dict[str, str]
    python: str | None
    machine: str | None
    source: str
    glibc: str | None = None
    requires: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    unversioned: tuple[str, ...] = ()
    paths: tuple[str, ...] = ()
    torch: TorchBuild | None = None
    vllm_cuda_major: int | None = None
    vllm_cuda_source: str | None = None
    markers: Mapping[str, str] = field(default_factory=dict)

    @property
    def vllm(self) -> str | None:
        """The installed vllm version, if any."""
        return self.distributions.get("vllm")

    def installed(self, name: str) -> bool:
        """``True`` when distribution ``name`` is installed (with or without a known version)."""
        key = canonicalize_name(name)
        return key in self.distributions or key in self.unversioned


@dataclass(frozen=True)
class Gpu:
    """One GPU.

    Attributes:
        vendor: ``nvidia`` or ``amd``.
        name: the product name (``NVIDIA H200``).
        compute_capability: NVIDIA compute capability (``9.0``) or AMD gfx target (``gfx942``).
        memory_mib: total memory in MiB, if known.
    """

    vendor: str
    name: str
    compute_capability: str | None
    memory_mib: int | None

    @property
    def memory_gib(self) -> float | None:
        """Total memory in GiB (1 GiB = 1024 MiB), rounded to 0.1."""
        return None if self.memory_mib is None else round(self.memory_mib / 1024, 1)


@dataclass(frozen=True)
class HostInfo:
    """GPUs and drivers of the host.

    Attributes:
        gpus: every GPU found (possibly none).
        nvidia_driver: the NVIDIA kernel driver version (``580.159.03``), if present.
        rocm: the ROCm version amd-smi reports, if present.
        driver_source: how the driver version was read (``nvidia-smi``, ``/proc/driver/nvidia/version``).
        problems: tools that were present but failed (timeout, bad output), one sentence each.
        gpu_source: how the GPUs were read (``nvidia-smi --query-gpu``, a capture file).
        driver_cuda: the highest CUDA version the driver supports (``12.7``, the banner's
            ``CUDA Version``), when shown.
    """

    gpus: tuple[Gpu, ...] = ()
    nvidia_driver: str | None = None
    rocm: str | None = None
    driver_source: str | None = None
    problems: tuple[str, ...] = field(default_factory=tuple)
    gpu_source: str | None = None
    driver_cuda: str | None = None


@dataclass(frozen=True)
class HostModel:
    """The one record of a host that ``env``, ``scan --env`` and ``plan`` all use: its Python
    environment, its GPUs and driver, and where each fact came from.

    Attributes:
        environment: the interpreter and its distributions (``python`` already the
            ``--python-version`` override when one was given).
        host: GPUs and driver; ``None`` when they were not read (``--no-host``, or
            ``--freeze`` without ``--nvidia-smi``/``--driver``).
        name: the host's name (``--host-name``, else the probed machine's hostname; ``None``
            for a freeze file without ``--host-name``).
        python_source: where ``environment.python`` came from (``--python-version``, the
            interpreter), ``None`` when unknown.
        not_checked: one sentence per host check that could not run because a fact is unknown.
    """

    environment: Environment
    host: HostInfo | None
    name: str | None
    python_source: str | None
    not_checked: tuple[str, ...] = ()

    @property
    def driver(self) -> str | None:
        """The NVIDIA driver version, ``None`` when unknown."""
        return self.host.nvidia_driver if self.host is not None else None

    @property
    def system(self) -> str | None:
        """The operating system (``Linux``), from the interpreter's marker environment."""
        return self.environment.markers.get("platform_system") or None

    def sources(self) -> list[tuple[str, str, str]]:
        """``(fact, value, where it came from)`` for every host fact, in display order: a
        probe (``nvidia-smi --query-gpu``, the interpreter), a file and line (a capture, a
        freeze file), an override (``--driver``, ``--python-version``), or ``unknown``
        (value and source ``unknown``: :attr:`not_checked` says which check it stopped)."""
        env, host = self.environment, self.host
        out: list[tuple[str, str, str]] = []
        unknown = ("unknown", "unknown")
        out.append(("python", env.python, self.python_source or env.source) if env.python else ("python", *unknown))
        if self.system:
            out.append(("os", self.system, env.source))
        out.append(("machine", env.machine, env.source) if env.machine else ("machine", *unknown))
        out.append(("glibc", env.glibc, env.source) if env.glibc else ("glibc", *unknown))
        out.append(("distributions", str(len(env.distributions)), env.source))
        if env.torch is not None:
            torch = env.torch
            build = (
                f"CUDA {torch.cuda}"
                if torch.cuda
                else f"ROCm {torch.hip}"
                if torch.hip
                else "CPU"
                if torch.source.endswith("version.py")
                else "build unknown: no +cuXYZ label"
            )
            out.append(("torch", f"{env.torch.version} ({build})", env.torch.source))
        if env.vllm_cuda_major is not None:
            out.append(("vllm extensions", f"CUDA {env.vllm_cuda_major}", env.vllm_cuda_source or env.source))
        if env.torch is None and "torch" not in env.distributions:
            out.append(("torch", "not installed", env.source))
        if host is not None and host.nvidia_driver:
            shown = host.nvidia_driver + (f" (supports CUDA {host.driver_cuda})" if host.driver_cuda else "")
            out.append(("NVIDIA driver", shown, host.driver_source or "unknown"))
        elif host is None or not host.rocm:
            out.append(("NVIDIA driver", *unknown))
        if host is not None and host.rocm:
            out.append(("ROCm", host.rocm, "amd-smi"))
        if host is not None and host.gpus:
            caps = sorted({g.compute_capability for g in host.gpus if g.compute_capability})
            text = f"{len(host.gpus)}" + (f" (compute capability {', '.join(caps)})" if caps else "")
            out.append(("GPUs", text, host.gpu_source or host.driver_source or "unknown"))
        elif host is not None and host.nvidia_driver is None and host.rocm is None and not host.problems:
            out.append(("GPUs", "none found", host.gpu_source or "probe (nvidia-smi, amd-smi, rocm-smi)"))
        else:
            out.append(("GPUs", *unknown))
        return out
