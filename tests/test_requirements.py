"""requirements files, pyproject.toml and lock files."""

from __future__ import annotations

from conftest import kinds, scan_text
from vllm_upgrade_check.model.facts import FactKind, Skipped
from vllm_upgrade_check.sources.scanners.requirements import RequirementsScanner


def reqs(name: str, text: str) -> list[tuple[str, str, int]]:
    items = scan_text(RequirementsScanner(), name, text)
    return [(f.name, f.value or "", f.location.line or 0) for f in kinds(items, FactKind.REQUIREMENT)]


def test_requirements_txt() -> None:
    text = "# pins\nvllm==0.26.0\nTorch == 2.11.0 ; sys_platform == 'linux'\n-r other.txt\nflashinfer_python>=0.6 \\\n    --hash=sha256:abc\n\n"
    assert reqs("requirements.txt", text) == [
        ("vllm", "==0.26.0", 2),
        ("torch", "==2.11.0", 3),
        ("flashinfer-python", ">=0.6", 5),
    ]


def test_pyproject_dependencies() -> None:
    text = '[project]\nname = "x"\ndependencies = [\n  "vllm==0.26.0",\n  "torch>=2.10,<2.12",\n]\n[project.optional-dependencies]\ngpu = ["flashinfer-python==0.6.14"]\n'
    assert reqs("pyproject.toml", text) == [
        ("vllm", "==0.26.0", 4),
        ("torch", "<2.12,>=2.10", 5),
        ("flashinfer-python", "==0.6.14", 8),
    ]


def test_uv_lock() -> None:
    text = 'version = 1\n[[package]]\nname = "torch"\nversion = "2.11.0"\n'
    assert reqs("uv.lock", text) == [("torch", "==2.11.0", 3)]


def test_bad_toml_is_skipped() -> None:
    items = scan_text(RequirementsScanner(), "pyproject.toml", "[project\nvllm")
    assert isinstance(items[0], Skipped) and items[0].configures_vllm
