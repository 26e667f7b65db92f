"""The pydantic-free parameter coercion (cli/lean_params.py) answers as typer's own does.

Differential: one small typer application, built twice (typer's group and
:class:`LeanGroup`), run on the same command lines; outputs and exit codes must match.
"""

from __future__ import annotations

import os
import subprocess
import sys
from enum import Enum
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from vllm_upgrade_check.cli.lean_params import LeanGroup, LeanRuntimeParam

runner = CliRunner()


class Colour(str, Enum):
    red = "red"
    green = "green"


def _app(cls: type | None) -> typer.Typer:
    app = typer.Typer(cls=cls) if cls is not None else typer.Typer()

    @app.command()
    def show(
        paths: list[Path] = typer.Argument(None),
        name: str = typer.Option("x", "--name"),
        count: int = typer.Option(0, "--count", min=0, max=64),
        times: int = typer.Option(1, "--times"),
        colour: Colour = typer.Option(Colour.red, "--colour", case_sensitive=False),
        tags: list[str] = typer.Option([], "--tag"),
        config: Path | None = typer.Option(None, "--config", exists=True, dir_okay=False),
        where: Path | None = typer.Option(None, "--where", file_okay=False),
        flag: bool = typer.Option(False, "--flag/--no-flag"),
        seen: bool = typer.Option(False, "--seen", envvar="LEAN_TEST_SEEN"),
    ) -> None:
        values = [paths, name, count, times, colour, tags, config, where, flag, seen]
        typer.echo(repr([(type(v).__name__, v) for v in values]))

    @app.command()
    def other() -> None:
        typer.echo("other")

    return app


def _lines(tmp_path: Path) -> list[list[str]]:
    afile = tmp_path / "a.yaml"
    afile.write_text("x: 1\n")
    adir = tmp_path / "d"
    adir.mkdir()
    return [
        ["show"],
        ["show", str(tmp_path), str(afile), "relative/one"],
        ["show", "--name", "vllm serve", "--tag", "a", "--tag", "b=c"],
        ["show", "--count", "4", "--times", "-3"],
        ["show", "--count", "04"],
        ["show", "--count", "65"],
        ["show", "--count", "-1"],
        ["show", "--count", "4.0"],
        ["show", "--count", " 4"],
        ["show", "--count", "٣"],  # a non-ASCII digit: typer's own reading decides
        ["show", "--times", "nope"],
        ["show", "--colour", "GREEN"],
        ["show", "--colour", "blue"],
        ["show", "--config", str(afile)],
        ["show", "--config", str(tmp_path / "missing.yaml")],
        ["show", "--config", str(adir)],
        ["show", "--where", str(afile)],
        ["show", "--where", str(adir)],
        ["show", "--flag", "--seen"],
        ["show", "--no-flag"],
        ["other"],
        ["--help"],
        ["show", "--help"],
    ]


def test_lean_coercion_answers_as_typer(tmp_path: Path) -> None:
    plain, lean = _app(None), _app(LeanGroup)
    for line in _lines(tmp_path):
        expected = runner.invoke(plain, line)
        got = runner.invoke(lean, line)
        if "Value error, " in expected.output:
            # the one difference: a refused choice is named without pydantic's "Value error, " prefix
            assert got.exit_code == expected.exit_code and "Value error" not in got.output, line
            continue
        assert (got.exit_code, got.output) == (expected.exit_code, expected.output), line


def test_a_refused_choice_names_the_choices_plainly() -> None:
    got = runner.invoke(_app(LeanGroup), ["show", "--colour", "blue"])
    assert got.exit_code == 2
    assert "'blue' is not one of 'red', 'green'" in got.output
    assert "Value error" not in got.output


def test_lean_coercion_of_environment_values(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for value in ("1", "yes", "", "maybe"):
        monkeypatch.setenv("LEAN_TEST_SEEN", value)
        expected = runner.invoke(_app(None), ["show"])
        got = runner.invoke(_app(LeanGroup), ["show"])
        assert (got.exit_code, got.output) == (expected.exit_code, expected.output), value


def test_commands_get_lean_coercion() -> None:
    from typer.main import get_command

    from vllm_upgrade_check.cli import _register, app

    _register(None)
    group = get_command(app)
    ctx = group.make_context("vllm-upgrade-check", ["scan"], resilient_parsing=True)
    scan = group.get_command(ctx, "scan")
    assert scan is not None
    kinds = {p.name: type(p._runtime_param) for p in scan.get_params(ctx)}  # type: ignore[attr-defined]
    assert kinds["paths"] is LeanRuntimeParam and kinds["jobs"] is LeanRuntimeParam, kinds


def test_empty_scan_does_not_build_pydantic_adapters(tmp_path: Path) -> None:
    code = (
        "import sys; from vllm_upgrade_check.cli import main\n"
        f"sys.argv = ['vllm-upgrade-check', 'scan', {str(tmp_path)!r}, '--no-cache', '-j', '1', '--exclude', 'x']\n"
        "try:\n    main()\nexcept SystemExit as exc:\n    code = exc.code\n"
        "print(code, 'typer._adapters' in sys.modules)\n"
    )
    env = {**os.environ, "NO_COLOR": "1"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False)
    assert done.stdout.splitlines()[-1] == "0 False", done.stdout + done.stderr
