"""Plan an upgrade: the newest release a deployment can reach, what blocks every release beyond
it, and the path there (one hop, or several where a deprecation window makes stepping safer).

Pure: the packs' ``wheel:`` facts, the CUDA driver table and the environment come in as
values; scans come in as a callable (the CLI passes :func:`~vllm_upgrade_check.engine.run_scan`).

Constraints are what the user says must not change (``--keep``): ``driver``, ``python`` or a
distribution name. What the target needs and is not kept is a *change* the plan lists (upgrade
the driver, move to another Python, let pip upgrade torch); what is kept and would have to
change is a *blocker*. An installed distribution whose own requirement the target breaks (a plugin
pinning ``vllm<0.27``) is a change (upgrade it to a release that admits the target), a
blocker when it is kept; a release that dropped a model the deployment serves (a ``kind:
model`` rule the scan matched) is always a blocker. With ``--keep driver`` and the driver
unknown, a release needing a newer CUDA major than the build in use shows is a blocker.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version

from vllm_upgrade_check.knowledge.cuda import (
    CudaVariants,
    DriverTable,
    ReleaseCuda,
    load_cuda_variants,
    native_cuda,
    reach,
    reach_summary,
    release_cuda,
    runs_major,
)
from vllm_upgrade_check.knowledge.registry import Registry
from vllm_upgrade_check.model.facts import UNRESOLVED_NOTE
from vllm_upgrade_check.model.findings import Report
from vllm_upgrade_check.model.pack import MatchKind, Severity, WheelFacts
from vllm_upgrade_check.model.plan import Blocker, Conflict, Hop, Host, Plan, ReleaseCheck
from vllm_upgrade_check.planning.keep import PLAN_KEYWORDS
from vllm_upgrade_check.planning.resolve import resolve_future


def wheel_of(registry: Registry, release: Version) -> WheelFacts | None:
    """The ``wheel:`` facts of ``release`` (the first of its packs that has them)."""
    return next((p.wheel for p in registry.packs_for(release) if p.wheel is not None), None)


def check_release(
    release: str,
    wheel: WheelFacts | None,
    host: Host,
    table: DriverTable,
    variants: CudaVariants | None = None,
) -> ReleaseCheck:
    """Check one release against the host and the constraints. Pure.

    Order of blockers: Python (``requires_python``), driver (the release's CUDA builds via
    :func:`~vllm_upgrade_check.knowledge.cuda.reach`), kept distributions the target's
    ``Requires-Dist`` would move, installed distributions whose requirements break
    (:func:`~vllm_upgrade_check.planning.resolve.resolve_future`).
    """
    if wheel is None:
        return ReleaseCheck(release, False)
    blockers: list[Blocker] = []
    changes: list[str] = []
    keep = host.keep
    if wheel.requires_python and host.python:
        try:
            spec = SpecifierSet(wheel.requires_python)
        except InvalidSpecifier:
            spec = SpecifierSet()
        if str(spec) and not spec.contains(host.python, prereleases=True):
            text = f"requires Python {wheel.requires_python}; this host has {host.python}"
            if "python" in keep:
                blockers.append(Blocker("python", "python", text + " (--keep python)"))
            else:
                changes.append(f"Move to a Python the release supports ({text})")
    build: str | None = None
    notes: list[str] = []
    builds = release_cuda(release, wheel, variants or load_cuda_variants())
    if wheel.cuda_major is not None:
        build = _check_driver(builds, host, table, blockers, changes, notes)
    future = resolve_future(host.env, release, wheel.requires_dist, host.python)
    for change in future.changes:
        if change.name in keep and change.installed is not None:
            blockers.append(
                Blocker(
                    "keep",
                    change.name,
                    f"requires {change.requirement} but --keep {change.name} holds {change.installed}",
                )
            )
        else:
            changes.append(change.describe())
    for conflict in future.conflicts:
        if conflict.requirer in keep:
            blockers.append(
                Blocker(
                    "conflict",
                    conflict.requirer,
                    f"installed {conflict.describe()}; it would need a release whose Requires-Dist "
                    f"admits {conflict.name} {conflict.future} (--keep {conflict.requirer})",
                )
            )
        else:
            changes.append(plugin_change(conflict))
    return ReleaseCheck(
        release,
        True,
        tuple(blockers),
        tuple(changes),
        future,
        build,
        builds.cuda or (str(builds.major) if builds.major is not None else None),
        tuple(notes),
    )


def plugin_change(conflict: Conflict) -> str:
    """The change an installed distribution that pins vLLM (or what vLLM moves) needs: a
    release of it whose ``Requires-Dist`` admits the future version. No index is asked and no
    release of it is named: which one admits the target is unknown offline (``--resolve``
    asks pip)."""
    have = conflict.future
    return (
        f"Upgrade {conflict.requirer} to a release that admits {conflict.name} {have} "
        f"(installed {conflict.describe()}): look for a {conflict.requirer} release whose "
        f"Requires-Dist on {conflict.name} admits {have}; which release does is unknown here "
        "(its release notes or PyPI metadata say; plan --resolve asks pip), or remove it"
    )


def driver_cuda_major(driver: str, table: DriverTable) -> int | None:
    """The newest CUDA major ``driver`` runs (minor-version compatibility: every toolkit of a
    major runs on a driver at or above that major's floor), ``None`` when below all floors."""
    return runs_major(driver, table)


def _check_driver(
    builds: ReleaseCuda,
    host: Host,
    table: DriverTable,
    blockers: list[Blocker],
    changes: list[str],
    notes: list[str],
) -> str | None:
    """The driver part of :func:`check_release`; returns the build to install when it is not
    the default wheel.

    A known driver that runs the default wheel passes (a note when that rests on CUDA
    minor-version compatibility). One below the floor of the default wheel's CUDA major that
    runs another CUDA build vLLM publishes of the release (a ``+cu129`` wheel, a ``-cu129``
    image) gets that build as a change, even with ``--keep driver``; with no such build it
    is a change (upgrade the driver), a blocker with ``--keep driver``. With the driver
    unknown and ``--keep driver``, the CUDA major of the build in use
    (:attr:`Host.cuda_in_use`) stands for what the host runs; with neither, no CUDA release
    is claimed reachable."""
    assert builds.major is not None
    major = builds.major
    minimum = table.minimum_for(major)
    keep = "driver" in host.keep
    in_use = host.cuda_in_use if host.driver is None and keep else None
    found = reach(builds, table, host.driver, host.driver_cuda, in_use)
    if found.compat:
        notes.append(found.compat)
    if found.verdict == "default":
        return None
    if found.verdict == "variant" and found.via is not None:
        build = f"CUDA {found.via.cuda} build: {found.via.where(builds.release)}"
        text = f"Install the CUDA {found.via.cuda} build of vLLM {builds.release} ({found.why}): {found.via.where(builds.release)}"
        if not keep and host.driver is not None:
            text += f"; or upgrade the NVIDIA driver to >= {found.floor} for the default wheel"
        changes.append(text)
        return build
    other = "" if found.verdict == "unknown" else "; " + found.why.rpartition("; ")[2]
    if host.driver is not None:
        if minimum is None or Version(host.driver) >= Version(minimum):
            return None
        runs = runs_major(host.driver, table)
        where = f" ({host.driver_source})" if host.driver_source else ""
        text = (
            f"wheels built for CUDA {major} need driver >= {minimum}; this host has {host.driver}{where}"
            + (f", which runs CUDA {runs}.x at most" if runs is not None else "")
            + other
        )
        if keep:
            blockers.append(Blocker("driver", "driver", text + " (--keep driver)"))
        else:
            changes.append(f"Upgrade the NVIDIA driver ({text})")
        return None
    if not keep:
        return None
    need = minimum or f"a CUDA {major} driver"
    if in_use is None:
        blockers.append(
            Blocker(
                "driver",
                "driver",
                f"wheels built for CUDA {major} need driver >= {need}; "
                "the driver is unknown and no CUDA build in use tells what it runs: "
                "not claimed reachable with --keep driver (give --driver or --nvidia-smi)",
            )
        )
    elif major > in_use[0]:
        blockers.append(
            Blocker(
                "driver",
                "driver",
                f"wheels built for CUDA {major} need driver >= {need}; "
                f"the driver is unknown and {in_use[1]} says this host runs CUDA {in_use[0]}{other}: "
                "not claimed reachable with --keep driver (give --driver or --nvidia-smi)",
            )
        )
    return None


Scan = Callable[[str | None, str], Report]
"""``scan(from_version, to_version) -> Report``: the normal scan of one step."""


def _stops(
    report: Report, current: Version | None, reachable: Version, usable: Sequence[Version]
) -> list[tuple[Version, list[str], str]]:
    """Intermediate stops where a deprecation window lets the team migrate while both work.

    A finding whose rule's replacement (``fix.available_in``, else ``deprecated_in``) only
    exists after ``current`` and whose removal release is at or before ``reachable`` gets a stop
    at the newest usable release inside ``[available, removal)``; one stop serves every
    window it falls in.
    """
    windows: dict[str, tuple[Version, Version, str]] = {}
    for finding in report.findings:
        rule = finding.rule
        start_text = rule.fix.available_in or rule.deprecated_in
        if start_text is None or finding.fix_before_upgrade:
            continue
        start, removal = Version(start_text), Version(finding.release)
        if (current is not None and start <= current) or removal > reachable or start >= removal:
            continue
        windows.setdefault(rule.id, (start, removal, finding.fact.raw or finding.fact.name))
    stops: list[tuple[Version, list[str], str]] = []
    pending = sorted(windows.items(), key=lambda item: (item[1][1], item[0]))
    while pending:
        _rid, (start, removal, _raw) = pending[0]
        inside = [v for v in usable if start <= v < removal]
        if not inside:
            pending = pending[1:]
            continue
        stop = max(inside)
        served = [(rid, w) for rid, w in pending if w[0] <= stop < w[1]]
        ids = [rid for rid, _w in served]
        subjects = ", ".join(sorted({w[2] for _rid, w in served}))
        reason = (
            f"deprecation window: the old form ({subjects}) still works here and its "
            f"replacement already exists; migrate before going on"
        )
        stops.append((stop, ids, reason))
        pending = [(rid, w) for rid, w in pending if rid not in ids]
    return sorted(stops)


def _with_served_models(checks: list[ReleaseCheck], report: Report) -> list[ReleaseCheck]:
    """``checks`` with a ``model`` blocker on every release at or after the one that dropped
    a model the deployment serves (a blocker finding of a ``kind: model`` rule in ``report``):
    no change to the deployment's files or environment gets that model running there, so
    such a release is not reachable, like one whose installed plugin pins an older vLLM."""
    dropped: dict[Version, list[Blocker]] = {}
    seen: set[tuple[str, str]] = set()
    for finding in report.findings:
        rule = finding.rule
        if rule.match.kind != MatchKind.MODEL or finding.severity != Severity.BLOCKER:
            continue
        model = finding.fact.name
        if (rule.id, model) in seen:
            continue
        seen.add((rule.id, model))
        where = finding.location.path or "the environment"
        if finding.location.line is not None:
            where += f":{finding.location.line}"
        message = f"serves {model} ({where}); {rule.message.rstrip('.')} ({rule.id})"
        blocker = Blocker("model", model, message, finding.location.path, finding.location.line)
        dropped.setdefault(Version(finding.release), []).append(blocker)
    if not dropped:
        return checks
    out = []
    for check in checks:
        added = [
            b
            for release, found in sorted(dropped.items())
            if release <= Version(check.release)
            for b in found
        ]
        out.append(replace(check, blockers=(*check.blockers, *added)) if added and check.checked else check)
    return out


def _for_build(report: Report, check: ReleaseCheck) -> Report:
    """The step's scan as it applies to the build the plan installs: when that is another CUDA
    build of the release (:attr:`ReleaseCheck.build`), the driver rule of the default wheel
    (``nvidia-driver-too-old-for-cuda``) does not apply and is left out, with a note."""
    if check.build is None:
        return report
    kept = tuple(f for f in report.findings if f.rule.name != "nvidia-driver-too-old-for-cuda")
    if len(kept) == len(report.findings):
        return report
    note = f"the driver rule of the default wheel is left out: this step installs the {check.build.split(':', 1)[0]}"
    return replace(report, findings=kept, notes=(*report.notes, note))


def cuda_notes(
    registry: Registry, host: Host, table: DriverTable, variants: CudaVariants | None = None
) -> list[str]:
    """What the releases' CUDA builds mean for this host: the CUDA major of each run of
    default wheels (the packs' ``wheel.cuda_major``, read from each release's wheel), and,
    with the driver (or, when it is unknown, the CUDA build in use) known, the releases it
    runs with the default wheel, those it reaches only through another CUDA build vLLM
    publishes, those that need a driver upgrade
    (:func:`~vllm_upgrade_check.knowledge.cuda.reach_summary`). Empty when no pack has
    wheel facts."""
    runs: list[tuple[int, str, str]] = []
    for version in registry.releases:
        wheel = wheel_of(registry, version)
        if wheel is None or wheel.cuda_major is None:
            continue
        if runs and runs[-1][0] == wheel.cuda_major:
            runs[-1] = (runs[-1][0], runs[-1][1], str(version))
        else:
            runs.append((wheel.cuda_major, str(version), str(version)))
    if not runs:
        return []
    spans = ", ".join(f"CUDA {m} ({a}" + (f" … {b})" if a != b else ")") for m, a, b in runs)
    notes = [f"default vLLM wheels are built for {spans}, read from each release's wheel"]
    if host.driver is not None:
        runs_cuda = runs_major(host.driver, table)
        if runs_cuda is None:
            notes.append(f"driver {host.driver} is below every CUDA floor in the driver table")
        else:
            native = host.driver_cuda or native_cuda(host.driver, table)
            newest = max((b for m, _a, b in runs if m <= runs_cuda), key=Version, default=None)
            above = [(m, table.minimum_for(m)) for m in sorted({m for m, _a, _b in runs}) if m > runs_cuda]
            text = f"driver {host.driver} runs CUDA {runs_cuda}.x at most (CUDA minor-version compatibility)"
            if newest is not None:
                text += f"; the newest release whose default wheel it runs is {newest}"
            if above:
                text += "; " + ", ".join(f"CUDA {m} needs driver >= {floor}" for m, floor in above)
            if native:
                text += f"; it supports CUDA {native} natively"
            notes.append(text)
    in_use = host.cuda_in_use if host.driver is None and "driver" in host.keep else None
    notes.extend(
        reach_summary(
            registry,
            list(registry.releases),
            table,
            variants or load_cuda_variants(),
            host.driver,
            host.driver_cuda,
            in_use,
        )
    )
    return notes


def make_plan(
    registry: Registry,
    host: Host,
    table: DriverTable,
    scan: Scan,
    current: str | None,
    current_source: str,
    variants: CudaVariants | None = None,
) -> Plan:
    """Check every release after ``current`` and recommend a path to the newest reachable one.

    Args:
        registry: the packs (their ``wheel:`` facts and rules).
        host: environment, Python, driver and constraints.
        table: the CUDA driver table.
        scan: the normal scan of one step (``from``, ``to``) -> report.
        current: the version in use (``None``: unknown, every release is a candidate).
        current_source: where ``current`` was read.
        variants: the CUDA builds of each release (default: the bundled table).
    """
    variants = variants or load_cuda_variants()
    start = Version(current) if current else None
    checks = [
        check_release(str(v), wheel_of(registry, v), host, table, variants)
        for v in registry.releases
        if start is None or v > start
    ]
    notes: list[str] = []
    unchecked = [c.release for c in checks if not c.checked]
    if unchecked:
        notes.append(
            "no wheel facts in the pack of " + ", ".join(unchecked) + ": Python, driver and "
            "requirements could not be checked, so they are not claimed reachable"
        )
    installed = {canonicalize_name(name) for name in host.env.distributions}
    for name in sorted(host.keep - set(PLAN_KEYWORDS) - installed):
        notes.append(f"--keep {name}: not installed here, so there is nothing to keep (a typo?)")
    if host.driver is None:
        in_use = host.cuda_in_use
        notes.append(
            "NVIDIA driver unknown (give --driver VERSION or --nvidia-smi FILE): CUDA driver floors not checked"
            + (
                ""
                if "driver" not in host.keep
                else f"; with --keep driver, {in_use[1]} stands for what the host runs: a release needing a CUDA "
                f"major above {in_use[0]} is reached only through a CUDA {in_use[0]} build vLLM publishes of it, "
                "else not claimed reachable"
                if in_use is not None
                else "; with --keep driver, no CUDA release is claimed reachable"
            )
        )
    notes.extend(cuda_notes(registry, host, table, variants))
    if host.python is None:
        notes.append("Python unknown (give --python-version X.Y): requires-python not checked")
    scanned: dict[tuple[str | None, str], Report] = {}

    def scan_once(frm: str | None, to: str) -> Report:
        if (frm, to) not in scanned:
            scanned[frm, to] = scan(frm, to)
        return scanned[frm, to]

    if any(c.reachable for c in checks):  # else nothing is reachable anyway: no scan needed
        newest = max((c for c in checks if c.checked), key=lambda c: Version(c.release))
        served = scan_once(current, newest.release)
        checks = _with_served_models(checks, served)
        unread = [n.removeprefix(UNRESOLVED_NOTE) for n in served.notes if n.startswith(UNRESOLVED_NOTE)]
        notes.extend(
            f"launch not fully read: {n}; a model it serves is not checked against models later releases dropped"
            for n in unread
        )
    reachable_checks = [c for c in checks if c.reachable]
    reachable = Version(reachable_checks[-1].release) if reachable_checks else None
    path: list[Hop] = []
    if reachable is not None:
        overall = scan_once(current, str(reachable))
        usable = [Version(c.release) for c in reachable_checks if Version(c.release) < reachable]
        by_release = {c.release: c for c in checks}
        previous = current
        done: set[str] = set()

        def new_changes(release: str) -> tuple[str, ...]:
            fresh = tuple(c for c in by_release[release].changes if c not in done)
            done.update(fresh)
            return fresh

        for stop, ids, reason in _stops(overall, start, reachable, usable):
            hop_report = _for_build(scan_once(previous, str(stop)), by_release[str(stop)])
            path.append(Hop(previous, str(stop), reason, hop_report, new_changes(str(stop)), tuple(ids)))
            previous = str(stop)
        final_reason = (
            "the newest release this host reaches"
            if str(reachable) == str(registry.newest)
            else "the newest release reachable under the constraints"
        )
        final = _for_build(overall if previous == current else scan_once(previous, str(reachable)), by_release[str(reachable)])
        path.append(Hop(previous, str(reachable), final_reason, final, new_changes(str(reachable))))
    return Plan(
        current=current,
        current_source=current_source,
        newest_known=str(registry.newest),
        reachable=str(reachable) if reachable else None,
        host=host,
        releases=tuple(checks),
        path=tuple(path),
        notes=tuple(notes),
        driver_source=table.source,
    )
