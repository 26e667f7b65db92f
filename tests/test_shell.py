"""Shell launch scripts: every quirk of how vLLM flags are written, and the traps."""

from __future__ import annotations

import pytest

from conftest import args_of, kinds, scan_text
from vllm_upgrade_check.model.facts import FactKind
from vllm_upgrade_check.sources.scanners.shell import ShellScanner


def scan(text: str, name: str = "run.sh"):
    return scan_text(ShellScanner(), name, text)


def test_flag_forms_and_positions() -> None:
    items = scan(
        "vllm serve org/model \\\n"
        "  --max-num-partial-prefills 4 \\\n"
        "  --max_long_partial_prefills=2 --enforce-eager\n"
    )
    assert args_of(items) == [
        ("max_num_partial_prefills", "4", 2, 3),
        ("max_long_partial_prefills", "2", 3, 3),
        ("enforce_eager", None, 3, 33),
    ]
    (model,) = kinds(items, FactKind.MODEL)
    assert (model.name, model.location.line, model.location.column) == ("org/model", 1, 12)


def test_comments_are_not_launches() -> None:
    items = scan("# vllm serve m --max-num-partial-prefills 4\necho 'vllm serve m --swap-space 4'\n")
    assert args_of(items) == []
    assert kinds(items, FactKind.LAUNCH) == []


def test_no_form_answers_to_the_positive_name() -> None:
    items = scan("vllm serve m --no-calculate-kv-scales\n")
    (arg,) = kinds(items, FactKind.ARG)
    assert arg.name == "no_calculate_kv_scales"
    assert arg.answers_to("calculate_kv_scales")


def test_array_expanded_later_reports_the_array_line() -> None:
    items = scan('ARGS=(\n  --swap-space 4\n)\nvllm serve m "${ARGS[@]}"\n')
    assert args_of(items) == [("swap_space", "4", 2, 3)]


def test_string_variable_is_word_split() -> None:
    items = scan('EXTRA="--task generate --max-num-seqs 8"\nvllm serve m $EXTRA\n')
    assert [(n, v, line) for n, v, line, _c in args_of(items)] == [
        ("task", "generate", 1),
        ("max_num_seqs", "8", 1),
    ]


def test_default_and_alternative_expansions() -> None:
    items = scan("vllm serve m ${TP:+--tensor-parallel-size 2} --dtype ${DTYPE:-auto}\n")
    assert [(n, v) for n, v, _l, _c in args_of(items)] == [("tensor_parallel_size", "2"), ("dtype", "auto")]


def test_python_module_entrypoint_and_env_prefix() -> None:
    items = scan("VLLM_USE_V1=0 python3 -m vllm.entrypoints.openai.api_server --model m --swap-space 4\n")
    assert [(n, v) for n, v, _l, _c in args_of(items)] == [("model", "m"), ("swap_space", "4")]
    (env,) = kinds(items, FactKind.ENV_VAR)
    assert (env.name, env.value, env.location.line) == ("VLLM_USE_V1", "0", 1)


def test_export_sets_env_var() -> None:
    items = scan("export VLLM_ATTENTION_BACKEND=FLASHINFER\nvllm serve m\n")
    envs = kinds(items, FactKind.ENV_VAR)
    assert [(e.name, e.value, e.location.line) for e in envs] == [("VLLM_ATTENTION_BACKEND", "FLASHINFER", 1)]


def test_docker_run_of_vllm_image() -> None:
    items = scan(
        "docker run --gpus all -e VLLM_X=1 -p 8000:8000 --ipc=host \\\n"
        "  vllm/vllm-openai:v0.25.0 --model m --swap-space 4\n"
    )
    assert [(n, v) for n, v, _l, _c in args_of(items)] == [("model", "m"), ("swap_space", "4")]
    (image,) = kinds(items, FactKind.IMAGE)
    assert (image.name, image.value) == ("vllm/vllm-openai", "v0.25.0")
    assert all(f.version_hint == "0.25.0" for f in kinds(items, FactKind.ARG))
    assert [e.name for e in kinds(items, FactKind.ENV_VAR)] == ["VLLM_X"]


