"""The typer applications the commands register on: ``app`` and its ``rules`` and
``baseline`` groups (a module of their own, so that command modules import them without
importing the package that imports the commands)."""

from __future__ import annotations

import typer

from vllm_upgrade_check import __version__

try:  # coercion without pydantic on the common path (typer 0.26 and later)
    from vllm_upgrade_check.cli.lean_params import LeanGroup as _Group
except ImportError:  # pragma: no cover - a typer without those internals: its own group
    _Group = None  # type: ignore[assignment,misc]

app = typer.Typer(
    name="vllm-upgrade-check",
    cls=_Group,
    help="Tell what will break before a vLLM upgrade, and how to fix it.",
    add_completion=True,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)
rules_app = typer.Typer(cls=_Group, help="Inspect and validate rule packs.", no_args_is_help=True)
app.add_typer(rules_app, name="rules")
baseline_app = typer.Typer(cls=_Group, help="Create baseline files for the CI gate.", no_args_is_help=True)
app.add_typer(baseline_app, name="baseline")


def _version_callback(value: bool) -> None:
    if value:
        typer.echo(f"vllm-upgrade-check {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", "-V", callback=_version_callback, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """Tell what will break before a vLLM upgrade, and how to fix it."""
