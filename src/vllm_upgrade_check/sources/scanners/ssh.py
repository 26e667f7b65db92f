"""``ssh [options] DESTINATION COMMAND...``: the command ssh runs on the remote host.

ssh joins the words after the destination with spaces and the remote user's shell runs the
result (OpenSSH ``ssh(1)``: "If a command is specified, it will be executed on the remote
host instead of a login shell"). A launch written there (``ssh gpu01 "vllm serve m ..."``,
``ssh -i key user@host 'cd /srv && nohup vllm serve ... &'``) is a launch of the
deployment, so the shell scanner reads that command as a script (one quoted word) or as the
argv it is (several words), at the place it is written.
"""

from __future__ import annotations

from collections.abc import Sequence

from vllm_upgrade_check.parsing.words import Token
from vllm_upgrade_check.sources.scanners.vllm_argv import strip_wrappers

SSH_PROGRAMS = frozenset({"ssh", "autossh"})
"""Programs that run their words after the destination on a remote host."""
_VALUE_OPTIONS = frozenset("BbcDEeFIiJLlmOoPpQRSWw")
"""ssh's one-letter options that take a value (OpenSSH ``ssh(1)`` synopsis), attached
(``-p2222``) or as the next word."""
_AUTOSSH_VALUE_OPTIONS = frozenset("M")
"""autossh's own option that takes a value (``-M port``), before ssh's."""


def is_ssh(argv: Sequence[Token]) -> bool:
    """Whether ``argv`` runs ssh (behind wrappers such as ``sudo``)."""
    tokens, _env = strip_wrappers(argv)
    return bool(tokens) and tokens[0].text.rsplit("/", 1)[-1] in SSH_PROGRAMS


def ssh_remote_command(argv: Sequence[Token]) -> list[Token] | None:
    """The words of the command an ``ssh`` (or ``autossh``) argv runs on the remote host,
    ``None`` when ``argv`` is no ssh command or runs none (a login shell, ``-N``, ``-W``).

    Options are read as ssh reads them: clustered flags (``-tt``, ``-fN``), values attached
    or in the next word (``-p 2222``, ``-oStrictHostKeyChecking=no``, ``-i key``), ``--``
    ending them; the first other word is the destination (``host``, ``user@host``,
    ``ssh://host:22``), every word after it is the command. Wrappers before ssh (``sudo``,
    ``timeout``, ``env``: :data:`~.vllm_argv.WRAPPERS`) are looked through."""
    argv, _env = strip_wrappers(argv)  # NAME=value words set ssh's own environment, not the remote one
    if not argv or argv[0].text.rsplit("/", 1)[-1] not in SSH_PROGRAMS:
        return None
    values = _VALUE_OPTIONS | (_AUTOSSH_VALUE_OPTIONS if argv[0].text.endswith("autossh") else frozenset())
    i = 1
    while i < len(argv):
        word = argv[i].text
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
    if i >= len(argv):
        return None
    command = list(argv[i + 1 :])
    return command or None
