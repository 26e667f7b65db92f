"""One host model for ``env``, ``scan --env`` and ``plan``: a fake venv (a real interpreter with
``*.dist-info/METADATA`` written here), stand-in ``nvidia-smi`` scripts on PATH, captured
``nvidia-smi`` output (table and CSV), the shared options and configuration, plugins that
pin vLLM, freeze files, and ``fleet merge``'s input checks."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import bare_venv
from vllm_upgrade_check.cli import _register, app
from vllm_upgrade_check.knowledge.registry import load_registry
from vllm_upgrade_check.parsing.nvidia_smi import looks_like_nvidia_smi, parse_nvidia_smi_output
from vllm_upgrade_check.sources.host.collect import HostRequest, collect_host
from vllm_upgrade_check.sources.host.gpus import read_host

_register()
runner = CliRunner()
NEWEST = str(load_registry([]).newest)

TABLE_565 = """Tue Dec  1 10:00:00 2026
+-----------------------------------------------------------------------------------------+
| NVIDIA-SMI 565.57.01              Driver Version: 565.57.01      CUDA Version: 12.7     |
|-----------------------------------------+------------------------+----------------------+
| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |
| Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute M. |
|=========================================+========================+======================|
|   0  NVIDIA H100 80GB HBM3          On  |   00000000:19:00.0 Off |                    0 |
| N/A   29C    P0             76W /  700W |       1MiB /  81559MiB |      0%      Default |
+-----------------------------------------+------------------------+----------------------+
|   1  NVIDIA H100 80GB HBM3          On  |   00000000:3B:00.0 Off |                    0 |
| N/A   30C    P0             77W /  700W |       1MiB /  81559MiB |      0%      Default |
+-----------------------------------------+------------------------+----------------------+
"""

TABLE_470 = """+-----------------------------------------------------------------------------+
| NVIDIA-SMI 470.82.01    Driver Version: 470.82.01    CUDA Version: 11.4     |
|-------------------------------+----------------------+----------------------+
|   0  Tesla T4            Off  | 00000000:00:1E.0 Off |                    0 |
| N/A   34C    P8     9W /  70W |      0MiB / 15109MiB |      0%      Default |
+-------------------------------+----------------------+----------------------+
"""


def dist_info(site: Path, name: str, version: str, requires: tuple[str, ...] = ()) -> None:
    d = site / f"{name.replace('-', '_')}-{version}.dist-info"
    d.mkdir(parents=True)
    lines = ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}"]
    lines += [f"Requires-Dist: {r}" for r in requires]
    (d / "METADATA").write_text("\n".join(lines) + "\n")


def fake_venv(root: Path, torch: str = "2.10.0+cu128", vllm: str = "0.19.1", plugin: bool = True) -> Path:
    """A venv (no pip) whose site-packages holds only metadata written here; its python."""
    venv = root / "venv"
    python, site = bare_venv(venv)
    dist_info(site, "vllm", vllm, (f"torch=={torch.split('+')[0]}",))
    dist_info(site, "torch", torch)
    cuda = torch.partition("+cu")[2]
    (site / "torch").mkdir()
    cuda_text = repr(f"{cuda[:-1]}.{cuda[-1]}") if cuda else "None"
    (site / "torch" / "version.py").write_text(f"__version__ = {torch!r}\ncuda = {cuda_text}\nhip = None\n")
    if plugin:
        dist_info(site, "lmcache", "0.3.3", ("vllm<0.11", "torch"))
    return python


def stand_in(bindir: Path, body: str) -> None:
    bindir.mkdir(exist_ok=True)
    tool = bindir / "nvidia-smi"
    tool.write_text("#!/bin/sh\n" + body)
    tool.chmod(0o755)


DRIVER_ONLY = 'case "$*" in *--query-gpu=driver_version\\ *|*--query-gpu=driver_version) echo 550.54.15;; *) echo "unknown option" >&2; exit 2;; esac\n'
H200 = "echo 'NVIDIA H200, 9.0, 580.159.04, 143771 MiB'\n"


def invoke(*args: str) -> tuple[int, dict]:
    result = runner.invoke(app, list(args))
    assert result.exit_code in (0, 1), result.output
    return result.exit_code, json.loads(result.stdout)


def ids(doc: dict, prefix: str = "VUCENV") -> set[str]:
    return {f["rule_id"] for f in doc["findings"] if f["rule_id"].startswith(prefix)}


# --- nvidia-smi: the parser, the probe's fallbacks, captures --------------------------------


def test_parser_reads_table_csv_and_rejects_other_text() -> None:
    table = parse_nvidia_smi_output(TABLE_565)
    assert table is not None and (table.form, table.driver, table.driver_line, table.cuda) == (
        "table",
        "565.57.01",
        3,
        "12.7",
    )
    assert [(g.name, g.memory_mib, line) for g, line in table.gpus] == [
        ("NVIDIA H100 80GB HBM3", 81559, 8),
        ("NVIDIA H100 80GB HBM3", 81559, 11),
    ]
    old = parse_nvidia_smi_output(TABLE_470)
    assert old is not None and old.driver == "470.82.01" and [g.name for g, _ in old.gpus] == ["Tesla T4"]
    # a header in another order, with units; a header-less full query; the driver alone
    header = parse_nvidia_smi_output("driver_version, name, memory.total [MiB]\n550.54.15, NVIDIA L4, 23034 MiB\n")
    assert header is not None and header.form == "csv" and header.driver_line == 2
    assert [(g.name, g.memory_mib) for g, _ in header.gpus] == [("NVIDIA L4", 23034)]
    full = parse_nvidia_smi_output("NVIDIA H200, 9.0, 580.159.04, 143771 MiB\n")
    assert full is not None and full.gpus[0][0].compute_capability == "9.0"
    alone = parse_nvidia_smi_output("\n550.54.15\n")
    assert alone is not None and (alone.driver, alone.driver_line, alone.gpus) == ("550.54.15", 2, ())
    for text in ("", "a, b, c\n1, 2, 3\n", "torch==2.10.0\n", "NVIDIA-SMI has failed because it couldn't communicate\n"):
        assert parse_nvidia_smi_output(text) is None
    assert looks_like_nvidia_smi(TABLE_565) and looks_like_nvidia_smi("name, driver_version\nX, 550.54.15\n")
    assert not looks_like_nvidia_smi("we run nvidia-smi to read the Driver Version\n")


def test_stand_in_answering_only_the_driver_query(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    stand_in(tmp_path / "bin", DRIVER_ONLY)
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    host = read_host()
    assert (host.nvidia_driver, host.driver_source, host.gpus, host.problems) == (
        "550.54.15",
        "nvidia-smi --query-gpu=driver_version",
        (),
        (),
    )
    model = collect_host(HostRequest())
    assert any(s.startswith("GPUs unknown (only the driver version was read)") for s in model.not_checked)


def test_stand_in_answering_only_with_its_table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    stand_in(tmp_path / "bin", f"[ -z \"$*\" ] || exit 6\nprintf '%s' '{TABLE_565}'\n")  # shell builtins only
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    host = read_host()
    assert (host.nvidia_driver, host.driver_cuda, host.driver_source) == ("565.57.01", "12.7", "nvidia-smi (table)")
    assert len(host.gpus) == 2 and host.gpus[0].memory_gib == 79.6


def test_nvidia_smi_file_table_or_csv_and_bad_file(tmp_path: Path) -> None:
    freeze = tmp_path / "freeze.txt"
    freeze.write_text("vllm==0.19.1\ntorch==2.10.0+cu128\n")
    for name, text, driver in (
        ("smi.txt", TABLE_565, "565.57.01"),
        ("smi.csv", "name, compute_cap, driver_version, memory.total [MiB]\nNVIDIA A10, 8.6, 535.104.05, 23028 MiB\n", "535.104.05"),
    ):
        capture = tmp_path / name
        capture.write_text(text)
        _code, doc = invoke("env", "--freeze", str(freeze), "--nvidia-smi", str(capture), "--to", "0.28.0", "-f", "json")
        assert doc["host"]["nvidia_driver"] == driver and doc["host"]["read"] is True
        assert doc["host"]["driver_source"].startswith(f"{capture}:")
        assert "VUCENV0280-004" in ids(doc)
    bad = tmp_path / "notes.txt"
    bad.write_text("nothing here\n")
    proc = subprocess.run(
        [sys.executable, "-m", "vllm_upgrade_check", "env", "--nvidia-smi", str(bad)], capture_output=True, text=True
    )
    assert proc.returncode == 2 and str(bad) in proc.stderr and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_capture_kept_in_the_repo_is_a_blocker_at_its_line(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "inventory").mkdir(parents=True)
    (repo / "inventory" / "gpu-node-3.txt").write_text(TABLE_565)
    (repo / "inventory" / "gpus.csv").write_text("name, driver_version\nNVIDIA L4, 550.54.15\n")
    (repo / "inventory" / "new-node.log").write_text(H200.split("'")[1] + "\n")  # a header-less capture
    (repo / "README.txt").write_text("Run nvidia-smi and check the Driver Version: it must be new.\n")
    (repo / "serve.sh").write_text("vllm serve m\n")
    _code, doc = invoke("scan", str(repo), "--from", "0.19.1", "--to", "0.28.0", "-f", "json")
    found = {(f["path"], f["line"]) for f in doc["findings"] if f["rule_id"] == "VUCENV0280-004"}
    assert found == {("inventory/gpu-node-3.txt", 3), ("inventory/gpus.csv", 2)}
    # before the CUDA 13 release the same captures are fine
    _code, old = invoke("scan", str(repo), "--from", "0.18.0", "--to", "0.19.1", "-f", "json")
    assert "VUCENV0191-004" not in ids(old)


# --- the three commands on one host ----------------------------------------------------------


def test_env_scan_and_plan_agree_on_a_fake_venv_and_stand_in(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    python = fake_venv(tmp_path)
    stand_in(tmp_path / "bin", DRIVER_ONLY)
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}")
    repo = tmp_path / "repo"
    repo.mkdir()
    _code, env_doc = invoke("env", "--python", str(python), "--to", "0.28.0", "-f", "json")
    _code, scan_doc = invoke("scan", str(repo), "--env", "--python", str(python), "--to", "0.28.0", "-f", "json")
    assert env_doc["environment"]["distributions"]["vllm"] == "0.19.1"
    assert env_doc["host"]["nvidia_driver"] == "550.54.15"
    assert {"VUCENV0280-004", "VUCENV0280-005"} <= ids(env_doc)
    assert ids(env_doc) == ids(scan_doc)
    plugin = next(f for f in env_doc["findings"] if f["rule_id"] == "VUCENV0280-005")
    assert "lmcache 0.3.3 requires vllm<0.11" in plugin["subject"]
    assert any(n.startswith("host NVIDIA driver: 550.54.15 (from nvidia-smi") for n in scan_doc["notes"])
    result = runner.invoke(app, ["plan", str(repo), "--python", str(python), "--keep", "driver", "-f", "json"])
    plan = json.loads(result.stdout)
    assert plan["host"]["driver"] == "550.54.15" and plan["current"] == "0.19.1"
    # the 550 driver keeps CUDA 12: 0.20.0 ... 0.26.0 through their +cu129 builds, nothing later
    assert plan["reachable"] == "0.26.0" and result.exit_code == 0
    by_release = {r["release"]: r for r in plan["releases"]}
    assert by_release["0.20.0"]["reachable"] and "+cu129" in by_release["0.20.0"]["build"]
    first = {r["release"]: r["blockers"][0] for r in plan["releases"] if r["blockers"]}
    assert "0.20.0" not in first and first["0.27.0"]["kind"] == "driver" and "550.54.15" in first["0.27.0"]["message"]
    assert "CUDA 12.x at most" in first["0.27.0"]["message"] and "no CUDA 12 build" in first["0.27.0"]["message"]
    # lmcache pins vllm<0.11 but is not kept: no release is walled by it
    assert not any(b["kind"] == "conflict" for r in plan["releases"] for b in r["blockers"])


def test_plan_keep_driver_unknown_goes_by_the_torch_build(tmp_path: Path) -> None:
    python = fake_venv(tmp_path, plugin=False)
    repo = tmp_path / "repo"
    repo.mkdir()
    result = runner.invoke(app, ["plan", str(repo), "--python", str(python), "--no-host", "--keep", "driver", "-f", "json"])
    plan = json.loads(result.stdout)
    # torch 2.10.0+cu128 says the host runs CUDA 12: the +cu129 builds of 0.20.0 ... 0.26.0, nothing later
    assert plan["host"]["driver"] is None and plan["reachable"] == "0.26.0" and result.exit_code == 0
    message = {r["release"]: r["blockers"][0]["message"] for r in plan["releases"] if r["blockers"]}["0.28.0"]
    assert "the driver is unknown" in message and "(2.10.0+cu128, CUDA 12.8) says this host runs CUDA 12" in message
    assert "no CUDA 12 build of vLLM 0.28.0 is known" in message
    # without --keep driver an unknown driver blocks nothing (a change to check, said in a note)
    free = json.loads(runner.invoke(app, ["plan", str(repo), "--python", str(python), "--no-host", "-f", "json"]).stdout)
    assert free["reachable"] == NEWEST
    assert any("NVIDIA driver unknown" in n for n in free["notes"])


def test_plan_keep_driver_on_an_h200_reaches_the_newest(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    python = fake_venv(tmp_path, torch="2.11.0+cu130", vllm="0.20.0", plugin=False)
    stand_in(tmp_path / "bin", H200)
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}")
    repo = tmp_path / "repo"
    repo.mkdir()
    plan = json.loads(runner.invoke(app, ["plan", str(repo), "--python", str(python), "--keep", "driver", "-f", "json"]).stdout)
    assert plan["host"]["driver"] == "580.159.04" and plan["host"]["driver_source"] == "nvidia-smi --query-gpu"
    assert plan["reachable"] == NEWEST


def test_plugin_is_a_change_in_plan_unless_kept(tmp_path: Path) -> None:
    python = fake_venv(tmp_path, torch="2.11.0+cu130", vllm="0.20.0")
    repo = tmp_path / "repo"
    repo.mkdir()
    base = ["plan", str(repo), "--python", str(python), "--no-host", "--driver", "580.159.04", "-f", "json"]
    free = json.loads(runner.invoke(app, base).stdout)
    assert free["reachable"] == NEWEST
    changes = [c for hop in free["path"] for c in hop["changes"]]
    assert any(c.startswith(f"Upgrade lmcache to a release that admits vllm {NEWEST}") for c in changes), changes
    kept = json.loads(runner.invoke(app, [*base, "--keep", "lmcache"]).stdout)
    assert kept["reachable"] is None  # the kept pin walls every release after the one in use
    blocker = next(r["blockers"][0] for r in kept["releases"] if r["blockers"])
    assert blocker["kind"] == "conflict" and blocker["message"].endswith("(--keep lmcache)")
    assert "it would need a release whose Requires-Dist admits vllm" in blocker["message"]


def test_freeze_keeps_the_host_name_and_says_what_it_could_not_check(tmp_path: Path) -> None:
    freeze = tmp_path / "freeze.txt"
    freeze.write_text("vllm==0.19.1\ntorch==2.10.0\n")
    _code, doc = invoke("env", "--freeze", str(freeze), "--host-name", "gpu-node-3", "--to", "0.28.0", "-f", "json")
    assert doc["host"]["name"] == "gpu-node-3" and doc["host"]["read"] is False
    assert doc["host"]["nvidia_driver"] is None
    text = " | ".join(doc["not_checked"])
    assert "--freeze describes another host" in text and "Python unknown" in text and "no +cuXYZ label" in text
    _code, unnamed = invoke("env", "--freeze", str(freeze), "-f", "json")
    assert unnamed["host"]["name"] is None
    _code, given = invoke("env", "--freeze", str(freeze), "--driver", "550.54.15", "--python-version", "3.12", "--to", "0.28.0", "-f", "json")
    assert given["host"]["driver_source"] == "--driver" and given["environment"]["python"] == "3.12"
    assert {"fact": "python", "value": "3.12", "source": "--python-version"} in given["sources"]
    assert "VUCENV0280-004" in ids(given)
    console = runner.invoke(app, ["env", "--freeze", str(freeze), "--to", "0.28.0"]).stdout
    assert "not checked        GPUs and NVIDIA driver not read (--freeze" in console


def test_freeze_and_capture_agree_across_commands(tmp_path: Path) -> None:
    freeze = tmp_path / "freeze.txt"
    freeze.write_text("vllm==0.18.0\ntorch==2.9.0+cu128\n")
    capture = tmp_path / "smi.txt"
    capture.write_text(TABLE_565)
    repo = tmp_path / "repo"
    repo.mkdir()
    host = ["--freeze", str(freeze), "--nvidia-smi", str(capture), "--python-version", "3.12"]
    _code, env_doc = invoke("env", *host, "--to", "0.20.0", "-f", "json")
    _code, scan_doc = invoke("scan", str(repo), *host, "--to", "0.20.0", "-f", "json")  # host options imply --env
    assert "VUCENV0200-004" in ids(env_doc) and ids(env_doc) == ids(scan_doc)
    plan = json.loads(runner.invoke(app, ["plan", str(repo), *host, "--keep", "driver", "-f", "json"]).stdout)
    assert plan["host"]["driver"] == "565.57.01" and plan["reachable"] == "0.26.0"


def test_bad_host_options_exit_2(tmp_path: Path) -> None:
    freeze = tmp_path / "f.txt"
    freeze.write_text("vllm==0.19.1\n")
    for command in (["env"], ["scan", str(tmp_path), "--env"], ["plan", str(tmp_path)]):
        for extra in (["--python", sys.executable, "--freeze", str(freeze)], ["--driver", "latest"], ["--python-version", "12"]):
            proc = subprocess.run(
                [sys.executable, "-m", "vllm_upgrade_check", *command, *extra], capture_output=True, text=True
            )
            assert proc.returncode == 2, (command, extra, proc.stderr)
            assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("name", "text"),
    [(".vllm-upgrade-check.toml", 'to = "0.20.0"\n'), ("pyproject.toml", '[tool.vllm-upgrade-check]\nto = "0.20.0"\n')],
)
def test_every_command_reads_the_configuration(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, text: str) -> None:
    (tmp_path / name).write_text(text)
    freeze = tmp_path / "freeze.txt"
    freeze.write_text("vllm==0.19.1\n")
    monkeypatch.chdir(tmp_path)
    _code, env_doc = invoke("env", "--freeze", str(freeze), "-f", "json")
    _code, scan_doc = invoke("scan", "--env", "--freeze", str(freeze), "-f", "json")
    assert env_doc["to_version"] == scan_doc["to_version"] == "0.20.0"


# --- fleet merge ------------------------------------------------------------------------------


def test_fleet_merge_takes_only_host_reports_and_warns_on_duplicates(tmp_path: Path) -> None:
    long_id = "ACME-PLATFORM-DRIVER-FLOOR-CUDA13-0001"
    freeze = tmp_path / "freeze.txt"
    freeze.write_text("vllm==0.19.1\n")
    host = tmp_path / "node-a.json"
    host.write_text(
        json.dumps(
            {
                "to_version": "0.28.0",
                "findings": [{"rule_id": long_id, "severity": "blocker", "message": "driver too old"}],
                "host": {"name": "node-a", "nvidia_driver": "550.54.15", "gpus": []},
                "environment": {"torch": None},
            }
        )
    )
    scan_report = tmp_path / "scan.json"
    (tmp_path / "empty").mkdir()
    _code, scan_doc = invoke("scan", str(tmp_path / "empty"), "-f", "json")
    scan_report.write_text(json.dumps(scan_doc))
    proc = subprocess.run(
        [sys.executable, "-m", "vllm_upgrade_check", "fleet", "merge", str(host), str(scan_report)],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2 and str(scan_report) in proc.stderr and "not a host report" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    twice = subprocess.run(
        [sys.executable, "-m", "vllm_upgrade_check", "fleet", "merge", str(host), str(host), "-f", "json"],
        capture_output=True,
        text=True,
    )
    assert twice.returncode == 1 and "host node-a is reported twice" in twice.stderr
    assert [h["name"] for h in json.loads(twice.stdout)["hosts"]] == ["node-a"]
    table = runner.invoke(app, ["fleet", "merge", str(host)]).stdout
    assert long_id in table and "…" not in table


# --- env, scan --env and plan agree on one host ----------------------------------------------


def _facts_agree(env_doc: dict, scan_doc: dict, plan_doc: dict) -> dict[str, tuple[str, str]]:
    """The host facts each command reports, checked equal across the three; fact -> (value, source)."""
    env_facts = {s["fact"]: (s["value"], s["source"]) for s in env_doc["sources"]}
    plan_facts = {s["fact"]: (s["value"], s["source"]) for s in plan_doc["host"]["sources"]}
    scan_facts = {
        f"host {fact}: {value} (from {source})" for fact, (value, source) in env_facts.items()
    }
    assert env_facts == plan_facts
    assert scan_facts <= set(scan_doc["notes"])
    assert env_doc["not_checked"] == plan_doc["host"]["not_checked"]
    assert {f"host check not run: {s}" for s in env_doc["not_checked"]} <= set(scan_doc["notes"])
    return env_facts


def _verdicts_agree(env_doc: dict, scan_doc: dict, plan_doc: dict, target: str) -> None:
    """The target's CUDA verdict is the same in env, scan --env and plan."""
    assert ids(env_doc) == ids(scan_doc)
    cuda_env = [n for n in env_doc["notes"] if n.startswith("CUDA")]
    assert cuda_env == [n for n in scan_doc["notes"] if n.startswith("CUDA")]
    release = next(r for r in plan_doc["releases"] if r["release"] == target)
    driver_rule = any(i.endswith("-004") for i in ids(env_doc))
    build = release["build"]
    verdict = next(n for n in cuda_env if n.startswith(f"CUDA for vLLM {target}: "))
    if build is not None:  # plan installs another CUDA build: env names the same one, and blocks the default wheel
        assert driver_rule and build.split(": ", 1)[1] in verdict
    else:
        assert not driver_rule or not release["reachable"]
    mine = [n.removeprefix(f"CUDA for vLLM {target}: ") for n in cuda_env if n.startswith(f"CUDA for vLLM {target}: ")]
    assert release["notes"] == [n for n in mine[1:] if "minor-version compatibility" in n]