def test_docker_run_of_other_image_is_ignored() -> None:
    assert args_of(scan("docker run -p 80:80 nginx:1.27 --swap-space 4  # vllm\n")) == []


def test_other_program_with_same_flag_is_ignored() -> None:
    assert args_of(scan("mytool --max-num-partial-prefills 4  # not vllm\n")) == []


def test_sh_c_string_is_parsed() -> None:
    items = scan('bash -c "vllm serve m --task generate"\n')
    assert [(n, v, line, col) for n, v, line, col in args_of(items)] == [("task", "generate", 1, 23)]


def test_pip_install_gives_requirements() -> None:
    items = scan("pip install -U 'vllm==0.26.0' torch==2.11.0\n")
    reqs = kinds(items, FactKind.REQUIREMENT)
    assert [(r.name, r.value) for r in reqs] == [("vllm", "==0.26.0"), ("torch", "==2.11.0")]


def test_syntax_error_is_reported_as_partly_read() -> None:
    from vllm_upgrade_check.model.facts import Skipped

    items = scan("vllm serve m --swap-space 4\nif [ x ; then\n")
    assert ("swap_space", "4") in [(n, v) for n, v, _l, _c in args_of(items)]
    (skip,) = [i for i in items if isinstance(i, Skipped)]
    assert skip.configures_vllm and "syntax error" in skip.reason


def test_shebang_without_suffix_is_accepted() -> None:
    scanner = ShellScanner()
    from vllm_upgrade_check.sources.scanners.base import SourceFile

    assert scanner.accepts(SourceFile("bin/serve", "#!/usr/bin/env bash\nvllm serve m\n"))
    assert not scanner.accepts(SourceFile("bin/serve.py", "#!/usr/bin/env python\n"))


def test_env_wrapper_assignments_are_env_vars() -> None:
    items = scan("env -u HOME VLLM_USE_V1=1 vllm serve m\n")
    (env,) = kinds(items, FactKind.ENV_VAR)
    assert (env.name, env.value, env.location.line, env.location.column) == ("VLLM_USE_V1", "1", 1, 13)
    (launch,) = kinds(items, FactKind.LAUNCH)
    assert launch.name == "vllm serve"


@pytest.mark.parametrize(
    "line",
    [
        "timeout 60 vllm serve m --swap-space 4",
        "timeout -s INT -k 5 60 vllm serve m --swap-space 4",
        "srun -n 2 -N1 --gres=gpu:4 -p gpu python -m vllm.entrypoints.openai.api_server --swap-space 4",
        "torchrun --nproc-per-node 2 --nnodes=1 -m vllm.entrypoints.openai.api_server --swap-space 4",
        "ray job submit --address http://h:8265 --working-dir . -- vllm serve m --swap-space 4",
        "numactl --cpunodebind=0 -m 0 vllm serve m --swap-space 4",
        "conda run -n env vllm serve m --swap-space 4",
    ],
)
def test_wrapped_launches_are_found(line: str) -> None:
    items = scan(line + "\n")
    assert [(n, v) for n, v, _l, _c in args_of(items)] == [("swap_space", "4")]
    assert len(kinds(items, FactKind.LAUNCH)) == 1


@pytest.mark.parametrize(
    ("line", "entry"),
    [
        ("vllm run-batch -i in.jsonl -o out.jsonl --model m --swap-space 4", "vllm run-batch"),
        ("vllm bench throughput --model m --swap-space 4", "vllm bench throughput"),
        ("vllm bench latency --model m --swap-space 4", "vllm bench latency"),
    ],
)
def test_vllm_subcommands_with_engine_args_are_launches(line: str, entry: str) -> None:
    items = scan(line + "\n")
    (launch,) = kinds(items, FactKind.LAUNCH)
    assert launch.name == entry
    assert ("swap_space", "4") in [(n, v) for n, v, _l, _c in args_of(items)]
    assert [m.name for m in kinds(items, FactKind.MODEL)] == ["m"]  # from --model, no positional


