"""A dict loaded from a YAML file of the repository and splatted into a vLLM call
(``cfg = yaml.safe_load(open("engine.yaml")); LLM(**cfg)``): the YAML's top-level keys are
the call's keywords, reported at the YAML's lines; a file the repository does not hold
leaves the call unresolved, the note naming it."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from vllm_upgrade_check.cli import _register, app
from vllm_upgrade_check.engine import run_scan
from vllm_upgrade_check.model.facts import Fact, FactKind
from vllm_upgrade_check.model.findings import Report
from vllm_upgrade_check.model.options import ScanOptions

_register()


def scan(tmp_path: Path, files: dict[str, str]) -> tuple[Report, list[Fact]]:
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, encoding="utf-8")
    facts: list[Fact] = []
    report = run_scan(ScanOptions.of(paths=[tmp_path], to_version="0.18.0", from_version="0.16.0"), facts_out=facts)
    return report, facts


ENGINE = "model: org/m\nswap_space: 4\n"
HEAD = "import yaml\nfrom pathlib import Path\nfrom vllm import LLM, AsyncEngineArgs\n"


@pytest.mark.parametrize(
    "body",
    [
        'cfg = yaml.safe_load(open("engine.yaml"))\nllm = LLM(**cfg)\n',
        'with open("engine.yaml") as f:\n    cfg = yaml.safe_load(f)\nllm = LLM(**cfg)\n',
        'cfg = yaml.safe_load(Path("engine.yaml").read_text())\nllm = LLM(**cfg)\n',
        'llm = LLM(**yaml.safe_load((Path(__file__).parent / "engine.yaml").read_text()))\n',
        'args = AsyncEngineArgs(**yaml.load(open("engine.yaml"), Loader=yaml.SafeLoader))\n',
        'CONFIG = Path(__file__).parent / "engine.yaml"\n\n\ndef main():\n    with open(CONFIG) as fh:\n'
        "        cfg = yaml.safe_load(fh)\n    return LLM(**cfg)\n",
    ],
)
def test_the_yaml_keys_are_the_call_keywords(tmp_path: Path, body: str) -> None:
    report, facts = scan(tmp_path, {"svc/app.py": HEAD + body, "svc/engine.yaml": ENGINE})
    args = sorted((f.name, f.location.path, f.location.line) for f in facts if f.kind == FactKind.ARG and f.scanner == "python")
    assert args == [("model", "svc/engine.yaml", 1), ("swap_space", "svc/engine.yaml", 2)]
    assert [(f.rule.id, f.location.path, f.location.line) for f in report.findings] == [("VUC0180-002", "svc/engine.yaml", 2)]
    launch = next(f for f in facts if f.kind == FactKind.LAUNCH)
    assert launch.resolved and launch.model == "org/m"
    assert report.notes == ()


def test_a_yaml_file_not_in_the_repository_is_named_unresolved(tmp_path: Path) -> None:
    report, _facts = scan(tmp_path, {"app.py": HEAD + 'cfg = yaml.safe_load(open("/etc/vllm/engine.yaml"))\nLLM(**cfg)\n'})
    assert report.findings == ()
    assert report.notes == (
        'unresolved: yaml.safe_load(open("/etc/vllm/engine.yaml")) at app.py:5:1 (LLM(...)); '
        "the flags it holds were not checked",
    )


def test_fix_removes_the_key_from_the_yaml(tmp_path: Path) -> None:
    scan(tmp_path, {"app.py": HEAD + 'cfg = yaml.safe_load(open("engine.yaml"))\nLLM(**cfg)\n', "engine.yaml": ENGINE})
    result = CliRunner().invoke(app, ["fix", str(tmp_path), "--from", "0.16.0", "--to", "0.18.0"])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "engine.yaml").read_text() == "model: org/m\n"
