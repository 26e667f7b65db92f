"""``vllm-upgrade-check scan``."""

from __future__ import annotations

from dataclasses import replace
from enum import Enum
from pathlib import Path

import typer

from vllm_upgrade_check.cli.apps import app
from vllm_upgrade_check.cli.common import (
    BASELINE_OPTION,
    CACHE_DIR_OPTION,
    CONFIG_OPTION,
    DRIVER_OPTION,
    FREEZE_OPTION,
    FROM_OPTION,
    HOST_NAME_OPTION,
    IGNORE_OPTION,
    JOBS_OPTION,
    NO_CACHE_OPTION,
    NVIDIA_SMI_OPTION,
    PROBE_OPTION,
    PYTHON_OPTION,
    PYTHON_VERSION_OPTION,
    RULES_OPTION,
    SELECT_OPTION,
    TO_OPTION,
    FailOn,
    assemble,
    cache_dir,
    gate,
    print_console,
    with_host_notes,
    write_output,
)


class Format(str, Enum):
    """``--format`` choices of ``scan``."""

    console = "console"
    json = "json"
    markdown = "markdown"
    sarif = "sarif"
    junit = "junit"
    github = "github"


@app.command()
def scan(
    paths: list[Path] = typer.Argument(None, help="Files or directories to scan (default: .)."),
    to: str | None = TO_OPTION,
    from_: str | None = FROM_OPTION,
    env: bool = typer.Option(
        False,
        "--env/--no-env",
        help="Also check the host: Python environment, GPUs and driver (implied by --python, --freeze, "
        "--nvidia-smi, --driver, --python-version).",
    ),
    python: Path | None = PYTHON_OPTION,
    freeze: Path | None = FREEZE_OPTION,
    nvidia_smi: Path | None = NVIDIA_SMI_OPTION,
    driver: str | None = DRIVER_OPTION,
    python_version: str | None = PYTHON_VERSION_OPTION,
    probe_host: bool = PROBE_OPTION,
    host_name: str = HOST_NAME_OPTION,
    fmt: Format = typer.Option(Format.console, "--format", "-f", help="Output format."),
    output: Path | None = typer.Option(None, "--output", "-o", help="Write the report to this file."),
    fail_on: FailOn | None = typer.Option(
        None, "--fail-on", help="Lowest severity that makes the exit code 1 (default: blocker)."
    ),
    rules: list[Path] = RULES_OPTION,
    exclude: list[str] = typer.Option(
        [], "--exclude", help="gitignore-style pattern to leave out (repeatable)."
    ),
    max_file_size: str = typer.Option(
        "5MiB",
        "--max-file-size",
        help="Skip (and report) files larger than this, e.g. 5MiB, 500k, 1048576.",
    ),
    skip_unreadable: bool = typer.Option(
        False,
        "--skip-unreadable",
        help="Do not fail (exit 2) when a file that configures vLLM cannot be parsed.",
    ),
    baseline: Path | None = BASELINE_OPTION,
    config: Path | None = CONFIG_OPTION,
    select: list[str] = SELECT_OPTION,
    ignore: list[str] = IGNORE_OPTION,
    cache: str | None = CACHE_DIR_OPTION,
    no_cache: bool = NO_CACHE_OPTION,
    jobs: int = JOBS_OPTION,
) -> None:
    """Scan a deployment repo (and optionally the environment) for what breaks on upgrade."""
    from vllm_upgrade_check.cli.progress import parse_size, scan_progress
    from vllm_upgrade_check.engine import run_scan, scan_output
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
        baseline=baseline,
        select=select,
        ignore_rules=ignore,
        cache_dir=cache_dir(cache, no_cache),
        jobs=jobs,
    )
    options, settings = run.options, run.settings
    fail_on = fail_on or FailOn(settings.fail_on or "blocker")
    with scan_progress(fmt == Format.console) as progress:
        scan_request = replace(options.request, max_file_bytes=parse_size(max_file_size), progress=progress)
        from vllm_upgrade_check.reporters import NEEDS_EDITS

        gated = replace(options, request=scan_request, gate=gate(fail_on, strict_skips=not skip_unreadable))
        if fmt != Format.console and run.model is None:  # the text alone: a warm run keeps it
            from vllm_upgrade_check.reporters import renderer

            text, code = scan_output(gated, fmt.value, renderer(fmt.value), with_edits=fmt.value in NEEDS_EDITS)
            write_output(text, output)
            raise typer.Exit(code)
        report = run_scan(gated, with_edits=fmt.value in NEEDS_EDITS)
    if run.model is not None:
        report = with_host_notes(report, run.model, options.rule_paths)
    if fmt == Format.console:
        from vllm_upgrade_check.reporters.console import render_console

        print_console(lambda console: render_console(report, console), output)
    else:
        from vllm_upgrade_check.reporters import renderer

        write_output(renderer(fmt.value)(report), output)
    raise typer.Exit(report.exit_code)
