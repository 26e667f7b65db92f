"""Conda environment files (``environment.yml``): the ``dependencies`` list, whose items are
conda match specs (``vllm=0.20.0``, ``conda-forge::vllm>=0.17,<0.21``, ``vllm=0.20.0=py311_0``)
and a ``pip:`` sub-list of PEP 508 requirements (``vllm==0.20.0``). Each becomes a
``requirement`` fact at the item that writes it, as a requirements file's line does.

A conda spec's ``=X`` (conda's "X and its sub-versions") is read as the pin ``==X``; its
version is where a bump writes the target. A spec with alternatives (``|``) or a wildcard
is read unpinned.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import yaml
from packaging.utils import canonicalize_name

from vllm_upgrade_check.model.facts import Fact, FactKind, Location, Skipped, Span, Spans
from vllm_upgrade_check.parsing.yamlnodes import YamlProblem, compose_documents, get, items, scalar
from vllm_upgrade_check.parsing.yamlwords import scalar_word
from vllm_upgrade_check.sources.scanners.base import Scanner, SourceFile
from vllm_upgrade_check.sources.scanners.requirements import requirement_fact

NAMES = frozenset({"environment.yml", "environment.yaml"})
"""The names ``conda env create`` reads by default (``-f`` names any other)."""

_SPEC = re.compile(
    r"^(?:(?P<channel>[\w./:-]+)::)?(?P<name>[A-Za-z0-9_][A-Za-z0-9_.-]*)"
    r"[ \t]*(?P<spec>(?:==|=|>=|<=|!=|>|<|~=)[^=\s]*(?:,(?:==|>=|<=|!=|>|<|~=)?[^,=\s]+)*)?"
    r"(?:=(?P<build>\S+))?[ \t]*$"
)
"""A conda match spec in its string form: ``[channel::]name[version spec][=build]``."""


CONDA_TO_PYPI: dict[str, str] = {
    "pytorch": "torch",
    "pytorch-gpu": "torch",
    "pytorch-cpu": "torch",
    "ray-core": "ray",
    "ray-default": "ray",
}
"""Conda package names (conda-forge, the pytorch channel) of the PyPI distributions vLLM's
``Requires-Dist`` names differently (``pytorch`` is ``torch``); ``pytorch-cuda`` and
``cudatoolkit`` pick a CUDA build and are no distribution of PyPI."""


def _conda_specifier(spec: str) -> tuple[str, tuple[int, int] | None]:
    """``(PEP 440 specifier, (start, end) of the pinned version in spec)`` of a conda version
    spec; the version's place only for a single pin (``=X`` or ``==X``)."""
    if not spec:
        return "", None
    if "|" in spec or "*" in spec:
        return "", None
    if spec.startswith("==") and "," not in spec:
        return spec, (2, len(spec))
    if spec.startswith("=") and not spec.startswith("==") and "," not in spec:
        return "=" + spec, (1, len(spec))
    return spec, None


class CondaEnvironmentScanner(Scanner):
    """``requirement`` facts of a conda ``environment.yml``: conda specs and its ``pip:`` list."""

    name = "conda"

    def accepts_name(self, name: str) -> bool:
        return name in NAMES or name.endswith((".environment.yml", ".environment.yaml"))

    def accepts(self, source: SourceFile) -> bool:
        return self.accepts_name(source.name)

    def scan(self, source: SourceFile) -> Iterator[Fact | Skipped]:
        try:
            documents = compose_documents(source.text)
        except YamlProblem:
            return  # the manifest scanner, which reads every YAML file, reports it skipped
        for document in documents:
            for item in items(get(document, "dependencies")):
                if scalar(item) is not None:
                    fact = self._conda_fact(source, item)
                    if fact is not None:
                        yield fact
                    continue
                for entry in items(get(item, "pip")):
                    text = scalar(entry)
                    if text is None or not isinstance(entry, yaml.ScalarNode):
                        continue
                    word = scalar_word(source.text, entry)
                    fact = requirement_fact(
                        text, source.relpath, word.line, word.column, self.name, token=word, syntax="yaml"
                    )
                    if fact is not None:
                        yield fact

    def _conda_fact(self, source: SourceFile, node: yaml.Node) -> Fact | None:
        assert isinstance(node, yaml.ScalarNode)
        text = str(node.value)
        m = _SPEC.match(text.strip())
        if m is None:
            return None
        word = scalar_word(source.text, node)
        conda_name = canonicalize_name(m.group("name"))
        name = canonicalize_name(CONDA_TO_PYPI.get(conda_name, conda_name))
        specifier, pinned = _conda_specifier(m.group("spec") or "")
        lead = len(text) - len(text.lstrip())
        line, column = word.line, word.column + lead
        version = None
        if pinned is not None and "\n" not in text and word.span is not None:
            start = lead + m.start("spec") + pinned[0]
            version = Span(line, word.column + start, line, word.column + lead + m.start("spec") + pinned[1])
        spans = (
            Spans(version=version, syntax="yaml")
            if version is not None
            else Spans(note="a conda spec written in a form the bump does not set; change it by hand")
        )
        return Fact(
            FactKind.REQUIREMENT,
            name,
            Location(source.relpath, line, column, line, column + len(text.strip())),
            raw=text.strip(),
            value=specifier,
            origin="file",
            scanner=self.name,
            spans=spans,
        )
