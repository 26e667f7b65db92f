"""env: other interpreters, freeze files, torch build, ELF CUDA major, fake nvidia-smi/amd-smi, fleet merge."""

from __future__ import annotations

import json
import os
import struct
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import bare_venv
from vllm_upgrade_check.cli import _register, app
from vllm_upgrade_check.engine import run_scan
from vllm_upgrade_check.errors import UsageError
from vllm_upgrade_check.model.environment import Gpu, HostInfo
from vllm_upgrade_check.model.options import ScanOptions
from vllm_upgrade_check.parsing.elf import cuda_major_of, file_needed
from vllm_upgrade_check.sources.host.environment import (
    read_current_environment,
    read_freeze_file,
    read_interpreter_environment,
    read_torch_build,
)
from vllm_upgrade_check.sources.host.gpus import read_host

_register()
runner = CliRunner()


def dist_info(site: Path, name: str, version: str, requires: tuple[str, ...] = ()) -> None:
    d = site / f"{name.replace('-', '_')}-{version}.dist-info"
    d.mkdir(parents=True)
    lines = ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}"]
    lines += [f"Requires-Dist: {r}" for r in requires]
    (d / "METADATA").write_text("\n".join(lines) + "\n")


def fake_elf(path: Path, needed: list[str]) -> None:
    """A minimal ELF64 LE file: one PT_LOAD over the file, one PT_DYNAMIC with DT_NEEDED."""
    strtab = b"\0" + b"".join(n.encode() + b"\0" for n in needed)
    offsets, pos = [], 1
    for n in needed:
        offsets.append(pos)
        pos += len(n) + 1
    phoff, phnum = 64, 2
    str_off = phoff + 56 * phnum
    dyn_off = str_off + len(strtab)
    dyn = b"".join(struct.pack("<qQ", 1, o) for o in offsets)
    dyn += struct.pack("<qQ", 5, str_off) + struct.pack("<qQ", 10, len(strtab)) + struct.pack("<qQ", 0, 0)
    size = dyn_off + len(dyn)
    ident = b"\x7fELF" + bytes([2, 1, 1]) + b"\0" * 9
    header = ident + struct.pack("<HHIQQQIHHHHHH", 3, 62, 1, 0, phoff, 0, 0, 64, 56, phnum, 64, 0, 0)
    load = struct.pack("<IIQQQQQQ", 1, 4, 0, 0, 0, size, size, 0x1000)
    dynamic = struct.pack("<IIQQQQQQ", 2, 4, dyn_off, dyn_off, dyn_off, len(dyn), len(dyn), 8)
    path.write_bytes(header + load + dynamic + strtab + dyn)


def test_elf_needed_and_cuda_major(tmp_path: Path) -> None:
    so = tmp_path / "_C.abi3.so"
    fake_elf(so, ["libtorch.so", "libcudart.so.13", "libc.so.6"])
    assert file_needed(so) == ("libtorch.so", "libcudart.so.13", "libc.so.6")
    assert cuda_major_of(file_needed(so)) == 13
    assert cuda_major_of(["libc.so.6"]) is None
    (tmp_path / "bad.so").write_bytes(b"not elf")
    with pytest.raises(ValueError):
        file_needed(tmp_path / "bad.so")


def test_site_dir_with_torch_build_and_vllm_extension(tmp_path: Path) -> None:
    site = tmp_path / "site"
    dist_info(site, "torch", "2.11.0+cu130")
    dist_info(site, "vllm", "0.26.0", ("torch==2.11.0",))
    dist_info(site, "torchaudio-ext", "1.0", ("torch==2.11.0",))
    (site / "torch").mkdir()
    (site / "torch" / "version.py").write_text(
        "from typing import Optional\n__version__ = '2.11.0+cu130'\ncuda: Optional[str] = '13.0'\nhip = None\n"
    )
    (site / "vllm").mkdir()
    fake_elf(site / "vllm" / "_C.abi3.so", ["libcudart.so.12"])
    env = read_current_environment([str(site)])
    assert env.distributions["torch"] == "2.11.0+cu130"
    assert env.torch is not None and env.torch.cuda == "13.0" and env.torch.hip is None
    assert env.vllm_cuda_major == 12
    report = run_scan(ScanOptions.of(environment=env, to_version="0.28.0"))
    ids = {(f.rule.id, f.fact.raw) for f in report.findings}
    # torchaudio-ext pins torch==2.11.0 against the target's torch==2.13.0: a blocker; vllm's own pin is not.
    assert ("VUCENV0280-201", "torchaudio-ext 1.0 requires torch==2.11.0") in ids
    assert not any("vllm 0.26.0 requires" in raw for _id, raw in ids)


