"""``vllm-upgrade-check env``: report the Python environment and what breaks in it."""

from __future__ import annotations

import json
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from vllm_upgrade_check.cli.apps import app

if TYPE_CHECKING:  # pragma: no cover
    from rich.console import Console

    from vllm_upgrade_check.model.environment import Environment, HostInfo
from vllm_upgrade_check.cli.common import (
    CONFIG_OPTION,
    RULES_OPTION,
    TO_OPTION,
    FailOn,
    gate,
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


def environment_dict(environment: Environment, host: HostInfo | None, host_name: str) -> dict[str, Any]:
    """The ``environment`` and ``host`` objects of ``env --format json`` (read by ``fleet merge``)::

    "environment": {"source", "python", "machine", "glibc", "distributions": {name: version},
                    "unversioned": [name], "torch": {"version", "cuda", "hip", "source"} | null,
                    "vllm_cuda_major": 13 | null, "vllm_cuda_source": path | null}
    "host": {"name", "nvidia_driver", "driver_source", "rocm", "problems": [str],
             "gpus": [{"vendor", "name", "compute_capability", "memory_mib", "memory_gib"}]} | null
    """
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
    host_doc = None
    if host is not None:
        host_doc = {
            "name": host_name,
            "nvidia_driver": host.nvidia_driver,
            "driver_source": host.driver_source,
            "rocm": host.rocm,
            "problems": list(host.problems),
            "gpus": [
                {
                    "vendor": g.vendor,
                    "name": g.name,
                    "compute_capability": g.compute_capability,
                    "memory_mib": g.memory_mib,
                    "memory_gib": g.memory_gib,
                }
                for g in host.gpus
            ],
        }
    return {"environment": env, "host": host_doc}


def _host_lines(environment: Environment, host: HostInfo | None) -> list[str]:
    lines = []
    torch = environment.torch
    if torch is not None:
        if torch.cuda or torch.hip:
            build = f"CUDA {torch.cuda}" if torch.cuda else f"ROCm {torch.hip}"
        elif str(torch.source).endswith("version.py"):
            build = "CPU"
        else:  # a version without a +cuXYZ/+rocm label (pip freeze): the build cannot be told
            build = "build unknown"
        lines.append(f"  torch build        {torch.version} ({build})")
    if environment.vllm_cuda_major is not None:
        lines.append(f"  vllm extensions    CUDA {environment.vllm_cuda_major}")
    if environment.glibc:
        lines.append(f"  glibc              {environment.glibc}")
    if host is None:
        return lines
    if host.nvidia_driver:
        lines.append(f"  NVIDIA driver      {host.nvidia_driver} ({host.driver_source})")
    if host.rocm:
        lines.append(f"  ROCm               {host.rocm}")
    if not host.gpus:
        lines.append("  GPUs               none found")
    counts: dict[str, int] = {}
    for gpu in host.gpus:
        memory = f", {gpu.memory_gib:g} GiB" if gpu.memory_gib is not None else ""
        cap = f", {gpu.compute_capability}" if gpu.compute_capability else ""
        key = f"{gpu.name}{cap}{memory}"
        counts[key] = counts.get(key, 0) + 1
    for key, count in counts.items():
        lines.append(f"  GPU                {count} x {key}")
    for problem in host.problems:
        lines.append(f"  note               {problem}")
    return lines


@app.command()
def env(
    paths: list[Path] = typer.Argument(
        None, help="Deployment files/directories to scan too (rules that need both, e.g. plugins)."
    ),
    to: str | None = TO_OPTION,
    python: Path | None = typer.Option(
        None, "--python", help="Inspect this interpreter's environment (run isolated, nothing imported)."
    ),
    freeze: Path | None = typer.Option(
        None, "--freeze", help="Read a pip freeze / uv pip freeze / pip list --format=freeze file."
    ),
    probe_host: bool = typer.Option(
        True, "--host/--no-host", help="Probe GPUs and driver (nvidia-smi, amd-smi, rocm-smi)."
    ),
    host_name: str = typer.Option(
        "",
        "--host-name",
        envvar="VUC_HOST_NAME",
        help="Name of this host in fleet reports (default: hostname).",
    ),
    fmt: EnvFormat = typer.Option(EnvFormat.console, "--format", "-f", help="Output format."),
    output: Path | None = typer.Option(None, "--output", "-o", help="Write the report to this file."),
    fail_on: FailOn | None = typer.Option(
        None, "--fail-on", help="Lowest severity that makes the exit code 1 (default: the configuration's, else blocker)."
    ),
    rules: list[Path] = RULES_OPTION,
    exclude: list[str] = typer.Option([], "--exclude", help="gitignore-style pattern to leave out."),
    config: Path | None = CONFIG_OPTION,
) -> None:
    """Report the Python environment and host (GPUs, driver, builds) and their findings for the target release.

    The project configuration (``to``, ``fail-on``, ``rules``, ``exclude``, ``ignore``) is read
    as ``scan`` reads it: from the first path given, else the current directory.
    """
    import socket
    from dataclasses import replace

    from vllm_upgrade_check.cli.config import config_for, scan_options
    from vllm_upgrade_check.engine import run_scan
    from vllm_upgrade_check.errors import UsageError
    from vllm_upgrade_check.sources.host.environment import (
        read_current_environment,
        read_freeze_file,
        read_interpreter_environment,
    )
    from vllm_upgrade_check.sources.host.gpus import read_host

    if python is not None and freeze is not None:
        raise UsageError("--python and --freeze cannot be combined")
    if freeze is not None:
        environment = read_freeze_file(freeze)
        probe_host = False  # a freeze file describes another host
    elif python is not None:
        environment = read_interpreter_environment(python)
    else:
        environment = read_current_environment()
    host = read_host() if probe_host else None
    name = host_name or socket.gethostname()
    settings = config_for(paths or [], config)
    options = scan_options(paths or [], settings, to=to, environment=environment, rules=rules, exclude=exclude)
    fail_on = fail_on or FailOn(settings.fail_on or "blocker")
    report = run_scan(replace(options, request=replace(options.request, host=host), gate=gate(fail_on)))
    installed = {n: environment.distributions.get(n) for n in WATCHED}
    if fmt == EnvFormat.json:
        from vllm_upgrade_check.reporters.json_report import report_dict

        document = report_dict(report)
        document.update(environment_dict(environment, host, name))
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
            if host is not None:
                console.print(f"[bold]Host[/bold]: {name}", highlight=False)
            for line in _host_lines(environment, host):
                console.print(line, highlight=False)
            console.print()
            render_console(report, console)

        print_console(draw, output)
    raise typer.Exit(report.exit_code)
