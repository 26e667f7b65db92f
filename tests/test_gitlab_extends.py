"""GitLab CI jobs read as the runner runs them: ``extends:`` (one template or a list, over
several levels) gives a job the templates' ``script``/``before_script`` and ``variables``,
and ``!reference [JOB, KEY]`` in a script pulls another job's lines. A launch in an
inherited script is read with the job's variables; the ``!reference`` tag reads as YAML."""

from __future__ import annotations

from pathlib import Path

from vllm_upgrade_check.engine import run_scan
from vllm_upgrade_check.model.options import ScanOptions

REMOVED = "VUC0180-001"  # --swap-space, removed in 0.18.0


def _scan(root: Path, text: str) -> tuple[list[int | None], list[str]]:
    (root / ".gitlab-ci.yml").write_text(text)
    report = run_scan(ScanOptions.of(paths=[root], from_version="0.17.1", to_version="0.18.0"))
    lines = sorted(f.location.line for f in report.findings if f.rule.id == REMOVED)
    return lines, [n for n in report.notes if "unresolved" in n]


def test_a_job_runs_its_templates_script_with_its_own_variables(tmp_path: Path) -> None:
    text = """.serve-base:
  before_script:
    - echo start
  script:
    - vllm serve acme/m $EXTRA --port 8000

serve:
  extends: .serve-base
  variables:
    EXTRA: --swap-space 4
"""
    assert _scan(tmp_path, text) == ([10], [])


def test_extends_over_several_levels_and_a_list(tmp_path: Path) -> None:
    text = """.vars:
  variables:
    EXTRA: --swap-space 4
.serve-base:
  script:
    - vllm serve acme/m $EXTRA
.mid:
  extends: .serve-base
  variables:
    PORT: "8000"
serve:
  extends: [.vars, .mid]
"""
    assert _scan(tmp_path, text) == ([3], [])


def test_a_job_variable_replaces_the_templates(tmp_path: Path) -> None:
    text = """.serve-base:
  variables:
    EXTRA: --swap-space 4
  script:
    - vllm serve acme/m $EXTRA
serve:
  extends: .serve-base
  variables:
    EXTRA: --max-model-len 4096
"""
    assert _scan(tmp_path, text) == ([], [])


def test_a_job_script_replaces_the_templates(tmp_path: Path) -> None:
    text = """.serve-base:
  script:
    - vllm serve acme/m --swap-space 4
serve:
  extends: .serve-base
  script:
    - vllm serve acme/m --port 8000
"""
    assert _scan(tmp_path, text) == ([], [])


def test_reference_pulls_lines_with_the_jobs_variables(tmp_path: Path) -> None:
    text = """.launch:
  script:
    - vllm serve acme/m $OPTS
serve:
  variables:
    OPTS: --swap-space 8
  script:
    - echo hi
    - !reference [.launch, script]
"""
    assert _scan(tmp_path, text) == ([6], [])


def test_reference_to_an_inherited_key(tmp_path: Path) -> None:
    text = """.base:
  script:
    - vllm serve acme/m --swap-space 4
.child:
  extends: .base
serve:
  script: [!reference [.child, script]]
"""
    assert _scan(tmp_path, text) == ([3], [])


def test_an_unused_template_is_read_alone_and_a_cycle_ends(tmp_path: Path) -> None:
    text = """.alone:
  script:
    - vllm serve acme/m --swap-space 4
.a:
  extends: .b
  script:
    - vllm serve acme/m --swap-space 2
.b:
  extends: .a
job:
  extends: .a
"""
    assert _scan(tmp_path, text) == ([3, 7], [])


def test_fix_cuts_the_flag_where_the_template_writes_it(tmp_path: Path) -> None:
    from vllm_upgrade_check.engine.fix import fix_paths

    text = """.launch:
  script:
    - vllm serve acme/m --swap-space 4 --port 8000
serve:
  script:
    - !reference [.launch, script]
"""
    (tmp_path / ".gitlab-ci.yml").write_text(text)
    fix_paths(ScanOptions.of(paths=[tmp_path], from_version="0.17.1", to_version="0.18.0"), bump=False)
    assert (tmp_path / ".gitlab-ci.yml").read_text() == text.replace(" --swap-space 4", "")


def test_default_before_script_runs_first_unless_the_job_opts_out(tmp_path: Path) -> None:
    text = """default:
  before_script:
    - export OPTS="--swap-space 4"
serve:
  script:
    - vllm serve acme/m $OPTS
bare:
  inherit:
    default: false
  script:
    - vllm serve acme/m $OPTS
"""
    lines, notes = _scan(tmp_path, text)
    assert lines == [3]
    assert len(notes) == 1 and ".gitlab-ci.yml:11:" in notes[0]  # bare's $OPTS is not known