@pytest.mark.parametrize("driver_line", [DRIVER_ONLY, "echo 'NVIDIA H100 80GB HBM3, 9.0, 550.54.15, 81559 MiB'\n"])
def test_three_commands_agree_on_a_fake_venv_with_a_stand_in(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, driver_line: str) -> None:
    python = fake_venv(tmp_path, vllm="0.18.0", plugin=False)
    stand_in(tmp_path / "bin", driver_line)
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}")
    repo = tmp_path / "repo"
    repo.mkdir()
    host = ["--python", str(python), "--host-name", "node-a"]
    for target in ("0.19.1", "0.26.0", "0.28.0"):
        _code, env_doc = invoke("env", *host, "--to", target, "-f", "json")
        _code, scan_doc = invoke("scan", str(repo), "--env", *host, "--to", target, "-f", "json")
        plan_doc = json.loads(runner.invoke(app, ["plan", str(repo), *host, "--keep", "driver", "-f", "json"]).stdout)
        facts = _facts_agree(env_doc, scan_doc, plan_doc)
        assert facts["torch"][0] == "2.10.0+cu128 (CUDA 12.8)" and facts["torch"][1].endswith("torch/version.py")
        assert facts["NVIDIA driver"][0] == "550.54.15" and facts["NVIDIA driver"][1].startswith("nvidia-smi")
        _verdicts_agree(env_doc, scan_doc, plan_doc, target)


