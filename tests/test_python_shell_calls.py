"""Python launches through ``os.popen``, ``subprocess.getoutput``/``getstatusoutput`` (a shell
command line) and through the keyword that names a call's command (``subprocess.run(args=[...])``,
``os.popen(cmd=...)``, ``os.execvp(file, args=...)``): each flag checked at its own line and
column, and ``fix`` removing it where the literal is written as its value (else a person does)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from vllm_upgrade_check.cli import _register, app
from vllm_upgrade_check.engine import run_scan
from vllm_upgrade_check.model.facts import Fact, FactKind
from vllm_upgrade_check.model.options import ScanOptions

_register()
runner = CliRunner()
HEAD = "import asyncio\nimport os\nimport subprocess\n\n"
SWAP = "VUC0180-001"  # --swap-space, removed in 0.18.0


def _found(root: Path) -> tuple[list[tuple[int, int]], list[str]]:
    report = run_scan(ScanOptions.of(paths=[root], from_version="0.20.0", to_version="0.33.0"))
    at = sorted((f.location.line, f.location.column or 0) for f in report.findings if f.rule.id == SWAP)
    return at, list(report.notes)


def _fix(root: Path) -> tuple[int, str]:
    result = runner.invoke(app, ["fix", str(root), "--from", "0.20.0", "--to", "0.33.0"])
    return result.exit_code, result.output


def _column(line: str, word: str = "--swap-space") -> int:
    return line.index(word) + 1


@pytest.mark.parametrize(
    "call",
    [
        'os.popen("vllm serve acme/m --swap-space 4 --port 8000")',
        'out = subprocess.getoutput("vllm serve acme/m --swap-space 4")',
        "status, out = subprocess.getstatusoutput('vllm serve acme/m --swap-space 4 --seed 1')",
        'subprocess.getoutput(cmd="vllm serve acme/m --swap-space 4", encoding="utf-8")',
        'os.popen(mode="r", cmd="vllm serve acme/m --swap-space=4 --port 1")',
        'os.system(command="vllm serve acme/m --swap-space 4 && echo up")',
        'note = "répertoire ünïcode"; os.popen("vllm serve acme/m --swap-space 4")',
        "os.popen(\"vllm serve acme/m --swap-space '4' --port 2\")",
        'subprocess.run(args="vllm serve acme/m --swap-space 4", shell=True)',
        'asyncio.run(asyncio.create_subprocess_shell(cmd="vllm serve acme/m --swap-space 4"))',
    ],
)
def test_a_shell_string_call_is_a_launch_checked_and_fixed_in_place(tmp_path: Path, call: str) -> None:
    path = tmp_path / "launch.py"
    path.write_text(HEAD + call + "\n", encoding="utf-8")
    at, notes = _found(tmp_path)
    assert at == [(5, _column(call))], notes
    code, out = _fix(tmp_path)
    assert code == 0, out
    fixed = path.read_text(encoding="utf-8").splitlines()[4]
    for written in ("--swap-space 4 ", "--swap-space=4 ", "--swap-space '4' ", " --swap-space 4"):
        if written in call:
            assert fixed == call.replace(written, "", 1), fixed
            break
    else:  # pragma: no cover - every case writes one of them
        raise AssertionError(call)
    assert _found(tmp_path)[0] == []


@pytest.mark.parametrize(
    ("body", "line"),
    [
        ('CMD = "vllm serve acme/m --swap-space 4"\nos.popen(CMD)\n', 5),  # at the literal CMD is bound to
        ('MODEL = "acme/m"\nsubprocess.getoutput(f"vllm serve {MODEL} --swap-space 4")\n', 6),
        ('MODEL = "acme/m"\nsubprocess.getstatusoutput("vllm serve " + MODEL + " --swap-space 4")\n', 6),
        ('os.popen("vllm serve acme/m --swap-space 4\\n")\n', 5),
        ('os.popen("vllm serve acme/m " "--swap-space 4")\n', 5),
    ],
)
def test_a_shell_string_the_fix_cannot_place_is_left_to_a_person(tmp_path: Path, body: str, line: int) -> None:
    path = tmp_path / "launch.py"
    path.write_text(HEAD + body, encoding="utf-8")
    at, notes = _found(tmp_path)
    assert [a[0] for a in at] == [line], notes
    assert not [n for n in notes if n.startswith("unresolved")], notes
    code, out = _fix(tmp_path)
    assert code == 1 and "Needs a person" in out and "--swap-space" in out, out
    assert path.read_text(encoding="utf-8") == HEAD + body


ARGS_FORMS = """subprocess.run(
    args=[
        "vllm",
        "serve",
        "acme/m",
        "--swap-space",
        "4",
    ],
    check=True,
)
subprocess.check_output(text=True, args=("vllm", "serve", "acme/m", "--swap-space", "4"))
note = "é"; subprocess.call(args=["vllm", "serve", "acme/m", "--swap-space", "4"])
os.execvp("vllm", args=["vllm", "serve", "acme/m", "--swap-space", "4"])
os.execve("/usr/bin/vllm", argv=["vllm", "serve", "acme/m", "--swap-space", "4"], env={})
os.spawnvpe(os.P_WAIT, "vllm", args=["vllm", "serve", "acme/m", "--swap-space", "4"], env=os.environ)
"""


def test_the_args_keyword_is_the_argv_each_flag_at_its_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "launch.py"
    path.write_text(HEAD + ARGS_FORMS, encoding="utf-8")
    lines = ARGS_FORMS.splitlines()
    expected = [(5 + i, _column(t, '"--swap-space"') + 1) for i, t in enumerate(lines) if "--swap-space" in t]
    at, notes = _found(tmp_path)
    assert at == expected and len(at) == 6, (at, notes)
    code, out = _fix(tmp_path)
    assert code == 0, out
    fixed = path.read_text(encoding="utf-8")
    assert "--swap-space" not in fixed and '"4"' not in fixed
    assert 'args=("vllm", "serve", "acme/m"))' in fixed and 'note = "é"; subprocess.call(args=["vllm", "serve", "acme/m"])' in fixed
    assert '    args=[\n        "vllm",\n        "serve",\n        "acme/m",\n    ],\n' in fixed
    compile(fixed, "launch.py", "exec")  # still Python


@pytest.mark.parametrize(
    "body",
    [
        'ARGV = ["vllm", "serve", "acme/m", "--swap-space", "4"]\nsubprocess.Popen(args=ARGV)\n',
        'ARGV = ["vllm", "serve", "acme/m", "--swap-space", "4"]\nasyncio.run(asyncio.create_subprocess_exec(*ARGV))\n',
        'ARGV = ["vllm", "serve", "acme/m", "--swap-space", "4"]\nos.execvp(file="vllm", args=ARGV)\n',
    ],
)
def test_an_argv_named_by_a_keyword_or_spread_is_read_at_its_list(tmp_path: Path, body: str) -> None:
    (tmp_path / "launch.py").write_text(HEAD + body, encoding="utf-8")
    assert _found(tmp_path)[0] == [(5, 37)]
    code, out = _fix(tmp_path)
    assert code == 0, out
    assert (tmp_path / "launch.py").read_text().splitlines()[4] == 'ARGV = ["vllm", "serve", "acme/m"]'


def test_a_builder_that_runs_os_popen_or_returns_an_argv_is_read_at_each_call(tmp_path: Path) -> None:
    body = (
        "import os\n\n\ndef start(model, swap=4):\n"
        '    return os.popen(f"vllm serve {model} --swap-space {swap}")\n\n\n'
        'def argv(model):\n    return ["vllm", "serve", model, "--swap-space", "4"]\n\n\n'
        'start("acme/m")\nos.execvp("vllm", args=argv("acme/x"))\n'
    )
    (tmp_path / "launch.py").write_text(body)  # no `subprocess` or `system` in the file
    at, notes = _found(tmp_path)
    assert at == [(5, 42), (9, 38)], notes  # in the f-string, in the list
    assert not [n for n in notes if n.startswith("unresolved")], notes


@pytest.mark.parametrize(
    "call",
    [
        'subprocess.getoutput("python train.py --swap-space 4")',
        'os.popen(mode="r")',
        'subprocess.run(check=True)',
        'os.execv("/usr/bin/vllm", argv=["vllm", "serve", "m", "--swap-space", "4"])',  # execv(path, argv, /)
        'subprocess.run(argv=["vllm", "serve", "m", "--swap-space", "4"])',  # no such keyword
    ],
)
def test_no_command_or_another_program_is_no_launch(tmp_path: Path, call: str) -> None:
    (tmp_path / "launch.py").write_text(HEAD + "# vllm\n" + call + "\n")
    assert _found(tmp_path)[0] == []


@pytest.mark.parametrize(
    ("body", "fixed"),
    [
        ('x = "é"; os.popen("vllm serve m\\t--swap-space 4")\n', None),  # an escape before it
        ('x = "é"; os.popen("vllm serve \\u00e9 --swap-space 4")\n', None),
        ('x = "日本"; subprocess.run(shlex.split("vllm serve m " "--swap-space 4"))\n', None),
        ('os.popen(\n    "vllm serve m "\n    # a comment\n    "--swap-space 4 "\n    "--port 1"\n)\n', None),
        ('os.popen("""vllm serve m \\\n  --swap-space 4""")\n', None),  # a continuation inside
        ("os.popen(r\"vllm serve m --swap-space 4 --port 1\")\n", 'os.popen(r"vllm serve m --port 1")\n'),
        ("x = 'ü'; os.popen(u'vllm serve m --swap-space 4')\n", "x = 'ü'; os.popen(u'vllm serve m')\n"),
        ("os.popen('''vllm serve mé --swap-space 4''')\n", "os.popen('''vllm serve mé''')\n"),
    ],
)
def test_a_flag_in_a_literal_with_escapes_prefixes_or_pieces_is_at_its_place(
    tmp_path: Path, body: str, fixed: str | None
) -> None:
    text = HEAD.replace("import os\n", "import os\nimport shlex\n") + body
    (tmp_path / "launch.py").write_text(text, encoding="utf-8")
    before = text[: text.index("--swap-space")]
    place = (before.count("\n") + 1, len(before) - (before.rfind("\n") + 1) + 1)
    at, notes = _found(tmp_path)
    assert at == [place], notes
    code, out = _fix(tmp_path)
    if fixed is None:  # placed, with no span: a person removes it
        assert code == 1 and "Needs a person" in out, out
        assert (tmp_path / "launch.py").read_text(encoding="utf-8") == text
    else:
        assert code == 0, out
        assert (tmp_path / "launch.py").read_text(encoding="utf-8") == text.replace(body, fixed)


def test_the_calls_imported_under_other_names_are_launches(tmp_path: Path) -> None:
    body = (
        "# vllm\nimport subprocess as sp\nfrom subprocess import getoutput, run as launch\n"
        "from os import popen, environ\nfrom asyncio import create_subprocess_exec as spawn\n"
        "from shlex import split\n"
        'sp.run(["vllm", "serve", "m", "--swap-space", "4"])\n'
        'getoutput("vllm serve m --swap-space 4")\n'
        'launch(args=split("vllm serve m --swap-space 4"))\n'
        'popen("vllm serve m --swap-space 4")\n'
        'spawn("vllm", "serve", "m", "--swap-space", "4")\n'
        'environ["VLLM_USE_V1"] = "1"\n'
    )
    (tmp_path / "launch.py").write_text(body)
    lines = body.splitlines()
    expected = [(i + 1, t.index("--swap-space") + 1) for i, t in enumerate(lines) if "--swap-space" in t]
    at, notes = _found(tmp_path)
    assert at == expected and len(at) == 5, (at, notes)
    report = run_scan(ScanOptions.of(paths=[tmp_path], from_version="0.20.0", to_version="0.33.0"))
    assert [f.location.line for f in report.findings if "VLLM_USE_V1" in f.rule.message] == [12]
    code, out = _fix(tmp_path)
    left = [t for t in (tmp_path / "launch.py").read_text().splitlines() if "--swap-space" in t]
    assert left == [lines[8]] and "launch.py:9:33" in out, out  # shlex.split's words: a person's


def test_a_vllm_name_wins_over_an_imported_command_name(tmp_path: Path) -> None:
    body = 'from os import system\nfrom vllm import LLM as system\nsystem("vllm serve m --swap-space 4")\n'
    (tmp_path / "launch.py").write_text(body)
    assert _found(tmp_path)[0] == []


@pytest.mark.parametrize(
    ("body", "marker"),
    [
        ('BASE = "vllm serve m"\nFLAGS = " --seed 1 --swap-space 4"  # ü\nos.popen(BASE + FLAGS)\n', 'FLAGS = "'),
        ('FLAGS = "--swap-space 4"\nsubprocess.getoutput(f"vllm serve m {FLAGS}")\n', 'FLAGS = "'),
        ('x = "é"; subprocess.getstatusoutput("vllm serve " + "m " + \'--swap-space 4\')\n', "x = "),
        ('CMD = ("vllm serve m "\n       "--swap-space 4")\nos.popen(CMD)\n', "CMD = "),
        ('def start(flags):\n    return os.popen("vllm serve m " + flags)\n\n\nstart("--swap-space 4")\n', 'start("'),
        ('M = "m"\nx = "é"; subprocess.run(f"vllm serve {M} --swap-space 4", shell=True)\n', "x = "),
        ('M = "m"\nos.popen(f"""echo {{}} && vllm serve {M} \\\n  --swap-space 4""")\n', "os.popen"),
        ('M = "m"\ncmd = f"vllm serve {M} --port 1"\ncmd += f" --seed 1 --swap-space 4"\nos.popen(cmd)\n', "cmd +="),
    ],
)
def test_a_flag_of_a_built_shell_string_is_in_the_literal_it_comes_from(tmp_path: Path, body: str, marker: str) -> None:
    text = HEAD + body
    (tmp_path / "launch.py").write_text(text, encoding="utf-8")
    if marker == 'start("':  # a parameter: at the argument the call passes
        before = text[: text.index(marker) + len(marker)]
    else:
        before = text[: text.index("--swap-space", text.index(marker))]
    place = (before.count("\n") + 1, len(before) - (before.rfind("\n") + 1) + 1)
    at, notes = _found(tmp_path)
    assert at == [place], notes
    assert not [n for n in notes if n.startswith("unresolved")], notes
    code, out = _fix(tmp_path)
    assert code == 1 and "Needs a person" in out, out  # a constant or a part: a person's to change
    assert (tmp_path / "launch.py").read_text(encoding="utf-8") == text


VARIABLES = '''MODEL = "acme/m"


def run(extra):
    cmd = "vllm serve " + MODEL + " --swap-space 4 --port 1"
    os.popen(cmd)
    more = "vllm serve m"
    more += " --swap-space 4 --port 2"
    subprocess.getoutput(more)
    line = "vllm serve m --swap-space 4 " + extra
    subprocess.getstatusoutput(line)
    loop = "vllm serve m --port 3"
    for _ in range(2):
        loop += " --swap-space 4"
    os.popen(loop)
    shown = "vllm serve m"
    shown *= 2
    os.popen(shown)
'''


def test_a_variable_holding_a_built_shell_string_is_read_with_its_later_additions(tmp_path: Path) -> None:
    (tmp_path / "launch.py").write_text(HEAD + VARIABLES)
    lines = (HEAD + VARIABLES).splitlines()
    expected = [(n, lines[n - 1].index("--swap-space") + 1) for n in (9, 12, 14)]
    at, notes = _found(tmp_path)
    assert at == expected, notes
    unresolved = sorted(n.split(" at ")[0] for n in notes if n.startswith("unresolved"))
    assert unresolved == ["unresolved: extra", "unresolved: loop", "unresolved: shown"], notes


def test_each_new_form_is_one_launch_with_its_model(tmp_path: Path) -> None:
    body = (
        'CMD = "vllm serve acme/a --port 1"\n'
        'os.popen("vllm serve acme/b --port 2")\n'
        'subprocess.getoutput(CMD)\n'
        'subprocess.getstatusoutput(f"vllm serve {\'acme/c\'} --port 3")\n'
        'subprocess.run(args=["vllm", "serve", "acme/d", "--port", "4"])\n'
        'os.execvp("vllm", args=["vllm", "serve", "acme/e"])\n'
    )
    (tmp_path / "launch.py").write_text(HEAD + body)
    facts: list[Fact] = []
    run_scan(ScanOptions.of(paths=[tmp_path], from_version="0.20.0", to_version="0.33.0"), facts_out=facts)
    launches = sorted((f.location.line, f.model) for f in facts if f.kind == FactKind.LAUNCH)
    assert launches == [(5, "acme/a"), (6, "acme/b"), (8, "acme/c"), (9, "acme/d"), (10, "acme/e")]  # CMD: at its literal
    assert all(f.resolved for f in facts if f.kind == FactKind.LAUNCH)
