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


REALISTIC = Path(__file__).parent / "fixtures" / "report_repo"
SCREEN = 45
"""Lines of a terminal screen the summary and checklist must fit in, before the details."""


def _realistic(tmp_path: Path) -> Path:
    import shutil

    root = tmp_path / "deployment"
    shutil.copytree(REALISTIC, root)
    return root


def _scan_json(root: Path, *args: str) -> dict[str, object]:
    import json

    result = runner.invoke(app, ["scan", str(root), "--no-cache", "-f", "json", *args])
    assert result.exit_code in (0, 1), result.output
    doc: dict[str, object] = json.loads(result.stdout)
    return doc


def _items(checklist: str) -> list[str]:
    """The checklist's items, top-level and sub-items, each on one line."""
    return [line.strip() for line in checklist.splitlines() if line.lstrip().startswith("- ")]


def test_a_realistic_repo_fits_one_screen_before_its_details(tmp_path: Path) -> None:
    root = _realistic(tmp_path)
    doc = _scan_json(root, "--to", "0.28.0")
    findings = doc["findings"]
    assert isinstance(findings, list) and len(findings) >= 20  # the fixture is what it claims
    assert len({f["path"] for f in findings}) == 6
    text = _report(root, "--to", "0.28.0")
    head = text.split("## Details", 1)[0]
    assert len(head.rstrip("\n").splitlines()) <= SCREEN, head
    assert "Nothing found" not in text


def test_every_rule_is_in_exactly_one_checklist_item_and_every_blocker_in_one(tmp_path: Path) -> None:
    root = _realistic(tmp_path)
    findings = _scan_json(root, "--to", "0.28.0")["findings"]
    assert isinstance(findings, list)
    items = _items(_checklist(_report(root, "--to", "0.28.0")))
    for rule_id in {f["rule_id"] for f in findings}:
        holding = [item for item in items if f"**{rule_id}**" in item]
        assert len(holding) == 1, (rule_id, holding)
    blockers = {f["rule_id"] for f in findings if f["severity"] == "blocker"}
    assert blockers and all(any(f"**{b}**" in item for item in items) for b in blockers)
    # the counts of a rule's item (and its places done by hand) add up to its findings
    for rule_id in {f["rule_id"] for f in findings}:
        (item,) = [i for i in items if f"**{rule_id}**" in i]
        counts = [int(n) for n in re.findall(r"\((\d+)×", item)]
        assert sum(counts) == sum(1 for f in findings if f["rule_id"] == rule_id), item


def test_unsafe_fixes_are_named_exactly_when_needed(tmp_path: Path) -> None:
    root = _realistic(tmp_path)
    checklist = _checklist(_report(root, "--to", "0.28.0"))
    unsafe_item = next(line for line in checklist.splitlines() if "--unsafe-fixes" in line)
    assert "`vllm-upgrade-check fix" in unsafe_item and "--to 0.28.0" in unsafe_item
    # guided decoding moves into --structured-outputs-config only with --unsafe-fixes
    sub = checklist.split(unsafe_item, 1)[1].split("\n- ", 1)[0]
    assert "VUC0120-001" in sub
    safe_only = tmp_path / "safe"
    safe_only.mkdir()
    (safe_only / "serve.sh").write_text("vllm serve m --disable-log-requests --max-num-partial-prefills 2\n")
    plain = _checklist(_report(safe_only, "--to", "0.28.0", "--from", "0.26.0"))
    assert "--unsafe-fixes" not in plain
    assert "`vllm-upgrade-check fix" in plain


def test_a_host_and_port_is_not_a_metric(tmp_path: Path) -> None:
    (tmp_path / "client.py").write_text(
        'import vllm\nURL = "http://vllm:8000/v1"\nQUERY = "rate(vllm:num_requests_swapped[5m])"\n'
    )
    findings = _scan_json(tmp_path, "--to", "0.28.0")["findings"]
    assert isinstance(findings, list)
    subjects = {str(f["subject"]) for f in findings}
    assert "vllm:num_requests_swapped" in subjects  # the file's strings are read
    assert not any("8000" in s for s in subjects), subjects


def test_report_without_output_prints_and_writes_nothing(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """``report`` with no ``--output`` prints the report (as ``scan --format markdown``
    does) and creates no file, in the current directory or elsewhere; ``-o`` writes it."""
    root = _repo(tmp_path)
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    result = runner.invoke(app, ["report", str(root), "--no-cache"])
    assert result.exit_code == 0, result.output
    assert "## Checklist" in result.stdout
    assert "written to" not in result.stdout
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before
    written = runner.invoke(app, ["report", str(root), "--no-cache", "--output", "r.md"])
    assert written.exit_code == 0, written.output
    assert (cwd / "r.md").read_text() == result.stdout
    assert "## Checklist" not in written.stdout


def test_report_help_and_readme_say_where_it_goes() -> None:
    """The help of ``--output`` and the README give the same default: standard output."""
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    help_text = " ".join(runner.invoke(app, ["report", "--help"]).stdout.split())
    assert "(default: standard output)" in help_text
    assert "vllm-upgrade-report.md" not in help_text + readme
    assert "`report`, which prints it" in readme
