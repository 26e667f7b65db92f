"""Records of an upgrade plan: the environment a release would install
(:class:`FutureEnvironment`), each release checked against the host (:class:`ReleaseCheck`),
the recommended hops and the plan as a whole (:class:`Plan`). Made by
:mod:`vllm_upgrade_check.planning`, rendered by the plan reporters."""

from __future__ import annotations

from dataclasses import dataclass, field

from packaging.requirements import Requirement
from packaging.version import Version

from vllm_upgrade_check.model.environment import Environment
from vllm_upgrade_check.model.findings import Report
from vllm_upgrade_check.model.pack import Severity


@dataclass(frozen=True)
class PackageChange:
    """What the target's ``Requires-Dist`` does to one distribution.

    Attributes:
        name: canonical distribution name.
        requirement: the target's requirement as written in its METADATA (``torch==2.13.0``).
        installed: the installed version, ``None`` when not installed.
        action: ``upgrade``, ``downgrade`` or ``install``.
        future: the version it will have when the requirement pins one (``2.13.0``), else ``None``.
    """

    name: str
    requirement: str
    installed: str | None
    action: str
    future: str | None

    def describe(self) -> str:
        """``torch 2.11.0 -> 2.13.0 (vllm requires torch==2.13.0)``."""
        to = self.future or str(Requirement(self.requirement).specifier)
        was = self.installed or "(not installed)"
        return f"{self.name} {was} -> {to} ({self.action}; vllm requires {self.requirement})"


@dataclass(frozen=True)
class Conflict:
    """An installed distribution whose own requirement the upgrade would break (both sides named).

    Attributes:
        requirer: canonical name of the installed distribution that has the requirement.
        requirer_version: its installed version.
        requirement: its requirement as written (``vllm<0.27``).
        name: the distribution required (canonical).
        future: what that distribution would be after the upgrade (``0.27.0`` or ``>=5.5.3``).
        cause: the requirement of the target that brings ``future`` (``vllm==0.27.0``,
            ``torch==2.13.0``).
    """

    requirer: str
    requirer_version: str
    requirement: str
    name: str
    future: str
    cause: str

    def describe(self) -> str:
        """``pip check`` style: ``lmcache 0.3.1 has requirement vllm<0.27, but you will have vllm 0.27.0``."""
        have = f"{self.name} {self.future}" if self.future[:1].isdigit() else f"{self.name}{self.future}"
        return f"{self.requirer} {self.requirer_version} has requirement {self.requirement}, but you will have {have}"


@dataclass(frozen=True)
class FutureEnvironment:
    """The environment as it would be after ``pip install vllm==TARGET``.

    Attributes:
        target: the vLLM release.
        changes: distributions the target's requirements upgrade, downgrade or install.
        conflicts: installed distributions whose requirements would no longer hold.
        unchecked: installed distributions whose requirements were not checked because the
            upgrade replaces them too (their new version brings new requirements).
    """

    target: str
    changes: tuple[PackageChange, ...]
    conflicts: tuple[Conflict, ...]
    unchecked: tuple[str, ...] = ()


@dataclass(frozen=True)
class Host:
    """What the plan is made for.

    Attributes:
        env: installed (or frozen) distributions with their ``Requires-Dist``.
        python: the host's Python (``3.10`` or ``3.10.14``), ``None`` when unknown.
        driver: the NVIDIA driver (``550.54.15``), ``None`` when unknown.
        keep: what must not change: ``driver``, ``python`` and canonical distribution names.
        driver_source: where ``driver`` was read (``nvidia-smi --query-gpu``, ``--driver``).
        driver_cuda: the CUDA the driver supports natively (``nvidia-smi``'s banner ``CUDA
            Version``, ``12.4``), ``None`` when not shown.
        sources: ``(fact, value, where it came from)`` of every host fact read
            (:meth:`~vllm_upgrade_check.model.environment.HostModel.sources`).
        not_checked: one sentence per host check that could not run because a fact is unknown.
    """

    env: Environment
    python: str | None
    driver: str | None
    keep: frozenset[str] = frozenset()
    driver_source: str | None = None
    driver_cuda: str | None = None
    sources: tuple[tuple[str, str, str], ...] = ()
    not_checked: tuple[str, ...] = ()

    @property
    def cuda_in_use(self) -> tuple[int, str] | None:
        """``(CUDA major, what says so)`` of the build this host runs now: torch's CUDA
        (``2.10.0+cu128`` -> ``(12, "the torch build in use (2.10.0+cu128)")``), else vLLM's
        extensions; ``None`` when neither tells."""
        torch = self.env.torch
        if torch is not None and torch.cuda:
            return int(
                torch.cuda.split(".")[0]
            ), f"the torch build in use ({torch.version}, CUDA {torch.cuda})"
        if self.env.vllm_cuda_major is not None:
            return self.env.vllm_cuda_major, "the installed vllm's extensions"
        return None


