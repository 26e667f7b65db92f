"""The Markdown report as a checklist: grouped by rule with counts, every finding in exactly
one item, the exact commands (``--unsafe-fixes`` where needed), skipped files as items, no
empty release sections."""

from __future__ import annotations

import re
from pathlib import Path

from typer.testing import CliRunner

from vllm_upgrade_check.cli import _register, app

_register()
runner = CliRunner()


def _report(root: Path, *args: str) -> str:
    out = root.parent / f"{root.name}.md"
    result = runner.invoke(app, ["report", str(root), "--no-cache", "-o", str(out), *args])
    assert result.exit_code == 0, result.output
    return out.read_text()


def _checklist(text: str) -> str:
    return text.split("## Checklist", 1)[1].split("## Details", 1)[0]


def _repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    for n in range(12):  # the same removed flag in twelve files: one item, not twelve
        (root / f"serve{n}.sh").write_text(f"vllm serve m{n} --max-num-partial-prefills {n + 1}\n")
    (root / "app.py").write_text(
        "from vllm.transformers_utils.tokenizer import get_tokenizer\nfrom vllm.beam_search import X\n"
    )
    (root / "Dockerfile").write_text("FROM vllm/vllm-openai:v0.21.0\nCMD [\"--quantization\", \"bitsandbytes\"]\n")
    (root / "compose.yaml").write_text("services:\n  vllm:\n    image: vllm/vllm-openai:v0.21.0\n  bad: [\n")
    return root


def test_every_finding_is_in_exactly_one_checklist_item(tmp_path: Path) -> None:
    import json

    root = _repo(tmp_path)
    found = json.loads(
        runner.invoke(app, ["scan", str(root), "--to", "0.28.0", "--no-cache", "-f", "json"]).stdout
    )["findings"]
    checklist = _checklist(_report(root, "--to", "0.28.0"))
    counted: dict[str, int] = {}
    for rule_id, count in re.findall(r"\*\*(VUC[0-9A-Z-]+)\*\* [a-z0-9-]+ \((\d+)×", checklist):
        assert rule_id not in counted, f"{rule_id} is in two checklist items"
        counted[rule_id] = int(count)
    expected: dict[str, int] = {}
    for finding in found:
        expected[finding["rule_id"]] = expected.get(finding["rule_id"], 0) + 1
    assert counted == expected
    assert counted["VUC0270-001"] == 12
    assert len(checklist.strip().splitlines()) < 40


def test_checklist_gives_the_exact_commands_and_the_skipped_files(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    text = _report(root, "--to", "0.28.0")
    checklist = _checklist(text)
    assert f"`vllm-upgrade-check fix {root} --to 0.28.0 --diff`" in checklist or "fix . --to 0.28.0 --diff" in checklist
    unsafe = [line for line in checklist.splitlines() if "marked unsafe" in line]
    assert len(unsafe) == 1 and "--unsafe-fixes --diff`" in unsafe[0]
    skipped = [line for line in checklist.splitlines() if "compose.yaml" in line]
    assert len(skipped) == 1 and skipped[0].startswith("- [ ] ") and "fails closed" in skipped[0]
    assert text.startswith("# vLLM upgrade: 0.21.0 → 0.28.0\n\n**Failed (exit 2): ")


def test_no_empty_release_sections(tmp_path: Path) -> None:
    root = tmp_path / "one"
    root.mkdir()
    (root / "run.sh").write_text("vllm serve m --max-num-partial-prefills 4\n")
    text = _report(root, "--to", "0.33.0", "--from", "0.20.0")
    assert "Nothing found" not in text
    assert re.search(r"^- No finding for 0\.20\.1, ", text, re.M)
    assert text.count("### VUC0270-001 ") == 1


def test_an_empty_run_is_a_short_checklist(tmp_path: Path) -> None:
    root = tmp_path / "empty"
    root.mkdir()
    text = _report(root, "--to", "0.28.0", "--from", "0.27.1")
    assert "**Passed: nothing at or above --fail-on blocker; 0 file(s) scanned.**" in text
    assert len(text.splitlines()) < 30
