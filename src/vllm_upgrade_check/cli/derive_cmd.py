"""``vllm-upgrade-check rules derive OLD NEW``: write a draft rule pack from two releases."""

from __future__ import annotations

from pathlib import Path

import typer

from vllm_upgrade_check.cli.apps import rules_app
from vllm_upgrade_check.cli.common import write_output


@rules_app.command("derive")
def derive(
    old: Path = typer.Argument(
        ..., help="The previous release: a vllm .whl, unpacked wheel or site-packages."
    ),
    new: Path = typer.Argument(..., help="The new release: a vllm .whl, unpacked wheel or site-packages."),
    output: Path | None = typer.Option(None, "--output", "-o", help="Write the draft pack here."),
) -> None:
    """Write an UNREVIEWED draft pack for NEW: one candidate rule per removed or renamed flag,
    engine arg, env var, metric, quantization method, load format, architecture and module,
    per changed key requirement and Requires-Python, each with wheel evidence (file:line)."""
    from vllm_upgrade_check.knowledge.derive.draft import derive_draft

    write_output(derive_draft(old, new), output)
