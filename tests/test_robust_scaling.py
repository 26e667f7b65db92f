"""Costs that used to grow with the square of the input: byte columns on a long non-ASCII
line, ``--*-config`` JSON with many keys, shell arrays of many elements. Each is measured at
n and 4n in one run (a ratio, not a time)."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from scaling import LINEAR, time_ratio
from vllm_upgrade_check.parsing.shell import parse_shell
from vllm_upgrade_check.parsing.shell_text import identity_locator as _identity_locator
from vllm_upgrade_check.parsing.textpos import ByteColumns
from vllm_upgrade_check.parsing.words import Token
from vllm_upgrade_check.sources.scanners.arg_facts import json_subkey_facts
from vllm_upgrade_check.sources.scanners.base import SourceFile
from vllm_upgrade_check.sources.scanners.shell import ShellScanner


@given(st.text(alphabet=st.sampled_from("ab \té€😀ß\u0301"), max_size=40))
def test_byte_columns_count_as_decoding_the_prefix(text: str) -> None:
    data = text.encode("utf-8")
    columns = ByteColumns(data)
    assert [columns.chars(c) for c in range(len(data) + 1)] == [
        len(data[:c].decode("utf-8", "replace")) for c in range(len(data) + 1)
    ]
    assert ByteColumns(text).chars(len(data)) == len(text)


def test_long_non_ascii_line_is_linear() -> None:
    def make(n: int):
        text = "vllm serve é " + " ".join(f"--max-num-seqs {i:06}" for i in range(n)) + "\n"
        locate = _identity_locator(text.encode("utf-8"))
        columns = [len(b"vllm serve \xc3\xa9 ") + 22 * i for i in range(n)]
        return lambda: [locate(0, c) for c in columns * 10]

    assert time_ratio(make, 2000, repeat=3) < LINEAR
    assert parse_shell("vllm serve é --max-num-seqs 8\n").commands  # the locator the parser uses


def test_columns_on_a_long_non_ascii_line_are_right() -> None:
    text = "vllm serve é --max-num-seqs 8 --gpu-memory-utilization 0.9 ü --enforce-eager\n"
    facts = list(ShellScanner().scan(SourceFile("run.sh", text)))
    where = {f.raw: f.location.column for f in facts if f.raw.startswith("--")}
    assert where == {flag: text.index(flag) + 1 for flag in where} and len(where) == 3


def test_config_json_with_many_keys_is_linear() -> None:
    def make(n: int):
        value = json.dumps({f"k{i}": i for i in range(n)}, indent=1)
        token = Token(value, 3, 5, True, "'" + value + "'")
        return lambda: json_subkey_facts("compilation_config", "--compilation-config", value, token, "a.sh", "shell", "cli")

    assert time_ratio(make, 2000, repeat=3) < LINEAR


def test_config_json_key_positions() -> None:
    value = '{"level": 3,\n "x": {"level": 1},\n  "cudagraph_sizes": [1]}'
    token = Token(value, 3, 5, True, "'" + value + "'")
    facts = json_subkey_facts("compilation_config", "--compilation-config", value, token, "a.sh", "shell", "cli")
    assert [(f.name, f.location.line, f.location.column) for f in facts] == [
        ("compilation_config.level", 3, 7),
        ("compilation_config.x", 4, 2),
        ("compilation_config.cudagraph_sizes", 5, 3),
    ]
    deep = '{"a": ' + "[" * 100_000 + "]" * 100_000 + "}"
    assert json_subkey_facts("c", "--c", deep, Token(deep, 1, 1), "a.sh", "shell", "cli") == []


def test_shell_array_of_many_elements_is_linear() -> None:
    def make(n: int):
        body = "\n".join(f"  --max-num-seqs {i}  # é" for i in range(n))
        text = f"ARGS=(\n{body}\n)\nvllm serve m \"${{ARGS[@]}}\"\n"
        return lambda: parse_shell(text)

    assert time_ratio(make, 1000, repeat=3) < LINEAR
