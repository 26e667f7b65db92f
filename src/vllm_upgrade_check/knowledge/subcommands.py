"""The ``vllm`` subcommands: which take engine args, and the flags each adds of its own.

``vllm serve`` parses engine args and nothing but the server's; ``vllm run-batch`` and
``vllm bench throughput|latency|startup|mm-processor`` parse engine args *and* flags of their
own (``-i``/``-o``, ``--num-prompts``, ``--dataset-name`` ...), which are no engine flags and
must not be checked as such; ``vllm bench serve``, ``vllm chat`` and ``vllm complete`` are
HTTP clients that take no engine args at all, so their words are never a vLLM launch.

Sources (vLLM's repository, the ``add_cli_args`` / ``make_arg_parser`` of each command):

- ``vllm/entrypoints/openai/run_batch.py`` ``make_arg_parser``: ``-i/--input-file``,
  ``-o/--output-file``, ``--output-tmp-dir``, ``--response-role``, ``--max-log-len``,
  ``--enable-metrics``, ``--url``, ``--port``, ``--enable-prompt-tokens-details``,
  ``--enable-force-include-usage``, then ``AsyncEngineArgs.add_cli_args``;
- ``vllm/benchmarks/throughput.py`` ``add_cli_args`` (``--backend``, ``--dataset-name``,
  ``--dataset``, ``--dataset-path``, ``--input-len``, ``--output-len``, ``--n``,
  ``--num-prompts``, ``--hf-max-batch-size``, ``--output-json``, ``--async-engine``,
  ``--disable-frontend-multiprocessing``, ``--disable-detokenize``, ``--lora-path``,
  ``--prefix-len``, ``--random-range-ratio``, ``--hf-subset``, ``--hf-split``,
  ``--profile``, ``--prefix-repetition-*``), then ``AsyncEngineArgs.add_cli_args``;
- ``vllm/benchmarks/latency.py`` ``add_cli_args`` (``--input-len``, ``--output-len``,
  ``--batch-size``, ``--n``, ``--use-beam-search``, ``--num-iters-warmup``,
  ``--num-iters``, ``--profile``, ``--output-json``, ``--disable-detokenize``), then
  ``EngineArgs.add_cli_args``;
- ``vllm/benchmarks/startup.py`` ``add_cli_args`` (``--num-iters-cold``,
  ``--num-iters-warmup``, ``--num-iters-warm``, ``--output-json``; ``--per-phase`` in later
  releases), then ``EngineArgs.add_cli_args``;
- ``vllm/benchmarks/datasets.py`` ``add_dataset_parser`` (the dataset flags the benchmarks
  share: ``--seed``, ``--num-prompts``, ``--dataset-name``, ``--dataset-path``,
  ``--no-stream``, ``--no-oversample``, ``--skip-chat-template``, ``--enable-multimodal-chat``,
  ``--disable-shuffle`` and the per-dataset groups ``--custom-*``, ``--spec-bench-*``,
  ``--sonnet-*``, ``--sharegpt-*``, ``--blazedit-*``, ``--asr-*``, ``--random-*``,
  ``--hf-*``, ``--prefix-repetition-*``).

The flags are the union over the releases read: a flag listed here is some release's flag
of that subcommand, never an engine flag, whichever release the launch runs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Subcommand:
    """One ``vllm`` subcommand.

    Attributes:
        words: the words after ``vllm`` (``("bench", "throughput")``).
        engine_args: whether its parser adds ``EngineArgs``/``AsyncEngineArgs`` (then the
            launch's other flags are engine flags and are checked).
        positional_model: whether its first positional is the model (``vllm serve``).
        own: its own flags (long and short, as written) -> whether each takes a value word.
        own_prefixes: prefixes of its own flag families (``--random-``: the random dataset's
            flags), each taking a value unless listed in ``own`` as not.
    """

    words: tuple[str, ...]
    engine_args: bool
    positional_model: bool = False
    own: Mapping[str, bool] = field(default_factory=dict)
    own_prefixes: tuple[str, ...] = ()

    def own_flag(self, flag: str) -> bool | None:
        """Whether ``flag`` (``--num-prompts``, ``-i``; written with ``_`` or ``-``) is one
        of this subcommand's own flags: ``True``/``False`` for whether it takes a value
        word, ``None`` when it is not one of them."""
        dashed = flag if not flag.startswith("--") else "--" + flag[2:].replace("_", "-")
        if dashed in self.own:
            return self.own[dashed]
        if dashed.startswith(self.own_prefixes):
            return True
        return None


def _flags(values: str, switches: str = "") -> dict[str, bool]:
    """``{flag: takes a value}`` from a list of value flags and one of ``store_true`` ones."""
    return {**dict.fromkeys(values.split(), True), **dict.fromkeys(switches.split(), False)}


_DATASET = _flags(
    "--seed --num-prompts --dataset-name --dataset-path",
    "--no-stream --no-oversample --skip-chat-template --enable-multimodal-chat --disable-shuffle --no-reranker",
)
_DATASET_PREFIXES = (
    "--custom-",
    "--spec-bench-",
    "--sonnet-",
    "--sharegpt-",
    "--blazedit-",
    "--asr-",
    "--random-",
    "--hf-",
    "--prefix-repetition-",
)

_THROUGHPUT = _flags(
    """--backend --dataset-name --dataset --dataset-path --input-len --output-len --n
    --num-prompts --hf-max-batch-size --output-json --lora-path --prefix-len
    --random-range-ratio --hf-subset --hf-split""",
    "--async-engine --disable-frontend-multiprocessing --disable-detokenize --profile",
)
_LATENCY = _flags(
    "--input-len --output-len --batch-size --n --num-iters-warmup --num-iters --output-json",
    "--use-beam-search --profile --disable-detokenize",
)
_STARTUP = _flags("--num-iters-cold --num-iters-warmup --num-iters-warm --output-json", "--per-phase")
_RUN_BATCH = _flags(
    "-i --input-file -o --output-file --output-tmp-dir --response-role --max-log-len --url --port",
    "--enable-metrics --enable-prompt-tokens-details --enable-force-include-usage",
)

SUBCOMMANDS: tuple[Subcommand, ...] = (
    Subcommand(("serve",), engine_args=True, positional_model=True),
    Subcommand(("run-batch",), engine_args=True, own=_RUN_BATCH),
    Subcommand(
        ("bench", "throughput"),
        engine_args=True,
        own={**_DATASET, **_THROUGHPUT},
        own_prefixes=_DATASET_PREFIXES,
    ),
    Subcommand(("bench", "latency"), engine_args=True, own=_LATENCY),
    Subcommand(("bench", "startup"), engine_args=True, own=_STARTUP),
    Subcommand(("bench", "mm-processor"), engine_args=True, own=_DATASET, own_prefixes=_DATASET_PREFIXES),
    Subcommand(("bench", "serve"), engine_args=False),
    Subcommand(("chat",), engine_args=False),
    Subcommand(("complete",), engine_args=False),
)
"""Every ``vllm`` subcommand the tool reads (see the module's sources)."""

MODULE_SUBCOMMANDS: Mapping[str, tuple[str, ...]] = {
    "vllm.entrypoints.openai.run_batch": ("run-batch",),
}
"""Modules run with ``python -m`` that parse the same flags as a subcommand."""


def find_subcommand(words: Sequence[str]) -> Subcommand | None:
    """The subcommand ``words`` (the words after ``vllm``) start with, the longest match
    first (``bench throughput`` before a bare ``bench``), or ``None``."""
    best: Subcommand | None = None
    for sub in SUBCOMMANDS:
        if tuple(words[: len(sub.words)]) == sub.words and (best is None or len(sub.words) > len(best.words)):
            best = sub
    return best


def subcommand(words: Sequence[str]) -> Subcommand | None:
    """The subcommand whose words are exactly ``words`` (``("run-batch",)``), or ``None``."""
    return next((sub for sub in SUBCOMMANDS if sub.words == tuple(words)), None)
