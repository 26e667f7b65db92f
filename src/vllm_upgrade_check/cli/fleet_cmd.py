"""``vllm-upgrade-check fleet merge FILE...``: one table of hosts x blockers from the
``env --format json`` output of many hosts (e.g. collected with ``kubectl logs``)."""

from __future__ import annotations

import json
from enum import Enum
from pathlib import Path
from typing import Any, NoReturn

import typer

from vllm_upgrade_check.cli.apps import app
from vllm_upgrade_check.cli.common import write_output
from vllm_upgrade_check.errors import UsageError
from vllm_upgrade_check.parsing.textfiles import read_named_file

fleet_app = typer.Typer(help="Merge env reports of many hosts.", no_args_is_help=True)
app.add_typer(fleet_app, name="fleet")


class FleetFormat(str, Enum):
    """``fleet merge --format`` choices."""

    console = "console"
    markdown = "markdown"
    json = "json"


def read_env_reports(path: Path) -> list[dict[str, Any]]:
    """Every ``env --format json`` object in ``path``; lines before, between or after them
    (pip output in a pod log) are ignored.

    Raises:
        UsageError: unreadable file, or no report in it (naming the file).
    """
    try:
        text = read_named_file(path).decode("utf-8", errors="replace")
    except OSError as exc:
        raise UsageError(f"cannot read: {exc.strerror or exc}", str(path)) from None
    decoder = json.JSONDecoder()
    found: list[dict[str, Any]] = []
    offset = 0
    lines = text.splitlines(keepends=True)
    index = 0
    while index < len(lines):
        line = lines[index]
        if line.startswith("{"):
            try:
                obj, end = decoder.raw_decode(text, offset)
            except ValueError:
                obj, end = None, offset + len(line)
            except RecursionError:
                raise UsageError("a JSON value nested too deeply to be an env report", str(path), index + 1) from None
            if isinstance(obj, dict) and "findings" in obj:
                _check_report(obj, path, index + 1)
                found.append(obj)
                consumed = text[offset:end]
                skip = consumed.count("\n")
                offset += len("".join(lines[index : index + skip + 1]))
                index += skip + 1
                continue
        offset += len(line)
        index += 1
    if not found:
        raise UsageError("no env --format json report found", str(path))
    for doc in found:
        if not isinstance(doc.get("environment"), dict):
            raise UsageError(
                "not a host report: it has findings but no environment (a scan report?); "
                "merge the output of `vllm-upgrade-check env --format json` of each host",
                str(path),
            )
    return found


def unique_hosts(
    pairs: list[tuple[str, dict[str, Any]]],
) -> tuple[list[tuple[str, dict[str, Any]]], list[str]]:
    """``(pairs with one report per host name, warnings)``: a host named twice (the same file
    given twice, or two reports of one host) keeps its first report, and a warning says so."""
    seen: dict[str, str] = {}
    kept: list[tuple[str, dict[str, Any]]] = []
    warnings: list[str] = []
    for file, doc in pairs:
        name = (doc.get("host") or {}).get("name") or Path(file).stem
        if name in seen:
            warnings.append(
                f"warning: host {name} is reported twice ({seen[name]}, {file}); the first report is used"
            )
            continue
        seen[name] = file
        kept.append((file, doc))
    return kept, warnings


def _check_report(doc: dict[str, Any], path: Path, line: int) -> None:
    """Refuse an env report whose fields have the wrong types (one line naming the field).

    Raises:
        UsageError: naming ``path``, the report's first ``line`` and the field.
    """

    def fail(field: str, kind: str) -> NoReturn:
        raise UsageError(f"env report field {field!r} must be {kind}", str(path), line)

    for key in ("host", "environment"):
        if doc.get(key) is not None and not isinstance(doc[key], dict):
            fail(key, "an object")
    host = doc.get("host") or {}
    for key in ("name", "nvidia_driver", "rocm"):
        if host.get(key) is not None and not isinstance(host[key], str):
            fail(f"host.{key}", "a string")
    gpus = host.get("gpus")
    if gpus is not None and not (isinstance(gpus, list) and all(isinstance(g, dict) for g in gpus)):
        fail("host.gpus", "a list of objects")
    if any(not isinstance(g.get("name", "?"), str) for g in gpus or []):
        fail("host.gpus[].name", "a string")
    torch = (doc.get("environment") or {}).get("torch")
    if torch is not None and not isinstance(torch, dict):
        fail("environment.torch", "an object")
    for key in ("to_version", "from_version"):
        if doc.get(key) is not None and not isinstance(doc[key], str):
            fail(key, "a string")
    findings = doc.get("findings")
    if not isinstance(findings, list) or not all(isinstance(f, dict) for f in findings):
        fail("findings", "a list of objects")
    for finding in findings:
        if not isinstance(finding.get("rule_id"), str) or not isinstance(finding.get("message", ""), str):
            fail("findings[].rule_id", "a string (and message a string)")


