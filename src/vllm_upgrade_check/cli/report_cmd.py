"""``vllm-upgrade-check report``: the Markdown migration report, on standard output or in
the file ``--output`` names."""

from __future__ import annotations

from pathlib import Path

import typer

from vllm_upgrade_check.cli.apps import app
from vllm_upgrade_check.cli.common import (
    CACHE_DIR_OPTION,
    CONFIG_OPTION,
    DRIVER_OPTION,
    FREEZE_OPTION,
    FROM_OPTION,
    HOST_NAME_OPTION,
    JOBS_OPTION,
    NO_CACHE_OPTION,
    NVIDIA_SMI_OPTION,
    PROBE_OPTION,
    PYTHON_OPTION,
    PYTHON_VERSION_OPTION,
    RULES_OPTION,
    TO_OPTION,
    assemble,
    cache_dir,
    with_host_notes,
    write_output,
)


@app.command()
def report(
    paths: list[Path] = typer.Argument(None, help="Files or directories to scan (default: .)."),
    to: str | None = TO_OPTION,
    from_: str | None = FROM_OPTION,
    env: bool = typer.Option(
        False,
        "--env/--no-env",
        help="Also check the host, as scan --env does (implied by the host options below).",
    ),
    python: Path | None = PYTHON_OPTION,
    freeze: Path | None = FREEZE_OPTION,
    nvidia_smi: Path | None = NVIDIA_SMI_OPTION,
    driver: str | None = DRIVER_OPTION,
    python_version: str | None = PYTHON_VERSION_OPTION,
    probe_host: bool = PROBE_OPTION,
    host_name: str = HOST_NAME_OPTION,
    output: Path | None = typer.Option(
        None, "--output", "-o", help="Write the report to this file (default: standard output)."
    ),
    rules: list[Path] = RULES_OPTION,
    exclude: list[str] = typer.Option([], "--exclude", help="gitignore-style pattern to leave out."),
    config: Path | None = CONFIG_OPTION,
    cache: str | None = CACHE_DIR_OPTION,
    no_cache: bool = NO_CACHE_OPTION,
    jobs: int = JOBS_OPTION,
) -> None:
    """Print a Markdown migration report (checklists, findings per release crossed), or write
    it to --output. Exit 0."""
    from vllm_upgrade_check.engine import run_scan
    from vllm_upgrade_check.reporters.markdown import render
    from vllm_upgrade_check.sources.host.collect import HostRequest

    request = HostRequest(python, freeze, nvidia_smi, driver, python_version, host_name, probe_host)
    run = assemble(
        paths or [],
        config,
        request if env or request.given else None,
        to=to,
        from_=from_,
        rules=rules,
        exclude=exclude,
        cache_dir=cache_dir(cache, no_cache),
        jobs=jobs,
    )
    result = run_scan(run.options, with_edits=True)
    if run.model is not None:
        result = with_host_notes(result, run.model, run.options.rule_paths)
    write_output(render(result), output)
    if output is not None:
        typer.echo(f"migration report written to {output}")
