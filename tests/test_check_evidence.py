"""scripts/check_evidence.py on a tiny fake wheel: a true line passes, a wrong line, a missing
file, a missing wheel and an untrue absence are each reported (the real wheels are not needed)."""

from __future__ import annotations

import importlib.util
import sys
import zipfile
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "check_evidence.py"

ARG_UTILS = "\n".join(
    [
        "class EngineArgs:",
        "    max_num_seqs: int = 8",
        "    swap_space: float = 4",
        *["    pass"] * 20,
        '    parser.add_argument("--swap-space", type=float)',
        "# the end",
    ]
)


def load_script():
    spec = importlib.util.spec_from_file_location("check_evidence", SCRIPT)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclass looks its module up
    spec.loader.exec_module(module)
    return module


def pack(*evidence: str) -> str:
    items = "\n".join(f"      - {item}" for item in evidence)
    return f"""schema_version: 1
release: 0.2.0
rules:
  - id: VUC020-001
    name: swap-space-removed
    severity: blocker
    match: {{kind: engine_arg, name: swap_space}}
    message: --swap-space was removed in vLLM 0.2.0.
    fix: {{summary: Remove it.}}
    docs: {{why: gone}}
    evidence:
{items}
"""


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    wheels, rules = tmp_path / "wheels", tmp_path / "rules"
    wheels.mkdir()
    rules.mkdir()
    for release, text in (("0.1.0", ARG_UTILS), ("0.2.0", "class EngineArgs:\n    max_num_seqs: int = 8\n")):
        with zipfile.ZipFile(wheels / f"vllm-{release}-cp38-abi3-manylinux1_x86_64.whl", "w") as whl:
            whl.writestr("vllm/engine/arg_utils.py", text)
            whl.writestr("vllm/__init__.py", "")
    return wheels, rules


def run(script, dirs: tuple[Path, Path], *evidence: str, extra: tuple[str, ...] = ()) -> int:
    wheels, rules = dirs
    (rules / "0.2.0.yaml").write_text(pack(*evidence))
    return script.main(["--wheels", str(wheels), "--rules-dir", str(rules), *extra])


def test_true_items_pass(dirs, capsys) -> None:
    script = load_script()
    rc = run(
        script,
        dirs,
        "{kind: wheel, release: 0.1.0, path: vllm/engine/arg_utils.py, line: 3}",
        "{kind: wheel, release: 0.1.0, path: vllm/engine/arg_utils.py, line: 22, end_line: 24}",
        "{kind: wheel, release: 0.2.0, path: vllm/, finding: no occurrence of --swap-space}",
        extra=("--absence",),
    )
    assert rc == 0, capsys.readouterr().out


@pytest.mark.parametrize(
    ("item", "problem"),
    [
        ("{kind: wheel, release: 0.1.0, path: vllm/engine/arg_utils.py, line: 12}", "nearest at line 3"),
        ("{kind: wheel, release: 0.1.0, path: vllm/engine/arg_utils.py, line: 99}", "has 25 lines"),
        ("{kind: wheel, release: 0.1.0, path: vllm/envs.py, line: 1}", "no file vllm/envs.py"),
        ("{kind: wheel, release: 0.1.0, path: vllm/v1/, finding: gone}", "no directory vllm/v1/"),
        ("{kind: wheel, release: 0.3.0, path: vllm/, finding: gone}", "no wheel of vllm-0.3.0"),
        (
            "{kind: wheel, release: 0.1.0, path: vllm/, finding: no occurrence of --swap-space}",
            "--swap-space occurs in vllm/engine/arg_utils.py:24",
        ),
    ],
)
def test_wrong_items_are_reported(dirs, capsys, item: str, problem: str) -> None:
    script = load_script()
    assert run(script, dirs, item, extra=("--absence",)) == 1
    out = capsys.readouterr().out
    assert "0.2.0.yaml VUC020-001: " in out and problem in out, out
