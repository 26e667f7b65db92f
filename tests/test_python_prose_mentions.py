"""A Python file that names vLLM only in prose (comment lines, the module docstring) is not
parsed: it yields what a file that never names vLLM yields. Any other mention, or a string
that starts with ``--`` (a flag table), and the file is read as before."""

from __future__ import annotations

import pytest

from conftest import scan_text
from vllm_upgrade_check.model.facts import Fact, Skipped
from vllm_upgrade_check.sources.scanners.python.scanner import PythonSourceScanner, only_prose_mentions


@pytest.mark.parametrize(
    "text",
    [
        '"""Request shaping for the vLLM backend."""\n\n# keep in step with vllm serve --max-model-len\nimport json\n',
        "#!/usr/bin/env python3\n# -*- coding: utf-8 -*-\n# talks to VLLM\n\nr'''Helpers (vLLM).'''\nX = 1\n",
        # a syntax error in such a file is no vLLM file's error: nothing to report
        '"""vLLM notes."""\ndef broken(:\n',
    ],
)
def test_prose_only_files_are_not_parsed(text: str) -> None:
    assert only_prose_mentions(text)
    assert scan_text(PythonSourceScanner(), "svc/shape.py", text) == []


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ('"""Uses vLLM."""\nfrom vllm import LLM\nllm = LLM(model="m", swap_space=4)\n', Fact),
        ('x = 1  # vllm\ndef broken(:\n', Skipped),  # a trailing comment: parsed (conservative)
        ('"""doc"""\ndef f():\n    """Starts vLLM."""\n    return 1\ndef broken(:\n', Skipped),  # a function's docstring
        ('# flags we pass to vllm\nSWITCHES = ["--enforce-eager"]\ndef broken(:\n', Skipped),  # a flag table
        ('"""vLLM docstring never closed\n', Skipped),
    ],
)
def test_other_mentions_are_parsed(text: str, kind: type) -> None:
    assert not only_prose_mentions(text)
    items = scan_text(PythonSourceScanner(), "svc/run.py", text)
    assert any(isinstance(i, kind) for i in items), items
