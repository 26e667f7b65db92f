"""Command-line interface (typer). Thin: parse options, call the engine, render, exit.

Exit codes: 0 nothing at or above ``--fail-on``; 1 something is; 2 usage error or bad
input (one line on stderr naming file and line, no traceback).
"""

from __future__ import annotations

import os
import sys

import typer

from vllm_upgrade_check import __version__

app = typer.Typer(
    name="vllm-upgrade-check",
    help="Tell what will break before a vLLM upgrade, and how to fix it.",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)
rules_app = typer.Typer(help="Inspect and validate rule packs.", no_args_is_help=True)
app.add_typer(rules_app, name="rules")
baseline_app = typer.Typer(help="Create baseline files for the CI gate.", no_args_is_help=True)
app.add_typer(baseline_app, name="baseline")


def _version_callback(value: bool) -> None:
    if value:
        typer.echo(f"vllm-upgrade-check {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version_callback, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """Tell what will break before a vLLM upgrade, and how to fix it."""


def _register() -> None:
    from vllm_upgrade_check.cli import (  # noqa: F401
        baseline_cmd,
        derive_cmd,
        env_cmd,
        fix_cmd,
        fleet_cmd,
        plan_cmd,
        report_cmd,
        rules_cmd,
        scan_cmd,
    )


def main() -> None:
    """Entry point of the ``vllm-upgrade-check`` console script.

    Usage errors are reported by typer (exit 2); :class:`~vllm_upgrade_check.errors.VucError`
    (bad rule pack, unknown version, missing path) becomes one line on stderr and exit 2. A
    bug (any other exception) prints its traceback and exits 2 too, never 1: a CI gate must
    not read a crash as "findings".
    """
    if sys.argv[1:] == ["--version"]:  # fast path: no command module (pydantic, yaml...) imported
        print(f"vllm-upgrade-check {__version__}")
        return
    from vllm_upgrade_check.errors import VucError

    _register()
    try:
        app()
    except VucError as exc:
        print(f"vllm-upgrade-check: error: {exc}", file=sys.stderr)
        sys.exit(2)
    except KeyboardInterrupt:
        # Exit at once: the interpreter's exit hooks would wait on (or write to) the pipes of
        # worker processes that were just stopped.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(130)
    except Exception:
        import traceback

        traceback.print_exc()
        print("vllm-upgrade-check: internal error (a bug: please report it with the traceback above)", file=sys.stderr)
        sys.exit(2)
