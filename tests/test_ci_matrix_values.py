"""GitHub Actions ``strategy.matrix`` values: each run of a job reads one value of each
name, so ``pip install vllm==${{ matrix.vllm }}`` pins every listed version (each counted
where the matrix writes it, bumped there) and ``vllm serve m ${{ matrix.args }}`` launches
with each value's flags, reported at the value's line."""

from __future__ import annotations

from pathlib import Path

from vllm_upgrade_check.engine import run_scan
from vllm_upgrade_check.engine.fix import fix_paths
from vllm_upgrade_check.knowledge.registry import load_registry
from vllm_upgrade_check.model.options import ScanOptions
from vllm_upgrade_check.parsing.yamlnodes import compose_documents

REGISTRY = load_registry()

WORKFLOW = """\
on: push
jobs:
  test:
    runs-on: ubuntu-latest
    strategy:
      matrix:
        vllm: ["0.16.0", '0.17.0']
        args:
          - "--seed 1"
          - "--swap-space 4"
        cfg:
          - {model: acme/a, extra: "--swap-space 8"}
        include:
          - vllm: 0.17.1
            args: --max-model-len 10 --swap-space 2
    steps:
      - run: pip install "vllm==${{ matrix.vllm }}" torch
      - run: vllm serve ${{ matrix.cfg.model }} ${{ matrix.args }} ${{matrix.cfg.extra}}
  dynamic:
    runs-on: ubuntu-latest
    strategy:
      matrix: ${{ fromJSON(needs.setup.outputs.matrix) }}
    steps:
      - run: vllm serve m ${{ matrix.args }}
"""


def _write(root: Path, text: str = WORKFLOW) -> Path:
    flows = root / ".github" / "workflows"
    flows.mkdir(parents=True)
    path = flows / "ci.yml"
    path.write_text(text)
    return path


def test_matrix_values_are_read_at_their_lines(tmp_path: Path) -> None:
    _write(tmp_path)
    report = run_scan(ScanOptions.of(paths=[tmp_path], to_version="0.18.0"), registry=REGISTRY)
    found = sorted({(f.rule.id, f.location.line, f.location.column) for f in report.findings})
    assert found == [
        ("VUC000-010", 7, 17),  # "0.16.0"
        ("VUC000-010", 7, 27),  # '0.17.0'
        ("VUC000-010", 14, 19),  # include: vllm: 0.17.1
        ("VUC0180-001", 10, 14),  # - "--swap-space 4"
        ("VUC0180-001", 12, 37),  # extra: "--swap-space 8"
        ("VUC0180-001", 15, 38),  # include: args: ... --swap-space 2
    ]
    pins = sorted(f.fact.value or "" for f in report.findings if f.rule.id == "VUC000-010")
    assert pins == ["==0.16.0", "==0.17.0", "==0.17.1"]
    # a matrix the workflow computes stays unresolved, with a note naming where
    (note,) = [n for n in report.notes if "ci.yml:24:" in n]
    assert note.startswith("unresolved: ${{ matrix.args }} at ")  # the expression named once


def test_fix_bumps_each_matrix_version_where_it_is_written(tmp_path: Path) -> None:
    text = WORKFLOW.replace('          - "--swap-space 4"\n', "").replace(" --swap-space 2", "")
    text = text.replace(', extra: "--swap-space 8"', "")
    path = _write(tmp_path, text)
    fix_paths(ScanOptions.of(paths=[tmp_path], to_version="0.18.0"), bump=True)
    fixed = path.read_text()
    compose_documents(fixed)
    assert "        vllm: [\"0.18.0\", '0.18.0']\n" in fixed
    assert "          - vllm: 0.18.0\n" in fixed
    assert 'pip install "vllm==${{ matrix.vllm }}" torch' in fixed


def test_env_variables_that_hold_a_matrix_value(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        "on: push\njobs:\n  test:\n    runs-on: ubuntu-latest\n    strategy:\n      matrix:\n"
        '        vllm: ["0.16.0", "0.17.0"]\n'  # 7
        '        args: ["--swap-space 4"]\n'  # 8
        "    env:\n      VLLM_VERSION: ${{ matrix.vllm }}\n"
        '    steps:\n      - run: pip install "vllm==$VLLM_VERSION"\n'
        "      - run: vllm serve m $EXTRA\n        env:\n          EXTRA: ${{ matrix.args }}\n",
    )
    report = run_scan(ScanOptions.of(paths=[tmp_path], to_version="0.18.0"), registry=REGISTRY)
    found = sorted((f.rule.id, f.location.line, f.location.column) for f in report.findings)
    assert found == [("VUC000-010", 7, 17), ("VUC000-010", 7, 27), ("VUC0180-001", 8, 17)]
    assert not [n for n in report.notes if n.startswith("unresolved:")]
    fixed = path.read_text().replace('"--swap-space 4"', '"--seed 1"')
    path.write_text(fixed)
    fix_paths(ScanOptions.of(paths=[tmp_path], to_version="0.18.0"), bump=True)
    assert '        vllm: ["0.18.0", "0.18.0"]\n' in path.read_text()
