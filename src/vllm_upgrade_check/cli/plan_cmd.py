"""``vllm-upgrade-check plan``: the newest release this deployment can reach, and the path there."""

from __future__ import annotations

from enum import Enum
from pathlib import Path

import typer

from vllm_upgrade_check.cli.apps import app
from vllm_upgrade_check.cli.common import (
    CONFIG_OPTION,
    DRIVER_OPTION,
    FREEZE_OPTION,
    FROM_OPTION,
    HOST_NAME_OPTION,
    NVIDIA_SMI_OPTION,
    PROBE_OPTION,
    PYTHON_OPTION,
    PYTHON_VERSION_OPTION,
    RULES_OPTION,
    assemble,
    print_console,
    write_output,
)
from vllm_upgrade_check.model.findings import Report


class PlanFormat(str, Enum):
    """``plan --format`` choices."""

    console = "console"
    json = "json"
    markdown = "markdown"


@app.command()
def plan(
    paths: list[Path] = typer.Argument(None, help="Deployment files or directories to scan (default: .)."),
    from_: str | None = FROM_OPTION,
    keep: list[str] = typer.Option(
        [], "--keep", help="What must not change: driver, python or a distribution name (repeatable)."
    ),
    python: Path | None = PYTHON_OPTION,
    freeze: Path | None = FREEZE_OPTION,
    nvidia_smi: Path | None = NVIDIA_SMI_OPTION,
    driver: str | None = DRIVER_OPTION,
    python_version: str | None = PYTHON_VERSION_OPTION,
    probe_host: bool = PROBE_OPTION,
    host_name: str = HOST_NAME_OPTION,
    resolve: bool = typer.Option(
        False, "--resolve", help="Also ask pip's resolver (--dry-run, throwaway venv; needs the network)."
    ),
    fmt: PlanFormat = typer.Option(PlanFormat.console, "--format", "-f", help="Output format."),
    output: Path | None = typer.Option(None, "--output", "-o", help="Write the plan to this file."),
    rules: list[Path] = RULES_OPTION,
    exclude: list[str] = typer.Option(
        [], "--exclude", help="gitignore-style pattern to leave out (repeatable)."
    ),
    config: Path | None = CONFIG_OPTION,
) -> None:
    """Plan the upgrade: newest reachable release, what blocks each later one, the recommended path.

    Exit 0 when a release beyond the version in use is reachable (or none is newer), 1 when
    every newer release is blocked, 2 on bad input.
    """
    from dataclasses import replace

    from vllm_upgrade_check.engine import resolve_from, run_scan
    from vllm_upgrade_check.errors import UsageError
    from vllm_upgrade_check.knowledge.cuda import load_driver_table
    from vllm_upgrade_check.knowledge.registry import load_registry
    from vllm_upgrade_check.model.options import VersionWindow
    from vllm_upgrade_check.model.plan import Host
    from vllm_upgrade_check.planning.keep import parse_keep
    from vllm_upgrade_check.planning.planner import make_plan
    from vllm_upgrade_check.sources.host.collect import HostRequest

    request = HostRequest(python, freeze, nvidia_smi, driver, python_version, host_name, probe_host)
    roots = paths or [Path(".")]
    run = assemble(roots, config, request, from_=from_, rules=rules, exclude=exclude)
    assert run.model is not None
    settings, base, model = run.settings, run.options, run.model
    env = model.environment
    registry = load_registry(base.rule_paths)
    given = "--from" if from_ is not None else f"from in {settings.source}"
    from_ = base.window.from_version  # --from, else the configuration's `from`

    def scan(frm: str | None, to: str) -> Report:
        return run_scan(replace(base, window=VersionWindow(to, frm)), registry)

    current: str | None
    if from_ is not None:
        version = resolve_from(registry, from_, base.window.from_origin)
        assert version is not None
        if version > registry.newest:
            raise UsageError(
                f"--from {from_} is newer than the newest release with a pack ({registry.newest}); "
                "a newer vllm-upgrade-check may know it"
            )
        current, source = str(version), given
    elif env.vllm:
        current, source = env.vllm, f"installed vllm ({env.source})"
    else:
        detected = scan(None, str(registry.newest))
        current, source = detected.from_version, detected.from_source
    host = Host(
        env,
        env.python,
        model.driver,
        parse_keep(keep, set(env.distributions)),
        model.host.driver_source if model.host else None,
        model.host.driver_cuda if model.host else None,
        tuple(model.sources()),
        model.not_checked,
    )
    result = make_plan(registry, host, load_driver_table(), scan, current, source)
    facts = [f"host {fact}: {value} (from {where})" for fact, value, where in model.sources()]
    facts += [f"host check not run: {sentence}" for sentence in model.not_checked]
    result = replace(result, notes=(*facts, *result.notes))
    if resolve:
        from vllm_upgrade_check.planning.resolve import pip_dry_run

        notes = list(result.notes)
        held = [
            f"{name}=={env.distributions[name]}" for name in sorted(host.keep) if name in env.distributions
        ]
        held += [
            f"{name}=={env.distributions[name]}"
            for name, lines in sorted(env.requires.items())
            if name != "vllm" and name in env.distributions and any(_names_vllm(x) for x in lines)
        ]
        targets = [result.reachable] + [c.release for c in result.blocked[:1]]
        for target in filter(None, targets):
            answer = pip_dry_run(target, held, host.python)
            if answer.ok:
                moved = ", ".join(f"{n} {v}" for n, v in sorted(answer.install.items()) if n != "vllm")
                notes.append(
                    f"pip resolver, vllm=={target} with {held or 'nothing held'}: resolves ({moved})"
                )
            else:
                notes.append(f"pip resolver, vllm=={target} with {held or 'nothing held'}: {answer.error}")
        result = replace(result, notes=tuple(notes))
    if fmt == PlanFormat.console:
        from vllm_upgrade_check.reporters.plan_console import render_plan_console

        print_console(lambda console: render_plan_console(result, console), output)
    elif fmt == PlanFormat.json:
        from vllm_upgrade_check.reporters.plan_json import render_plan_json

        write_output(render_plan_json(result), output)
    else:
        from vllm_upgrade_check.reporters.plan_markdown import render_plan_markdown

        write_output(render_plan_markdown(result), output)
    raise typer.Exit(1 if result.reachable is None and result.releases else 0)


def _names_vllm(line: str) -> bool:
    from packaging.requirements import InvalidRequirement, Requirement

    try:
        return Requirement(line).name.lower() == "vllm"
    except InvalidRequirement:
        return False