@pytest.mark.parametrize("capture", ["table", "csv"])
def test_three_commands_agree_on_a_freeze_file_with_a_capture(tmp_path: Path, capture: str) -> None:
    freeze = tmp_path / "freeze.txt"
    freeze.write_text("# pip freeze\nvllm==0.18.0\ntorch==2.10.0+cu128\n")
    smi = tmp_path / "smi.txt"
    if capture == "table":
        smi.write_text(TABLE_565.replace("565.57.01", "550.54.15").replace("CUDA Version: 12.7", "CUDA Version: 12.4"))
        driver_line, gpu_line = 3, 8
    else:
        smi.write_text("name, compute_cap, driver_version, memory.total [MiB]\nNVIDIA H100 80GB HBM3, 9.0, 550.54.15, 81559 MiB\n")
        driver_line = gpu_line = 2
    repo = tmp_path / "repo"
    repo.mkdir()
    host = ["--freeze", str(freeze), "--nvidia-smi", str(smi), "--python-version", "3.12"]
    for target in ("0.19.1", "0.26.0", "0.28.0"):
        _code, env_doc = invoke("env", *host, "--to", target, "-f", "json")
        _code, scan_doc = invoke("scan", str(repo), *host, "--to", target, "-f", "json")
        plan_doc = json.loads(runner.invoke(app, ["plan", str(repo), *host, "--keep", "driver", "-f", "json"]).stdout)
        facts = _facts_agree(env_doc, scan_doc, plan_doc)
        assert facts["torch"] == ("2.10.0+cu128 (CUDA 12.8)", f"{freeze}:3 torch==2.10.0+cu128")
        assert facts["NVIDIA driver"][1].startswith(f"{smi}:{driver_line} (captured nvidia-smi")
        assert facts["GPUs"][1].startswith(f"{smi}:{gpu_line} ")
        assert facts["python"] == ("3.12", "--python-version")
        assert any("Requires-Dist of the installed distributions unknown" in s for s in plan_doc["host"]["not_checked"])
        _verdicts_agree(env_doc, scan_doc, plan_doc, target)
    assert plan_doc["reachable"] == "0.26.0"
