"""Options and helpers shared by the commands."""

from __future__ import annotations

import io
import stat
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from vllm_upgrade_check.errors import UsageError
from vllm_upgrade_check.model.findings import Gate, Report
from vllm_upgrade_check.model.pack import Severity

if TYPE_CHECKING:  # pragma: no cover
    from rich.console import Console

    from vllm_upgrade_check.cli.config import Config
    from vllm_upgrade_check.model.environment import HostModel
    from vllm_upgrade_check.model.options import ScanOptions
    from vllm_upgrade_check.sources.host.collect import HostRequest


class FailOn(str, Enum):
    """``--fail-on`` levels."""

    blocker = "blocker"
    warning = "warning"
    info = "info"
    never = "never"


def gate(fail_on: FailOn, strict_skips: bool = True) -> Gate:
    """The :class:`~vllm_upgrade_check.model.findings.Gate` of ``--fail-on`` and
    ``--skip-unreadable`` (``strict_skips`` is its negation)."""
    return Gate(None if fail_on == FailOn.never else Severity(fail_on.value), strict_skips)


def exit_code(report: Report, fail_on: FailOn, strict_skips: bool = True) -> int:
    """0 when nothing is at or above ``fail_on``, 1 when something is; 2 when a file that
    configures vLLM could not be read and ``strict_skips`` (the gate fails closed)."""
    from dataclasses import replace

    return replace(report, gate=gate(fail_on, strict_skips)).exit_code


def current_umask() -> int:
    """The process's umask (read by setting it and setting it back)."""
    import os

    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def write_output(text: str, output: Path | None) -> None:
    """Write ``text`` to ``output`` (atomically) or to standard output."""
    if output is None:
        typer.echo(text, nl=False)
        return
    import os
    import tempfile

    target = output.resolve()
    if target.is_dir():  # also `--output ''`, which names the current directory
        raise UsageError("cannot write output: it is a directory (give a file name)", str(output))
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.")
        # A file name that is not UTF-8 (a lone surrogate in the text) is written as U+FFFD.
        with os.fdopen(fd, "w", encoding="utf-8", errors="replace") as handle:
            handle.write(text)
        # mkstemp makes the file 0600: a report or baseline is created as any file the user
        # makes (0666 less the umask), and one replaced keeps the mode it had.
        try:
            os.chmod(tmp, stat.S_IMODE(os.stat(target).st_mode))
        except FileNotFoundError:
            os.chmod(tmp, 0o666 & ~current_umask())
        os.replace(tmp, target)
    except OSError as exc:
        if tmp is not None and os.path.exists(tmp):
            os.unlink(tmp)
        raise UsageError(f"cannot write output: {exc.strerror or exc}", str(output)) from None


def no_color() -> bool:
    """Whether ``NO_COLOR`` is set to a non-empty value (https://no-color.org): then the
    console output carries no escape sequence at all (no colour, bold, underline or dim) and
    no live progress display is drawn."""
    import os

    return bool(os.environ.get("NO_COLOR"))


def print_console(draw: Callable[[Console], None], output: Path | None) -> None:
    """Run ``draw`` on a rich console: the terminal (plain text under ``NO_COLOR``), or plain
    text written to ``output``. Emoji codes are not replaced (``:fire:`` in a model name is
    printed as written); reporters escape rich markup in what they print."""
    from rich.console import Console

    if output is None:
        console = (
            Console(highlight=False, emoji=False, color_system=None) if no_color() else Console(highlight=False, emoji=False)
        )
        # Piped or redirected output is not wrapped: a flag must never be split across lines.
        console.soft_wrap = not console.is_terminal
        draw(console)
        return
    buffer = io.StringIO()
    draw(Console(file=buffer, highlight=False, emoji=False, no_color=True, width=120, soft_wrap=True))
    write_output(buffer.getvalue(), output)


