"""``vllm-upgrade-check env``: report the Python environment and what breaks in it."""

from __future__ import annotations

import json
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from vllm_upgrade_check.cli import app

if TYPE_CHECKING:  # pragma: no cover
    from rich.console import Console
from vllm_upgrade_check.cli.common import (
    RULES_OPTION,
    TO_OPTION,
    FailOn,
    exit_code,
    print_console,
    write_output,
)


class EnvFormat(str, Enum):
    """``env --format`` choices."""

    console = "console"
    json = "json"


WATCHED = (
    "vllm",
    "torch",
    "torchvision",
    "torchaudio",
    "triton",
    "transformers",
    "flashinfer-python",
    "xformers",
    "bitsandbytes",
    "huggingface-hub",
    "tokenizers",
)
"""Distributions shown in the environment summary (what vLLM releases pin)."""


@app.command()
def env(
    to: str | None = TO_OPTION,
    fmt: EnvFormat = typer.Option(EnvFormat.console, "--format", "-f"),
    output: Path | None = typer.Option(None, "--output", "-o"),
    fail_on: FailOn = typer.Option(FailOn.blocker, "--fail-on"),
    rules: list[Path] = RULES_OPTION,
) -> None:
    """Report the installed Python environment and its findings for the target release."""
    from vllm_upgrade_check.engine import ScanOptions, run_scan
    from vllm_upgrade_check.scanners.environment import read_current_environment

    environment = read_current_environment()
    report = run_scan(ScanOptions(paths=[], to_version=to, environment=environment, rule_paths=rules))
    installed = {name: environment.distributions.get(name) for name in WATCHED}
    if fmt == EnvFormat.json:
        from vllm_upgrade_check.reporters.json_report import report_dict

        document = report_dict(report)
        document["environment"] = {
            "source": environment.source,
            "python": environment.python,
            "machine": environment.machine,
            "distributions": environment.distributions,
        }
        write_output(json.dumps(document, indent=2) + "\n", output)
    else:
        from vllm_upgrade_check.reporters.console import render_console

        def draw(console: Console) -> None:
            console.print(f"[bold]Environment[/bold]: {environment.source}", highlight=False)
            console.print(f"  python {environment.python} on {environment.machine}", highlight=False)
            for name, version in installed.items():
                console.print(f"  {name:<18} {version or '-'}", highlight=False)
            console.print()
            render_console(report, console)

        print_console(draw, output)
    raise typer.Exit(exit_code(report, fail_on))
