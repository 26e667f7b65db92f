"""The CUDA builds of each release (``rules/data/cuda-variants.yaml``) and what a driver makes of
them: the table's own consistency with the packs, the verdicts of :func:`reach` on tables made
here, CUDA minor-version compatibility, and ``env`` / ``scan --env`` / ``plan`` telling a host
on a CUDA 12 driver which releases it reaches through another CUDA build."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from packaging.specifiers import SpecifierSet
from packaging.version import Version
from typer.testing import CliRunner

from vllm_upgrade_check.cli import _register, app
from vllm_upgrade_check.errors import RulePackError
from vllm_upgrade_check.knowledge.cuda import (
    CudaVariants,
    _pinned_torch,
    load_cuda_variants,
    load_driver_table,
    native_cuda,
    reach,
    release_cuda,
    runs_major,
)
from vllm_upgrade_check.knowledge.registry import load_registry
from vllm_upgrade_check.model.environment import Environment, TorchBuild
from vllm_upgrade_check.model.pack import WheelFacts
from vllm_upgrade_check.model.plan import Host
from vllm_upgrade_check.planning.planner import check_release, wheel_of

_register()
runner = CliRunner()
REGISTRY = load_registry([])
TABLE = load_driver_table()
BUNDLED = load_cuda_variants()


def table(data: dict) -> CudaVariants:
    return CudaVariants.model_validate({"schema_version": 1, **data})


SRC = [{"url": "https://example.invalid/x", "finding": "said so"}]
VARIANT_129 = {"cuda": "12.9", "wheel": "+cu129", "index": "https://idx/{release}/cu129", "image": "img:v{release}-cu129", "seen": ["2.0.0"], "evidence": SRC}
CU13 = WheelFacts(cuda_major=13, requires_dist=["torch==3.1.0"])
CU12 = WheelFacts(cuda_major=12, requires_dist=["torch==3.0.2"])


# --- the bundled table -----------------------------------------------------------------------


def test_bundled_table_is_consistent_with_the_packs() -> None:
    releases = [str(v) for v in REGISTRY.releases]
    for run in BUNDLED.releases:
        spec = SpecifierSet(run.releases)
        covered = [r for r in releases if spec.contains(r)]
        assert covered, f"run {run.releases} covers no known release"
        assert run.build_cuda is None or run.build_evidence, run.releases
        assert run.variants != [] or run.evidence, "an empty variants list needs its evidence"
        for variant in run.variants or ():
            assert variant.evidence and set(variant.seen) <= set(covered), (run.releases, variant.seen)
            assert variant.wheel == "+cu" + variant.cuda.replace(".", "")
    for row in BUNDLED.torch:
        assert row.evidence
    # every CUDA minor the table gives a release agrees with the major read from its wheel
    for version in REGISTRY.releases:
        wheel = wheel_of(REGISTRY, version)
        if wheel is None or wheel.cuda_major is None:
            continue
        torch = _pinned_torch(wheel)
        row = BUNDLED.torch_cuda(torch) if torch else None
        run = BUNDLED.run_of(str(version))
        claimed = run.build_cuda if run is not None and run.build_cuda else row.cuda if row else None
        if claimed is not None:
            assert int(claimed.split(".")[0]) == wheel.cuda_major, (str(version), claimed)
            assert release_cuda(str(version), wheel, BUNDLED).cuda == claimed


def test_bad_tables_are_one_line_errors_naming_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "v.yaml"
    bad.write_text("schema_version: 1\ntorch: []\nreleases:\n  - releases: 'not a spec'\n")
    with pytest.raises(RulePackError, match="not a version specifier") as info:
        load_cuda_variants(bad)
    assert str(bad) in str(info.value)
    bad.write_text("schema_version: 1\ntorch: []\nreleases:\n  - releases: '>=1'\n    variants:\n      - cuda: '12.9'\n")
    with pytest.raises(RulePackError, match="releases.0.variants.0"):
        load_cuda_variants(bad)
    bad.write_text("schema_version: [\n")
    with pytest.raises(RulePackError, match="cannot load the CUDA variants table"):
        load_cuda_variants(bad)


# --- the builds of one release and a driver's verdict ---------------------------------------


def test_release_cuda_prefers_the_recorded_build_then_the_pinned_torch() -> None:
    variants = table(
        {
            "torch": [{"torch": "3.1", "cuda": "13.2", "evidence": SRC}, {"torch": "3.0", "cuda": "13.0", "evidence": SRC}],
            "releases": [{"releases": ">=2.0,<2.1", "build_cuda": "13.1", "build_evidence": SRC, "variants": [VARIANT_129]}],
        }
    )
    assert release_cuda("2.0.0", CU13, variants).cuda == "13.1"  # vLLM's own build
    built = release_cuda("2.1.0", CU13, variants)
    assert built.cuda == "13.2" and "torch 3.1.0" in (built.cuda_source or "") and built.variants is None
    # torch 3.0's default is CUDA 13 but this wheel links CUDA 12: the wheel wins, the minor is unknown
    odd = release_cuda("2.1.0", CU12, variants)
    assert odd.cuda is None and odd.major == 12 and odd.shown == "CUDA 12"
    assert release_cuda("2.0.0", CU13, variants).variants is not None


@pytest.mark.parametrize(
    ("driver", "native"),
    [("550.54.15", "12.4"), ("550.54.14", "12.4"), ("550.40.07", "12.3"), ("470.82.01", "11.4"), ("580.159.04", "13.0"), ("418.39", None)],
)
def test_native_cuda_from_the_ga_drivers(driver: str, native: str | None) -> None:
    assert native_cuda(driver, TABLE) == native


def test_reach_verdicts() -> None:
    variants = table({"torch": [], "releases": [{"releases": ">=2.0,<2.1", "variants": [VARIANT_129]}, {"releases": ">=2.1", "variants": [], "evidence": SRC}]})
    new = reach(release_cuda("3.0.0", CU13, variants), TABLE, "580.65.06")
    assert new.verdict == "default" and new.compat is None
    via = reach(release_cuda("2.0.0", CU13, variants), TABLE, "535.104.05")
    assert via.verdict == "variant" and via.via is not None and via.via.cuda == "12.9"
    assert via.compat is not None and "CUDA 12.9 build runs on driver 535.104.05 (CUDA 12.2)" in via.compat
    assert "PTX" in via.compat
    where = via.via.where("2.0.0")
    assert where.startswith("wheel vllm==2.0.0+cu129 from https://idx/2.0.0/cu129") and "img:v2.0.0-cu129" in where
    assert "not confirmed" not in where and "not confirmed" in via.via.where("2.0.1")
    none = reach(release_cuda("2.1.0", CU13, variants), TABLE, "550.54.15")
    assert none.verdict == "driver" and "no CUDA 12 build of vLLM 2.1.0 is known" in none.why
    unknown = reach(release_cuda("1.0.0", CU13, variants), TABLE, "550.54.15")
    assert unknown.verdict == "driver" and "whether vLLM publishes a CUDA 12 build of 1.0.0 is unknown" in unknown.why
    # a driver below every floor of the variants still needs the upgrade
    assert reach(release_cuda("2.0.0", CU13, variants), TABLE, "470.82.01").verdict == "driver"
    # the driver unknown: the build in use stands for what the host runs, else nothing is decided
    in_use = reach(release_cuda("2.0.0", CU13, variants), TABLE, None, None, (12, "torch 3.0.2+cu126"))
    assert in_use.verdict == "variant" and in_use.compat is None  # no driver: no native CUDA to compare
    assert reach(release_cuda("2.0.0", CU13, variants), TABLE, None).verdict == "unknown"
    assert runs_major("550.54.15", TABLE) == 12


def test_minor_version_compatibility_is_said_only_where_it_decides() -> None:
    variants = table({"torch": [], "releases": [{"releases": ">=1", "build_cuda": "12.9", "build_evidence": SRC}]})
    builds = release_cuda("1.0.0", CU12, variants)
    old = reach(builds, TABLE, "550.54.15")
    assert old.verdict == "default" and old.compat is not None
    assert "CUDA 12.x runs on drivers >= 525.60.13" in old.compat and "575.51.03" in old.compat
    assert reach(builds, TABLE, "575.51.03").compat is None  # the 12.9 GA driver: native
    assert reach(builds, TABLE, "550.54.15", native="12.9").compat is None  # the banner says 12.9
    assert reach(builds, TABLE, "520.61.05").verdict == "driver"  # below the CUDA 12 floor


def test_plan_check_uses_the_variants() -> None:
    env = Environment({"vllm": "1.0.0"}, "3.12.4", "x86_64", "t")
    variants = table({"torch": [], "releases": [{"releases": ">=2.0,<2.1", "variants": [VARIANT_129]}]})
    kept = Host(env, "3.12.4", "550.54.15", frozenset({"driver"}))
    check = check_release("2.0.0", CU13, kept, TABLE, variants)
    assert check.reachable and check.build is not None and "+cu129" in check.build
    assert any(c.startswith("Install the CUDA 12.9 build of vLLM 2.0.0") for c in check.changes)
    assert not any("or upgrade the NVIDIA driver" in c for c in check.changes)  # the driver is kept
    assert check.notes and "minor-version compatibility" in check.notes[0]
    free = check_release("2.0.0", CU13, Host(env, "3.12.4", "550.54.15"), TABLE, variants)
    assert any("or upgrade the NVIDIA driver to >= 580.65.06" in c for c in free.changes)
    walled = check_release("2.1.0", CU13, kept, TABLE, variants)
    assert not walled.reachable and "whether vLLM publishes a CUDA 12 build of 2.1.0 is unknown (--keep driver)" in walled.blockers[0].message
    cu12 = Environment({"vllm": "1.0.0"}, "3.12.4", "x86_64", "t", torch=TorchBuild("3.0.2+cu126", "12.6", None, "t"))
    unknown_driver = check_release("2.0.0", CU13, Host(cu12, "3.12.4", None, frozenset({"driver"})), TABLE, variants)
    assert unknown_driver.reachable and unknown_driver.build is not None


# --- the commands ----------------------------------------------------------------------------


def _json(*args: str) -> dict:
    result = runner.invoke(app, list(args))
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.stdout)


def _variant_releases() -> list[str]:
    """Releases the bundled table gives a CUDA 12 build while their default wheel is CUDA 13."""
    out = []
    for version in REGISTRY.releases:
        builds = release_cuda(str(version), wheel_of(REGISTRY, version), BUNDLED)
        if builds.major == 13 and any(v.cuda.startswith("12.") for v in builds.variants or ()):
            out.append(str(version))
    return out


@pytest.mark.parametrize("driver", ["550.54.15", "535.104.05", "570.133.20"])
def test_env_and_plan_tell_a_cuda_12_host_where_its_releases_are(tmp_path: Path, driver: str) -> None:
    freeze = tmp_path / "freeze.txt"
    freeze.write_text("vllm==0.19.1\ntorch==2.10.0+cu128\n")
    through = _variant_releases()
    assert through, "the bundled table has CUDA 12 builds of CUDA 13 releases"
    target = through[-1]
    host = ["--freeze", str(freeze), "--driver", driver, "--python-version", "3.12"]
    env_doc = _json("env", *host, "--to", target, "-f", "json")
    notes = env_doc["notes"]
    verdict = next(n for n in notes if n.startswith(f"CUDA for vLLM {target}: "))
    assert f"driver {driver} runs its CUDA 12.9 build" in verdict and f"wheels.vllm.ai/{target}/cu129" in verdict
    assert f"vllm/vllm-openai:v{target}-cu129" in verdict
    assert any(n.startswith(f"CUDA for vLLM {target}: the CUDA 12.9 build runs on driver {driver}") for n in notes)
    assert any(n.startswith("CUDA builds: ") and "need a driver upgrade to >= 580.65.06" in n for n in notes)
    rule = next(f for f in env_doc["findings"] if f["rule_id"].endswith("-004"))
    assert f"vllm=={target}+cu129" in json.dumps(rule)
    scan_doc = _json("scan", str(tmp_path), *host, "--to", target, "-f", "json")
    assert [n for n in scan_doc["notes"] if n.startswith("CUDA")] == [n for n in notes if n.startswith("CUDA")]
    plan = _json("plan", str(tmp_path), *host, "--keep", "driver", "-f", "json")
    assert plan["reachable"] == target
    by_release = {r["release"]: r for r in plan["releases"]}
    assert all(by_release[r]["reachable"] and "+cu129" in by_release[r]["build"] for r in through)
    # the step installs the CUDA 12 build: the default wheel's driver rule is left out of its scan
    assert not any(f["rule_id"].endswith("-004") for f in plan["path"][-1]["findings"])
    after = [r for r in by_release if Version(r) > Version(target) and by_release[r]["checked"]]
    assert after and all(by_release[r]["blockers"][0]["kind"] == "driver" for r in after)


def test_a_580_host_needs_no_other_build(tmp_path: Path) -> None:
    freeze = tmp_path / "freeze.txt"
    freeze.write_text("vllm==0.19.1\ntorch==2.10.0+cu128\n")
    doc = _json("env", "--freeze", str(freeze), "--driver", "580.65.06", "--to", str(REGISTRY.newest), "-f", "json")
    verdict = next(n for n in doc["notes"] if n.startswith("CUDA for vLLM"))
    assert "runs the CUDA 13" in verdict and "+cu" not in verdict
    assert not any(f["rule_id"].endswith("-004") for f in doc["findings"])
    plan = _json("plan", str(tmp_path), "--freeze", str(freeze), "--driver", "580.65.06", "--keep", "driver", "-f", "json")
    assert plan["reachable"] == str(REGISTRY.newest) and all(r["build"] is None for r in plan["releases"])