TO_OPTION = typer.Option(None, "--to", help="Target vLLM release (default: newest known).")
FROM_OPTION = typer.Option(None, "--from", help="vLLM version in use (default: detected).")
RULES_OPTION = typer.Option([], "--rules", help="Extra rule pack file or directory (repeatable).")
BASELINE_OPTION = typer.Option(
    None, "--baseline", help="Baseline file (baseline create): report only findings not in it."
)
CONFIG_OPTION = typer.Option(
    None,
    "--config",
    help="Configuration file (default: .vllm-upgrade-check.toml or pyproject.toml in the scanned root or cwd).",
)
SELECT_OPTION = typer.Option(
    [], "--select", help="Report only rules whose id starts with this (repeatable), e.g. VUC027."
)
IGNORE_OPTION = typer.Option(
    [], "--ignore", help="Never report rules whose id starts with this (repeatable)."
)
CACHE_DIR_OPTION = typer.Option(
    None,
    "--cache-dir",
    help="Directory of the per-file result cache (default: $VLLM_UPGRADE_CHECK_CACHE_DIR, "
    "else $XDG_CACHE_HOME/vllm-upgrade-check, else ~/.cache/vllm-upgrade-check).",
)
NO_CACHE_OPTION = typer.Option(False, "--no-cache", help="Parse every file; read and write no cache.")
JOBS_OPTION = typer.Option(
    0,
    "--jobs",
    "-j",
    min=0,
    max=64,
    help="Worker processes that parse files (0: one per CPU once 400+ files need parsing; 1: none; at most 64).",
)


def cache_dir(option: str | None, no_cache: bool) -> Path | None:
    """The cache directory of a run: ``None`` with ``--no-cache``, else ``--cache-dir`` or the
    default (:func:`vllm_upgrade_check.sources.cache.default_cache_dir`).

    Raises:
        UsageError: ``--cache-dir`` is empty (it would mean the current directory), or given
            with ``--no-cache``.
    """
    if no_cache:
        if option is not None:
            from vllm_upgrade_check.errors import UsageError

            raise UsageError("--cache-dir and --no-cache exclude each other")
        return None
    if option is not None:
        if not option.strip():
            from vllm_upgrade_check.errors import UsageError

            raise UsageError("--cache-dir is empty (give a directory, or --no-cache)")
        return Path(option)
    from vllm_upgrade_check.sources.cache import default_cache_dir

    return default_cache_dir()


PYTHON_OPTION = typer.Option(
    None, "--python", help="Read this interpreter's environment (run isolated, nothing imported)."
)
FREEZE_OPTION = typer.Option(
    None,
    "--freeze",
    help="Read a pip freeze / uv pip freeze / pip list --format=freeze file instead of an interpreter "
    "(the host is then not probed: give --nvidia-smi or --driver).",
)
NVIDIA_SMI_OPTION = typer.Option(
    None,
    "--nvidia-smi",
    help="Read the driver and GPUs from a captured nvidia-smi output (its table or --query-gpu CSV).",
)
DRIVER_OPTION = typer.Option(
    None, "--driver", help="The host's NVIDIA driver (e.g. 550.54.15), over what was read."
)
PYTHON_VERSION_OPTION = typer.Option(
    None, "--python-version", help="The host's Python (X.Y), over the environment's."
)
HOST_NAME_OPTION = typer.Option(
    "",
    "--host-name",
    envvar="VUC_HOST_NAME",
    help="Name of this host in reports (default: hostname of a probed host).",
)
PROBE_OPTION = typer.Option(
    True, "--host/--no-host", help="Probe this machine's GPUs and driver (nvidia-smi, amd-smi, rocm-smi)."
)


@dataclass(frozen=True)
class Assembled:
    """The options of one run, assembled the same way for every command.

    Attributes:
        settings: the project configuration (``.vllm-upgrade-check.toml`` /
            ``[tool.vllm-upgrade-check]``), empty when none was found.
        options: the scan options (command line over configuration), with the host's
            environment and GPUs when a host was read.
        model: the host record, ``None`` when the host was not asked for.
    """

    settings: Config
    options: ScanOptions
    model: HostModel | None