def test_bench_serve_and_wrapped_other_programs_are_not_launches() -> None:
    items = scan("vllm bench serve --model m --swap-space 4\ntimeout 60 echo vllm serve m --swap-space 4\n")
    assert kinds(items, FactKind.LAUNCH) == []


def test_astral_character_after_brace_does_not_crash_the_parser() -> None:
    """tree-sitter-bash reads out of bounds on '{' + some astral code points (fuzzing found
    '{\\U000DBC5D'); the text is sanitised before it reaches the parser. Parsed in a
    subprocess so that a regression shows as a failure, not as a dead test run."""
    import subprocess
    import sys

    code = (
        "from vllm_upgrade_check.parsing.shell import parse_shell\n"
        "for _ in range(50):\n"
        "    parse_shell('x{\\U000DBC5D')\n"
        "    parse_shell('{\\U000DBC5D vllm serve m --swap-space 4')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-500:]
    items = scan("echo '\U0001F600'\nvllm serve m --swap-space 4  # \U0001F680\n")
    assert args_of(items) == [("swap_space", "4", 2, 14)]


def test_alternative_is_split_into_the_words_bash_gives() -> None:
    """``${X:+--lora-modules "notes=$X"}``: two words (the quoted part stays one), each at
    its own column; a quoted default stays one word; a variable inside is split too."""
    items = scan(
        'OPTS="--seed 3 --max-num-seqs 8"\n'
        'vllm serve m ${X:+--lora-modules "notes=$X"} ${Y:-"--dtype" \'half\'} ${Z:+a\\ b $OPTS}\n'
    )
    got = [(n, v, line, c) for n, v, line, c in args_of(items)]
    assert got[:2] == [("lora_modules", "notes=$X", 2, 19), ("dtype", "half", 2, 51)]
    assert [(n, v) for n, v, _l, _c in got[2:]] == [("seed", "3"), ("max_num_seqs", "8")]


def test_quoted_alternative_is_one_word() -> None:
    items = scan('vllm serve m "${TP:+--tensor-parallel-size 2}"\n')
    assert [n for n, _v, _l, _c in args_of(items)] == ["tensor_parallel_size 2"]


@pytest.mark.parametrize("ending", ["\\\n", "\\", "\\\n\n  \n"])
def test_continuation_ending_the_file_is_no_syntax_error(ending: str) -> None:
    """bash reads a final ``\\`` as the end of the command (``bash -n`` passes)."""
    from vllm_upgrade_check.model.facts import Skipped

    items = scan("vllm serve m --swap-space 4 " + ending)
    assert [(n, v) for n, v, _l, _c in args_of(items)] == [("swap_space", "4")]
    assert not [i for i in items if isinstance(i, Skipped)]


def test_continuation_inside_an_open_quote_is_still_an_error() -> None:
    from vllm_upgrade_check.model.facts import Skipped

    items = scan('vllm serve m --swap-space 4\necho "a \\\n')
    assert [i for i in items if isinstance(i, Skipped)]


@pytest.mark.parametrize(
    "line",
    [
        "python3 /srv/py311/bin/vllm serve m --swap-space 4\n",
        "python3.11 -u ./venv/bin/vllm serve m --swap-space 4\n",
        "/usr/bin/python -X dev vllm serve m --swap-space 4\n",
    ],
)
def test_interpreter_running_the_console_script_is_a_launch(line: str) -> None:
    items = scan(line)
    assert [(n, v) for n, v, _l, _c in args_of(items)] == [("swap_space", "4")]
    assert [m.name for m in kinds(items, FactKind.MODEL)] == ["m"]


@pytest.mark.parametrize(
    "line", ["python3 tools/vllm.py serve m --swap-space 4\n", "python3 ./vllm-x serve m --swap-space 4\n"]
)
def test_interpreter_running_another_script_is_no_launch(line: str) -> None:
    assert kinds(scan(line), FactKind.LAUNCH) == []
