"""``vllm`` subcommands with flags of their own: those are no engine flags, the rest are."""

from __future__ import annotations

import pytest

from conftest import args_of, kinds, scan_text
from vllm_upgrade_check.knowledge.subcommands import find_subcommand, subcommand
from vllm_upgrade_check.model.facts import FactKind
from vllm_upgrade_check.sources.scanners.shell import ShellScanner


def _args(text: str) -> list[tuple[str, str | None, int | None]]:
    items = scan_text(ShellScanner(), "run.sh", text)
    return [(n, v, line) for n, v, line, _c in args_of(items)]


@pytest.mark.parametrize(
    ("line", "engine"),
    [
        (
            "vllm bench throughput --model m --dataset-name random --num-prompts 100 --random-input-len 5 --swap-space 4",
            [("model", "m"), ("swap_space", "4")],
        ),
        ("vllm bench throughput --num-prompts=10 --dataset_name sharegpt --swap-space 4", [("swap_space", "4")]),
        ("vllm bench latency --batch-size 8 --use-beam-search --input-len 3 --swap-space 4", [("swap_space", "4")]),
        ("vllm run-batch -i in.jsonl -o out.jsonl --url 0.0.0.0 --enable-metrics --swap-space 4", [("swap_space", "4")]),
        (
            "python3 -m vllm.entrypoints.openai.run_batch --input-file a -o b --model m --bogus 1",
            [("model", "m"), ("bogus", "1")],
        ),
        ("python -m vllm.entrypoints.cli.main bench latency --num-iters 3 --bogus", [("bogus", None)]),
        ("vllm bench startup --model m --num-iters-cold 3 --num-iters-warm 2 --output-json o.json", [("model", "m")]),
    ],
)
def test_own_flags_are_not_engine_flags(line: str, engine: list[tuple[str, str | None]]) -> None:
    assert [(n, v) for n, v, _line in _args(line + "\n")] == engine


def test_a_store_true_own_flag_leaves_the_next_word() -> None:
    # --use-beam-search takes no value: the flag after it is still read
    assert _args("vllm bench latency --use-beam-search --max-model-len 9\n") == [("max_model_len", "9", 1)]


@pytest.mark.parametrize(
    "line",
    [
        "vllm bench serve --model m --dataset-name random --num-prompts 3 --swap-space 4",
        "vllm chat --url http://x/v1 --model-name m --swap-space 4",
        "vllm complete --url http://x/v1 --quick hi --swap-space 4",
    ],
)
def test_http_clients_are_no_launches(line: str) -> None:
    items = scan_text(ShellScanner(), "run.sh", line + "\n")
    assert kinds(items, FactKind.LAUNCH) == [] and args_of(items) == []


def test_the_subcommand_table() -> None:
    throughput = find_subcommand(["bench", "throughput", "--model", "m"])
    assert throughput is not None and throughput.engine_args
    assert throughput.own_flag("--num_prompts") is True and throughput.own_flag("--max-model-len") is None
    assert throughput.own_flag("--sonnet-prefix-len") is True  # a dataset group's flag
    serve = find_subcommand(["bench", "serve"])
    assert serve is not None and not serve.engine_args
    batch = subcommand(["run-batch"])
    assert batch is not None and batch.own_flag("-i") is True and batch.own_flag("--enable-metrics") is False