@dataclass(frozen=True)
class Blocker:
    """One reason a release cannot be installed under the constraints.

    Attributes:
        kind: ``python``, ``driver``, ``keep`` (a kept distribution would change),
            ``conflict`` (an installed distribution's requirement would break) or ``model``
            (the release dropped a model the deployment serves).
        subject: what it is about (``python``, ``driver``, ``torch``, ``lmcache``, a model id).
        message: one sentence naming both sides.
        path: for a ``model`` blocker, the file that serves the model (``None`` otherwise).
        line: its 1-based line, when known.
    """

    kind: str
    subject: str
    message: str
    path: str | None = None
    line: int | None = None


@dataclass(frozen=True)
class ReleaseCheck:
    """One candidate release checked against the host.

    Attributes:
        release: the release.
        checked: ``False`` when its pack has no ``wheel:`` facts (nothing could be checked).
        blockers: in order: Python, driver, kept distributions, conflicts, served models
            dropped; the first is shown.
        changes: what must change and may (not kept): driver, Python, distributions pip moves.
        future: the resolved future environment (``None`` when not checked).
        build: the CUDA build to install (``CUDA 12.9 build: wheel vllm==0.26.0+cu129 from
            ...``) when it is not the default wheel, else ``None``.
        cuda: the CUDA of the release's default wheel (``13.0``, or the major alone), ``None``
            when unknown.
        notes: what the verdict rests on (CUDA minor-version compatibility and its limits).
    """

    release: str
    checked: bool
    blockers: tuple[Blocker, ...] = ()
    changes: tuple[str, ...] = ()
    future: FutureEnvironment | None = None
    build: str | None = None
    cuda: str | None = None
    notes: tuple[str, ...] = ()

    @property
    def reachable(self) -> bool:
        """``True`` when it was checked and nothing blocks it (an unchecked release is never
        claimed reachable)."""
        return self.checked and not self.blockers


@dataclass(frozen=True)
class Hop:
    """One step of the recommended path.

    Attributes:
        from_version: where the step starts (``None`` when the version in use is unknown).
        to_version: the release installed.
        reason: why the path stops here.
        report: the normal scan for this step (``run_scan`` with from/to).
        changes: what must change for this release (driver, Python, distributions), less
            what an earlier hop already changed the same way.
        migrate: rule ids to migrate at this stop (deprecated here, removed later).
    """

    from_version: str | None
    to_version: str
    reason: str
    report: Report
    changes: tuple[str, ...] = ()
    migrate: tuple[str, ...] = ()

    @property
    def blockers(self) -> int:
        """Blocker findings of the scan for this step."""
        return self.report.count(Severity.BLOCKER)


@dataclass(frozen=True)
class Plan:
    """The whole plan.

    Attributes:
        current: the vLLM version in use, ``None`` when unknown.
        current_source: where it was read (``installed vllm``, ``--from``, a file).
        newest_known: the newest release with a pack.
        reachable: the newest release reachable under the constraints (``None``: none beyond current).
        host: the host it was made for.
        releases: every release after ``current``, oldest first, checked.
        path: the recommended hops, in order.
        notes: extra lines (unknown driver, releases without wheel facts, resolver output).
        driver_source: where the driver table comes from.
    """

    current: str | None
    current_source: str
    newest_known: str
    reachable: str | None
    host: Host
    releases: tuple[ReleaseCheck, ...]
    path: tuple[Hop, ...]
    notes: tuple[str, ...] = field(default_factory=tuple)
    driver_source: str = ""

    def release(self, version: str) -> ReleaseCheck | None:
        """The check of release ``version``, ``None`` when it was not checked."""
        return next((r for r in self.releases if r.release == version), None)

    @property
    def blocked(self) -> tuple[ReleaseCheck, ...]:
        """The releases beyond :attr:`reachable`, each with its blockers."""
        limit = Version(self.reachable) if self.reachable else None
        return tuple(r for r in self.releases if r.blockers and (limit is None or Version(r.release) > limit))
