"""``vllm-upgrade-check fix``: apply mechanical fixes (safe ones by default)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from vllm_upgrade_check.cli.apps import app
from vllm_upgrade_check.cli.common import CONFIG_OPTION, FROM_OPTION, RULES_OPTION, TO_OPTION, assemble
from vllm_upgrade_check.model.pack import FixAction, Severity

if TYPE_CHECKING:
    from vllm_upgrade_check.fixing import FixResult


@app.command()
def fix(
    paths: list[Path] = typer.Argument(None, help="Files or directories to fix (default: .)."),
    to: str | None = TO_OPTION,
    from_: str | None = FROM_OPTION,
    unsafe_fixes: bool = typer.Option(False, "--unsafe-fixes", help="Also apply fixes marked unsafe."),
    diff: bool = typer.Option(False, "--diff", help="Print a unified diff and write nothing."),
    bump: bool = typer.Option(
        True, "--bump/--no-bump", help="Also bump vllm==X pins and vllm/vllm-openai tags to the target."
    ),
    rules: list[Path] = RULES_OPTION,
    exclude: list[str] = typer.Option([], "--exclude", help="gitignore-style pattern to leave out."),
    config: Path | None = CONFIG_OPTION,
) -> None:
    """Fix what can be fixed mechanically; list what needs a person.

    Exit 0 when nothing blocks the upgrade any more, 1 when blockers remain (for a person, or
    in a file whose fixed text failed the check) or a file that configures vLLM cannot be
    read, 2 on a usage error or a file changed while it was being fixed.
    """

    from vllm_upgrade_check.engine.diff import diff_paths
    from vllm_upgrade_check.engine.fix import fix_paths
    from vllm_upgrade_check.fixing import UPGRADE_ID
    from vllm_upgrade_check.model.pack import Severity

    run = assemble(paths or [], config, None, to=to, from_=from_, rules=rules, exclude=exclude)
    settings, options = run.settings, run.options
    # The gate's fail-on (configuration) also decides what holds the bump and the exit code.
    hold_at = Severity(settings.fail_on) if settings.fail_on not in (None, "never") else Severity.BLOCKER
    if diff:
        patch, found = diff_paths(options, unsafe=unsafe_fixes, bump=bump, hold_at=hold_at)
        typer.echo(patch, nl=False)  # bytes: each file's own encoding, BOM and line ends
        sys.stdout.flush()  # the patch comes before what is said about it on stderr
        _needs_a_person(found, err=True)
        _left_alone(found, err=True)
        for error in found.errors:
            typer.echo(f"vllm-upgrade-check: error: {error}", err=True)
        raise typer.Exit(2 if found.errors else 1 if found.blocked else 0)
    result = fix_paths(options, unsafe=unsafe_fixes, bump=bump, hold_at=hold_at)
    files = {e.path for e in result.applied}
    if result.applied:
        typer.echo(f"Fixed {len(result.applied)} issue(s) in {len(files)} file(s):")
    else:
        typer.echo("Fixed 0 issue(s): nothing to fix mechanically.")
    for edit in result.applied:
        label = "vLLM" if edit.rule_id == UPGRADE_ID else edit.rule_id
        typer.echo(f"  {edit.path}:{edit.line}: {label}: {edit.description}")
    _needs_a_person(result, err=False)
    _left_alone(result, err=False)
    for error in result.errors:
        typer.echo(f"vllm-upgrade-check: error: {error}", err=True)
    raise typer.Exit(2 if result.errors else 1 if result.blocked else 0)


def _needs_a_person(result: FixResult, err: bool) -> None:
    """Print the findings no mechanical fix handles; info findings (changed defaults,
    advisories) have nothing to fix and are only counted."""
    actionable = [
        u
        for u in result.unfixed
        if u.finding.severity != Severity.INFO or u.finding.rule.fix.action != FixAction.NONE
    ]
    advisories = len(result.unfixed) - len(actionable)
    if actionable:
        typer.echo(f"Needs a person ({len(actionable)}):", err=err)
        for item in actionable:
            f = item.finding
            loc = f.location
            line = item.line if item.line is not None else loc.line
            column = item.column if item.column is not None else loc.column
            where = ":".join(str(p) for p in (loc.path, line, column) if p is not None) if loc.path else "environment"
            typer.echo(
                f"  {where}: {f.rule.id} {f.fact.raw or f.fact.name}: {f.rule.fix.summary} [{item.reason}]", err=err
            )
    if advisories:
        typer.echo(f"{advisories} info finding(s) to review (changed defaults, advisories): see 'scan'.", err=err)


def _left_alone(result: FixResult, err: bool) -> None:
    """Print the files whose fixed text failed the check, the versions the bump did not set
    and the files that could not be read or parsed (nothing in them was fixed)."""
    if result.not_written:
        typer.echo(f"Not written ({len(result.not_written)}):", err=err)
        for refused in result.not_written:
            typer.echo(f"  {refused.path}: {refused.reason} [{', '.join(refused.rules)}]", err=err)
    if result.held_by or result.held_by_unreadable:
        count = len(result.held_by)
        unreadable = len(result.held_by_unreadable)
        level = "blocker(s)" if result.hold_at.value == "blocker" else f"finding(s) at fail-on {result.hold_at.value} or above"
        what = f"{count} {level} remain for {result.target}" if count else ""
        if unreadable:
            what += (" and " if what else "") + f"{unreadable} file(s) that configure vLLM cannot be read"
        typer.echo(
            f"vLLM versions stay where they are while {what} (" + ("see Skipped; " if unreadable else "") + "fix them, then run fix again)" + (":" if count else "."),
            err=err,
        )
        for held in result.held_by:
            f, loc = held.finding, held.finding.location
            subject = " ".join((f.fact.raw or f.fact.name).split())
            line = held.line if held.line is not None else loc.line
            column = held.column if held.column is not None else loc.column
            where = ":".join(str(p) for p in (loc.path, line, column) if p is not None)
            typer.echo(f"  {where}: {f.rule.id} {subject}", err=err)
    if result.relock:
        typer.echo(f"Lock files to make again for vLLM {result.target} ({len(result.relock)}):", err=err)
        for path in result.relock:
            typer.echo(f"  {path}", err=err)
    if result.not_bumped:
        typer.echo(f"Not bumped ({len(result.not_bumped)}):", err=err)
        for item in result.not_bumped:
            where = f"{item.path}:{item.line}" if item.line is not None else item.path
            typer.echo(f"  {where}: {' '.join(item.raw.split())}: {item.reason}", err=err)
    if result.skipped:
        typer.echo(f"Skipped, not fixed ({len(result.skipped)}):", err=err)
        for skip in result.skipped:
            where = f"{skip.path}:{skip.line}" if skip.line is not None else skip.path
            typer.echo(f"  {where}: {skip.reason}", err=err)
