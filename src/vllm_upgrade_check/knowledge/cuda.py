"""The CUDA builds of each vLLM release and what a host's driver makes of them.

Data: ``rules/data/cuda-variants.yaml`` (:func:`load_cuda_variants`): the CUDA of torch's
default PyPI wheel per torch release, vLLM's own default build where it differs, and the other
CUDA builds vLLM publishes (``+cuXYZ`` wheels, ``-cuXYZ`` image tags), each with the public
source it was read from; and the driver table ``rules/data/cuda-drivers.yaml`` (the floor of
each CUDA major, the GA driver of each minor).

Pure functions on that data: :func:`release_cuda` (the builds of one release),
:func:`reach` (which build of a release a driver runs, and why) and :func:`reach_summary`
(the releases of a registry a host reaches with the default wheel, through another CUDA
build, or only after a driver upgrade). ``env`` and ``plan`` both use them.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import SpecifierSet
from packaging.version import InvalidVersion, Version
from pydantic import BaseModel, ConfigDict, ValidationError

from vllm_upgrade_check.errors import RulePackError
from vllm_upgrade_check.knowledge.registry import Registry
from vllm_upgrade_check.model.pack import WheelFacts
from vllm_upgrade_check.parsing.yamlnodes import YamlProblem, compose_documents, to_python

DRIVER_TABLE = "data/cuda-drivers.yaml"
"""The bundled table, relative to the ``rules`` package."""


class CudaDriver(BaseModel):
    """One row: a CUDA major and the minimum Linux driver of its minor-version compatibility."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    major: int
    minimum_driver: str
    ga_drivers: dict[str, str] = {}


class DriverTable(BaseModel):
    """``rules/data/cuda-drivers.yaml``: rows with the source they were copied from."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    schema_version: int
    source: str
    source_url: str
    cuda: list[CudaDriver]

    def minimum_for(self, major: int) -> str | None:
        """The minimum driver version for CUDA ``major``, or ``None`` when the table lacks it."""
        return next((row.minimum_driver for row in self.cuda if row.major == major), None)


def load_driver_table(path: Path | None = None) -> DriverTable:
    """Load the driver table (the bundled one by default, read once per process).

    Raises:
        RulePackError: YAML or schema problems (naming the file).
    """
    if path is None:
        return _bundled_driver_table()
    return _read_driver_table(path)


@lru_cache(maxsize=1)
def _bundled_driver_table() -> DriverTable:
    return _read_driver_table(Path(str(resources.files("vllm_upgrade_check.rules").joinpath(DRIVER_TABLE))))


def _read_driver_table(path: Path) -> DriverTable:
    try:
        docs = compose_documents(path.read_text(encoding="utf-8"))
        return DriverTable.model_validate(to_python(docs[0]))
    except (OSError, YamlProblem, IndexError) as exc:
        raise RulePackError(f"cannot load the CUDA driver table: {exc}", str(path)) from None
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise RulePackError(f"{where}: {first['msg']}", str(path)) from None


VARIANTS_TABLE = "data/cuda-variants.yaml"
"""The bundled table, relative to the ``rules`` package."""

PTX_CAVEAT = (
    "kernels the build ships only as PTX of a newer toolkit cannot be JIT-compiled by this driver "
    "(cudaErrorUnsupportedPtxVersion), and features of the newer minor that need its driver are unavailable"
)
"""The limit of CUDA minor-version compatibility (NVIDIA CUDA Compatibility guide)."""


class Source(BaseModel):
    """Where a fact was read: a public page and what it says there."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    url: str
    finding: str


