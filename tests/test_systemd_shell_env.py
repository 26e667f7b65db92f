"""A systemd unit whose ``ExecStart`` runs ``bash -lc 'exec vllm serve acme/m $OPTS ...'``
with ``OPTS`` set by ``Environment=`` or an ``EnvironmentFile=``: bash splits the unquoted
``$OPTS`` of the service's environment, so its flags are the launch's, reported where the
value is written, and ``fix`` cuts them out of that value (several in one value)."""

from __future__ import annotations

from pathlib import Path

import pytest

from vllm_upgrade_check.engine import run_scan
from vllm_upgrade_check.model.options import ScanOptions

SWAP = "VUC0180-001"  # --swap-space, removed in 0.18.0
PARTIAL = "VUC0270-001"  # --max-num-partial-prefills, removed in 0.27.0


def _write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def _found(root: Path, to: str = "0.18.0") -> list[tuple[str, str | None, int | None, int | None]]:
    report = run_scan(ScanOptions.of(paths=[root], from_version="0.17.1", to_version=to))
    return sorted(
        (f.rule.id, f.location.path, f.location.line, f.location.column)
        for f in report.findings
        if f.rule.id in (SWAP, PARTIAL)
    )


@pytest.mark.parametrize(
    ("environment", "column"),
    [
        ('Environment="OPTS=--swap-space 4 --seed 1"', 19),
        ("Environment='OPTS=--swap-space 4'", 19),
        ('Environment=PORT=8000 "OPTS=--swap-space 4"', 29),
    ],
)
@pytest.mark.parametrize(
    "exec_start",
    [
        "ExecStart=/bin/bash -lc 'exec vllm serve acme/m $OPTS --port 8000'",
        'ExecStart=/bin/bash -lc "exec vllm serve acme/m $OPTS --port 8000"',
        "ExecStart=/usr/bin/env bash -c 'vllm serve acme/m $OPTS'",
        "ExecStart=/bin/sh -c 'exec tini -- vllm serve acme/m $OPTS'",
    ],
)
def test_environment_flags_reach_the_shell_script(tmp_path: Path, environment: str, column: int, exec_start: str) -> None:
    unit = f"[Service]\n{environment}\n{exec_start}\n"
    assert _found(_write(tmp_path, {"vllm.service": unit})) == [(SWAP, "vllm.service", 2, column)]


def test_environment_file_flags_reach_the_shell_script(tmp_path: Path) -> None:
    unit = "[Service]\nEnvironmentFile=/etc/default/vllm\nExecStart=/bin/bash -lc 'exec vllm serve acme/m $OPTS'\n"
    root = _write(tmp_path, {"vllm.service": unit, "etc/default/vllm": 'OPTS="--swap-space 4"\n'})
    assert _found(root) == [(SWAP, "etc/default/vllm", 1, 7)]


def test_fix_cuts_several_flags_out_of_one_environment_value(tmp_path: Path) -> None:
    from vllm_upgrade_check.engine.fix import fix_paths

    unit = (
        "[Service]\nEnvironment='OPTS=--swap-space 4 --max-num-partial-prefills 2 --seed 1'\n"
        "ExecStart=/bin/bash -lc 'exec vllm serve acme/m $OPTS --port 8000'\n"
    )
    root = _write(tmp_path, {"vllm.service": unit})
    fix_paths(ScanOptions.of(paths=[root], from_version="0.17.1", to_version="0.28.0"), bump=False)
    assert (root / "vllm.service").read_text() == unit.replace("--swap-space 4 --max-num-partial-prefills 2 ", "")
    assert _found(root, "0.28.0") == []


def test_fix_cuts_the_flag_out_of_the_environment_file(tmp_path: Path) -> None:
    from vllm_upgrade_check.engine.fix import fix_paths

    unit = "[Service]\nEnvironmentFile=/etc/default/vllm\nExecStart=/bin/bash -lc 'exec vllm serve acme/m $OPTS'\n"
    root = _write(tmp_path, {"vllm.service": unit, "etc/default/vllm": 'OPTS="--seed 1 --swap-space 4"\n'})
    fix_paths(ScanOptions.of(paths=[root], from_version="0.17.1", to_version="0.18.0"), bump=False)
    assert (root / "etc/default/vllm").read_text() == 'OPTS="--seed 1"\n'
    assert (root / "vllm.service").read_text() == unit


def test_a_word_systemd_ignores_leaves_the_cut_to_a_person(tmp_path: Path) -> None:
    from vllm_upgrade_check.engine.fix import fix_paths

    # systemd sets OPTS=--swap-space and ignores `4` (no assignment): what was meant is unsure
    unit = "[Service]\nEnvironment=OPTS=--swap-space 4\nExecStart=/bin/bash -lc 'exec vllm serve acme/m $OPTS'\n"
    root = _write(tmp_path, {"vllm.service": unit})
    assert _found(root) == [(SWAP, "vllm.service", 2, 18)]
    fix_paths(ScanOptions.of(paths=[root], from_version="0.17.1", to_version="0.18.0"), bump=False)
    assert (root / "vllm.service").read_text() == unit
