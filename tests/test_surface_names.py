"""The target judges imported names, keyword values, architectures, response fields and
``vllm @ URL`` pins: annotated targets with a from-version after the removal, and a diff of
every consecutive pair of releases' public names that fails when a name a release lost gets
no finding.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from packaging.version import Version

from vllm_upgrade_check.engine import run_scan
from vllm_upgrade_check.knowledge.public_names import public_names
from vllm_upgrade_check.knowledge.registry import load_registry
from vllm_upgrade_check.knowledge.surface import surface_history
from vllm_upgrade_check.matching.matcher import Assumption, VersionContext, match_rules
from vllm_upgrade_check.matching.surface_checks import gone_subjects, surface_findings
from vllm_upgrade_check.matching.surface_values import overridden_architectures
from vllm_upgrade_check.model.facts import Fact, FactKind, Location
from vllm_upgrade_check.model.findings import VersionBasis
from vllm_upgrade_check.model.options import ScanOptions
from vllm_upgrade_check.sources.scanners.requirements import url_version

REGISTRY = load_registry()


def _findings(root: Path, to: str, start: str | None = None) -> dict[tuple[str, int, str], tuple[str, str]]:
    report = run_scan(ScanOptions.of(paths=[root], to_version=to, from_version=start), registry=REGISTRY)
    return {
        (f.location.path or "", f.location.line or 0, f.rule.id): (f.severity.value, f.rule.message)
        for f in report.findings
    }


# --- public names ---------------------------------------------------------------------------------


def test_a_name_its_module_no_longer_defines_is_a_blocker_with_its_new_home(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text(
        "from vllm import LLM, SamplingParams\n"
        "from vllm.utils import FlexibleArgumentParser\n"
        "from vllm.sampling_params import GuidedDecodingParams\n"
        "from vllm.sampling_params import SamplingParams as SP, RequestOutputKind\n"
    )
    got = _findings(tmp_path, "0.28.0", "0.28.0")
    severity, message = got[("app.py", 2, "VUC000-006")]
    assert severity == "blocker"
    assert "did you mean from vllm.utils.argparse_utils import FlexibleArgumentParser?" in message
    assert "removed in vLLM" in message
    assert got[("app.py", 3, "VUC000-006")][0] == "blocker"
    assert not [k for k in got if k[1] in (1, 4)], got  # LLM, SamplingParams, RequestOutputKind are there
    # the release before the removal still had the name: nothing to say
    removed = public_names().names("vllm.utils").removed_in("FlexibleArgumentParser", Version("0.28.0"))
    assert removed is not None
    before = public_names().names("vllm.utils").last_before("FlexibleArgumentParser", removed)
    assert before is not None
    assert ("app.py", 2, "VUC000-006") not in _findings(tmp_path, str(before), str(before))


def test_a_name_no_release_had_is_a_warning_and_lazy_exports_count(tmp_path: Path) -> None:
    # vllm/__init__.py serves LLM through a module __getattr__ and lists it in __all__
    (tmp_path / "app.py").write_text("from vllm import LLM, EngineArgs\nfrom vllm import SamplingParamz\n")
    got = _findings(tmp_path, "0.28.0", "0.28.0")
    assert set(got) == {("app.py", 2, "VUC000-006")}, got
    severity, message = got[("app.py", 2, "VUC000-006")]
    assert severity == "warning" and "did you mean from vllm import SamplingParams?" in message


def test_a_module_gone_names_where_the_imported_name_lives_now(tmp_path: Path) -> None:
    (tmp_path / "client.py").write_text("from vllm.entrypoints.openai.protocol import ChatCompletionRequest\n")
    got = _findings(tmp_path, "0.28.0", "0.28.0")
    ((key, (severity, message)),) = got.items()
    assert severity == "blocker"
    homes = public_names().homes("ChatCompletionRequest", Version("0.28.0"))
    assert homes and f"from {homes[0]} import ChatCompletionRequest" in message


def _pairs() -> list[tuple[Version, Version]]:
    releases = public_names().releases
    return list(zip(releases, releases[1:], strict=False))


def _lost_names(old: Version, new: Version) -> list[Fact]:
    names = public_names()
    modules = surface_history("modules")
    facts = []
    for module in names.modules:
        if not (modules.has(module, old) and modules.has(module, new)) or names.is_open(module, new):
            continue
        history = names.names(module)
        for name in history.runs:
            if history.has(name, old) and not history.has(name, new) and not modules.known(f"{module}.{name}"):
                loc = Location("lost.py", len(facts) + 1)
                facts.append(
                    Fact(FactKind.IMPORT, module, loc, raw=f"from {module} import {name}", value=name, origin="python")
                )
    return facts


def test_the_name_diff_finds_losses() -> None:
    assert sum(len(_lost_names(old, new)) for old, new in _pairs()) > 100


@pytest.mark.parametrize(("old", "new"), _pairs(), ids=lambda v: str(v))
def test_every_public_name_a_release_lost_is_found(old: Version, new: Version) -> None:
    facts = _lost_names(old, new)
    rules = list(REGISTRY.rules())
    context = VersionContext(
        new, old, Assumption(old, VersionBasis.OPTION, "--from"), gone_other=gone_subjects(rules, new)
    )
    findings = match_rules(rules, facts, context)
    findings += surface_findings(facts, context, findings)
    found = {id(f.fact) for f in findings if f.severity.value == "blocker"}
    missing = [f.raw for f in facts if id(f) not in found]
    assert not missing, f"{old} -> {new}: lost without a blocker: {missing[:20]} ({len(missing)})"


# --- keyword values ---------------------------------------------------------------------------------


def test_a_literal_keyword_value_is_checked_a_name_is_not(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text(
        "from vllm import LLM, EngineArgs\n"
        "DT = 'fp9'\n"
        "a = LLM('m', kv_cache_dtype='fp9')\n"
        "b = LLM('m', kv_cache_dtype=DT)\n"
        "c = EngineArgs(model='m', **{'kv_cache_dtype': 'fp8'})\n"
        "d = EngineArgs(model='m', load_format='no-such-loader')\n"
        "opts = dict(kv_cache_dtype='int3')\n"
        "e = LLM('m', **opts)\n"
        "f = LLM('m', quantization='deepspeedfp')\n"
    )
    got = _findings(tmp_path, "0.28.0", "0.28.0")
    severity, message = got[("app.py", 3, "VUC000-009")]
    assert severity == "blocker" and "kv_cache_dtype='fp9'" in message and "fp8" in message
    assert not [k for k in got if k[1] in (4, 5)], got  # a name is not judged; fp8 is a choice
    assert got[("app.py", 6, "VUC000-009")][0] == "warning"  # no release registers it: a plugin may
    assert got[("app.py", 7, "VUC000-009")][0] == "blocker"  # through the dict the call splats
    assert {k[2] for k in got if k[1] == 9} and all(v[0] == "blocker" for k, v in got.items() if k[1] == 9)


# --- architectures ------------------------------------------------------------------------------------


def _removed_architecture() -> tuple[str, Version]:
    history = surface_history("architectures")
    target = history.releases[-1]
    gone = sorted(n for n in history.runs if history.last_before(n, target) and not history.has(n, target))
    return gone[0], target


def test_an_architecture_the_target_no_longer_serves_is_a_blocker(tmp_path: Path) -> None:
    gone, target = _removed_architecture()
    served = surface_history("architectures").names_at(target)[0]
    overrides = json.dumps({"architectures": [gone]})
    (tmp_path / "run.sh").write_text(f"vllm serve acme/m --hf-overrides '{overrides}'\n")
    (tmp_path / "serve.yaml").write_text(f"model: acme/m\nhf_overrides:\n  architectures: [{gone}]\n")
    (tmp_path / "serve.sh").write_text("vllm serve --config serve.yaml\n")
    (tmp_path / "app.py").write_text(f"from vllm import LLM\nllm = LLM('m', hf_overrides={{'architectures': ['{gone}']}})\n")
    model = tmp_path / "models" / "m"
    model.mkdir(parents=True)
    (model / "config.json").write_text(
        json.dumps({"model_type": "x", "architectures": [served, gone], "hidden_size": 8}, indent=2)
    )
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "config.json").write_text(json.dumps({"architectures": [gone]}))  # no model_type
    got = _findings(tmp_path, str(target), str(target))
    arch = {k[0]: v for k, v in got.items() if k[2] == "VUC000-014"}
    assert set(arch) == {"run.sh", "serve.yaml", "app.py", "models/m/config.json"}, got
    assert all(v[0] == "blocker" and gone in v[1] for v in arch.values())
    (line,) = [k[1] for k in got if k[0] == "models/m/config.json"]
    assert line == 5  # the string that names it (the served one is on line 4)
    (tmp_path / "run.sh").write_text("vllm serve acme/m --hf-overrides '{\"architectures\": [\"AcmeForCausalLM\"]}'\n")
    assert _findings(tmp_path / "run.sh", str(target), str(target))[("run.sh", 1, "VUC000-014")][0] == "warning"


def test_overridden_architectures_reads_json_and_python_literals() -> None:
    assert overridden_architectures('{"architectures": ["A", "B"]}') == ["A", "B"]
    assert overridden_architectures("{'architectures': 'A'}") == ["A"]
    assert overridden_architectures('{"rope_scaling": {"type": "yarn"}}') == []
    assert overridden_architectures("not json") == []


# --- response fields ----------------------------------------------------------------------------------


def test_a_response_field_the_target_no_longer_returns_is_a_warning(tmp_path: Path) -> None:
    fields = surface_history("response_fields")
    target = fields.releases[-1]
    gone = sorted(n for n in fields.runs if fields.last_before(n, target) and not fields.has(n, target))
    assert gone, "some release dropped a response field"
    field = gone[0]
    (tmp_path / "client.py").write_text(
        "from openai import OpenAI\n"
        "client = OpenAI(base_url='http://vllm:8000/v1', api_key='x')\n"
        "r = client.chat.completions.create(model='m', messages=[])\n"
        f"print(r.choices[0].message.{field})\n"
    )
    (tmp_path / "hosted.py").write_text(
        "from openai import OpenAI\nclient = OpenAI(base_url='https://api.openai.com/v1')\n"
        f"r = client.chat.completions.create(model='m', messages=[])\nprint(r.{field})\n"
    )
    (tmp_path / "unknown.py").write_text(f"def show(r):\n    return r.{field}\n")
    got = _findings(tmp_path, str(target), str(target))
    ours = {k: v for k, v in got.items() if k[2] == "VUC000-015"}
    assert set(ours) == {("client.py", 4, "VUC000-015")}, got
    assert ours[("client.py", 4, "VUC000-015")][0] == "warning"


# --- vllm @ URL ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "version", "count"),
    [
        ("https://files.example.org/wheels/vllm-0.20.0-cp38-abi3-manylinux1_x86_64.whl", "0.20.0", 1),
        ("git+https://github.com/vllm-project/vllm.git@v0.21.0#egg=vllm", "0.21.0", 1),
        ("git+ssh://git@github.com/vllm-project/vllm@0.22.1", "0.22.1", 1),
        ("https://mirror/v0.20.0/vllm-0.20.0-cp38-abi3-manylinux1_x86_64.whl", "0.20.0", 2),
        ("https://mirror/vllm-0.20.0.tar.gz", "0.20.0", 1),
        ("https://mirror/vllm-0.20.0+cu126-cp38-abi3-linux_x86_64.whl", "0.20.0+cu126", 1),
        ("git+https://github.com/vllm-project/vllm.git@main", None, 0),
        ("https://mirror/vllm-latest.whl", None, 0),
    ],
)
def test_url_version_reads_wheels_sdists_and_git_tags(url: str, version: str | None, count: int) -> None:
    found = url_version(url)
    if version is None:
        assert found is None
        return
    assert found is not None and found[0] == version and found[2] == count
    assert url[found[1] :].startswith(version)


def test_a_vllm_url_requirement_is_a_pin_to_move_and_fix_bumps_it(tmp_path: Path) -> None:
    from vllm_upgrade_check.engine.fix import fix_paths

    wheel = "https://files.example.org/vllm-0.20.0-cp38-abi3-manylinux1_x86_64.whl"
    (tmp_path / "requirements.txt").write_text(f"vllm @ {wheel}\n")
    twice = "https://mirror/v0.20.0/vllm-0.20.0-cp38-abi3-manylinux1_x86_64.whl"
    (tmp_path / "pinned").mkdir()
    (tmp_path / "pinned" / "requirements.txt").write_text(f"vllm @ {twice}\n")
    report = run_scan(ScanOptions.of(paths=[tmp_path], to_version="0.28.0"), registry=REGISTRY)
    assert report.from_version == "0.20.0"
    moves = {f.location.path: f for f in report.findings if f.rule.id == "VUC000-010"}
    assert set(moves) == {"requirements.txt", "pinned/requirements.txt"}
    assert "installs vLLM 0.20.0" in moves["requirements.txt"].rule.message
    fix_paths(ScanOptions.of(paths=[tmp_path], to_version="0.28.0"))
    assert (tmp_path / "requirements.txt").read_text() == f"vllm @ {wheel.replace('0.20.0', '0.28.0')}\n"
    assert (tmp_path / "pinned" / "requirements.txt").read_text() == f"vllm @ {twice}\n"  # by hand
