"""The loaders of the tool's own inputs, driven with hostile content through the CLI: the
configuration, ``--baseline``, ``env --freeze`` and ``fleet merge`` input. The invariant: a
valid result (exit 0 or 1), or exit 2 with one line naming the file; never a traceback.
Plus the regressions the fuzz targets found, and the env-var near-miss index giving the
answers of a comparison with every name."""

from __future__ import annotations

import difflib
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from vllm_upgrade_check.cli import _register, app
from vllm_upgrade_check.errors import VucError
from vllm_upgrade_check.knowledge.known_args import known_args
from vllm_upgrade_check.knowledge.versions import parse_version
from vllm_upgrade_check.matching import surface_words
from vllm_upgrade_check.parsing.globs import GitIgnoreRules

_register()
runner = CliRunner()

_TOML_PIECES = st.sampled_from(
    ['to = "0.27.0"', "to = 3", 'fail-on = "sometimes"', "exclude = [", 'exclude = ["a", 1]', "[[ignore]]",
     'id = "VUC0170-001"', 'expires = "not a date"', "[tool.vllm-upgrade-check]", "a = " + "[" * 400,
     "]" * 400, 'rules = ["nowhere"]', "x = {a = {b = {c = 1}}}", "\x00", "é = 1", '"""', "unknown = true"]
)  # fmt: skip
_JSON_PIECES = st.sampled_from(
    ['{"schema_version": 1, "findings": [', '{"fingerprint": "a", "count": 2}', '{"count": -1}', "]}", "[" * 300,
     "]" * 300, '"x"', "null", "{", "}", ",", '{"findings": [], "environment": {}, "host": {"name": 7}}',
     '{"findings": [{"rule_id": "A", "severity": "blocker"}], "environment": {"torch": 3}}', "\n", "\xff"]
)  # fmt: skip
_FREEZE_PIECES = st.sampled_from(
    ["vllm==0.8.0", "torch==2.6.0+cu124", "-e git+https://h/r.git#egg=x", "# comment", "pkg @ https://h/p-1.0.whl",
     "not a requirement!!", "x===1", "--index-url h", "a[b]==1; python_version<'3'", "\ufeff", "==", "\x00"]
)  # fmt: skip


def _exit_ok_or_one_line(result: object, path: Path) -> None:
    """Exit 0 or 1 with a result, or a :class:`VucError` of one line naming ``path`` or a file
    beside it that it names (what
    ``main`` prints before exiting 2); nothing else escapes."""
    exc = result.exception  # type: ignore[attr-defined]
    output = result.output  # type: ignore[attr-defined]
    if isinstance(exc, VucError):
        text = str(exc)
        # the file, or one it names (a rule pack directory of the configuration)
        assert "\n" not in text and text.startswith(f"{path.parent}/"), text
        return
    assert exc is None or isinstance(exc, SystemExit), repr(exc)
    assert "Traceback" not in output, output
    assert result.exit_code in (0, 1), (result.exit_code, output)  # type: ignore[attr-defined]


def _write(tmp: Path, name: str, text: str) -> Path:
    path = tmp / name
    path.write_bytes(text.encode("utf-8", "surrogatepass"))
    return path


@settings(max_examples=40, deadline=None)
@given(pieces=st.lists(_TOML_PIECES, max_size=8))
def test_a_hostile_configuration_is_read_or_one_line(tmp_path_factory: object, pieces: list[str]) -> None:
    tmp = tmp_path_factory.mktemp("cfg")  # type: ignore[attr-defined]
    (tmp / "run.sh").write_text("vllm serve m --max-num-seqs 8\n")
    config = _write(tmp, "cfg.toml", "\n".join(pieces))
    result = runner.invoke(app, ["scan", str(tmp), "--config", str(config), "--no-cache", "--format", "json"])
    _exit_ok_or_one_line(result, config)
    if result.exception is None:
        json.loads(result.stdout)