class TorchCuda(BaseModel):
    """The CUDA of torch's default PyPI wheel (Linux x86_64) for torch ``X.Y``."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    torch: str
    cuda: str
    evidence: list[Source]


class Variant(BaseModel):
    """Another CUDA build vLLM publishes of a release.

    Attributes:
        cuda: its CUDA toolkit (``12.9``).
        wheel: the wheel's local version label (``+cu129``).
        index: where the wheel is (``{release}`` stands for the release).
        image: the vllm/vllm-openai image tag, when one is published.
        seen: releases a public source shows this build for; for the other releases of the
            run it is what vLLM's release pipeline publishes, not confirmed per release.
        evidence: the sources.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)
    cuda: str
    wheel: str
    index: str
    image: str | None = None
    seen: list[str] = []
    evidence: list[Source]

    def where(self, release: str) -> str:
        """``wheel vllm==0.21.0+cu129 from https://wheels.vllm.ai/0.21.0/cu129 (with torch from
        https://download.pytorch.org/whl/cu129), image vllm/vllm-openai:v0.21.0-cu129``."""
        tag = "cu" + self.cuda.replace(".", "")
        text = (
            f"wheel vllm=={release}{self.wheel} from {self.index.format(release=release)} "
            f"(with torch from https://download.pytorch.org/whl/{tag})"
        )
        if self.image:
            text += f", image {self.image.format(release=release)}"
        if release not in self.seen:
            text += "; expected from vLLM's release pipeline, not confirmed for this release"
        return text


class ReleaseRun(BaseModel):
    """A run of releases (``releases``: a specifier over the release version) and its builds.

    ``variants`` ``None``: the other builds are unknown; ``[]``: none is known to exist.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)
    releases: str
    build_cuda: str | None = None
    build_evidence: list[Source] = []
    variants: list[Variant] | None = None
    evidence: list[Source] = []

    def covers(self, release: str) -> bool:
        """``True`` when ``release`` is in this run."""
        return SpecifierSet(self.releases).contains(release, prereleases=True)


class CudaVariants(BaseModel):
    """``rules/data/cuda-variants.yaml``."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    schema_version: int
    torch: list[TorchCuda]
    releases: list[ReleaseRun]

    def run_of(self, release: str) -> ReleaseRun | None:
        """The run that covers ``release`` (the first), ``None`` when none does."""
        return next((r for r in self.releases if r.covers(release)), None)

    def torch_cuda(self, torch: str) -> TorchCuda | None:
        """The row of torch ``torch`` (``2.9.1`` -> the ``2.9`` row), ``None`` when absent."""
        try:
            key = ".".join(str(p) for p in Version(torch).release[:2])
        except InvalidVersion:
            return None
        return next((row for row in self.torch if row.torch == key), None)


def load_cuda_variants(path: Path | None = None) -> CudaVariants:
    """Load the variants table (the bundled one by default, read once per process).

    Raises:
        RulePackError: YAML or schema problems, or a run whose ``releases`` is no specifier
            (naming the file).
    """
    if path is None:
        return _bundled_variants()
    return _read_variants(path)


@lru_cache(maxsize=1)
def _bundled_variants() -> CudaVariants:
    return _read_variants(Path(str(resources.files("vllm_upgrade_check.rules").joinpath(VARIANTS_TABLE))))


def _read_variants(path: Path) -> CudaVariants:
    try:
        docs = compose_documents(path.read_text(encoding="utf-8"))
        table = CudaVariants.model_validate(to_python(docs[0]))
        for run in table.releases:
            SpecifierSet(run.releases)
        return table
    except (OSError, YamlProblem, IndexError) as exc:
        raise RulePackError(f"cannot load the CUDA variants table: {exc}", str(path)) from None
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise RulePackError(f"{where}: {first['msg']}", str(path)) from None
    except ValueError as exc:  # InvalidSpecifier
        raise RulePackError(f"a run's releases is not a version specifier: {exc}", str(path)) from None


# --- the builds of one release ---------------------------------------------------------------


@dataclass(frozen=True)
class ReleaseCuda:
    """The CUDA builds of one release.

    Attributes:
        release: the vLLM release.
        major: the CUDA major of the default wheel (read from the wheel), ``None`` when unknown.
        cuda: the default wheel's CUDA ``X.Y`` when known (else only ``major`` is).
        cuda_source: where ``cuda`` came from (vLLM's build, or the pinned torch's default).
        variants: the other builds; ``None`` when unknown, ``()`` when none is known.
    """

    release: str
    major: int | None
    cuda: str | None
    cuda_source: str | None
    variants: tuple[Variant, ...] | None

    @property
    def shown(self) -> str:
        """``CUDA 12.9`` or ``CUDA 13`` (major only), ``CUDA unknown``."""
        return f"CUDA {self.cuda or self.major or 'unknown'}"


