"""Python launch forms read since they were silent or wrong: ``os.exec*``/``os.spawn*`` and
``asyncio.create_subprocess_exec``; string constants split, concatenated or named in an argv;
an argv item that glues a flag and its value into one word."""

from __future__ import annotations

from pathlib import Path

import pytest

from test_resolve_launches import found, scan
from vllm_upgrade_check.engine import run_scan
from vllm_upgrade_check.model.options import ScanOptions

HEAD = "import asyncio\nimport os\nimport shlex\nimport subprocess\nimport sys\n\n"


def _scan(tmp_path: Path, body: str) -> tuple[set[tuple[str, int]], list[str]]:
    (tmp_path / "launch.py").write_text(HEAD + body)
    report = run_scan(ScanOptions.of(paths=[tmp_path], from_version="0.10.0", to_version="0.33.0"))
    found = {(f.rule.id, f.location.line) for f in report.findings if f.rule.id != "VUC000-012"}
    return found, list(report.notes)


@pytest.mark.parametrize(
    "call",
    [
        'os.execvp("vllm", ["vllm", "serve", "acme/m", "--swap-space", "4"])',
        'os.execv("/opt/venv/bin/vllm", ("vllm", "serve", "acme/m", "--swap-space", "4"))',
        'os.execvpe("vllm", ["vllm", "serve", "acme/m", "--swap-space", "4"], os.environ)',
        'os.execlp("vllm", "vllm", "serve", "acme/m", "--swap-space", "4")',
        'os.execle("/usr/bin/vllm", "vllm", "serve", "acme/m", "--swap-space", "4", os.environ)',
        'os.spawnvp(os.P_WAIT, "vllm", ["vllm", "serve", "acme/m", "--swap-space", "4"])',
        'os.spawnl(os.P_NOWAIT, "/usr/bin/vllm", "vllm", "serve", "acme/m", "--swap-space", "4")',
        'asyncio.create_subprocess_exec("vllm", "serve", "acme/m", "--swap-space", "4")',
        'asyncio.create_subprocess_shell("vllm serve acme/m --swap-space 4")',
        'os.spawnv(os.P_WAIT, sys.executable, [sys.executable, "-m", "vllm.entrypoints.openai.api_server",'
        ' "--model", "acme/m", "--swap-space", "4"])',
    ],
)
def test_exec_and_spawn_calls_are_launches(tmp_path: Path, call: str) -> None:
    found, _notes = _scan(tmp_path, f"def main():\n    {call}\n")
    assert found == {("VUC0180-001", 8)}


@pytest.mark.parametrize(
    ("body", "line"),
    [
        ('BASE = "vllm serve acme/m --port 8000"\n\n\ndef run():\n'
         '    subprocess.run(shlex.split(BASE) + ["--swap-space", "4"])\n', 11),
        ('BASE = "vllm serve acme/m --port 8000"\n\n\ndef run():\n'
         '    subprocess.run(BASE + " --swap-space 4", shell=True)\n', 11),
        ('BASE = "vllm serve acme/m"\nFLAGS = " --swap-space 4"\n\n\ndef run():\n'
         '    os.system(BASE + FLAGS)\n', 8),  # in the literal FLAGS is bound to
        ('MODEL = "acme/m"\n\n\ndef run():\n    subprocess.run(f"vllm serve {MODEL} --swap-space 4", shell=True)\n', 11),
        ('CMD = "vllm serve acme/m --swap-space 4"\n\n\ndef run():\n    subprocess.Popen(CMD, shell=True)\n', 7),
    ],
)
def test_string_constants_are_resolved(tmp_path: Path, body: str, line: int) -> None:
    found, notes = _scan(tmp_path, body)
    assert found == {("VUC0180-001", line)}
    assert not [n for n in notes if n.startswith("unresolved")], notes


def test_a_literal_model_constant_is_no_unresolved_name(tmp_path: Path) -> None:
    body = 'MODEL = "acme/x"\nPORT = 8000\n\n\ndef run():\n    subprocess.run(["vllm", "serve", MODEL, "--port", str(PORT), "--swap-space", "4"])\n'
    found, notes = _scan(tmp_path, body)
    assert found == {("VUC0180-001", 12)}
    assert not [n for n in notes if n.startswith("unresolved")], notes


def test_a_name_bound_to_something_else_stays_unresolved(tmp_path: Path) -> None:
    body = 'import json\nMODEL = json.loads("{}")["m"]\n\n\ndef run():\n    subprocess.run(["vllm", "serve", MODEL, "--swap-space", "4"])\n'
    found, notes = _scan(tmp_path, body)
    assert ("VUC0180-001", 12) in found
    assert any(n.startswith("unresolved: MODEL") for n in notes), notes


@pytest.mark.parametrize("item", ['"--swap-space 4"', '"--max-num-seqs  8"'])
def test_a_flag_glued_to_its_value_in_one_item_says_so(tmp_path: Path, item: str) -> None:
    (tmp_path / "launch.py").write_text(HEAD + f'subprocess.run(["vllm", "serve", "acme/m", {item}])\n')
    report = run_scan(ScanOptions.of(paths=[tmp_path], from_version="0.10.0", to_version="0.33.0"))
    (finding,) = [f for f in report.findings if f.rule.id == "VUC000-001"]
    assert "is one argv word" in finding.rule.message and "separate words" in finding.rule.fix.summary
def test_exec_of_another_program_or_with_no_argv_is_no_launch(tmp_path: Path) -> None:
    text = '''import os
os.execvp("python", ["python", "train.py", "--swap-space", "4"])
os.execv("/bin/true")
'''
    report, facts = scan(tmp_path, {"launch.py": text})
    assert found(report) == []
    assert [f for f in facts if f.kind.value == "launch"] == []