def assemble(
    paths: Sequence[Path],
    config: Path | None,
    host: HostRequest | None,
    **scan: Any,
) -> Assembled:
    """Read the configuration, collect the host (when ``host`` is given) and build the scan
    options; ``scan`` holds :func:`~vllm_upgrade_check.cli.config.scan_options`' keywords.

    Raises:
        UsageError: a bad configuration, host option or host input (naming file and line).
    """
    from vllm_upgrade_check.cli.config import config_for, scan_options
    from vllm_upgrade_check.sources.host.collect import check_request, collect_host

    if host is not None:
        check_request(host)  # bad options before any file is read
    settings = config_for(list(paths), config)
    model = collect_host(host) if host is not None else None
    options = scan_options(list(paths), settings, environment=model.environment if model else None, **scan)
    if model is not None:
        options = replace(options, request=replace(options.request, host=model.host))
    return Assembled(settings, options, model)


def with_host_notes(report: Report, model: HostModel, rule_paths: Sequence[Path] = ()) -> Report:
    """``report`` with one note per host fact (``host python 3.12 from interpreter ...``), per
    host check that could not run and on the CUDA builds this host runs
    (:func:`host_cuda_notes`), so every output format says them."""
    notes = [f"host {fact}: {value} (from {source})" for fact, value, source in model.sources()]
    notes += [f"host check not run: {sentence}" for sentence in model.not_checked]
    notes += host_cuda_notes(model, report.to_version, rule_paths)
    return replace(report, notes=(*report.notes, *notes))


def host_cuda_notes(model: HostModel, target: str | None, rule_paths: Sequence[Path] = ()) -> list[str]:
    """What the CUDA builds of vLLM mean for this host, as ``env`` and ``scan --env`` say it:
    for the target, which build runs here (the default wheel, another CUDA build with its
    wheel index and image tag, or none without a driver upgrade) and whether that rests on
    CUDA minor-version compatibility; for the releases after the installed vLLM, those the
    driver runs with the default wheel, through another CUDA build, or only after a driver
    upgrade. The driver, else the CUDA major of the torch build in use, stands for what the
    host runs; empty when neither is known."""
    from packaging.version import Version

    from vllm_upgrade_check.knowledge.cuda import (
        load_cuda_variants,
        load_driver_table,
        reach,
        reach_summary,
        release_cuda,
    )
    from vllm_upgrade_check.knowledge.registry import load_registry
    from vllm_upgrade_check.model.plan import Host
    from vllm_upgrade_check.planning.planner import wheel_of

    host = model.host
    driver = model.driver
    native = host.driver_cuda if host is not None else None
    in_use = Host(model.environment, None, None).cuda_in_use if driver is None else None
    if driver is None and in_use is None:
        return []
    registry, table, variants = load_registry(list(rule_paths)), load_driver_table(), load_cuda_variants()
    out: list[str] = []
    if target is not None:
        builds = release_cuda(target, wheel_of(registry, Version(target)), variants)
        found = reach(builds, table, driver, native, in_use)
        text = f"CUDA for vLLM {target}: {found.why}"
        if found.verdict == "variant" and found.via is not None:
            text += f": {found.via.where(target)}"
        out.append(text)
        if found.compat:
            out.append(f"CUDA for vLLM {target}: {found.compat}")
    installed = model.environment.vllm
    try:
        start = Version(installed) if installed else None
    except ValueError:
        start = None
    later = [v for v in registry.releases if start is None or v > start]
    summary = reach_summary(registry, later, table, variants, driver, native, in_use)
    out += [f"CUDA builds: {line}" for line in summary if not (target and line.startswith(f"for {target}: "))]
    return out
