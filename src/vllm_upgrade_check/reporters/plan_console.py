"""``plan`` console output (rich): summary, path, and the first blocker of each later release."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape

from vllm_upgrade_check.model.pack import Severity
from vllm_upgrade_check.model.plan import Plan


def render_plan_console(plan: Plan, console: Console) -> None:
    """Print ``plan`` to ``console``."""
    host = plan.host
    keep = ", ".join(sorted(host.keep)) or "none"
    out = console.print
    out(f"[bold]vLLM in use[/bold]: {escape(plan.current or 'unknown')} ({escape(plan.current_source)})")
    out(
        f"  host: Python {escape(host.python or 'unknown')}, driver {escape(host.driver or 'unknown')}{escape(f' ({host.driver_source})' if host.driver_source else '')}; "
        f"keep: {escape(keep)}",
        highlight=False,
    )
    if plan.reachable:
        out(f"[bold green]Newest reachable[/]: {plan.reachable} (newest known {plan.newest_known})")
    else:
        out(
            f"[bold red]No release beyond the version in use is reachable[/] (newest known {plan.newest_known})"
        )
    if plan.path:
        out()
        out("[bold]Path[/bold]")
        for number, hop in enumerate(plan.path, start=1):
            out(
                f"  {number}. {escape(hop.from_version or '?')} -> {hop.to_version}: "
                f"[bold]{hop.blockers} blocker(s)[/bold], {hop.report.count(Severity.WARNING)} warning(s)",
                highlight=False,
            )
            out(f"     [dim]{escape(hop.reason)}[/dim]", highlight=False)
            for change in hop.changes:
                out(f"     change: {escape(change)}", highlight=False)
            check = plan.release(hop.to_version)
            for note in check.notes if check is not None else ():
                out(f"     note: {escape(note)}", highlight=False)
            for rid in hop.migrate:
                out(f"     migrate: {rid}", highlight=False)
    if plan.blocked:
        out()
        out("[bold]Blocked[/bold]")
        for check in plan.blocked:
            more = f" [dim](+{len(check.blockers) - 1} more)[/dim]" if len(check.blockers) > 1 else ""
            out(f"  [red]{check.release}[/]: {escape(check.blockers[0].message)}{more}", highlight=False)
    for note in plan.notes:
        out(f"  note: {escape(note)}", highlight=False)
