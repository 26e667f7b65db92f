"""``vllm-upgrade-check env``: report the Python environment and what breaks in it."""

from __future__ import annotations

import json
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from vllm_upgrade_check.cli.apps import app
from vllm_upgrade_check.cli.common import (
    CONFIG_OPTION,
    DRIVER_OPTION,
    FREEZE_OPTION,
    HOST_NAME_OPTION,
    NVIDIA_SMI_OPTION,
    PROBE_OPTION,
    PYTHON_OPTION,
    PYTHON_VERSION_OPTION,
    RULES_OPTION,
    TO_OPTION,
    FailOn,
    assemble,
    gate,
    host_cuda_notes,
    print_console,
    write_output,
)
from vllm_upgrade_check.model.environment import HostInfo, HostModel

if TYPE_CHECKING:  # pragma: no cover
    from rich.console import Console


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


def environment_dict(model: HostModel) -> dict[str, Any]:
    """The ``environment``, ``host``, ``sources`` and ``not_checked`` members of ``env --format
    json`` (``fleet merge`` reads them)::

    "environment": {"source", "python", "machine", "glibc", "distributions": {name: version},
                    "unversioned": [name], "torch": {"version", "cuda", "hip", "source"} | null,
                    "vllm_cuda_major": 13 | null, "vllm_cuda_source": path | null}
    "host": {"name", "read", "nvidia_driver", "driver_source", "driver_cuda", "rocm",
             "problems": [str], "gpu_source",
             "gpus": [{"vendor", "name", "compute_capability", "memory_mib", "memory_gib"}]}
             ("read": false and no GPUs when GPUs and driver were not read)
    "sources": [{"fact", "value", "source"}], "not_checked": [str]
    """
    environment, host = model.environment, model.host
    torch = environment.torch
    env = {
        "source": environment.source,
        "python": environment.python,
        "machine": environment.machine,
        "glibc": environment.glibc,
        "distributions": environment.distributions,
        "unversioned": list(environment.unversioned),
        "torch": None
        if torch is None
        else {"version": torch.version, "cuda": torch.cuda, "hip": torch.hip, "source": torch.source},
        "vllm_cuda_major": environment.vllm_cuda_major,
        "vllm_cuda_source": environment.vllm_cuda_source,
        "paths": list(environment.paths),
    }
    env["os"] = model.system
    seen = host or HostInfo()
    host_doc = {
        "name": model.name,
        "read": host is not None,
        "nvidia_driver": seen.nvidia_driver,
        "driver_source": seen.driver_source,
        "driver_cuda": seen.driver_cuda,
        "rocm": seen.rocm,
        "problems": list(seen.problems),
        "gpu_source": seen.gpu_source,
        "gpus": [
            {
                "vendor": g.vendor,
                "name": g.name,
                "compute_capability": g.compute_capability,
                "memory_mib": g.memory_mib,
                "memory_gib": g.memory_gib,
            }
            for g in seen.gpus
        ],
    }
    return {
        "environment": env,
        "host": host_doc,
        "sources": [{"fact": f, "value": v, "source": where} for f, v, where in model.sources()],
        "not_checked": list(model.not_checked),
    }


def _host_lines(model: HostModel) -> list[str]:
    """Console lines of the host: each fact with where it came from, the GPUs, the problems
    of the probe and each check that could not run."""
    lines = [f"  {fact:<18} {value}  (from {source})" for fact, value, source in model.sources()]
    host = model.host
    if host is not None:
        if not host.gpus and host.nvidia_driver is None and host.rocm is None and not host.problems:
            lines.append("  GPUs               none found")
        counts: dict[str, int] = {}
        for gpu in host.gpus:
            memory = f", {gpu.memory_gib:g} GiB" if gpu.memory_gib is not None else ""
            cap = f", {gpu.compute_capability}" if gpu.compute_capability else ""
            key = f"{gpu.name}{cap}{memory}"
            counts[key] = counts.get(key, 0) + 1
        for key, count in counts.items():
            lines.append(f"  GPU                {count} x {key}")
        lines += [f"  note               {problem}" for problem in host.problems]
    lines += [f"  not checked        {sentence}" for sentence in model.not_checked]
    return lines


@app.command()
def env(
    paths: list[Path] = typer.Argument(
        None, help="Deployment files/directories to scan too (rules that need both, e.g. plugins)."
    ),
    to: str | None = TO_OPTION,
    python: Path | None = PYTHON_OPTION,
    freeze: Path | None = FREEZE_OPTION,
    nvidia_smi: Path | None = NVIDIA_SMI_OPTION,
    driver: str | None = DRIVER_OPTION,
    python_version: str | None = PYTHON_VERSION_OPTION,
    probe_host: bool = PROBE_OPTION,
    host_name: str = HOST_NAME_OPTION,
    fmt: EnvFormat = typer.Option(EnvFormat.console, "--format", "-f", help="Output format."),
    output: Path | None = typer.Option(None, "--output", "-o", help="Write the report to this file."),
    fail_on: FailOn | None = typer.Option(
        None,
        "--fail-on",
        help="Lowest severity that makes the exit code 1 (default: the configuration's, else blocker).",
    ),
    rules: list[Path] = RULES_OPTION,
    exclude: list[str] = typer.Option([], "--exclude", help="gitignore-style pattern to leave out."),
    config: Path | None = CONFIG_OPTION,
) -> None:
    """Report the Python environment and host (GPUs, driver, builds) and their findings for the target release.

    The project configuration (``to``, ``fail-on``, ``rules``, ``exclude``, ``ignore``) is read
    as ``scan`` reads it: from the first path given, else the current directory.
    """
    from dataclasses import replace

    from vllm_upgrade_check.engine import run_scan
    from vllm_upgrade_check.sources.host.collect import HostRequest

    request = HostRequest(python, freeze, nvidia_smi, driver, python_version, host_name, probe_host)
    run = assemble(paths or [], config, request, to=to, rules=rules, exclude=exclude)
    assert run.model is not None
    model = run.model
    environment = model.environment
    fail_on = fail_on or FailOn(run.settings.fail_on or "blocker")
    report = run_scan(replace(run.options, gate=gate(fail_on)))
    report = replace(report, notes=(*report.notes, *host_cuda_notes(model, report.to_version, run.options.rule_paths)))
    installed = {n: environment.distributions.get(n) for n in WATCHED}
    if fmt == EnvFormat.json:
        from vllm_upgrade_check.reporters.json_report import report_dict

        document = report_dict(report)
        document.update(environment_dict(model))
        write_output(json.dumps(document, indent=2) + "\n", output)
    else:
        from vllm_upgrade_check.reporters.console import render_console

        def draw(console: Console) -> None:
            console.print(f"[bold]Environment[/bold]: {environment.source}", highlight=False)
            console.print(
                f"  python {environment.python or 'unknown'} on {environment.machine or 'unknown'}",
                highlight=False,
            )
            for dist, version in installed.items():
                console.print(f"  {dist:<18} {version or '-'}", highlight=False)
            console.print(f"[bold]Host[/bold]: {model.name or 'unnamed'}", highlight=False)
            for line in _host_lines(model):
                console.print(line, highlight=False)
            console.print()
            render_console(report, console)

        print_console(draw, output)
    raise typer.Exit(report.exit_code)
