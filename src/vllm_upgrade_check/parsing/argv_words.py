"""Reading a command's options from its words as text: where the options end, and where the
command an ``ssh`` runs on the remote host starts. Shared by the here-document reader
(:mod:`.shell_heredoc`) and the scanners (``vllm_argv``'s wrappers, ``ssh``)."""

from __future__ import annotations

from collections.abc import Sequence

SSH_PROGRAMS = frozenset({"ssh", "autossh"})
"""Programs that run their words after the destination on a remote host."""
_SSH_VALUE_OPTIONS = frozenset("BbcDEeFIiJLlmOoPpQRSWw")
"""ssh's one-letter options that take a value (OpenSSH ``ssh(1)`` synopsis), attached
(``-p2222``) or as the next word."""
_AUTOSSH_VALUE_OPTIONS = frozenset("M")
"""autossh's own option that takes a value (``-M port``), before ssh's."""


def after_options(words: Sequence[str], i: int, value_opts: frozenset[str]) -> int:
    """Index of the first word at or after ``i`` that is no option nor an option's value
    (``value_opts``: the options whose value is the next word); a ``--`` word ends the
    options and is skipped."""
    while i < len(words):
        word = words[i]
        if word == "--":
            return i + 1
        if not word.startswith("-") or word == "-":
            break
        i += 2 if word in value_opts else 1
    return i


def ssh_command_start(words: Sequence[str]) -> int | None:
    """For the words of an ``ssh``/``autossh`` command (``words[0]`` the program), the index
    of the first word of the command it runs on the remote host (``len(words)`` when none is
    given: the remote login shell runs), or ``None`` when it names no destination or runs no
    remote command (``-N``; ``-W host:port`` forwards stdio).

    Options are read as ssh reads them (OpenSSH ``ssh(1)``): clustered flags (``-tt``,
    ``-fN``), values attached or in the next word (``-p 2222``,
    ``-oStrictHostKeyChecking=no``, ``-i key``), ``--`` ending them; the first other word is
    the destination (``host``, ``user@host``, ``ssh://host:22``)."""
    values = _SSH_VALUE_OPTIONS | (_AUTOSSH_VALUE_OPTIONS if words[0].endswith("autossh") else frozenset())
    i = 1
    while i < len(words):
        word = words[i]
        if word == "--":
            i += 1
            break
        if not word.startswith("-") or word == "-":
            break
        for at, letter in enumerate(word[1:], start=1):
            if letter in "NW":
                return None  # no remote command (-N), or stdio forwarding (-W host:port)
            if letter in values:
                i += 1 if at + 1 < len(word) else 2  # the value is the rest of the word, or the next word
                break
        else:
            i += 1
    return i + 1 if i < len(words) else None
