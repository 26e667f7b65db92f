"""Reporters render a :class:`~vllm_upgrade_check.model.facts.Report` as text.

Each reporter is a pure function ``render(report) -> str``: everything it shows is in the
:class:`~vllm_upgrade_check.model.findings.Report` (the engine attaches the crossed releases'
notes and rules, and the fixes' replacements when asked). :data:`FORMATS` maps the
``--format`` names to them (imported lazily to keep start-up fast).
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module

from vllm_upgrade_check.model.findings import Report

Renderer = Callable[[Report], str]

FORMATS: dict[str, str] = {
    "json": "vllm_upgrade_check.reporters.json_report:render",
    "markdown": "vllm_upgrade_check.reporters.markdown:render",
    "sarif": "vllm_upgrade_check.reporters.sarif:render",
    "junit": "vllm_upgrade_check.reporters.junit:render",
    "github": "vllm_upgrade_check.reporters.github:render",
}
"""``--format`` name -> ``module:function`` of a renderer. ``console`` is handled by the CLI
because it writes to a rich console directly."""

NEEDS_EDITS = frozenset({"markdown", "sarif"})
"""Formats that show each fix's replacements (the scan is asked to attach them)."""


def renderer(name: str) -> Renderer:
    """The renderer for ``--format name``.

    Raises:
        KeyError: unknown format.
    """
    module, func = FORMATS[name].split(":")
    return getattr(import_module(module), func)  # type: ignore[no-any-return,unused-ignore]

