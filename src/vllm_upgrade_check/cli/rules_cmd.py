"""``vllm-upgrade-check rules schema|validate|list`` and ``explain RULE_ID``."""

from __future__ import annotations

import json
from collections.abc import Callable
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from vllm_upgrade_check.cli.apps import app, rules_app
from vllm_upgrade_check.cli.common import RULES_OPTION
from vllm_upgrade_check.errors import UsageError

if TYPE_CHECKING:  # pragma: no cover
    from packaging.version import Version

    from vllm_upgrade_check.knowledge.registry import Registry
    from vllm_upgrade_check.model.pack import Rule


class ListFormat(str, Enum):
    """``rules list --format`` choices."""

    text = "text"
    json = "json"
    markdown = "markdown"


@rules_app.command("schema")
def schema() -> None:
    """Print the JSON Schema of a rule pack (for editors and CI)."""
    from vllm_upgrade_check.model.pack_schema import Pack

    document = Pack.model_json_schema()
    document["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    document["title"] = "vllm-upgrade-check rule pack"
    typer.echo(json.dumps(document, indent=2))


@rules_app.command("validate")
def validate(paths: list[Path] = typer.Argument(..., help="Pack files or directories.")) -> None:
    """Validate rule packs: schema, versions, evidence, ids unique among them and against the
    bundled packs. Every problem is printed (FILE:LINE: message); exit 2 when there is one."""
    from vllm_upgrade_check.knowledge.registry import validate_pack_files

    packs, errors = validate_pack_files(paths)
    if errors:
        for error in errors:
            typer.echo(str(error), err=True)
        typer.echo(f"{len(errors)} problem(s) in the rule pack(s)", err=True)
        raise typer.Exit(2)
    count = sum(len(p.rules) for p in packs)
    typer.echo(f"ok: {len(packs)} pack(s), {count} rule(s)")


@rules_app.command("list")
def list_rules(
    release: str | None = typer.Option(None, "--release", help="Only this release."),
    fmt: ListFormat = typer.Option(ListFormat.text, "--format", "-f"),
    rules: list[Path] = RULES_OPTION,
) -> None:
    """List rules (id, severity, release, name); markdown renders a coverage table."""

    from vllm_upgrade_check.knowledge.registry import load_registry
    from vllm_upgrade_check.knowledge.versions import parse_version

    registry = load_registry(rules)
    wanted: Version | None = parse_version(release, "--release") if release else None
    pairs = [(p, r) for p, r in registry.rules() if wanted is None or p.version == wanted]
    if wanted is not None and wanted not in registry.releases:
        raise UsageError(f"--release {release}: no pack for this release")
    if fmt == ListFormat.json:
        typer.echo(
            json.dumps(
                [
                    {
                        "id": r.id,
                        "name": r.name,
                        "severity": r.severity.value,
                        "release": p.release,
                        "kind": r.match.kind.value,
                        "subject": r.match.name,
                    }
                    for p, r in pairs
                ],
                indent=2,
            )
        )
        return
    if fmt == ListFormat.markdown:
        typer.echo(_coverage_table(registry, wanted))
        return
    for pack, rule in pairs:
        typer.echo(
            f"{rule.id:<14} {rule.severity.value:<8} {pack.release:<9} {rule.match.kind.value:<14} {rule.name}"
        )


def _coverage_table(registry: Registry, wanted: Version | None) -> str:
    from vllm_upgrade_check.model.pack import MatchKind

    kinds = [k for k in MatchKind if any(r.match.kind == k for _p, r in registry.rules())]
    header = "| release | rules | " + " | ".join(k.value for k in kinds) + " |"
    lines = [header, "|" + "---|" * (len(kinds) + 2)]
    for release in registry.releases:
        if wanted is not None and release != wanted:
            continue
        rules = [r for p, r in registry.rules() if p.version == release]
        counts = [str(sum(1 for r in rules if r.match.kind == k)) for k in kinds]
        lines.append(f"| {release} | {len(rules)} | " + " | ".join(counts) + " |")
    return "\n".join(lines)


@app.command()
def explain(
    rule_id: str = typer.Argument(..., help="Rule id, e.g. VUC0270-001."), rules: list[Path] = RULES_OPTION
) -> None:
    """Print one rule's documentation: what it matches, why it breaks, the fix, the evidence."""
    from vllm_upgrade_check.knowledge.registry import load_registry
    from vllm_upgrade_check.matching.checks import (
        ABBREVIATED_FLAG_ID,
        UNKNOWN_FLAG_ID,
        documented_abbreviated_flag_rule,
        documented_unknown_flag_rule,
    )
    from vllm_upgrade_check.matching.cut_launch import CUT_LAUNCH_ID, documented_cut_launch_rule
    from vllm_upgrade_check.matching.requires_check import REQUIRES_DIST_ID, documented_requires_dist_rule

    registry = load_registry(rules)
    found = registry.rule(rule_id)
    from vllm_upgrade_check.matching.advisories import ADVISORY_IDS, documented_advisory_rule
    from vllm_upgrade_check.matching.surface_checks import SURFACE_IDS, documented_surface_rule

    built_in: dict[str, Callable[[], Rule]] = {
        UNKNOWN_FLAG_ID: documented_unknown_flag_rule,
        ABBREVIATED_FLAG_ID: documented_abbreviated_flag_rule,
        CUT_LAUNCH_ID: documented_cut_launch_rule,
        REQUIRES_DIST_ID: documented_requires_dist_rule,
    }
    if found is None and rule_id.upper() in ADVISORY_IDS:
        typer.echo(_render_rule(documented_advisory_rule(rule_id.upper()), "every release (built-in check)"))
        return
    if found is None and rule_id.upper() in SURFACE_IDS:
        typer.echo(_render_rule(documented_surface_rule(rule_id.upper()), "every release (built-in check)"))
        return
    if found is None and rule_id.upper() in built_in:
        typer.echo(_render_rule(built_in[rule_id.upper()](), "every release (built-in check)"))
        return
    if found is None:
        raise UsageError(f"unknown rule id {rule_id!r} (see 'vllm-upgrade-check rules list')")
    pack, rule = found
    typer.echo(_render_rule(rule, f"vLLM {pack.release}"))


def _render_rule(rule: Rule, where: str) -> str:
    """The ``explain`` text of one rule (sections as in Ruff's rule docs)."""
    m = rule.match
    out = [f"{rule.id} {rule.name} ({rule.severity.value}, {where})", "", rule.message, ""]
    out += ["## What it matches", m.describe(), ""]
    if rule.deprecated_in:
        out += [f"Deprecated in {rule.deprecated_in}, removed in {where}.", ""]
    out += ["## Why is this bad", rule.docs.why, ""]
    if rule.docs.example:
        out += ["## Example", rule.docs.example, ""]
    if rule.docs.instead:
        out += ["## Use instead", rule.docs.instead, ""]
    fix = rule.fix
    out += ["## Fix", f"{fix.summary} (action: {fix.action.value}, {fix.applicability.value})"]
    if fix.available_in:
        out.append(f"The replacement exists since {fix.available_in}: the fix can land before the upgrade.")
    out += ["", "## Evidence"]
    out += [f"- {e.text}" for e in rule.evidence]
    return "\n".join(out)
