"""The from-version when ``--from`` is not given: each file that names its vLLM release is
checked from it; a launch that names none from the oldest release found in the repository
or installed (which one runs it is not known), so nothing removed in between is missed; the
environment's own findings from the installed vllm. The report says which and where from."""

from __future__ import annotations

from pathlib import Path

from vllm_upgrade_check.engine import run_scan
from vllm_upgrade_check.model.environment import Environment
from vllm_upgrade_check.model.findings import VersionBasis
from vllm_upgrade_check.model.options import ScanOptions

COMPOSE = 'services:\n  api:\n    image: vllm/vllm-openai:v0.16.0\n    command: ["--model", "acme/m", "--swap-space", "4"]\n'
LOCK = 'version = 1\n\n[[package]]\nname = "vllm"\nversion = "0.17.1"\nsource = { registry = "https://pypi.org/simple" }\n'


def _repo(root: Path) -> Path:
    (root / "docker-compose.yml").write_text(COMPOSE)
    (root / "requirements.txt").write_text("vllm==0.18.0\n")
    (root / "uv.lock").write_text(LOCK)
    (root / "serve.sh").write_text("vllm serve acme/m --swap-space 4\n")
    return root


def _from(report, path: str) -> set[tuple[str | None, VersionBasis, str | None]]:
    return {(f.from_version, f.from_basis, f.from_source) for f in report.findings if f.location.path == path}


def test_each_file_from_its_own_and_the_rest_from_the_oldest(tmp_path: Path) -> None:
    report = run_scan(ScanOptions.of(paths=[_repo(tmp_path)], to_version="0.28.0"))
    assert (report.from_version, report.from_basis) == ("0.16.0", VersionBasis.REPOSITORY)
    assert report.from_source == "docker-compose.yml:3:12 vllm/vllm-openai:v0.16.0"
    assert {v for v, _b, _s in _from(report, "docker-compose.yml")} == {"0.16.0"}
    assert {(v, b) for v, b, _s in _from(report, "requirements.txt")} == {("0.18.0", VersionBasis.FILE)}
    assert {(v, b) for v, b, _s in _from(report, "uv.lock")} == {("0.17.1", VersionBasis.FILE)}
    assert _from(report, "serve.sh") == {("0.16.0", VersionBasis.REPOSITORY, report.from_source)}
    assert any("0.16.0, 0.17.1, 0.18.0" in n for n in report.notes)


def test_newer_installed_vllm_does_not_raise_the_repository_default(tmp_path: Path) -> None:
    env = Environment({"vllm": "0.20.0", "torch": "2.9.0"}, None, None, "freeze file f.txt")
    report = run_scan(ScanOptions.of(paths=[_repo(tmp_path)], to_version="0.28.0", environment=env))
    assert (report.from_version, report.from_basis) == ("0.16.0", VersionBasis.REPOSITORY)
    assert report.from_source is not None and "older than the installed vllm 0.20.0" in report.from_source
    assert {v for v, _b, _s in _from(report, "serve.sh")} == {"0.16.0"}
    assert ("VUC0180-001", "serve.sh") in {(f.rule.id, f.location.path) for f in report.findings}
    env_findings = [f for f in report.findings if f.location.path is None]
    assert env_findings and {(f.from_version, f.from_basis) for f in env_findings} == {("0.20.0", VersionBasis.ENVIRONMENT)}


def test_older_installed_vllm_is_the_default(tmp_path: Path) -> None:
    (tmp_path / "serve.sh").write_text("vllm serve acme/m --swap-space 4\n")
    (tmp_path / "requirements.txt").write_text("vllm==0.20.0\n")
    env = Environment({"vllm": "0.17.0"}, None, None, "freeze file f.txt")
    report = run_scan(ScanOptions.of(paths=[tmp_path], to_version="0.28.0", environment=env))
    assert (report.from_version, report.from_basis) == ("0.17.0", VersionBasis.ENVIRONMENT)
    assert {v for v, _b, _s in _from(report, "serve.sh")} == {"0.17.0"}
