"""Here-documents fed to a shell are scripts: their launches are read at their own lines;
a quoted delimiter means the writing shell expands nothing in them."""

from __future__ import annotations

import pytest

from conftest import args_of, kinds, scan_text
from vllm_upgrade_check.model.facts import FactKind
from vllm_upgrade_check.parsing.shell import parse_shell
from vllm_upgrade_check.parsing.shell_heredoc import quoted_delimiter, runs_stdin
from vllm_upgrade_check.sources.scanners.shell import ShellScanner


def _args(text: str) -> list[tuple[str, str | None, int | None, int | None]]:
    return args_of(scan_text(ShellScanner(), "run.sh", text))


@pytest.mark.parametrize(
    "head",
    [
        "bash <<'EOF'",
        "sh -s <<EOF",
        "ssh gpu1 bash -s <<EOF",
        "ssh -p 2222 gpu1 <<EOF",
        'ssh gpu1 "bash -s" <<"EOF"',
        "docker exec -i c bash <<EOF",
        "docker exec -e A=1 -it c sh <<EOF",
        "kubectl exec -i pod -- bash <<EOF",
        "kubectl exec pod -n ns --stdin -- bash -l <<EOF",
        "sudo -u svc bash -s -- arg <<\\EOF",
        "env A=1 bash -eux <<EOF",
    ],
)
def test_a_heredoc_fed_to_a_shell_is_read_at_its_lines(head: str) -> None:
    text = f"echo start\n{head}\necho inside\nvllm serve m --swap-space 4\nEOF\n"
    assert _args(text) == [("swap_space", "4", 4, 14)]


def test_tab_stripped_heredoc_keeps_the_columns() -> None:
    text = "bash <<-EOF\n\t\tvllm serve m --swap-space 4\n\tEOF\n"
    assert _args(text) == [("swap_space", "4", 2, 16)]


@pytest.mark.parametrize(
    "head",
    [
        "cat <<EOF > /etc/notes.txt",
        "docker exec c bash <<EOF",  # no -i: the container never sees the text
        "bash run.sh <<EOF",  # the script is run.sh; the text is its input
        "bash -c 'echo hi' <<EOF",
        "kubectl exec pod -- bash <<EOF",
        "python3 <<EOF",
    ],
)
def test_other_heredocs_are_not_scripts(head: str) -> None:
    text = f"{head}\nvllm serve m --swap-space 4\nEOF\n"
    items = scan_text(ShellScanner(), "run.sh", text)
    assert args_of(items) == [] and kinds(items, FactKind.LAUNCH) == []


def test_an_unquoted_delimiter_expands_the_writers_variables() -> None:
    text = "SWAP=4\nbash <<EOF\nvllm serve m --swap-space $SWAP\nEOF\n"
    assert [(n, v, line) for n, v, line, _c in _args(text)] == [("swap_space", "4", 3)]


def test_a_quoted_delimiter_expands_nothing() -> None:
    text = "SWAP=4\nbash <<'EOF'\nvllm serve m --swap-space $SWAP\nEOF\n"
    # the writer's SWAP=4 never reaches the text: the inner shell's $SWAP is not known
    assert _args(text) == [("swap_space", "$SWAP", 3, 14)]


def test_the_body_assignments_are_the_inner_shells() -> None:
    text = "ssh gpu1 bash -s <<'EOF'\nexport VLLM_CPU_SGL_KERNEL=1\nvllm serve m\nEOF\n"
    envs = kinds(scan_text(ShellScanner(), "run.sh", text), FactKind.ENV_VAR)
    assert [(e.name, e.location.line) for e in envs] == [("VLLM_CPU_SGL_KERNEL", 2)]
    script = parse_shell("A=1\nbash <<EOF\nA=2\nEOF\necho $A\n")
    assert script.commands[-1].argv[1].text == "1"  # the inner shell's A is not the writer's


def test_the_words_that_decide() -> None:
    assert runs_stdin(["/bin/bash"]) and runs_stdin(["bash", "-s", "x"]) and not runs_stdin(["bash", "x.sh"])
    assert quoted_delimiter("'EOF'") and quoted_delimiter('E"OF"') and not quoted_delimiter("EOF")


@pytest.mark.parametrize(("head", "read"), [("cat <<'EOF' | ssh gpu1 bash", True), ("cat <<EOF | tee out.txt", False)])
def test_cat_piped_into_a_shell(head: str, read: bool) -> None:
    text = f"{head}\nvllm serve m --swap-space 4\nEOF\n"
    assert _args(text) == ([("swap_space", "4", 2, 14)] if read else [])
