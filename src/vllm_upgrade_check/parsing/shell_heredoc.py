"""Here-documents fed to a shell: which commands run their standard input as a script, and
where the lines of a here-document are in the file.

``bash <<'EOF' ... EOF``, ``sh -s <<EOF``, ``ssh host bash -s <<EOF`` (or ``ssh host
<<EOF``: the remote login shell reads it), ``docker exec -i C bash <<EOF``, ``kubectl exec
-i POD -- bash <<EOF``: the body is a script the shell runs, its commands at their own
lines. A quoted delimiter (``'EOF'``, ``"EOF"``, ``\\EOF``) leaves the body unexpanded by
the shell that writes it (bash(1), "Here Documents"); an unquoted one expands ``$VAR`` and
``$(...)`` there first. ``cat <<EOF > file`` writes a file: not a script that runs.
"""

from __future__ import annotations

from collections.abc import Sequence

from vllm_upgrade_check.parsing.argv_words import SSH_PROGRAMS, after_options, ssh_command_start
from vllm_upgrade_check.parsing.shell_text import Locator

SHELLS = frozenset({"sh", "bash", "zsh", "ksh", "dash", "ash"})
"""Programs that run the script their standard input holds when given no script."""

_SHELL_VALUE_OPTS = frozenset({"-o", "+o", "-O", "+O", "--rcfile", "--init-file"})
_EXEC_VALUE_OPTS = frozenset("-e --env --env-file -u --user -w --workdir --detach-keys".split())
_SUDO_VALUE_OPTS = frozenset("-u --user -g --group -C -h --host -p --prompt -D --chdir -r -t -U".split())
_PASS_THROUGH = frozenset({"nohup", "time", "exec", "command"})


def _base(word: str) -> str:
    return word.rsplit("/", 1)[-1]


def _interactive(words: Sequence[str], longs: tuple[str, ...], value_opts: frozenset[str]) -> bool:
    """Whether the options in ``words`` attach standard input (``-i``, ``-it``, ``--stdin``)."""
    i = 0
    while i < len(words):
        word = words[i]
        if word == "--" or not word.startswith("-"):
            break
        if word.split("=", 1)[0] in longs or (not word.startswith("--") and "i" in word[1:]):
            return True
        i += 2 if word in value_opts else 1
    return False


def runs_stdin(words: Sequence[str]) -> bool:
    """Whether the command ``words`` (its argv as text) runs its standard input as a shell
    script: a :data:`SHELLS` shell given no ``-c`` and no script file (or given ``-s``),
    directly or behind ``sudo``/``env``/``nohup``/``time``, ``ssh HOST [SHELL]``, ``docker|podman
    exec -i CONTAINER SHELL`` or ``kubectl exec -i POD -- SHELL``."""
    if not words:
        return False
    head = _base(words[0])
    if head in _PASS_THROUGH:
        return runs_stdin(words[1:])
    if head == "sudo":
        return runs_stdin(words[after_options(words, 1, _SUDO_VALUE_OPTS) :])
    if head == "env":
        i = after_options(words, 1, frozenset({"-u", "--unset", "-C", "--chdir"}))
        while i < len(words) and "=" in words[i] and not words[i].startswith("-"):
            i += 1
        return runs_stdin(words[i:])
    if head in SSH_PROGRAMS:
        start = ssh_command_start(words)
        if start is None:
            return False  # `ssh -N` / `-W host:port`: no remote command, no shell reads stdin
        rest = list(words[start:])
        if len(rest) == 1:  # `ssh host "bash -s"`: the remote command is one string
            rest = rest[0].split()
        return not rest or runs_stdin(rest)  # no command: the remote login shell reads it
    if head in ("docker", "podman", "nerdctl") and len(words) > 2 and words[1] == "exec":
        if not _interactive(words[2:], ("--interactive",), _EXEC_VALUE_OPTS):
            return False
        i = after_options(words, 2, _EXEC_VALUE_OPTS)
        return runs_stdin(words[i + 1 :])
    if head in ("kubectl", "oc") and len(words) > 2 and words[1] == "exec":
        if "--" not in words:
            return False
        end = list(words).index("--")
        # kubectl takes its flags before or after the pod: any of them may attach stdin
        flags = [w for w in words[2:end] if w.startswith("-")]
        if not _interactive(flags, ("--stdin",), frozenset()):
            return False
        return runs_stdin(words[end + 1 :])
    if head not in SHELLS:
        return False
    i, reads_stdin = 1, False
    while i < len(words):
        word = words[i]
        if word == "--" or not word.startswith(("-", "+")) or word in ("-", "+"):
            break
        if not word.startswith("--") and "c" in word[1:]:
            return False  # `bash -c TEXT`: the text is the script
        reads_stdin = reads_stdin or (not word.startswith("--") and "s" in word[1:])
        i += 2 if word in _SHELL_VALUE_OPTS else 1
    if i < len(words) and words[i] == "--":
        i += 1
    return reads_stdin or i >= len(words)  # a word left is the script file, unless -s


def quoted_delimiter(start: str) -> bool:
    """Whether a here-document's delimiter word (``'EOF'``, ``"EOF"``, ``\\EOF``, ``E"OF"``)
    is quoted: then its body is not expanded by the shell that writes it."""
    return any(ch in start for ch in "'\"\\")


def body_locator(locate: Locator, row: int, column: int) -> Locator:
    """The locator of a here-document body that starts at 0-based ``row``/byte ``column``
    of the text ``locate`` maps: each of its rows is the text's row below, whole."""

    def inner(r: int, c: int) -> tuple[int, int]:
        return locate(row + r, (column if r == 0 else 0) + c)

    return inner


__all__ = ["SHELLS", "body_locator", "quoted_delimiter", "runs_stdin"]
