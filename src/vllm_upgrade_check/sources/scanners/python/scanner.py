"""The scanner of Python files (:class:`PythonSourceScanner`): which files it reads, the
parse, and which of the walk's facts (:func:`.walker.file_facts`) it reports.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterator, Sequence

from vllm_upgrade_check.model.facts import Fact, FactKind, Skipped
from vllm_upgrade_check.sources.scanners.base import FileReference, ScanItem, Scanner, SourceFile
from vllm_upgrade_check.sources.scanners.python.index import parsed_module
from vllm_upgrade_check.sources.scanners.python.modules import ModuleReader, imported_names
from vllm_upgrade_check.sources.scanners.python.names import RESPONSE_FIELDS
from vllm_upgrade_check.sources.scanners.python.platforms import may_import_ray_llm
from vllm_upgrade_check.sources.scanners.python.walker import file_facts


class PythonSourceScanner(Scanner):
    """``*.py`` files that mention vLLM or import Ray Serve LLM (or read ``reasoning_content``),
    parsed with :mod:`ast`."""

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

    def scan(self, source: SourceFile) -> Iterator[ScanItem]:
        """The facts of ``source``: all of them when it mentions vLLM (in code, not only in
        prose) or may import Ray Serve LLM (:func:`.platforms.may_import_ray_llm`, whose
        ``LLMConfig(engine_kwargs=...)`` configures vLLM), else only its reads of response
        fields; a syntax error skips the file."""
        vllm = (source.mentions_vllm() and not only_prose_mentions(source.text)) or may_import_ray_llm(source.text)
        client = any(field in source.text for field in self.fields)
        if not vllm and not client:
            return
        try:
            tree, index = parsed_module(source.text)
        except (SyntaxError, ValueError) as exc:
            line = getattr(exc, "lineno", None)
            yield Skipped(
                source.relpath,
                f"Python syntax error at line {line}: {getattr(exc, 'msg', exc)}",
                configures_vllm=vllm,
                line=line,
            )
            return
        facts = file_facts(source, tree, self.fields, index=index)
        for fact in facts:
            if vllm or fact.kind == FactKind.RESPONSE_FIELD:
                yield fact
        if vllm:
            yield from _module_references(tree, facts)

    def with_referenced(
        self, source: SourceFile, files: Sequence[str], read: Callable[[str], SourceFile | None]
    ) -> list[Fact] | None:
        """The file read again with the dicts it splats from the repository's other modules
        (``from presets import FP8_PRESET; LLM(**FP8_PRESET)``) and the YAML files it loads
        them from (``LLM(**yaml.safe_load(open("engine.yaml")))``, :mod:`.yamlload`): their
        keys are facts at the lines of the file that writes them."""
        try:
            tree = ast.parse(source.text, filename=source.relpath)
        except (SyntaxError, ValueError):
            return None
        modules = ModuleReader(source.relpath, files, read)
        return list(file_facts(source, tree, self.fields, modules))


_DOCSTRING_START = re.compile(r"""\A(?:[ \t]*(?:#[^\n]*)?\n)*[ \t]*[rRuU]?(\"\"\"|\'\'\')""")


def only_prose_mentions(text: str) -> bool:
    """Whether every mention of vLLM in Python ``text`` is prose the scanner reads nothing
    from: on comment lines (``#`` first) or in the module docstring, and the file holds no
    string that starts with ``--`` (a flag table names vLLM nowhere). Such a file is not
    parsed: it yields what a file that never names vLLM yields (a cheap test, conservative:
    a mention anywhere else, a trailing comment included, means the file is parsed)."""
    if '"--' in text or "'--" in text:
        return False
    lowered = text.lower()
    docstring_end = 0
    found = _DOCSTRING_START.match(text)
    if found is not None:
        close = text.find(found.group(1), found.end())
        if close < 0:
            return False
        docstring_end = close + 3
    at = lowered.find("vllm")
    while at >= 0:
        if at >= docstring_end:
            start = lowered.rfind("\n", 0, at) + 1
            if not lowered[start:at].lstrip().startswith("#"):
                return False
        at = lowered.find("vllm", at + 4)
    return True


_LOADED_YAML = re.compile(r"""load\(.*?["']([^"'\s]+\.ya?ml)["']""")
"""The YAML file an unresolved yaml-load entry names (:mod:`.yamlload`): the file is read
again with the repository's files."""


def _module_references(tree: ast.Module, facts: list[Fact]) -> Iterator[FileReference]:
    """A :class:`FileReference` per module the file imports a name from that an unresolved
    launch splats (``**FP8_PRESET``, ``**presets.FP8_PRESET``): the file is read again with
    the repository's modules (:meth:`PythonSourceScanner.with_referenced`)."""
    unread = " ".join(f.value or "" for f in facts if f.kind == FactKind.LAUNCH and not f.resolved)
    for loaded in dict.fromkeys(_LOADED_YAML.findall(unread)):  # `LLM(**yaml.safe_load(...))`
        yield FileReference(loaded, PythonSourceScanner.name)
    if "**" not in unread:
        return
    for local, (module, _name, level) in imported_names(tree).items():
        if f"**{local}" in unread:
            yield FileReference("." * level + module, PythonSourceScanner.name)
