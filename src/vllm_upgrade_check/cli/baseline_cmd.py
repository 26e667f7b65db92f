"""``vllm-upgrade-check baseline create``: record today's findings so the gate fails only on new ones."""

from __future__ import annotations

from pathlib import Path

import typer

from vllm_upgrade_check.cli.apps import baseline_app
from vllm_upgrade_check.cli.common import (
    CACHE_DIR_OPTION,
    CONFIG_OPTION,
    FROM_OPTION,
    JOBS_OPTION,
    NO_CACHE_OPTION,
    RULES_OPTION,
    TO_OPTION,
    assemble,
    cache_dir,
    write_output,
)


@baseline_app.command("create")
def create(
    paths: list[Path] = typer.Argument(None, help="Files or directories to scan (default: .)."),
    to: str | None = TO_OPTION,
    from_: str | None = FROM_OPTION,
    output: Path = typer.Option(..., "--output", "-o", help="Baseline file to write (JSON)."),
    rules: list[Path] = RULES_OPTION,
    exclude: list[str] = typer.Option([], "--exclude", help="gitignore-style pattern to leave out."),
    config: Path | None = CONFIG_OPTION,
    cache: str | None = CACHE_DIR_OPTION,
    no_cache: bool = NO_CACHE_OPTION,
    jobs: int = JOBS_OPTION,
) -> None:
    """Scan and write every finding's fingerprint to a baseline file (``scan --baseline FILE``)."""
    from vllm_upgrade_check.engine import run_scan
    from vllm_upgrade_check.matching.baseline import render_baseline

    options = assemble(
        paths or [],
        config,
        None,
        to=to,
        from_=from_,
        rules=rules,
        exclude=exclude,
        cache_dir=cache_dir(cache, no_cache),
        jobs=jobs,
    ).options
    report = run_scan(options)
    write_output(render_baseline(report), output)
    typer.echo(f"baseline: {len(report.findings)} finding(s) written to {output}")
