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

from vllm_upgrade_check.parsing.argv_words import SSH_PROGRAMS, ssh_command_start
from vllm_upgrade_check.parsing.words import Token
from vllm_upgrade_check.sources.scanners.vllm_argv import strip_wrappers


def is_ssh(argv: Sequence[Token]) -> bool:
    """Whether ``argv`` runs ssh (behind wrappers such as ``sudo``)."""
    tokens, _env = strip_wrappers(argv)
    return bool(tokens) and tokens[0].text.rsplit("/", 1)[-1] in SSH_PROGRAMS


def ssh_remote_command(argv: Sequence[Token]) -> list[Token] | None:
    """The words of the command an ``ssh`` (or ``autossh``) argv runs on the remote host,
    ``None`` when ``argv`` is no ssh command or runs none (a login shell, ``-N``, ``-W``).

    Options are read as ssh reads them (:func:`~vllm_upgrade_check.parsing.argv_words.ssh_command_start`);
    every word after the destination is the command. Wrappers before ssh (``sudo``,
    ``timeout``, ``env``: :data:`~.vllm_argv.WRAPPERS`) are looked through."""
    argv, _env = strip_wrappers(argv)  # NAME=value words set ssh's own environment, not the remote one
    if not argv or argv[0].text.rsplit("/", 1)[-1] not in SSH_PROGRAMS:
        return None
    start = ssh_command_start([t.text for t in argv])
    if start is None:
        return None
    return list(argv[start:]) or None
