"""Python launches whose values come from the environment (``os.environ.get("X", "d")``,
``os.getenv("X", "d")``, ``os.environ["X"]``): the keyword or flag is still passed and
checked; a literal default is its value; without one, only the value is named unresolved."""

from __future__ import annotations

from pathlib import Path

import pytest

from vllm_upgrade_check.engine import run_scan
from vllm_upgrade_check.engine.fix import fix_paths
from vllm_upgrade_check.model.options import ScanOptions

HEAD = "import os\nimport subprocess\nfrom os import environ\nfrom vllm import LLM\n"


def _scan(tmp_path: Path, body: str, start: str = "0.26.0", to: str = "0.28.0"):
    (tmp_path / "app.py").write_text(HEAD + body)
    return run_scan(ScanOptions.of(paths=[tmp_path], to_version=to, from_version=start))


@pytest.mark.parametrize(
    "read",
    ['os.environ.get("P", "2")', 'os.getenv("P", "2")', 'int(os.getenv("P", default="2"))', 'os.environ["P"]',
     'environ.get("P")', 'os.getenv("P")'],
)
def test_removed_keyword_read_from_the_environment_is_reported(tmp_path: Path, read: str) -> None:
    report = _scan(tmp_path, f"llm = LLM(model='acme/m', max_num_partial_prefills={read})\n")
    assert [(f.rule.id, f.location.path, f.location.line) for f in report.findings] == [("VUC0270-001", "app.py", 5)]


@pytest.mark.parametrize("read", ['os.environ.get("P", "2")', 'os.getenv("P")', 'os.environ["P"]'])
def test_removed_flag_read_from_the_environment_is_reported_and_fixed(tmp_path: Path, read: str) -> None:
    body = f'subprocess.run(["vllm", "serve", "acme/m", "--max-num-partial-prefills", {read}, "--port", "8000"])\n'
    report = _scan(tmp_path, body)
    assert [(f.rule.id, f.location.line) for f in report.findings] == [("VUC0270-001", 5)]
    fix_paths(ScanOptions.of(paths=[tmp_path], to_version="0.28.0", from_version="0.26.0"), bump=False)
    assert (tmp_path / "app.py").read_text() == HEAD + 'subprocess.run(["vllm", "serve", "acme/m", "--port", "8000"])\n'


def test_default_is_the_value_checked(tmp_path: Path) -> None:
    body = 'subprocess.run(["vllm", "serve", "acme/m", "--kv-cache-dtype", os.getenv("KV", "fp4_e9")])\n'
    report = _scan(tmp_path, body)
    assert [(f.rule.id, f.location.line) for f in report.findings] == [("VUC000-009", 5)]
    assert "fp4_e9" in report.findings[0].rule.message


def test_default_model_is_the_model_served(tmp_path: Path) -> None:
    body = 'subprocess.run(["vllm", "serve", os.environ.get("MODEL", "acme/m"), "--port", "8000"])\n'
    report = _scan(tmp_path, body)
    assert not [n for n in report.notes if n.startswith("unresolved:")]


@pytest.mark.parametrize(
    ("body", "shown"),
    [
        ('subprocess.run(["vllm", "serve", "acme/m", "--kv-cache-dtype", os.environ.get("KV")])\n', "--kv-cache-dtype"),
        ('subprocess.run(["vllm", "serve", "acme/m", "--kv-cache-dtype", os.environ["KV"]])\n', "--kv-cache-dtype"),
        ("llm = LLM(model='acme/m', kv_cache_dtype=os.getenv('KV'))\n", "kv_cache_dtype="),
    ],
)
def test_no_default_is_an_unresolved_note_for_the_value_only(tmp_path: Path, body: str, shown: str) -> None:
    report = _scan(tmp_path, body)
    assert not report.findings  # the value is not judged
    notes = [n for n in report.notes if n.startswith("unresolved:")]
    assert len(notes) == 1
    assert f"the value of {shown} at app.py:5:" in notes[0] and "${KV}" in notes[0]
    assert "flags it holds were not checked" not in notes[0]


@pytest.mark.parametrize("setter", ['os.environ["KV"] = "fp4_e9"', 'os.environ.setdefault("KV", "fp4_e9")'])
def test_value_the_file_sets_wins_over_the_default(tmp_path: Path, setter: str) -> None:
    body = setter + '\nsubprocess.run(["vllm", "serve", "acme/m", "--kv-cache-dtype", os.getenv("KV", "auto")])\n'
    report = _scan(tmp_path, body)
    assert [(f.rule.id, f.location.line) for f in report.findings] == [("VUC000-009", 6)]
    assert "fp4_e9" in report.findings[0].rule.message


def test_value_the_file_sets_resolves_a_read_without_default(tmp_path: Path) -> None:
    body = 'os.environ["KV"] = "auto"\nllm = LLM(model="acme/m", kv_cache_dtype=os.environ["KV"])\n'
    report = _scan(tmp_path, body)
    assert not report.findings
    assert not [n for n in report.notes if n.startswith("unresolved:")]
