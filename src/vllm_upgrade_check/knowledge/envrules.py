"""Environment rules generated from data: the target pack's ``wheel:`` section (what the
target wheel requires) and the CUDA driver table ``rules/data/cuda-drivers.yaml``.

The knowledge lives in the packs and the table; this module only turns it into
:class:`~vllm_upgrade_check.model.pack.Rule` objects the generic matcher applies to the
facts of :mod:`~vllm_upgrade_check.sources.host.environment` and
:mod:`~vllm_upgrade_check.sources.host.gpus`. Generated rule ids are ``VUCENV<release>-NNN``:
``001`` Python, ``002`` glibc, ``003`` CPU architecture, ``004`` NVIDIA driver, ``005`` an
installed distribution whose own requirement excludes the target vllm (a plugin), ``1NN`` an
installed distribution the upgrade replaces (warning), ``2NN`` an installed distribution whose
own requirement conflicts with the target's (blocker).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from vllm_upgrade_check.knowledge.cuda import (
    CudaVariants,
    DriverTable,
    load_cuda_variants,
    load_driver_table,
    release_cuda,
)
from vllm_upgrade_check.model.facts import Fact, FactKind
from vllm_upgrade_check.model.pack import Pack, Rule


def _code(release: str) -> str:
    return "VUCENV" + re.sub(r"[^0-9A-Z]", "", release.upper())


@dataclass(frozen=True)
class PlatformTag:
    """What a wheel platform tag demands: glibc minimum (``2.28``) and CPU architecture."""

    glibc: str | None
    machine: str | None


def parse_platform_tag(tag: str) -> PlatformTag:
    """``manylinux_2_28_x86_64`` -> glibc 2.28, x86_64; ``manylinux2014_aarch64`` -> 2.17;
    ``linux_x86_64`` -> no glibc demand; ``any`` -> nothing."""
    legacy = {"manylinux1": "2.5", "manylinux2010": "2.12", "manylinux2014": "2.17"}
    found = re.fullmatch(r"manylinux_(\d+)_(\d+)_(\w+)", tag)
    if found:
        return PlatformTag(f"{found.group(1)}.{found.group(2)}", found.group(3))
    for prefix, glibc in legacy.items():
        if tag.startswith(prefix + "_"):
            return PlatformTag(glibc, tag[len(prefix) + 1 :])
    if tag.startswith("linux_"):
        return PlatformTag(None, tag[len("linux_") :])
    found = re.fullmatch(r"musllinux_\d+_\d+_(\w+)", tag)
    if found:
        return PlatformTag(None, found.group(1))
    return PlatformTag(None, None)


def _evidence(pack: Pack, finding: str, path: str = "dist-info/METADATA") -> list[dict[str, str]]:
    """One ``kind: wheel`` item: ``finding`` read from ``path`` of the release wheel (a
    ``dist-info/`` path is the wheel's own ``vllm-<release>.dist-info/`` directory)."""
    if path.startswith("dist-info/"):
        path = f"vllm-{pack.release}.{path}"
    return [{"kind": "wheel", "release": pack.release, "path": path, "finding": finding}]


def _rule(**data: object) -> Rule:
    from vllm_upgrade_check.model.pack_schema import validate_rule

    return validate_rule(data)


def derived_rules(
    pack: Pack,
    table: DriverTable | None = None,
    authored: Iterable[Rule] = (),
    variants: CudaVariants | None = None,
) -> list[Rule]:
    """The environment rules of ``pack``'s ``wheel:`` facts (empty when it has none).

    Args:
        pack: the target release's pack.
        table: the CUDA driver table (default: the bundled one).
        variants: the CUDA builds of each release (default: the bundled table): the driver
            rule's fix names another CUDA build of the release an older driver runs.
        authored: the packs' own rules; a distribution an authored ``dependency`` rule already
            checks against installed versions (origin ``env``) gets no generated duplicate.
    """
    covered = {
        canonicalize_name(r.match.name)
        for r in authored
        if r.match.kind.value == "dependency" and (r.match.origins is None or "env" in r.match.origins)
    }
    wheel = pack.wheel
    if wheel is None:
        return []
    table = table or load_driver_table()
    code, release = _code(pack.release), pack.release
    out: list[Rule] = []
    if wheel.requires_python:
        out.append(
            _rule(
                id=f"{code}-001",
                name="python-outside-requires-python",
                severity="blocker",
                match={"kind": "platform", "name": "python", "specifier": wheel.requires_python},
                message=f"vLLM {release} requires Python {wheel.requires_python}; pip will not install it here.",
                fix={"summary": f"Use a Python interpreter matching {wheel.requires_python}."},
                docs={"why": f"The vLLM {release} wheel's Requires-Python is {wheel.requires_python}."},
                evidence=_evidence(pack, f"Requires-Python: {wheel.requires_python}"),
                tags=["environment", "generated"],
            )
        )
    if wheel.platform_tag:
        tag = parse_platform_tag(wheel.platform_tag)
        if tag.glibc:
            out.append(
                _rule(
                    id=f"{code}-002",
                    name="glibc-older-than-wheel-platform",
                    severity="blocker",
                    match={"kind": "platform", "name": "glibc", "specifier": f">={tag.glibc}"},
                    message=f"The vLLM {release} wheel ({wheel.platform_tag}) needs glibc >= {tag.glibc}.",
                    fix={"summary": f"Run on an OS (or base image) with glibc {tag.glibc} or newer."},
                    docs={"why": f"A {wheel.platform_tag} wheel only installs where glibc >= {tag.glibc}."},
                    evidence=_evidence(pack, f"platform tag {wheel.platform_tag}", "dist-info/WHEEL"),
                    tags=["environment", "generated"],
                )
            )
        if tag.machine:
            out.append(
                _rule(
                    id=f"{code}-003",
                    name="cpu-architecture-not-in-wheel",
                    severity="blocker",
                    match={"kind": "platform", "name": "machine", "values": [tag.machine]},
                    message=f"The vLLM {release} wheel ({wheel.platform_tag}) is built for {tag.machine} only.",
                    fix={
                        "summary": f"Run on a {tag.machine} host, or build vLLM from source for this architecture."
                    },
                    docs={"why": f"The release wheel's platform tag is {wheel.platform_tag}."},
                    evidence=_evidence(pack, f"platform tag {wheel.platform_tag}", "dist-info/WHEEL"),
                    tags=["environment", "generated"],
                )
            )
    minimum = table.minimum_for(wheel.cuda_major) if wheel.cuda_major is not None else None
    if minimum:
        builds = release_cuda(release, wheel, variants or load_cuda_variants())
        older = sorted(
            (v for v in builds.variants or () if int(v.cuda.split(".")[0]) < (wheel.cuda_major or 0)),
            key=lambda v: [int(p) for p in v.cuda.split(".")],
        )
        summary = f"Upgrade the NVIDIA driver to {minimum} or newer before upgrading vLLM"
        if older:
            via = older[-1]
            floor = table.minimum_for(int(via.cuda.split(".")[0]))
            summary += (
                f", or install the CUDA {via.cuda} build of vLLM {release}, which runs on drivers >= {floor}: "
                f"{via.where(release)}"
            )
        elif builds.variants is not None:
            summary += f" (no CUDA build of vLLM {release} for an older driver is known)"
        else:
            summary += f" (whether vLLM publishes a build of {release} for an older CUDA is unknown)"
        out.append(
            _rule(
                id=f"{code}-004",
                name="nvidia-driver-too-old-for-cuda",
                severity="blocker",
                match={"kind": "platform", "name": "cuda_driver", "specifier": f">={minimum}"},
                message=(
                    f"vLLM {release} is built for CUDA {wheel.cuda_major}, which needs NVIDIA driver "
                    f">= {minimum}; CUDA initialisation fails on this driver."
                ),
                fix={"summary": summary + "."},
                docs={
                    "why": (
                        f"The wheel's extensions link libcudart.so.{wheel.cuda_major}; CUDA "
                        f"{wheel.cuda_major}.x runs on drivers >= {minimum} ({table.source})."
                    )
                },
                evidence=[
                    *_evidence(pack, f"compiled extensions link CUDA {wheel.cuda_major}", "vllm/"),
                    {"kind": "docs", "url": table.source_url, "finding": table.source},
                ],
                tags=["environment", "generated", "gpu"],
            )
        )
    out.append(
        _rule(
            id=f"{code}-005",
            name="installed-distribution-pins-vllm",
            severity="blocker",
            match={
                "kind": "dependency",
                "name": "vllm",
                "specifier": f"=={release}",
                "origins": ["installed"],
            },
            message=(
                f"An installed distribution (a vLLM plugin or integration) requires a vllm that "
                f"{release} is not; pip will refuse the upgrade or leave that distribution broken."
            ),
            fix={
                "summary": (
                    f"Upgrade the distribution that requires it to a release that admits vllm {release} "
                    "(or remove it), together with vllm."
                )
            },
            docs={
                "why": "Its own Requires-Dist (read from its installed METADATA) excludes this vLLM release."
            },
            evidence=_evidence(pack, f"Version: {release}"),
            tags=["environment", "generated", "plugin"],
        )
    )
    for index, line in enumerate(wheel.requires_dist, start=1):
        try:
            req = Requirement(line)
        except InvalidRequirement:
            continue
        if req.marker is not None and "extra" in str(req.marker):
            continue
        spec = str(req.specifier)
        if not spec:
            continue
        name = canonicalize_name(req.name)
        if name not in covered:
            out.append(
                _rule(
                    id=f"{code}-{100 + index:03d}",
                    name="installed-distribution-replaced",
                    severity="warning",
                    match={"kind": "dependency", "name": name, "specifier": spec, "origins": ["env"]},
                    message=f"vLLM {release} requires {name}{spec}; installing it replaces the installed version.",
                    fix={
                        "summary": f"Upgrade {name} to {spec} together with vllm; rebuild extensions built against it."
                    },
                    docs={"why": f"The vLLM {release} wheel's METADATA says Requires-Dist: {line}."},
                    evidence=_evidence(pack, f"Requires-Dist: {line}"),
                    tags=["environment", "generated"],
                )
            )
        out.append(
            _rule(
                id=f"{code}-{200 + index:03d}",
                name="installed-distribution-pins-conflict",
                severity="blocker",
                match={"kind": "dependency", "name": name, "specifier": spec, "origins": ["installed"]},
                message=(
                    f"vLLM {release} requires {name}{spec}, but an installed distribution requires a "
                    f"{name} that cannot satisfy it; pip will refuse or break that distribution."
                ),
                fix={"summary": f"Upgrade or remove the distribution that pins {name}, then upgrade vllm."},
                docs={"why": f"The vLLM {release} wheel's METADATA says Requires-Dist: {line}."},
                evidence=_evidence(pack, f"Requires-Dist: {line}"),
                tags=["environment", "generated"],
            )
        )
    return out


def without_replaced_requirers(facts: list[Fact], pack: Pack) -> list[Fact]:
    """Drop ``requirement`` facts (origin ``installed``) of distributions the upgrade itself
    replaces: vllm and every distribution the target wheel requires (their own pins change
    with them)."""
    replaced = {"vllm"}
    for line in pack.wheel.requires_dist if pack.wheel else ():
        try:
            replaced.add(canonicalize_name(Requirement(line).name))
        except InvalidRequirement:
            continue
    return [
        f
        for f in facts
        if not (f.kind == FactKind.REQUIREMENT and f.origin == "installed" and set(f.aliases) & replaced)
    ]
