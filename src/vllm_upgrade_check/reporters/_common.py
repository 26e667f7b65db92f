"""Helpers shared by the reporters: a finding's subject as written, paths as URIs."""

from __future__ import annotations

from vllm_upgrade_check.model.findings import Finding, Report


def subject(finding: Finding) -> str:
    """The finding's subject as written, with its value (``--max-num-seqs 8``)."""
    fact = finding.fact
    text = fact.raw or fact.name
    if fact.value is not None and fact.kind.value == "arg" and "=" not in text:
        text += f" {fact.value}"
    return text


def uri_path(path: str) -> str:
    """``path`` (a relative POSIX path as reported) as a URI reference: percent-encoded, the
    bytes of a file name that is not UTF-8 (decoded with ``surrogateescape``) included, so
    that SARIF ``artifactLocation.uri`` and Markdown links stay valid and point at the file."""
    from urllib.parse import quote

    return quote(path.encode("utf-8", "surrogateescape"), safe="/")


def from_source(report: Report) -> str:
    """Where the run's "from" version was read, its file named from the report's base
    (``deploy/Dockerfile:1:6 vllm/vllm-openai:v0.26.0`` for ``scan deploy``)."""
    text = report.from_source
    for path in sorted(report.base.paths, key=len, reverse=True):
        if text.startswith(path + ":"):
            return report.base.of(path) + text[len(path) :]
    return text
