"""Collect the one host record (:class:`~vllm_upgrade_check.model.environment.HostModel`)
that ``env``, ``scan --env`` and ``plan`` share, from the same inputs with the same meaning:
an interpreter (``--python``) or a freeze file (``--freeze``), a captured ``nvidia-smi``
output (``--nvidia-smi``) or a live probe, and the ``--driver`` / ``--python-version``
overrides. Every fact keeps where it came from; every check that cannot run is said.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path

from vllm_upgrade_check.errors import UsageError
from vllm_upgrade_check.model.environment import Environment, HostInfo, HostModel

# The readers of the interpreter, the freeze file and nvidia-smi are imported where a host is
# read: a scan without --env builds a HostRequest and reads nothing.


@dataclass(frozen=True)
class HostRequest:
    """What the user said about the host (the shared command-line options).

    Attributes:
        python: ``--python``: another interpreter to read (run isolated).
        freeze: ``--freeze``: a ``pip freeze`` file instead of an interpreter.
        nvidia_smi: ``--nvidia-smi``: a captured ``nvidia-smi`` output (table or CSV).
        driver: ``--driver``: the NVIDIA driver version, over whatever was read.
        python_version: ``--python-version``: the host's Python (``3.12``), over the environment's.
        host_name: ``--host-name`` (empty: the probed machine's hostname).
        probe: ``--host/--no-host``: probe GPUs and driver of this machine.
    """

    python: Path | None = None
    freeze: Path | None = None
    nvidia_smi: Path | None = None
    driver: str | None = None
    python_version: str | None = None
    host_name: str = ""
    probe: bool = True

    @property
    def given(self) -> bool:
        """``True`` when any host input was named (``scan`` then checks the environment)."""
        return any(
            v is not None
            for v in (self.python, self.freeze, self.nvidia_smi, self.driver, self.python_version)
        )


def check_request(request: HostRequest) -> None:
    """Reject bad combinations and values before anything is read.

    Raises:
        UsageError: ``--python`` with ``--freeze``, a ``--driver`` that is no NVIDIA driver
            version, a ``--python-version`` that is no Python 3 version.
    """
    if request.python is not None and request.freeze is not None:
        raise UsageError(
            "--python and --freeze cannot be combined (one names an interpreter, the other a freeze file)"
        )
    from vllm_upgrade_check.parsing.nvidia_smi import DRIVER

    if request.driver is not None and not DRIVER.match(request.driver.strip()):
        raise UsageError(
            f"--driver {request.driver!r} is not an NVIDIA driver version (expected e.g. 550.54.15)"
        )
    version = request.python_version
    if version is not None and not re.fullmatch(r"3\.\d{1,2}(?:\.\d{1,2})?", version.strip()):
        raise UsageError(f"--python-version {version!r} is not a Python 3 version (expected X.Y, e.g. 3.12)")


def _environment(request: HostRequest) -> Environment:
    from vllm_upgrade_check.sources.host.environment import (
        read_current_environment,
        read_freeze_file,
        read_interpreter_environment,
    )

    if request.freeze is not None:
        return read_freeze_file(request.freeze)
    if request.python is not None:
        return read_interpreter_environment(request.python)
    return read_current_environment()


def _host(request: HostRequest) -> HostInfo | None:
    from vllm_upgrade_check.sources.host.gpus import read_host, read_nvidia_smi_file

    host = None
    if request.nvidia_smi is not None:
        host = read_nvidia_smi_file(request.nvidia_smi)
    elif request.probe and request.freeze is None:
        host = read_host()
    if request.driver is not None:
        base = host or HostInfo()
        host = replace(base, nvidia_driver=request.driver.strip(), driver_source="--driver", driver_cuda=None)
    return host


def _not_checked(model: HostModel, request: HostRequest) -> tuple[str, ...]:
    env, host = model.environment, model.host
    out: list[str] = []
    if host is None:
        why = (
            "--freeze describes another host, which was not probed"
            if request.freeze is not None
            else "--no-host"
        )
        out.append(
            f"GPUs and NVIDIA driver not read ({why}; give --nvidia-smi FILE or --driver VERSION): "
            "the CUDA driver floor and GPU checks did not run"
        )
    elif host.nvidia_driver is None and not host.rocm:
        out.append("NVIDIA driver unknown (nvidia-smi not found or did not answer): the CUDA driver floor was not checked")
    elif host.nvidia_driver is not None and not host.gpus:
        out.append(
            "GPUs unknown (only the driver version was read): compute capability and GPU memory not checked"
        )
    elif any(g.vendor == "nvidia" and g.compute_capability is None for g in host.gpus):
        out.append("GPU compute capability unknown (the nvidia-smi table does not show it): not checked")
    if env.python is None:
        out.append(
            "Python unknown (give --python-version X.Y): the release's Requires-Python was not checked"
        )
    if env.glibc is None:
        out.append("glibc unknown: the wheel's manylinux platform tag was not checked")
    if env.machine is None:
        out.append("CPU architecture unknown: the wheel's architecture was not checked")
    if env.distributions and not env.requires:
        out.append(
            "Requires-Dist of the installed distributions unknown (a freeze file lists versions, not "
            "metadata; give --python): plugins that pin vLLM and pins that conflict with the target "
            "were not checked"
        )
    if env.torch is None and "torch" not in env.distributions:
        out.append("torch not installed: the CUDA build in use is unknown")
    elif (
        env.torch is not None
        and not env.torch.cuda
        and not env.torch.hip
        and not env.torch.source.endswith("version.py")
    ):
        out.append(f"torch {env.torch.version} has no +cuXYZ label: the CUDA build in use is unknown")
    return tuple(out)


def collect_host(request: HostRequest) -> HostModel:
    """Read the host as ``request`` says, once, into one :class:`HostModel`.

    Raises:
        UsageError: as :func:`check_request`; an interpreter that cannot be run, a freeze
            file or ``nvidia-smi`` capture that cannot be read (naming file and line).
    """
    check_request(request)
    environment = _environment(request)
    python_source = environment.source if environment.python else None
    if request.python_version is not None:
        environment = replace(environment, python=request.python_version.strip())
        python_source = "--python-version"
    host = _host(request)
    name: str | None = request.host_name or None
    if name is None and request.freeze is None and request.nvidia_smi is None:
        import socket

        name = socket.gethostname()
    model = HostModel(environment, host, name, python_source)
    return replace(model, not_checked=_not_checked(model, request))
