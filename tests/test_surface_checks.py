"""The target is the judge: what the target release does not have is found whatever the
from-version, at the severity of what the target does with it.

The last test diffs every consecutive pair of release surfaces (the data read from the
wheels) and checks that each thing a release lost gets a finding at that release, from a
rule of the packs or from a built-in check.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from packaging.version import Version

from vllm_upgrade_check.engine import run_scan
from vllm_upgrade_check.knowledge.known_args import known_args
from vllm_upgrade_check.knowledge.registry import load_registry
from vllm_upgrade_check.knowledge.surface import surface_history
from vllm_upgrade_check.matching.matcher import Assumption, VersionContext, match_rules
from vllm_upgrade_check.matching.surface_checks import gone_subjects, surface_findings
from vllm_upgrade_check.model.facts import Fact, FactKind, Location
from vllm_upgrade_check.model.findings import VersionBasis
from vllm_upgrade_check.model.options import ScanOptions
from vllm_upgrade_check.sources.scanners.monitoring import metric_fact

REGISTRY = load_registry()


def _scan(root: Path, to: str, start: str) -> dict[tuple[int, str], str]:
    report = run_scan(ScanOptions.of(paths=[root], to_version=to, from_version=start), registry=REGISTRY)
    return {(f.location.line or 0, f.rule.id): f.severity.value for f in report.findings}


def test_engine_args_is_a_blocker_where_llm_drops_the_keyword_with_a_warning(tmp_path: Path) -> None:
    # 0.24.0: EngineArgs has no swap_space (removed in 0.18.0) and LLM(...) pops it with a
    # warning (vllm/entrypoints/llm.py); 0.28.0's LLM(...) passes it on to EngineArgs.
    (tmp_path / "app.py").write_text(
        "from vllm import LLM, EngineArgs\n"
        "e = EngineArgs(model='m', swap_space=2)\n"
        "llm = LLM('m', swap_space=2)\n"
    )
    at_24 = _scan(tmp_path, "0.24.0", "0.24.0")
    # the 0.18.0 pack rule on LLM(swap_space=...) says why (it wins, before the from-version
    # as it is), at the severity of what 0.24.0 does: EngineArgs raises, LLM(...) warns
    assert at_24 == {(2, "VUC0180-002"): "blocker", (3, "VUC0180-002"): "warning"}, at_24
    at_28 = _scan(tmp_path, "0.28.0", "0.28.0")
    # the 0.26.0 rule says how it went (LLM stopped dropping it): a blocker on both lines
    assert at_28 == {(2, "VUC0260-009"): "blocker", (3, "VUC0260-009"): "blocker"}, at_28
    assert _scan(tmp_path, "0.17.1", "0.17.0") == {}  # both still took it


def test_a_dead_alert_is_a_blocker_and_the_same_metric_in_a_panel_a_warning(tmp_path: Path) -> None:
    (tmp_path / "alerts.yaml").write_text(
        "groups:\n- name: v\n  rules:\n  - alert: Full\n    expr: vllm:gpu_cache_usage_perc > 0.9\n"
    )
    (tmp_path / "board.json").write_text('{"panels": [{"targets": [{"expr": "vllm:gpu_cache_usage_perc"}]}]}\n')
    report = run_scan(ScanOptions.of(paths=[tmp_path], to_version="0.28.0", from_version="0.26.0"), registry=REGISTRY)
    by_file = {f.location.path: f for f in report.findings}
    assert by_file["alerts.yaml"].severity.value == "blocker"
    assert by_file["board.json"].severity.value == "warning"
    # The pack's rule (0.12.0) explains it, before the from-version as it is.
    assert {f.rule.id for f in report.findings} == {"VUC0120-013"}


def test_a_metric_no_release_exported_is_a_warning_with_the_closest_name(tmp_path: Path) -> None:
    (tmp_path / "alerts.yaml").write_text(
        "groups:\n- name: v\n  rules:\n  - alert: Running\n    expr: vllm:num_request_running > 9\n"
    )
    report = run_scan(ScanOptions.of(paths=[tmp_path], to_version="0.28.0", from_version="0.28.0"), registry=REGISTRY)
    (finding,) = report.findings
    assert finding.rule.id == "VUC000-007" and finding.severity.value == "warning"
    assert "did you mean vllm:num_requests_running" in finding.rule.message


def test_from_equal_to_target_is_a_normal_run_that_exits_by_findings(tmp_path: Path) -> None:
    (tmp_path / "requirements.txt").write_text("vllm==0.28.0\n")
    (tmp_path / "run.sh").write_text("vllm serve acme/m --rope-theta 500000\n")
    report = run_scan(ScanOptions.of(paths=[tmp_path], to_version="0.28.0"), registry=REGISTRY)
    assert report.from_version == "0.28.0" and report.releases == ()
    assert [(f.location.path, f.severity.value) for f in report.findings] == [("run.sh", "blocker")]


def test_an_unknown_flag_is_a_blocker_with_did_you_mean(tmp_path: Path) -> None:
    (tmp_path / "run.sh").write_text("vllm serve acme/m --max-model-length 4096\n")
    report = run_scan(ScanOptions.of(paths=[tmp_path], to_version="0.28.0"), registry=REGISTRY)
    (finding,) = report.findings
    assert finding.severity.value == "blocker" and "did you mean --max-model-len?" in finding.rule.message


def test_an_ignored_pack_rule_is_raised_to_blocker_where_the_target_rejects_the_flag(tmp_path: Path) -> None:
    # --disable-log-requests: deprecated (a warning) before it went; 0.28.0's parser has no
    # such flag, 0.33.0's has it again.
    (tmp_path / "run.sh").write_text("vllm serve acme/m --disable-log-requests\n")
    at_28 = _scan(tmp_path, "0.28.0", "0.16.0")
    assert at_28 and set(at_28.values()) == {"blocker"}, at_28
    assert "blocker" not in _scan(tmp_path, "0.33.0", "0.33.0").values()


# --- every loss between two releases is found ---------------------------------------------------

KNOWN = known_args()
RELEASES = KNOWN.releases


def _pairs() -> list[tuple[Version, Version]]:
    return list(zip(RELEASES, RELEASES[1:], strict=False))


def _lost_facts(old: Version, new: Version) -> list[Fact]:
    """A fact for each flag, engine arg, SamplingParams field, env var, module, metric,
    quantization method and load format that ``old`` has and ``new`` does not."""
    facts: list[Fact] = []
    line = 0

    def at() -> Location:
        nonlocal line
        line += 1
        return Location("lost.txt", line)

    for flag in KNOWN.flags:
        if flag.startswith("--") and KNOWN.defines(flag, old) and not KNOWN.defines(flag, new):
            facts.append(Fact(FactKind.ARG, flag[2:].replace("-", "_"), at(), raw=flag, origin="cli", scanner="shell"))
    engine = surface_history("engine_args")
    for name in engine.runs:
        if engine.has(name, old) and not engine.has(name, new):
            group = f"{line + 1}:1"
            loc = at()
            facts.append(Fact(FactKind.ARG, name, loc, raw=name, origin="python", scanner="python", group=group))
            facts.append(Fact(FactKind.LAUNCH, "EngineArgs(...)", loc, origin="python", scanner="python", group=group))
    sampling = surface_history("sampling_params")
    for name in sampling.runs:
        if sampling.has(name, old) and not sampling.has(name, new):
            facts.append(Fact(FactKind.ARG, name, at(), raw=name, origin="sampling", scanner="python"))
    for name, (first, last, gaps) in KNOWN.env_vars.items():
        if name in KNOWN.env_gone_by(new) and first <= old <= last and not any(a <= old <= b for a, b in gaps):
            facts.append(Fact(FactKind.ENV_VAR, name, at(), raw=name, value="1", origin="shell", scanner="shell"))
    modules = surface_history("modules")
    for name in modules.runs:
        if modules.has(name, old) and not modules.has(name, new):
            facts.append(Fact(FactKind.IMPORT, name, at(), raw=f"import {name}", origin="python", scanner="python"))
    metrics = surface_history("metrics")
    for name in metrics.runs:
        if metrics.has(name, old) and not metrics.has(name, new):
            facts.append(metric_fact(name, "lost.txt", at().line or 0, 1, "prometheus"))
    for kind, flag in (("quantization_methods", "quantization"), ("load_formats", "load_format")):
        history = surface_history(kind)
        for value in history.runs:
            if history.has(value, old) and not history.has(value, new) and KNOWN.defines(f"--{flag.replace('_', '-')}", new):
                facts.append(
                    Fact(FactKind.ARG, flag, at(), raw=f"--{flag.replace('_', '-')}", value=value, origin="cli", scanner="shell")
                )
    return facts


def test_the_diff_finds_losses() -> None:
    """The diff itself: the releases lose things of every kind."""
    total = [f for old, new in _pairs() for f in _lost_facts(old, new)]
    kinds = {(f.kind, f.origin) for f in total}
    assert {(FactKind.ARG, "cli"), (FactKind.ARG, "python"), (FactKind.ENV_VAR, "shell")} <= kinds
    assert {(FactKind.IMPORT, "python"), (FactKind.METRIC, "promql"), (FactKind.ARG, "sampling")} <= kinds


@pytest.mark.parametrize(("old", "new"), _pairs(), ids=lambda v: str(v))
def test_every_loss_between_two_releases_is_found(old: Version, new: Version) -> None:
    facts = _lost_facts(old, new)
    rules = list(REGISTRY.rules())
    context = VersionContext(
        new,
        old,
        Assumption(old, VersionBasis.OPTION, "--from"),
        gone=KNOWN.gone_by(new),
        gone_env=KNOWN.env_gone_by(new),
        gone_other=gone_subjects(rules, new),
    )
    findings = match_rules(rules, facts, context)
    findings += surface_findings(facts, context, findings)
    found = {id(f.fact) for f in findings}
    missing = [(f.kind.value, f.raw, f.value) for f in facts if id(f) not in found and f.kind != FactKind.LAUNCH]
    assert not missing, f"{old} -> {new}: lost without a finding: {missing[:20]} ({len(missing)})"


def test_advisories_name_the_version_to_move_and_floating_tags(tmp_path: Path) -> None:
    (tmp_path / "Dockerfile").write_text("ARG TAG=v0.25.1\nFROM vllm/vllm-openai:${TAG}\n")
    (tmp_path / "compose.yaml").write_text(
        "services:\n  a:\n    image: vllm/vllm-openai:latest\n"
        "  b:\n    image: vllm/vllm-openai:v0.25.1\n"
        "    entrypoint: [python3, -m, vllm.entrypoints.openai.api_server]\n    command: [--model, m]\n"
    )
    (tmp_path / "requirements.txt").write_text("vllm>=0.10,<0.11\n")
    report = run_scan(ScanOptions.of(paths=[tmp_path], to_version="0.29.0"), registry=REGISTRY)
    got = {(f.location.path, f.location.line, f.rule.id, f.severity.value) for f in report.findings}
    assert ("Dockerfile", 2, "VUC000-010", "info") in got
    assert ("compose.yaml", 3, "VUC000-011", "info") in got
    assert ("compose.yaml", 5, "VUC000-010", "info") in got
    assert ("compose.yaml", 6, "VUC000-012", "info") in got
    assert ("requirements.txt", 1, "VUC000-013", "blocker") in got
    (move,) = [f for f in report.findings if f.location.path == "Dockerfile"]
    assert "written at line 1" in move.rule.message
    # Before 0.29.0 the entry point is not deprecated; at the image's own version, nothing moves.
    report = run_scan(ScanOptions.of(paths=[tmp_path / "compose.yaml"], to_version="0.25.1"), registry=REGISTRY)
    assert {f.rule.id for f in report.findings} == {"VUC000-011"}


def test_fix_settles_the_version_advisories_by_its_bump(tmp_path: Path) -> None:
    from vllm_upgrade_check.engine.fix import fix_paths

    (tmp_path / "requirements.txt").write_text("vllm>=0.10,<0.11\n")
    (tmp_path / "run.sh").write_text("vllm serve m --max-num-seqs 8\n")
    result = fix_paths(ScanOptions.of(paths=[tmp_path], to_version="0.28.0"))
    assert (tmp_path / "requirements.txt").read_text() == "vllm>=0.28,<0.29\n"  # the range moved
    assert not result.unfixed and not result.held_by
    after = run_scan(ScanOptions.of(paths=[tmp_path], to_version="0.28.0"), registry=REGISTRY)
    assert after.findings == ()


def test_what_a_new_user_met(tmp_path: Path) -> None:
    """Typo env vars, unknown vllm.envs names, --help, private fields, ~= ranges."""
    (tmp_path / "run.sh").write_text(
        "export VLLM_LOGGING_LEVL=DEBUG\nexport VLLM_MODEL_DIR=/models\nexport Q_SCALE_CONSTANT=100\n"
        "vllm serve m --help\n"
    )
    (tmp_path / "app.py").write_text(
        "import vllm.envs as envs\nfrom vllm import EngineArgs\n"
        "e = EngineArgs(model='m', _api_process_count=1)\nprint(envs.VLLM_NOT_A_THING, envs.VLLM_LOGGING_LEVEL)\n"
    )
    (tmp_path / "requirements.txt").write_text("vllm~=0.10.0\n")
    got = _scan(tmp_path, "0.28.0", "0.26.0")
    assert got == {
        (1, "VUC000-008"): "warning",  # run.sh: a typo of VLLM_LOGGING_LEVEL
        (3, "VUC0280-007"): "warning",  # an info rule, raised: 0.28.0 no longer reads it
        (4, "VUC000-006"): "blocker",  # app.py: envs.VLLM_NOT_A_THING
        (1, "VUC000-013"): "blocker",  # requirements.txt
    }, got


def test_a_flag_removed_before_the_from_version_keeps_its_pack_rule_and_fix(tmp_path: Path) -> None:
    """A newer rule on the same engine arg for other facts (0.26.0's LLM(swap_space=...))
    does not hide the 0.18.0 rule on the --swap-space flag: its message and fix stay."""
    (tmp_path / "s.sh").write_text("#!/bin/sh\nvllm serve m --swap-space 4\n")
    (tmp_path / "app.py").write_text('from vllm import LLM\nllm = LLM(model="m", swap_space=4)\n')
    report = run_scan(ScanOptions.of(paths=[tmp_path], from_version="0.20.0", to_version="0.33.0"))
    by_file = {(f.location.path, f.rule.id) for f in report.findings}
    assert ("s.sh", "VUC0180-001") in by_file, by_file
    assert ("app.py", "VUC0260-009") in by_file, by_file