def test_torch_rocm_build(tmp_path: Path) -> None:
    version = tmp_path / "version.py"
    version.write_text("__version__ = '2.9.0+rocm6.4'\ncuda = None\nhip = '6.4.43482'\n")
    build = read_torch_build(version)
    assert build is not None and build.hip == "6.4.43482" and build.cuda is None


def test_second_venv_inspected_with_python(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    python, site = bare_venv(venv)
    dist_info(site, "vllm", "0.26.0")
    dist_info(site, "torchvision", "0.26.0")
    env = read_interpreter_environment(python)
    assert env.distributions == {"vllm": "0.26.0", "torchvision": "0.26.0"}
    assert env.python == ".".join(map(str, sys.version_info[:3]))
    result = runner.invoke(app, ["env", "--python", str(python), "--to", "0.28.0", "--no-host", "-f", "json"])
    doc = json.loads(result.stdout)
    assert doc["from_version"] == "0.26.0"
    assert any(f["subject"] == "torchvision==0.26.0" for f in doc["findings"])


def test_missing_interpreter_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError):
        read_interpreter_environment(tmp_path / "nope")


def test_freeze_file_forms(tmp_path: Path) -> None:
    freeze = tmp_path / "freeze.txt"
    freeze.write_text(
        "# Editable install with no version control (mypkg==1.2)\n-e /src/mypkg\n"
        "-e git+https://x/y.git@abc#egg=plugin_x\n"
        "torch==2.11.0+cu128\nvllm @ https://h/vllm-0.26.0-cp38-abi3-manylinux_2_28_x86_64.whl\n"
        "--index-url https://example.invalid\nlocal @ file:///tmp/local\n"
    )
    env = read_freeze_file(freeze)
    assert env.distributions == {"mypkg": "1.2", "torch": "2.11.0+cu128", "vllm": "0.26.0"}
    assert set(env.unversioned) == {"plugin-x", "local"}
    assert env.torch is not None and env.torch.cuda == "12.8"
    bad = tmp_path / "bad.txt"
    bad.write_text("torch==2.11.0\nthis is not ~ a requirement\n")
    with pytest.raises(UsageError) as info:
        read_freeze_file(bad)
    assert info.value.line == 2


def write_tool(bindir: Path, name: str, body: str) -> None:
    tool = bindir / name
    tool.write_text("#!/bin/sh\n" + body)
    tool.chmod(0o755)