def _pinned_torch(wheel: WheelFacts) -> str | None:
    for line in wheel.requires_dist:
        try:
            req = Requirement(line)
        except InvalidRequirement:
            continue
        if req.name.lower() == "torch":
            pins = [s.version for s in req.specifier if s.operator == "=="]
            if pins:
                return pins[0]
    return None


def _major(cuda: str) -> int:
    return int(cuda.split(".")[0])


def release_cuda(release: str, wheel: WheelFacts | None, variants: CudaVariants) -> ReleaseCuda:
    """The builds of ``release``: the default wheel's CUDA (vLLM's recorded build, else the
    default CUDA of the torch it pins, kept only when it agrees with the major read from the
    wheel) and the other builds of its run."""
    major = wheel.cuda_major if wheel is not None else None
    run = variants.run_of(release)
    cuda = source = None
    if run is not None and run.build_cuda:
        cuda, source = run.build_cuda, f"vLLM's own build ({run.build_evidence[0].url})" if run.build_evidence else "vLLM's own build"
    elif wheel is not None:
        torch = _pinned_torch(wheel)
        row = variants.torch_cuda(torch) if torch else None
        if row is not None:
            cuda, source = row.cuda, f"the default CUDA of torch {torch} on PyPI ({row.evidence[0].url})"
    if cuda is not None and major is not None and _major(cuda) != major:
        cuda = source = None  # the wheel's own linkage wins
    if major is None and cuda is not None:
        major = _major(cuda)
    found = None if run is None or run.variants is None else tuple(run.variants)
    return ReleaseCuda(release, major, cuda, source, found)


# --- what a driver makes of them -------------------------------------------------------------


def native_cuda(driver: str, table: DriverTable) -> str | None:
    """The newest CUDA ``X.Y`` whose GA driver ``driver`` reaches (``550.54.15`` -> ``12.4``),
    ``None`` when below every GA driver in the table."""
    best: tuple[Version, str] | None = None
    for row in table.cuda:
        for cuda, ga in row.ga_drivers.items():
            if Version(driver) >= Version(ga) and (best is None or Version(cuda) > best[0]):
                best = (Version(cuda), cuda)
    return best[1] if best else None


def runs_major(driver: str, table: DriverTable) -> int | None:
    """The newest CUDA major ``driver`` runs (at or above that major's floor), ``None`` when
    below every floor."""
    majors = [row.major for row in table.cuda if Version(driver) >= Version(row.minimum_driver)]
    return max(majors) if majors else None


@dataclass(frozen=True)
class Reach:
    """How one release runs on one host.

    Attributes:
        builds: the release's builds.
        verdict: ``default`` (its default wheel runs), ``variant`` (another CUDA build runs:
            ``via``), ``driver`` (no known build runs: the driver must be upgraded),
            ``unknown`` (the driver is unknown, or the release's CUDA is).
        via: the build that runs, for ``variant``.
        floor: the driver the default wheel needs (``580.65.06``), when known.
        compat: a sentence when the verdict rests on CUDA minor-version compatibility (a
            build of a newer minor than the driver supports natively), with its limits.
        why: one sentence giving the verdict's reason.
    """

    builds: ReleaseCuda
    verdict: str
    via: Variant | None = None
    floor: str | None = None
    compat: str | None = None
    why: str = ""


def _compat(cuda: str | None, native: str | None, runs: str, table: DriverTable) -> str | None:
    if cuda is None or native is None or _major(cuda) != _major(native) or Version(cuda) <= Version(native):
        return None
    floor = table.minimum_for(_major(cuda))
    ga = next((g for row in table.cuda for c, g in row.ga_drivers.items() if c == cuda), None)
    return (
        f"the CUDA {cuda} build runs on {runs} (CUDA {native}) through CUDA minor-version "
        f"compatibility (CUDA {_major(cuda)}.x runs on drivers >= {floor}); {PTX_CAVEAT}"
        + (f" (CUDA {cuda}'s own driver is {ga})" if ga else "")
    )