@settings(max_examples=40, deadline=None)
@given(pieces=st.lists(_JSON_PIECES, max_size=10))
def test_a_hostile_baseline_is_read_or_one_line(tmp_path_factory: object, pieces: list[str]) -> None:
    tmp = tmp_path_factory.mktemp("base")  # type: ignore[attr-defined]
    (tmp / "run.sh").write_text("vllm serve m --disable-log-requests\n")
    baseline = _write(tmp, "baseline.json", "".join(pieces))
    result = runner.invoke(app, ["scan", str(tmp), "--baseline", str(baseline), "--no-cache", "--to", "0.33.0"])
    _exit_ok_or_one_line(result, baseline)


@settings(max_examples=40, deadline=None)
@given(pieces=st.lists(_FREEZE_PIECES, max_size=8))
def test_a_hostile_freeze_file_is_read_or_one_line(tmp_path_factory: object, pieces: list[str]) -> None:
    tmp = tmp_path_factory.mktemp("freeze")  # type: ignore[attr-defined]
    freeze = _write(tmp, "freeze.txt", "\n".join(pieces))
    result = runner.invoke(app, ["env", "--freeze", str(freeze), "--no-host", "--to", "0.33.0", "--format", "json"])
    _exit_ok_or_one_line(result, freeze)
    if result.exception is None:
        assert "environment" in json.loads(result.stdout)


@settings(max_examples=40, deadline=None)
@given(pieces=st.lists(_JSON_PIECES, max_size=10))
def test_a_hostile_fleet_input_is_merged_or_one_line(tmp_path_factory: object, pieces: list[str]) -> None:
    tmp = tmp_path_factory.mktemp("fleet")  # type: ignore[attr-defined]
    log = _write(tmp, "host.log", "".join(pieces))
    result = runner.invoke(app, ["fleet", "merge", str(log), "-f", "json"])
    _exit_ok_or_one_line(result, log)
    if result.exception is None:
        assert isinstance(json.loads(result.stdout)["hosts"], list)


def test_an_empty_character_range_in_a_gitignore_is_a_rejected_pattern() -> None:
    rules = GitIgnoreRules(["*.log", "[z-a]", "!keep.log", "[b-a]x"])
    assert [(n, line) for n, line, _why in rules.rejected] == [(2, "[z-a]"), (4, "[b-a]x")]
    assert rules.matches("a.log") and not rules.matches("keep.log")


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_env_var_near_misses_are_those_of_a_comparison_with_every_name(data: st.DataObject) -> None:
    known = known_args()
    target = parse_version("0.33.0")
    names = sorted(n for n, (first, _l, _g) in known.env_vars.items() if first <= target)
    name = data.draw(st.sampled_from(names))
    edit = data.draw(st.sampled_from(["drop", "double", "swap", "append", "prefix"]))
    at = data.draw(st.integers(min_value=5, max_value=max(5, len(name) - 2)))
    typo = {
        "drop": name[:at] + name[at + 1 :],
        "double": name[:at] + name[at] + name[at:],
        "swap": name[:at] + name[at + 1 : at + 2] + name[at : at + 1] + name[at + 2 :],
        "append": name + "_X",
        "prefix": "VLLM_X" + name[5:],
    }[edit]
    if typo in known.env_vars:
        return
    gone = surface_words.env_gone(known, target)
    every = [n for n in names if n not in gone]
    expected = difflib.get_close_matches(typo, every, n=1, cutoff=surface_words.ENV_CUTOFF)
    assert surface_words.closest_env(typo, target, known) == (expected[0] if expected else None)


@pytest.mark.parametrize("name", ["pyproject.toml", ".vllm-upgrade-check.toml"])
@pytest.mark.parametrize("text", ['tool="1"', "tool = 3\n", "tool = [1, 2]\n"])
def test_a_tool_key_that_is_no_table_is_a_one_line_error(tmp_path: Path, name: str, text: str) -> None:
    from vllm_upgrade_check.cli.config import load_config
    from vllm_upgrade_check.errors import UsageError

    (tmp_path / name).write_text(text)
    with pytest.raises(UsageError) as caught:
        load_config(tmp_path / name)
    assert "tool: must be a table" in str(caught.value) and "\n" not in str(caught.value)
