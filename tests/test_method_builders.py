"""Launch builders reached through methods and ``*args`` (issue 16): ``srv.start("--flag",
"8", opt="x")`` of ``class Server: def start(self, *extra, **opts)`` is read at its call, each
flag at the call's argument; what the file does not say is named unresolved."""

from __future__ import annotations

from pathlib import Path

from vllm_upgrade_check.engine import run_scan
from vllm_upgrade_check.model.facts import Fact, FactKind
from vllm_upgrade_check.model.findings import Report
from vllm_upgrade_check.model.options import ScanOptions

SERVER = '''import subprocess
import sys


class Server:
    def __init__(self, model):
        self.model = model

    def start(self, *extra, **opts):
        cmd = ["vllm", "serve", "acme/coder-7b", *extra]
        for k, v in opts.items():
            cmd += [f"--{k.replace('_', '-')}", str(v)]
        return subprocess.Popen(cmd)

    def restart(self):
        self.start("--seed", "1", scheduler_delay_factor=0.5)


class Runner:
    def run(self, *extra):
        base_cmd = [sys.executable, "-m", "vllm.entrypoints.openai.api_server", "--model", "acme/x"]
        cmd = base_cmd + list(extra)
        subprocess.run(cmd, check=True)


srv = Server("acme/coder-7b")
srv.start("--num-scheduler-steps", "8", preemption_mode="swap")
Runner().run("--max-num-partial-prefills", "2")
FLAGS = ["--preemption-mode", "swap"]
srv.start(*FLAGS)
srv.start(*sys.argv[1:])
'''


def scan(tmp_path: Path, files: dict[str, str]) -> tuple[Report, list[Fact]]:
    for rel, text in files.items():
        (tmp_path / rel).write_text(text, encoding="utf-8")
    facts: list[Fact] = []
    report = run_scan(ScanOptions.of(paths=[tmp_path], to_version="0.28.0", from_version="0.10.0"), facts_out=facts)
    return report, facts


def test_method_calls_with_star_args_are_read_at_each_call(tmp_path: Path) -> None:
    report, facts = scan(tmp_path, {"serve.py": SERVER})
    rows = sorted((f.fact.raw, f.location.line, f.location.column) for f in report.findings if f.fact.kind == FactKind.ARG)
    assert rows == [
        ("--max-num-partial-prefills", 28, 15),  # Runner().run(...): base_cmd + list(extra)
        ("--num-scheduler-steps", 27, 12),  # srv.start(...): *extra, at the call's argument
        ("--preemption-mode", 27, 41),  # **opts, at the keyword
        ("--preemption-mode", 29, 11),  # *FLAGS: the list the file binds, at its words
        ("--scheduler-delay-factor", 16, 35),  # self.start(...) inside the class
    ]
    launches = sorted((f.location.line, f.resolved) for f in facts if f.kind == FactKind.LAUNCH)
    assert launches == [(16, True), (27, True), (28, True), (30, True), (31, False)]
    # the spread the file does not say is named, with its file and line
    assert any("sys.argv[1:]" in n and "serve.py:31" in n for n in report.notes), report.notes


def test_a_spread_before_a_named_parameter_is_unresolved_not_guessed(tmp_path: Path) -> None:
    text = '''import subprocess, sys


class Server:
    def start(self, model, *extra):
        subprocess.Popen(["vllm", "serve", model, *extra])


Server().start(*sys.argv[1:])
Server().start("acme/m", "--preemption-mode", "swap")
'''
    report, facts = scan(tmp_path, {"s.py": text})
    assert [(f.fact.raw, f.location.line) for f in report.findings if f.fact.kind == FactKind.ARG] == [
        ("--preemption-mode", 10)
    ]
    assert any("*sys.argv[1:]" in n and "s.py:9" in n for n in report.notes), report.notes
    assert sorted((f.location.line, f.model) for f in facts if f.kind == FactKind.LAUNCH) == [(9, None), (10, "acme/m")]


def test_methods_of_objects_the_file_does_not_make_are_not_its_builders(tmp_path: Path) -> None:
    text = '''import subprocess, threading


class Server:
    def start(self, *extra):
        subprocess.Popen(["vllm", "serve", "acme/m", *extra])


t = threading.Thread(target=print)
t.start("--preemption-mode")
other.start("--preemption-mode", "swap")
'''
    report, facts = scan(tmp_path, {"s.py": text})
    assert not [f for f in report.findings if f.fact.kind == FactKind.ARG]
    # Server.start is called nowhere: its launch is read where it is written, *extra unresolved
    assert [(f.location.line, f.resolved) for f in facts if f.kind == FactKind.LAUNCH] == [(6, False)]
    assert any("extra at s.py:6" in n for n in report.notes), report.notes


def test_a_field_set_on_a_sampling_params_object_is_checked_at_its_name(tmp_path: Path) -> None:
    text = '''from vllm import SamplingParams

params = SamplingParams(temperature=0.2)
params.best_of = 2
params.temperature = 0.5
other = object()
other.best_of = 2
'''
    report, facts = scan(tmp_path, {"gen.py": text})
    sampling = sorted((f.name, f.location.line, f.location.column) for f in facts if f.origin == "sampling")
    assert sampling == [("best_of", 4, 8), ("temperature", 3, 25), ("temperature", 5, 8)]
    assert [(f.fact.name, f.location.line, f.location.column) for f in report.findings] == [("best_of", 4, 8)]
