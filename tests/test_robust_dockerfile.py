"""Dockerfiles of many instructions: the comment lines inside continued instructions are
found by bisection and each build step sees the ARG/ENV values through a view, not a copy,
so the scan grows with the file (n against 4n, a ratio) and reads what it read before."""

from __future__ import annotations

from collections.abc import Callable

from conftest import args_of, kinds, scan_text
from scaling import LINEAR, time_ratio
from vllm_upgrade_check.model.facts import FactKind
from vllm_upgrade_check.sources.scanners.base import SourceFile
from vllm_upgrade_check.sources.scanners.dockerfile import DockerfileScanner


def _comments(n: int) -> str:
    steps = "".join(f"# step {i}\nRUN echo {i} \\\n    # a comment inside\n    && true\n" for i in range(n))
    return "FROM vllm/vllm-openai:v0.8.0\n" + steps + 'CMD ["--max-num-seqs", "8"]\n'


def _variables(n: int) -> str:
    steps = "".join(f"ARG A{i}=a{i}\nENV VLLM_X{i}=1 B{i}=$A{i}\nRUN echo $B{i} $A{i}\n" for i in range(n))
    return "FROM vllm/vllm-openai:v0.8.0\n" + steps + 'CMD ["--max-num-seqs", "8"]\n'


def _scan(make: Callable[[int], str]) -> Callable[[int], Callable[[], object]]:
    scanner = DockerfileScanner()

    def at(n: int) -> Callable[[], object]:
        source = SourceFile("Dockerfile", make(n))
        return lambda: list(scanner.scan(source))

    return at


def test_many_continued_instructions_among_comments_are_linear() -> None:
    assert time_ratio(_scan(_comments), 2500, repeat=2) < LINEAR  # before the bisection: 10.6


def test_many_distinct_variables_are_linear() -> None:
    assert time_ratio(_scan(_variables), 1500, repeat=2) < LINEAR  # with a copy per step: 19.4


def test_comment_lines_inside_a_continued_launch_keep_its_positions() -> None:
    text = (
        "FROM vllm/vllm-openai:v0.8.0\n# one\n# two\nRUN true\n"
        "RUN vllm serve m \\\n    # the batch size\n    --max-num-seqs 8 \\\n  # swap\n    --swap-space 4\n"
        "# after\nRUN echo \\\n  # inside\n  done\n"
    )
    items = scan_text(DockerfileScanner(), "Dockerfile", text)
    assert args_of(items) == [("max_num_seqs", "8", 7, 5), ("swap_space", "4", 9, 5)]


def test_variables_of_later_steps_are_read_in_docker_order() -> None:
    text = (
        "ARG V=0.8.0\nFROM vllm/vllm-openai:v0.8.0\nARG V\nENV N=4\nARG N=9\n"
        "RUN vllm serve m --max-num-seqs $N --served-model-name $V\nENV VLLM_A=1 VLLM_B=$N\n"
    )
    items = scan_text(DockerfileScanner(), "Dockerfile", text)
    values = {(name, value) for name, value, _line, _col in args_of(items)}
    assert ("max_num_seqs", "4") in values  # ENV wins over ARG
    assert ("served_model_name", "0.8.0") in values  # the global default, declared in the stage
    assert [(e.name, e.value) for e in kinds(items, FactKind.ENV_VAR)] == [
        ("N", "4"),
        ("VLLM_A", "1"),
        ("VLLM_B", "$N"),
    ]