def reach(
    builds: ReleaseCuda,
    table: DriverTable,
    driver: str | None,
    native: str | None = None,
    in_use: tuple[int, str] | None = None,
) -> Reach:
    """Which build of a release this host runs.

    Args:
        builds: the release's builds (:func:`release_cuda`).
        table: the driver table.
        driver: the NVIDIA driver, ``None`` when unknown.
        native: the CUDA the driver supports natively (the banner's ``CUDA Version``), else
            derived from the GA drivers of the table.
        in_use: with the driver unknown, ``(CUDA major, what says so)`` of the build the host
            runs now (torch's CUDA): the host runs at least that major.
    """
    major = builds.major
    if major is None:
        return Reach(builds, "unknown", why=f"the CUDA of vLLM {builds.release}'s wheel is unknown")
    floor = table.minimum_for(major)
    if driver is not None:
        runs = runs_major(driver, table)
        native = native or native_cuda(driver, table)
        who = f"driver {driver}"
    elif in_use is not None:
        runs, native, who = in_use[0], None, f"this host ({in_use[1]})"
    else:
        return Reach(builds, "unknown", floor=floor, why="the NVIDIA driver is unknown")
    if runs is not None and major <= runs:
        compat = _compat(builds.cuda, native, who, table)
        return Reach(builds, "default", floor=floor, compat=compat, why=f"{who} runs the {builds.shown} default wheel")
    usable = [v for v in builds.variants or () if runs is not None and _major(v.cuda) <= runs]
    if usable:
        via = max(usable, key=lambda v: Version(v.cuda))
        return Reach(
            builds,
            "variant",
            via,
            floor,
            _compat(via.cuda, native, who, table),
            f"its default wheel is {builds.shown} (driver >= {floor}); {who} runs its CUDA {via.cuda} build",
        )
    known = (
        f"no CUDA {runs} build of vLLM {builds.release} is known"
        if builds.variants is not None
        else f"whether vLLM publishes a CUDA {runs} build of {builds.release} is unknown"
    )
    return Reach(
        builds,
        "driver",
        floor=floor,
        why=f"its default wheel is {builds.shown}, which needs driver >= {floor}; {known}",
    )


def reach_summary(
    registry: Registry,
    releases: list[Version],
    table: DriverTable,
    variants: CudaVariants,
    driver: str | None,
    native: str | None = None,
    in_use: tuple[int, str] | None = None,
) -> list[str]:
    """Sentences on ``releases`` for this host: those its driver runs with the default wheel,
    those it reaches through another CUDA build (naming the index and image of the newest),
    those that need a driver upgrade, and those whose CUDA builds are unknown. Empty when
    neither the driver nor the build in use is known."""
    if driver is None and in_use is None:
        return []
    groups: dict[str, list[Reach]] = {}
    for version in releases:
        wheel = next((p.wheel for p in registry.packs_for(version) if p.wheel is not None), None)
        if wheel is None:
            continue
        found = reach(release_cuda(str(version), wheel, variants), table, driver, native, in_use)
        groups.setdefault(found.verdict, []).append(found)
    who = f"driver {driver}" if driver else f"this host ({in_use[1]})" if in_use else "this host"
    out: list[str] = []

    def span(items: list[Reach]) -> str:
        names = [r.builds.release for r in items]
        return names[0] if len(names) == 1 else f"{len(names)} releases from {names[0]} to {names[-1]}"

    if "default" in groups:
        out.append(f"{who} runs the default wheel of {span(groups['default'])}")
    if "variant" in groups:
        newest = groups["variant"][-1]
        assert newest.via is not None
        out.append(
            f"{who} reaches {span(groups['variant'])} only through a CUDA {newest.via.cuda} build of vLLM "
            f"(their default wheel needs driver >= {newest.floor}); for {newest.builds.release}: "
            f"{newest.via.where(newest.builds.release)}"
        )
    if "driver" in groups:
        first = groups["driver"][0]
        out.append(f"{span(groups['driver'])} need a driver upgrade to >= {first.floor} ({first.why})")
    if "unknown" in groups:
        out.append(f"CUDA of {span(groups['unknown'])} unknown: not decided")
    compat = next((r for k in ("variant", "default") for r in reversed(groups.get(k, [])) if r.compat), None)
    if compat is not None:
        out.append(f"for {compat.builds.release}: {compat.compat}")
    return out
