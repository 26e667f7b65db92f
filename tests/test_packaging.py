"""The wheel ships every rule pack and data file (a non-editable install finds them)."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from vllm_upgrade_check.knowledge import packbundle

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.skipif(not (ROOT / "setup.py").exists(), reason="needs the source tree")
def test_wheel_contains_every_pack_and_data_file(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(tmp_path), str(ROOT)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    (wheel,) = tmp_path.glob("vllm_upgrade_check-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for pack in sorted((ROOT / "rules").glob("*.yaml")):
        assert f"vllm_upgrade_check/rules/{pack.name}" in names
    for data in sorted((ROOT / "rules" / "data").glob("*.yaml")):
        assert f"vllm_upgrade_check/rules/data/{data.name}" in names
    data_root = ROOT / "src" / "vllm_upgrade_check" / "data"
    for data in sorted(p for p in data_root.rglob("*") if p.is_file()):
        assert f"vllm_upgrade_check/data/{data.relative_to(data_root).as_posix()}" in names
    assert "vllm_upgrade_check/py.typed" in names
    # The packs pre-parsed at build time, one entry per pack, for the text the wheel ships.
    with zipfile.ZipFile(wheel) as archive:
        bundle = packbundle.read_bundle(archive.read(f"vllm_upgrade_check/rules/{packbundle.BUNDLE_NAME}").decode())
        packs = [n for n in names if n.startswith("vllm_upgrade_check/rules/") and n.endswith(".yaml")]
        packs = [n for n in packs if n.count("/") == 2]
        assert len(bundle) == len(packs) > 60
        for name in packs:
            text = archive.read(name).decode()
            assert packbundle.parsed_pack(bundle, name.rsplit("/", 1)[1], text) is not None, name