def merge_reports(reports: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    """Merge ``(file, report)`` pairs into ``{"hosts": [...], "blockers": {rule_id: ...}}``.

    Each host row: ``name``, ``file``, ``to_version``, ``from_version``, ``gpus`` (text),
    ``driver``, ``torch``, ``blockers`` (rule ids), ``warnings`` (count).
    """
    hosts = []
    blockers: dict[str, dict[str, Any]] = {}
    for file, doc in reports:
        host = doc.get("host") or {}
        env = doc.get("environment") or {}
        name = host.get("name") or Path(file).stem
        gpus: dict[str, int] = {}
        for gpu in host.get("gpus") or []:
            gpus[gpu.get("name", "?")] = gpus.get(gpu.get("name", "?"), 0) + 1
        torch = env.get("torch") or {}
        ids = sorted({f["rule_id"] for f in doc.get("findings", []) if f.get("severity") == "blocker"})
        for finding in doc.get("findings", []):
            if finding.get("severity") == "blocker":
                entry = blockers.setdefault(
                    finding["rule_id"], {"message": finding.get("message", ""), "hosts": []}
                )
                if name not in entry["hosts"]:
                    entry["hosts"].append(name)
        hosts.append(
            {
                "name": name,
                "file": file,
                "to_version": doc.get("to_version"),
                "from_version": doc.get("from_version"),
                "gpus": ", ".join(f"{n} x {g}" for g, n in gpus.items()) or "none",
                "driver": host.get("nvidia_driver") or host.get("rocm"),
                "torch": torch.get("version"),
                "blockers": ids,
                "warnings": sum(1 for f in doc.get("findings", []) if f.get("severity") == "warning"),
            }
        )
    return {"hosts": hosts, "blockers": dict(sorted(blockers.items()))}


def render_markdown(merged: dict[str, Any]) -> str:
    """A Markdown table: one row per host, one column per blocker rule id."""
    ids = list(merged["blockers"])
    head = ["host", "GPUs", "driver", "torch", "target", *ids, "warnings"]
    rows = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for host in merged["hosts"]:
        cells = [
            host["name"],
            host["gpus"],
            host["driver"] or "-",
            host["torch"] or "-",
            host["to_version"] or "-",
        ]
        cells += ["✗" if rule in host["blockers"] else "" for rule in ids]
        cells.append(str(host["warnings"]))
        rows.append("| " + " | ".join(cells) + " |")
    notes = [
        f"- **{rule}** ({len(b['hosts'])} host(s)): {b['message']}" for rule, b in merged["blockers"].items()
    ]
    return "\n".join(rows + ([""] + notes if notes else [])) + "\n"


@fleet_app.command("merge")
def merge(
    files: list[Path] = typer.Argument(..., help="env --format json outputs (one or more reports per file)."),
    fmt: FleetFormat = typer.Option(FleetFormat.console, "--format", "-f"),
    output: Path | None = typer.Option(None, "--output", "-o"),
) -> None:
    """One table of hosts x blockers from many `env --format json` reports. Exit 1 when any host has a blocker."""
    pairs, warnings = unique_hosts([(str(f), doc) for f in files for doc in read_env_reports(f)])
    for warning in warnings:
        typer.echo(warning, err=True)
    merged = merge_reports(pairs)
    if fmt == FleetFormat.json:
        write_output(json.dumps(merged, indent=2) + "\n", output)
    elif fmt == FleetFormat.markdown:
        write_output(render_markdown(merged), output)
    else:
        from rich.console import Console
        from rich.table import Table

        from vllm_upgrade_check.cli.common import print_console

        def draw(console: Console) -> None:
            # Rule ids stay out of the table (any length, any count): the table counts them,
            # the lines below name each with its hosts, never cut.
            table = Table(title=f"{len(merged['hosts'])} host(s)")
            for column in ["host", "GPUs", "driver", "torch", "target"]:
                table.add_column(column, overflow="fold")
            table.add_column("blockers", justify="right")
            table.add_column("warnings", justify="right")
            for host in merged["hosts"]:
                table.add_row(
                    host["name"],
                    host["gpus"],
                    host["driver"] or "-",
                    host["torch"] or "-",
                    host["to_version"] or "-",
                    str(len(host["blockers"])),
                    str(host["warnings"]),
                )
            console.print(table)
            for rule, entry in merged["blockers"].items():
                hosts = ", ".join(entry["hosts"])
                console.print(f"{rule} ({len(entry['hosts'])} host(s): {hosts}): {entry['message']}", highlight=False)

        print_console(draw, output)
    raise typer.Exit(1 if merged["blockers"] else 0)
