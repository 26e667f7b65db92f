"""Launches resolved across one more level of indirection (issue 16): functions that build a
vLLM argv from their parameters, read at each call in the file."""

from __future__ import annotations

from pathlib import Path

from vllm_upgrade_check.engine import run_scan
from vllm_upgrade_check.model.facts import Fact
from vllm_upgrade_check.model.findings import Report
from vllm_upgrade_check.model.options import ScanOptions


def scan(tmp_path: Path, files: dict[str, str], frm: str = "0.10.0") -> tuple[Report, list[Fact]]:
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, encoding="utf-8")
    facts: list[Fact] = []
    report = run_scan(ScanOptions.of(paths=[tmp_path], to_version="0.28.0", from_version=frm), facts_out=facts)
    return report, facts


def found(report: Report) -> list[tuple[str, str, int | None, int | None, str]]:
    rows = [
        (f.fact.raw.split()[0] if f.fact.raw else f.fact.name, f.location.path or "", f.location.line,
         f.location.column, f.severity.value)
        for f in report.findings
    ]
    return sorted(rows, key=lambda r: (r[1], r[2] or 0, r[3] or 0, r[0]))


KWARGS_BUILDER = '''import subprocess


def start(model, **opts):
    argv = ["vllm", "serve", model]
    for k, v in opts.items():
        argv += [f"--{k.replace('_', '-')}", str(v)]
    return subprocess.Popen(argv)


start("acme/coder-7b", port=9100, preemption_mode="swap")
'''


def test_a_kwargs_builder_reports_each_flag_at_the_keyword_of_its_call(tmp_path: Path) -> None:
    report, facts = scan(tmp_path, {"launch.py": KWARGS_BUILDER})
    assert found(report) == [("--preemption-mode", "launch.py", 11, 35, "blocker")]
    assert report.notes == ()  # the call says every keyword: nothing left unresolved
    launches = [f for f in facts if f.kind.value == "launch"]
    assert [(f.location.line, f.model) for f in launches] == [(11, "acme/coder-7b")]


def test_builder_variants_positional_keyword_defaults_and_comprehensions(tmp_path: Path) -> None:
    text = '''import subprocess, sys


def launch(model, port=8000, *, gpu="0", **engine):
    cmd = [sys.executable, "-m", "vllm.entrypoints.openai.api_server", "--model", model, "--port", str(port)]
    cmd.extend([x for k, v in engine.items() for x in (f"--{k.replace('_', '-')}", str(v))])
    subprocess.run(cmd, check=True)


launch("acme/a", scheduler_delay_factor=0.5, max_num_seqs=8)
launch(model="acme/b", port=9000, preemption_mode="recompute")
launch("acme/c", **CONFIG)
'''
    report, facts = scan(tmp_path, {"run.py": text})
    assert found(report) == [
        ("--scheduler-delay-factor", "run.py", 10, 18, "blocker"),
        ("--preemption-mode", "run.py", 11, 35, "blocker"),
    ]
    # one launch per call, each at its call, the served model its own
    launches = sorted((f.location.line, f.model, f.resolved) for f in facts if f.kind.value == "launch")
    assert launches == [(10, "acme/a", True), (11, "acme/b", True), (12, "acme/c", False)]
    # the splat the file does not say is named with its file and line
    assert any("**CONFIG" in n and "run.py:12" in n for n in report.notes)


def test_a_builder_no_one_calls_stays_unresolved_at_its_definition(tmp_path: Path) -> None:
    text = KWARGS_BUILDER.rsplit("\n\n", 1)[0] + "\n"
    report, _facts = scan(tmp_path, {"launch.py": text})
    assert report.findings == ()
    assert any("launch.py:5" in n for n in report.notes)


def test_a_builder_with_a_literal_dict_loop_is_not_read_twice(tmp_path: Path) -> None:
    text = '''import subprocess
OPTS = {"preemption_mode": "swap", "seed": 1}


def serve(model):
    argv = ["vllm", "serve", model]
    for k, v in OPTS.items():
        argv += [f"--{k.replace('_', '-')}", str(v)]
    subprocess.run(argv)


serve("acme/x")
'''
    report, _facts = scan(tmp_path, {"serve.py": text})
    assert found(report) == [("--preemption-mode", "serve.py", 2, 10, "blocker")]
    assert report.notes == ()


PRESETS = '''BASE = {"seed": 0}
FP8_PRESET = {
    **BASE,
    "quantization": "fp8",
    "swap_space": 8,
}
'''


def test_a_dict_imported_from_another_module_is_followed_to_its_lines(tmp_path: Path) -> None:
    offline = '''from vllm import LLM
from presets import FP8_PRESET
import presets

llm = LLM(model="acme/coder-7b", **FP8_PRESET)
other = LLM(model="acme/coder-7b", **presets.FP8_PRESET)
'''
    report, facts = scan(tmp_path, {"presets.py": PRESETS, "offline.py": offline}, frm="0.26.0")
    # swap_space is reported where presets.py writes it, once for both calls
    assert [(f.fact.name, f.location.path, f.location.line, f.location.column) for f in report.findings] == [
        ("swap_space", "presets.py", 5, 6)
    ]
    assert report.notes == ()
    seeds = [f for f in facts if f.kind.value == "arg" and f.name == "seed"]
    assert {(f.location.path, f.location.line) for f in seeds} == {("presets.py", 1)}
    # a key written in another module is not edited from this file's launch
    assert all(f.spans is not None and "presets.py" in f.spans.note for f in seeds)


def test_relative_aliased_and_re_exported_imports(tmp_path: Path) -> None:
    files = {
        "app/__init__.py": "",
        "app/conf/__init__.py": "",
        "app/conf/base.py": PRESETS,
        "app/conf/presets.py": "from .base import FP8_PRESET as EXPORTED\n",
        "app/serve.py": (
            "from vllm import LLM\n"
            "from .conf.presets import EXPORTED as P\n"
            "LLM('acme/m', **P)\n"
        ),
        # a module of the same name elsewhere in the repository is not the one imported
        "tools/conf/presets.py": "EXPORTED = {'preemption_mode': 'swap'}\n",
    }
    report, _facts = scan(tmp_path, files, frm="0.26.0")
    assert [(f.fact.name, f.location.path, f.location.line) for f in report.findings] == [
        ("swap_space", "app/conf/base.py", 5)
    ]


def test_a_dict_the_repository_does_not_hold_is_named_unresolved(tmp_path: Path) -> None:
    offline = "from vllm import LLM\nfrom company_presets import FP8\nLLM('acme/m', swap_space=4, **FP8)\n"
    report, _facts = scan(tmp_path, {"offline.py": offline}, frm="0.26.0")
    assert [(f.fact.name, f.location.line) for f in report.findings] == [("swap_space", 3)]
    assert any("**FP8" in n and "offline.py:3" in n for n in report.notes)
