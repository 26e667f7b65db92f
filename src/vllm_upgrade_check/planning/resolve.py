"""The future environment: what ``pip install vllm==TARGET`` would change, before anyone runs it.

Offline and pure (:func:`resolve_future`): the target wheel's ``Requires-Dist`` (kept in the
target's pack as ``wheel.requires_dist``, copied from the wheel's METADATA) against the
installed or frozen distributions, with every marker evaluated for the *host's* Python and
platform (:func:`marker_environment`), never the running interpreter; then every installed
distribution's own ``Requires-Dist`` against the versions the upgrade would install, reported
the way ``pip check`` reports the present (``lmcache 0.3.1 has requirement vllm<0.27, but you
will have vllm 0.27.0``).

Online and opt-in (:func:`pip_dry_run`, ``plan --resolve``): a real resolver run
(``pip install --dry-run --report -``) in a throwaway virtual environment.

The CUDA driver table is :func:`vllm_upgrade_check.knowledge.envrules.load_driver_table`
(``rules/data/cuda-drivers.yaml``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from packaging.markers import UndefinedEnvironmentName
from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from vllm_upgrade_check.matching.matcher import specifiers_conflict
from vllm_upgrade_check.model.environment import Environment
from vllm_upgrade_check.model.plan import Conflict, FutureEnvironment, PackageChange

PIP_TIMEOUT_S = 600.0
"""Seconds ``--resolve`` gives pip (it downloads metadata) before giving up."""


def marker_environment(env: Environment, python: str | None = None) -> dict[str, str]:
    """The PEP 508 marker environment of the host ``env`` describes.

    Starts from ``env.markers`` (read with the environment) or, when absent, a Linux CPython
    default; ``python`` (else ``env.python``) and ``env.machine`` override the interpreter's
    own keys, so ``--python-version 3.10`` evaluates ``python_version < "3.11"`` as true
    whatever interpreter runs the tool.
    """
    out = {
        "implementation_name": "cpython",
        "platform_python_implementation": "CPython",
        "os_name": "posix",
        "sys_platform": "linux",
        "platform_system": "Linux",
        "platform_release": "",
        "platform_version": "",
        "platform_machine": "x86_64",
    }
    out.update(env.markers)
    if env.machine:
        out["platform_machine"] = env.machine
    version = python or env.python
    if version:
        parts = version.split(".")
        out["python_version"] = ".".join(parts[:2])
        full = version if len(parts) >= 3 else f"{version}.0"
        out["python_full_version"] = full
        out["implementation_version"] = full
    return out


def applies(req: Requirement, markers: Mapping[str, str]) -> bool:
    """``True`` when ``req``'s marker holds for ``markers`` with no extra requested.

    A marker naming a variable the environment lacks is taken to apply (the cautious answer).
    """
    if req.marker is None:
        return True
    try:
        return bool(req.marker.evaluate({**markers, "extra": ""}))
    except UndefinedEnvironmentName:
        return True


def _pinned(spec: SpecifierSet) -> str | None:
    pins = [s.version for s in spec if s.operator in ("==", "===") and not s.version.endswith(".*")]
    return pins[0] if len(pins) == 1 else None


def _direction(installed: Version, spec: SpecifierSet) -> str:
    for item in spec:
        try:
            bound = Version(item.version.removesuffix(".*"))
        except InvalidVersion:
            continue
        if item.operator in ("==", "===", ">=", ">", "~=") and installed < bound:
            return "upgrade"
    return "downgrade"


def _applicable(lines: Iterable[str], markers: dict[str, str]) -> Iterator[tuple[Requirement, str, str]]:
    """``(requirement, canonical name, requirement without its marker)`` of every line that
    parses and whose marker holds for the host; other lines are skipped."""
    for line in lines:
        try:
            req = Requirement(line)
        except InvalidRequirement:
            continue
        if applies(req, markers):
            yield req, canonicalize_name(req.name), str(req).split(";", 1)[0].strip()


def resolve_future(
    env: Environment, target: str, requires_dist: Sequence[str], python: str | None = None
) -> FutureEnvironment:
    """Check the environment as it would be after ``pip install vllm==target``. Pure.

    Args:
        env: the installed (or frozen) distributions and their ``Requires-Dist``.
        target: the vLLM release (``0.27.0``).
        requires_dist: the target wheel's ``Requires-Dist`` lines, markers included.
        python: the host's Python (``3.10``) when it differs from ``env.python``.

    Returns:
        The changes and the conflicts; a requirement line that does not parse is ignored.
    """
    markers = marker_environment(env, python)
    future: dict[str, tuple[str, str]] = {"vllm": (target, f"vllm=={target}")}
    ranges: dict[str, tuple[str, str]] = {}
    changes: list[PackageChange] = []
    for req, name, text in _applicable(requires_dist, markers):
        pin = _pinned(req.specifier)
        installed = env.distributions.get(name)
        if installed is not None and req.specifier.contains(installed, prereleases=True):
            continue
        if installed is None:
            action = "install"
        else:
            try:
                action = _direction(Version(installed), req.specifier)
            except InvalidVersion:
                action = "upgrade"
        changes.append(PackageChange(name, text, installed, action, pin))
        if pin is not None:
            future[name] = (pin, text)
        elif str(req.specifier):
            ranges[name] = (str(req.specifier), text)
    conflicts: list[Conflict] = []
    unchecked: list[str] = []
    replaced = set(future) | set(ranges)
    for owner, lines in sorted(env.requires.items()):
        if owner in replaced:
            if owner != "vllm" and lines:
                unchecked.append(owner)
            continue
        for req, name, written in _applicable(lines, markers):
            owner_version = env.distributions.get(owner, "?")
            if name in future:
                version, cause = future[name]
                if not req.specifier.contains(version, prereleases=True):
                    conflicts.append(Conflict(owner, owner_version, written, name, version, cause))
            elif name in ranges:
                spec, cause = ranges[name]
                if specifiers_conflict(str(req.specifier), spec):
                    conflicts.append(Conflict(owner, owner_version, written, name, spec, cause))
    return FutureEnvironment(target, tuple(changes), tuple(conflicts), tuple(unchecked))


@dataclass(frozen=True)
class ResolverResult:
    """What a real resolver said (``plan --resolve``).

    Attributes:
        ok: ``True`` when it found a set of distributions to install.
        install: canonical name -> version it would install.
        error: its last error line when it failed.
    """

    ok: bool
    install: dict[str, str]
    error: str | None = None


def parse_pip_report(text: str) -> dict[str, str]:
    """Canonical name -> version of every ``install`` item of a ``pip install --report`` JSON.

    Raises:
        ValueError: not a pip installation report.
    """
    data: Any = json.loads(text)
    if not isinstance(data, dict) or not isinstance(data.get("install"), list):
        raise ValueError("not a pip installation report (no 'install' list)")
    out: dict[str, str] = {}
    for item in data["install"]:
        meta = item.get("metadata") or {}
        if meta.get("name") and meta.get("version"):
            out[canonicalize_name(meta["name"])] = str(meta["version"])
    return out


def pip_dry_run(
    target: str, held: Sequence[str] = (), python: str | None = None, timeout: float = PIP_TIMEOUT_S
) -> ResolverResult:
    """Ask pip's resolver (needs the network): ``pip install --dry-run --report -
    --ignore-installed vllm==target *held`` in a throwaway virtual environment.

    Args:
        target: the vLLM release.
        held: requirements the resolution must keep (``lmcache==0.3.1``, kept packages).
        python: the host's ``X.Y`` when it differs from this interpreter's (passed as
            ``--python-version`` with ``--only-binary=:all:``).
        timeout: seconds before pip is given up.

    Returns:
        The result; failures (no resolution, no network, timeout) are ``ok=False`` with the reason.
    """
    with tempfile.TemporaryDirectory(prefix="vuc-resolve-") as tmp:
        venv = Path(tmp) / "venv"
        try:
            subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True)
        except (OSError, subprocess.CalledProcessError) as exc:
            return ResolverResult(False, {}, f"cannot create a virtual environment: {exc}")
        argv = [str(venv / "bin" / "python"), "-m", "pip", "install", "--dry-run", "--quiet"]
        argv += ["--report", "-", "--ignore-installed", f"vllm=={target}", *held]
        mine = f"{sys.version_info.major}.{sys.version_info.minor}"
        if python and ".".join(python.split(".")[:2]) != mine:
            argv += ["--python-version", ".".join(python.split(".")[:2]), "--only-binary=:all:"]
        try:
            done = subprocess.run(
                argv,
                capture_output=True,
                text=True,
                timeout=timeout,
                check=False,
                env={**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"},
            )
        except subprocess.TimeoutExpired:
            return ResolverResult(False, {}, f"pip did not finish within {timeout:g} s")
        except OSError as exc:
            return ResolverResult(False, {}, f"cannot run pip: {exc}")
    if done.returncode != 0:
        lines = [x for x in done.stderr.strip().splitlines() if x.strip()]
        return ResolverResult(False, {}, lines[-1].strip() if lines else f"pip exited {done.returncode}")
    try:
        return ResolverResult(True, parse_pip_report(done.stdout))
    except ValueError as exc:
        return ResolverResult(False, {}, str(exc))
