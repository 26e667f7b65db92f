"""The scanner of Python files (:class:`PythonSourceScanner`): which files it reads, the
parse, and which of the walk's facts (:func:`.walker.file_facts`) it reports.
"""

from __future__ import annotations

from collections.abc import Iterator

from vllm_upgrade_check.model.facts import Fact, FactKind, Skipped
from vllm_upgrade_check.sources.scanners.base import Scanner, SourceFile
from vllm_upgrade_check.sources.scanners.python.names import RESPONSE_FIELDS
from vllm_upgrade_check.sources.scanners.python.source import parse_module
from vllm_upgrade_check.sources.scanners.python.walker import file_facts


class PythonSourceScanner(Scanner):
    """``*.py`` files that mention vLLM (or read ``reasoning_content``), parsed with :mod:`ast`."""

    name = "python"

    def __init__(self, response_fields: frozenset[str] | None = None) -> None:
        """``response_fields``: response fields to report reads of, beyond :data:`RESPONSE_FIELDS`."""
        self.fields = RESPONSE_FIELDS | (response_fields or frozenset())

    def accepts_name(self, name: str) -> bool | None:
        """``*.py`` names."""
        return name.endswith(".py")

    def accepts(self, source: SourceFile) -> bool:
        """``*.py`` files."""
        return source.name.endswith(".py")

    def scan(self, source: SourceFile) -> Iterator[Fact | Skipped]:
        """The facts of ``source``: all of them when it mentions vLLM, else only its reads of
        response fields; a syntax error skips the file."""
        vllm = source.mentions_vllm()
        client = any(field in source.text for field in self.fields)
        if not vllm and not client:
            return
        try:
            tree = parse_module(source.text)
        except (SyntaxError, ValueError) as exc:
            line = getattr(exc, "lineno", None)
            yield Skipped(
                source.relpath,
                f"Python syntax error at line {line}: {getattr(exc, 'msg', exc)}",
                configures_vllm=vllm,
                line=line,
            )
            return
        for fact in file_facts(source, tree, self.fields):
            if vllm or fact.kind == FactKind.RESPONSE_FIELD:
                yield fact