TWO_LEVEL = '''import subprocess


class Server:
    def build_cmd(self, *extra, **opts):
        cmd = ["vllm", "serve", "acme/m", *extra]
        for k, v in opts.items():
            cmd += [f"--{k.replace('_', '-')}", str(v)]
        return cmd

    def start(self):
        return subprocess.Popen(self.build_cmd("--swap-space", "4", preemption_mode="swap"))


class Other:
    def argv(self, model, port=8000, *rest):
        return ["vllm", "serve", model, "--port", str(port), *rest]

    def run(self):
        subprocess.run(self.argv('acme/z', 9000, '--disable-log-requests'), check=True)


Server().start()
Other().run()
'''


def test_a_method_builder_two_levels_down_is_read_with_the_call_s_words(tmp_path: Path) -> None:
    report, facts = scan(tmp_path, {"launch.py": TWO_LEVEL})
    assert found(report) == [
        ("--swap-space", "launch.py", 12, 49, "blocker"),
        ("--preemption-mode", "launch.py", 12, 69, "blocker"),
        ("--disable-log-requests", "launch.py", 20, 51, "blocker"),
    ]
    assert not [n for n in report.notes if "build_cmd" in n or "argv" in n]
    launches = sorted((f.model or "", f.resolved) for f in facts if f.kind.value == "launch")
    assert launches == [("acme/m", True), ("acme/z", True)]


def test_a_name_bound_to_a_literal_is_its_value_and_an_unreadable_launch_is_named(tmp_path: Path) -> None:
    text = '''import subprocess
from helpers import get_cmd, cmd
MODEL = 'acme/x'
FLAG = "--swap-space"
PORT = 8000
subprocess.run(["vllm", "serve", MODEL, FLAG, "4", "--port", PORT])
subprocess.Popen(" ".join(cmd), shell=True)
subprocess.Popen(get_cmd())
'''
    report, facts = scan(tmp_path, {"launch.py": text})
    assert found(report) == [("--swap-space", "launch.py", 4, 9, "blocker")]  # at the constant
    assert not [n for n in report.notes if "MODEL" in n or "PORT" in n]
    assert [n for n in report.notes if '" ".join(cmd) at launch.py:7:18' in n]
    assert [n for n in report.notes if "get_cmd() at launch.py:8:18" in n]
    launches = [(f.location.line, f.model) for f in facts if f.kind.value == "launch" and f.resolved]
    assert launches == [(6, "acme/x")]
    assert [f.value for f in facts if f.name == "port"] == ["8000"]  # the value, never the name
    assert [(f.location.line, f.location.column) for f in facts if f.kind.value == "model"] == [(3, 10)]


SELF_ATTRS = '''import subprocess


class Server:
    def __init__(self, model="acme/m", port=8000):
        self.model = model
        self.port = port
        self.flag = "--swap-space"

    def start(self):
        subprocess.Popen(["vllm", "serve", self.model, "--port", str(self.port), self.flag, "4"])


{construct}
'''


def test_self_attributes_set_in_init_from_literals_or_literal_defaults(tmp_path: Path) -> None:
    report, facts = scan(tmp_path, {"launch.py": SELF_ATTRS.format(construct="Server().start()")})
    assert found(report) == [("--swap-space", "launch.py", 8, 22, "blocker")]  # at the literal
    assert report.notes == ()
    assert [f.model for f in facts if f.kind.value == "launch"] == ["acme/m"]
    assert [f.value for f in facts if f.name == "port"] == ["8000"]


def test_a_self_attribute_the_construction_replaces_is_named_unresolved(tmp_path: Path) -> None:
    for construct in ("", 'Server("acme/z").start()', "srv = Server(model=M)\nsrv.start()", "Server(*A).start()"):
        report, facts = scan(tmp_path, {"launch.py": SELF_ATTRS.format(construct=construct)})
        assert found(report) == [("--swap-space", "launch.py", 8, 22, "blocker")], construct
        assert [n for n in report.notes if n.startswith("unresolved: self.model at launch.py:")], construct
        assert [f.model for f in facts if f.kind.value == "launch"] == [None], construct


def test_str_split_of_a_constant_or_literal_is_its_words(tmp_path: Path) -> None:
    body = (
        'BASE = "vllm serve acme/m --port 8000"\n\n\ndef run():\n    cmd = BASE.split()\n'
        '    cmd += ["--swap-space", "4"]\n    subprocess.run(cmd)\n\n\n'
        'def two():\n    subprocess.run("vllm serve acme/m --max-num-partial-prefills 2".split())\n'
    )
    found_here, notes = _scan(tmp_path, body)
    assert found_here == {("VUC0180-001", 12), ("VUC0270-001", 17)}
    assert not [n for n in notes if n.startswith("unresolved")], notes


@pytest.mark.parametrize(
    "call",
    [
        'subprocess.Popen("vllm serve acme/m --swap-space 4 " + extra, shell=True)',
        'subprocess.run(f"vllm serve acme/m {extra} --swap-space 4", shell=True)',
        'os.system("vllm serve " + MODEL + " --swap-space 4 " + extra)',
    ],
)
def test_the_known_part_of_a_partly_known_shell_string_is_checked(tmp_path: Path, call: str) -> None:
    body = f'MODEL = "acme/m"\nextra = os.environ.get("EXTRA", "")\n{call}\n'
    found_here, notes = _scan(tmp_path, body)
    assert found_here == {("VUC0180-001", 9)}
    assert [n for n in notes if n.startswith("unresolved: extra at launch.py:9:")], notes