def test_fake_nvidia_smi_and_driver_rule(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bindir = tmp_path / "bin"
    bindir.mkdir()
    write_tool(
        bindir,
        "nvidia-smi",
        "echo 'NVIDIA H200, 9.0, 570.86.15, 143771 MiB'\necho 'NVIDIA H200, 9.0, 570.86.15, 143771 MiB'\n",
    )
    monkeypatch.setenv("PATH", str(bindir))
    host = read_host()
    assert host.nvidia_driver == "570.86.15" and len(host.gpus) == 2
    assert host.gpus[0].memory_gib == 140.4
    report = run_scan(ScanOptions.of(host=host, to_version="0.28.0"))
    assert [f.rule.id for f in report.findings] == ["VUCENV0280-004"]
    good = HostInfo((Gpu("nvidia", "NVIDIA H200", "9.0", 143771),), "580.159.04")
    assert run_scan(ScanOptions.of(host=good, to_version="0.28.0")).findings == ()


def test_no_gpu_tools_is_a_fact(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    host = read_host()
    assert host.gpus == () and host.problems == ()


def test_fake_amd_smi(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bindir = tmp_path / "bin"
    bindir.mkdir()
    static = json.dumps(
        [
            {
                "gpu": 0,
                "asic": {"market_name": "MI300X", "target_graphics_version": "gfx942"},
                "vram": {"size": {"value": 196592, "unit": "MB"}},
            }
        ]
    )
    write_tool(
        bindir,
        "amd-smi",
        f"if [ \"$1\" = version ]; then echo 'AMDSMI Tool: 24 | ROCm version: 6.4.1'; else echo '{static}'; fi\n",
    )
    monkeypatch.setenv("PATH", str(bindir))
    host = read_host()
    assert host.rocm == "6.4.1"
    assert host.gpus == (Gpu("amd", "MI300X", "gfx942", 196592),)


def test_hanging_nvidia_smi_times_out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bindir = tmp_path / "bin"
    bindir.mkdir()
    write_tool(bindir, "nvidia-smi", "exec sleep 30\n")
    monkeypatch.setenv("PATH", str(bindir) + os.pathsep + "/bin:/usr/bin")
    host = read_host(timeout=0.5)
    assert host.gpus == () and "did not answer" in host.problems[0]


def test_python_glibc_machine_rules(tmp_path: Path) -> None:
    from dataclasses import replace

    env = replace(read_current_environment([str(tmp_path)]), python="3.9.18", glibc="2.17", machine="ppc64le")
    ids = {f.rule.id for f in run_scan(ScanOptions.of(environment=env, to_version="0.28.0")).findings}
    assert {"VUCENV0280-001", "VUCENV0280-002", "VUCENV0280-003"} <= ids


def test_bitsandbytes_rule_silent_when_plugin_installed(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "serve.sh").write_text("vllm serve m --quantization bitsandbytes\n")
    site = tmp_path / "site"
    site.mkdir()
    without = run_scan(
        ScanOptions.of(paths=[repo], environment=read_current_environment([str(site)]), to_version="0.28.0")
    )
    assert "VUC0280-003" in {f.rule.id for f in without.findings}
    dist_info(site, "vllm-bnb-plugin", "0.1.0")
    with_plugin = run_scan(
        ScanOptions.of(paths=[repo], environment=read_current_environment([str(site)]), to_version="0.28.0")
    )
    assert "VUC0280-003" not in {f.rule.id for f in with_plugin.findings}


def test_fleet_merge(tmp_path: Path) -> None:
    doc = {
        "to_version": "0.28.0",
        "findings": [{"rule_id": "VUCENV0280-004", "severity": "blocker", "message": "driver"}],
        "host": {"name": "node-a", "nvidia_driver": "570.1", "gpus": [{"name": "NVIDIA H200"}]},
        "environment": {},
    }
    log = tmp_path / "node-a.log"
    log.write_text("Collecting vllm-upgrade-check\n" + json.dumps(doc, indent=2) + "\n")
    clean = tmp_path / "node-b.json"
    clean.write_text(json.dumps({**doc, "findings": [], "host": {"name": "node-b"}}))
    result = runner.invoke(app, ["fleet", "merge", str(log), str(clean), "-f", "json"])
    assert result.exit_code == 1
    merged = json.loads(result.stdout)
    assert [h["name"] for h in merged["hosts"]] == ["node-a", "node-b"]
    assert merged["blockers"]["VUCENV0280-004"]["hosts"] == ["node-a"]
    md = runner.invoke(app, ["fleet", "merge", str(log), str(clean), "-f", "markdown"]).stdout
    assert "| node-a | 1 x NVIDIA H200 | 570.1 |" in md
    empty = tmp_path / "empty.log"
    empty.write_text("nothing\n")
    assert runner.invoke(app, ["fleet", "merge", str(empty)]).exit_code != 0
