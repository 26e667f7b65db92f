"""``vllm-upgrade-check report``: write the Markdown migration report to a file."""

from __future__ import annotations

from pathlib import Path

import typer

from vllm_upgrade_check.cli.apps import app
from vllm_upgrade_check.cli.common import (
    CACHE_DIR_OPTION,
    CONFIG_OPTION,
    FROM_OPTION,
    JOBS_OPTION,
    NO_CACHE_OPTION,
    RULES_OPTION,
    TO_OPTION,
    cache_dir,
    write_output,
)


@app.command()
def report(
    paths: list[Path] = typer.Argument(None, help="Files or directories to scan (default: .)."),
    to: str | None = TO_OPTION,
    from_: str | None = FROM_OPTION,
    env: bool = typer.Option(False, "--env/--no-env", help="Also check the installed Python environment."),
    output: Path = typer.Option(Path("vllm-upgrade-report.md"), "--output", "-o", help="File to write."),
    rules: list[Path] = RULES_OPTION,
    exclude: list[str] = typer.Option([], "--exclude", help="gitignore-style pattern to leave out."),
    config: Path | None = CONFIG_OPTION,
    cache: str | None = CACHE_DIR_OPTION,
    no_cache: bool = NO_CACHE_OPTION,
    jobs: int = JOBS_OPTION,
) -> None:
    """Write a Markdown migration report (checklists, findings per release crossed). Exit 0."""
    from vllm_upgrade_check.cli.config import config_for, scan_options
    from vllm_upgrade_check.engine import run_scan
    from vllm_upgrade_check.reporters.markdown import render

    environment = None
    if env:
        from vllm_upgrade_check.sources.host.environment import read_current_environment

        environment = read_current_environment()
    settings = config_for(paths or [], config)
    options = scan_options(
        paths or [],
        settings,
        to=to,
        from_=from_,
        environment=environment,
        rules=rules,
        exclude=exclude,
        cache_dir=cache_dir(cache, no_cache),
        jobs=jobs,
    )
    result = run_scan(options, with_edits=True)
    write_output(render(result), output)
    typer.echo(f"migration report written to {output}")
