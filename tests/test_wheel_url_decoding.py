"""Wheel and sdist file names in URLs are read percent-decoded (``%2Bcu121`` is ``+cu121``),
in one place (``parsing/distfiles.py``), by requirements files, ``pip install`` words and
freeze files alike."""

from __future__ import annotations

import pytest
from packaging.version import Version

from conftest import kinds, scan_text
from vllm_upgrade_check.model.facts import FactKind
from vllm_upgrade_check.parsing.distfiles import parse_dist_url
from vllm_upgrade_check.sources.host.environment import parse_freeze_text
from vllm_upgrade_check.sources.scanners.requirements import RequirementsScanner
from vllm_upgrade_check.sources.scanners.shell import ShellScanner

TORCH = "https://download.pytorch.org/whl/cu121/torch-2.3.0%2Bcu121-cp310-cp310-linux_x86_64.whl"
VLLM = "https://wheels.example.com/cu118/vllm-0.16.0%2Bcu118-cp38-abi3-manylinux1_x86_64.whl"


@pytest.mark.parametrize(
    ("url", "name", "version"),
    [
        (TORCH, "torch", "2.3.0+cu121"),
        (VLLM + "#sha256=00", "vllm", "0.16.0+cu118"),
        ("file:///wheels/vllm-0.20.0%2bcu126-cp38-abi3-linux_x86_64.whl?x=1", "vllm", "0.20.0+cu126"),
        ("./dist/vllm-0.20.0.tar.gz", "vllm", "0.20.0"),
    ],
)
def test_file_names_are_decoded(url: str, name: str, version: str) -> None:
    dist = parse_dist_url(url)
    assert dist is not None and (dist.name, dist.version) == (name, Version(version))
    assert url[dist.offset :].startswith(version.split("+")[0])


@pytest.mark.parametrize("url", ["https://h/x/vllm-latest.whl", "https://h/simple/vllm/", "vllm-0.20.0%ZZ-x.whl"])
def test_no_dist_name(url: str) -> None:
    assert parse_dist_url(url) is None


def test_requirements_lines() -> None:
    text = f"{TORCH}\nvllm @ {VLLM}\n"
    facts = kinds(scan_text(RequirementsScanner(), "requirements.txt", text), FactKind.REQUIREMENT)
    got = [(f.name, f.value, f.location.line) for f in facts]
    assert got == [("torch", "==2.3.0+cu121", 1), ("vllm", "==0.16.0+cu118", 2)]
    vllm = facts[1]
    assert vllm.spans is not None and vllm.spans.version is not None
    start = len("vllm @ ") + VLLM.index("0.16.0") + 1
    assert (vllm.spans.version.column, vllm.spans.version.end_column) == (start, start + len("0.16.0"))


def test_pip_install_words() -> None:
    items = scan_text(ShellScanner(), "install.sh", f'pip install "{VLLM}" {TORCH}\nvllm serve m\n')
    facts = kinds(items, FactKind.REQUIREMENT)
    assert [(f.name, f.value, f.location.line) for f in facts] == [
        ("vllm", "==0.16.0+cu118", 1),
        ("torch", "==2.3.0+cu121", 1),
    ]


def test_freeze_file_url_lines() -> None:
    env, lines = parse_freeze_text(f"vllm @ {VLLM}\ntorch @ {TORCH}\n", "freeze.txt")
    assert env.distributions["vllm"] == "0.16.0+cu118" and env.distributions["torch"] == "2.3.0+cu121"
    assert lines["vllm"] == 1


def test_fix_moves_the_version_of_a_bare_wheel_url(tmp_path) -> None:
    from typer.testing import CliRunner

    from vllm_upgrade_check.cli import _register, app

    _register()
    url = "https://wheels.example.com/vllm-0.26.0-cp38-abi3-manylinux1_x86_64.whl"
    (tmp_path / "requirements.txt").write_text(url + "\n")
    result = CliRunner().invoke(app, ["fix", str(tmp_path), "--to", "0.28.0"])
    assert result.exit_code in (0, 1), result.output
    assert (tmp_path / "requirements.txt").read_text() == url.replace("0.26.0", "0.28.0") + "\n"
