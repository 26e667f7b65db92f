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


def md_code(text: str) -> str:
    """``text`` as one Markdown code span, shown literally whatever it holds: fenced with one
    backtick more than its longest run of backticks, padded with a space where it starts or
    ends with one (CommonMark, "Code spans"); a line break is shown as a space."""
    import re

    text = " ".join(text.splitlines())
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or (longest and text.strip() == "") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


_MD_ALWAYS = frozenset("\\*[]<~")
"""Characters that start Markdown syntax inside a line (emphasis, links, HTML, strikethrough);
``>`` and ``#`` mean something only where a line starts, and are left as written."""


def md_text(text: str) -> str:
    """``text`` (a sentence: a rule's message, a reason, a path) as Markdown that shows it
    literally: its code spans (text between matching backticks) are kept as written, and
    outside them each character that would start emphasis, a link, HTML or strikethrough
    is escaped with a backslash; ``_`` only where it could emphasise (not between two
    letters or digits, where CommonMark never does); an unmatched backtick is escaped."""
    out: list[str] = []
    at = 0
    while at < len(text):
        tick = text.find("`", at)
        if tick < 0:
            out.append(_escaped(text[at:]))
            break
        run = len(text[tick:]) - len(text[tick:].lstrip("`"))
        close = text.find("`" * run, tick + run)
        while close >= 0 and text[close + run : close + run + 1] == "`":
            close = text.find("`" * run, close + run + 1)
        out.append(_escaped(text[at:tick]))
        if close < 0:
            out.append("\\`" * run)
            at = tick + run
            continue
        out.append(text[tick : close + run])
        at = close + run
    return "".join(out)


def _escaped(text: str) -> str:
    chars = []
    for i, char in enumerate(text):
        if char in _MD_ALWAYS:
            chars.append("\\" + char)
        elif char == "_" and not (0 < i < len(text) - 1 and text[i - 1].isalnum() and text[i + 1].isalnum()):
            chars.append("\\_")
        else:
            chars.append(char)
    return "".join(chars)
