"""A model's own Hugging Face config kept in the repository (``config.json`` beside the
weights, or a ``--hf-config-path`` directory): the architectures its ``architectures`` list
names, which vLLM's model registry must serve.

A ``config.json`` counts as a model config when it is a JSON object with an ``architectures``
list of strings and a ``model_type`` (as ``transformers``' ``PretrainedConfig.to_json_string``
writes it); any other ``config.json`` is not read.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

from vllm_upgrade_check.model.facts import Fact, FactKind, Location, Skipped
from vllm_upgrade_check.sources.scanners.base import Scanner, SourceFile

NAMES = frozenset({"config.json"})
"""File names a model config is kept under."""

_KEY = re.compile(r'"architectures"\s*:\s*\[')


class ModelConfigScanner(Scanner):
    """``architecture`` facts of a model's ``config.json``, each at the string that names it."""

    name = "model-config"

    def accepts_name(self, name: str) -> bool | None:
        return None if name in NAMES else False

    def accepts(self, source: SourceFile) -> bool:
        return source.name in NAMES and '"architectures"' in source.text and '"model_type"' in source.text

    def scan(self, source: SourceFile) -> Iterator[Fact | Skipped]:
        try:
            data = json.loads(source.text)
        except (ValueError, RecursionError) as exc:
            line = getattr(exc, "lineno", None)
            yield Skipped(source.relpath, f"not valid JSON: {exc}", line=line)
            return
        if not isinstance(data, dict) or not isinstance(data.get("model_type"), str):
            return
        names = data.get("architectures")
        if not isinstance(names, list):
            return
        key = _KEY.search(source.text)
        start = key.end() if key is not None else 0
        for name in names:
            if not isinstance(name, str) or not name:
                continue
            index = source.text.find(json.dumps(name), start)
            if index < 0:
                line, column = 1, 1
            else:
                start = index + len(name) + 2
                line = source.text.count("\n", 0, index) + 1
                column = index - (source.text.rfind("\n", 0, index) + 1) + 2  # inside the quote
            yield Fact(
                FactKind.ARCHITECTURE,
                name,
                Location(source.relpath, line, column, line, column + len(name)),
                raw=name,
                value=str(data.get("model_type")),
                origin="file",
                scanner=self.name,
            )
