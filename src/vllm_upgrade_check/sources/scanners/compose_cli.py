"""``docker compose`` command lines in shell text (a script, a Makefile recipe, a CI step):
the compose files they name, in order (``-f a.yml -f b.yml``, ``--file=b.yml``, or
``COMPOSE_FILE=a.yml:b.yml`` set before the command or in its prefix). Compose merges those
files in that order into one project (:mod:`.compose_merge`); without any, it reads the
folder's default files, which each compose file's own reading covers."""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from vllm_upgrade_check.parsing.shell import ShellScript, Token
from vllm_upgrade_check.parsing.shell_script import Assignment
from vllm_upgrade_check.sources.scanners.vllm_argv import strip_wrappers

COMPOSE_FILE = "COMPOSE_FILE"
"""The variable compose reads its files from when no ``-f`` is given (``:``-separated)."""

COMPOSE_PATH_SEPARATOR = "COMPOSE_PATH_SEPARATOR"
"""The variable that sets :data:`COMPOSE_FILE`'s separator (``:`` on Linux and macOS;
Docker's docs, "Pre-defined environment variables")."""


def _separator(
    command_prefix: Sequence[Assignment], wrapped: Sequence[Token], assigned: Sequence[Assignment], before: tuple[int, int]
) -> str:
    """The ``COMPOSE_FILE`` separator a command runs with: ``COMPOSE_PATH_SEPARATOR`` in its
    ``env`` words, its prefix, or assigned before it; ``:`` otherwise."""
    for token in wrapped:
        if token.text.startswith(COMPOSE_PATH_SEPARATOR + "=") and token.resolved:
            return token.text[len(COMPOSE_PATH_SEPARATOR) + 1 :] or ":"
    given = next((a for a in command_prefix if a.name == COMPOSE_PATH_SEPARATOR), None)
    if given is None:
        earlier = [a for a in assigned if (a.line, a.column) < before]
        given = earlier[-1] if earlier else None
    return given.value if given is not None and given.value and "$" not in given.value else ":"

_TAKES_VALUE = frozenset(
    "-p --project-name --env-file --profile --project-directory --ansi --parallel --progress -c --context".split()
)
"""Global options of ``docker compose`` that take the next word."""

_DOCKER_TAKES_VALUE = frozenset("-H --host --config -c --context -l --log-level".split())
"""Options of ``docker`` itself (before ``compose``) that take the next word."""


@dataclass(frozen=True)
class Named:
    """A compose file a command names: as written, and where (1-based line and column in
    the text read, or the token's own file)."""

    written: str
    line: int
    column: int
    length: int
    resolved: bool = True
    """``False``: a word the script does not resolve (``-f $EXTRA``): compose reads a file
    there, which one is not known here."""
    cd: str = ""
    """The folder the last ``cd`` before the command changed to (relative, as written), in
    which compose looks for the file."""
    env_files: tuple[str, ...] = ()
    """The files the command's ``--env-file`` options name, as written (compose reads
    them, later ones winning, in place of the project's ``.env`` to interpolate with)."""
    project_directory: str | None = None
    """The folder ``--project-directory`` names, as written: the base of the project's
    relative paths and where its ``.env`` is; ``None``: the first compose file's folder."""
    option: str = "-f"
    """How it is named: ``-f`` (``--file``), or ``COMPOSE_FILE`` (the variable's list)."""


def may_run_compose(text: str) -> bool:
    """Whether ``text`` may run ``docker compose`` with files of its own (a cheap check)."""
    return "compose" in text and ("-f" in text or "--file" in text or COMPOSE_FILE in text)


def _compose_start(words: list[str]) -> int | None:
    """The index of the first word after ``docker compose`` / ``docker-compose``, or ``None``."""
    if not words:
        return None
    if posixpath.basename(words[0]) == "docker-compose":
        return 1
    if posixpath.basename(words[0]) != "docker":
        return None
    index = 1
    while index < len(words) and words[index].startswith("-"):  # docker's own options
        takes = "=" not in words[index] and words[index] in _DOCKER_TAKES_VALUE
        index += 2 if takes else 1
    return index + 1 if index < len(words) and words[index] == "compose" else None


def _token_named(token: Token, start: int = 0) -> Named:
    return Named(token.text[start:], token.line, token.column + start, len(token.text) - start, token.resolved)


def compose_chains(
    script: ShellScript, move: Callable[[Token], Token] | None = None, shell_of: Callable[[int], int] | None = None
) -> list[list[Named]]:
    """The files of each ``docker compose`` command of ``script`` that names its own (``-f``,
    ``--file``, or ``COMPOSE_FILE`` in its prefix or assigned before it), in order; a word
    the script does not resolve is kept, marked so (:attr:`Named.resolved`). ``move``: places a word where the file read
    writes it (a CI step's script in a YAML scalar). Each file keeps the folder the last
    ``cd``/``pushd`` before the command changed to (:attr:`Named.cd`), within the same shell:
    ``shell_of`` says which shell runs a line (a Makefile's recipe lines each run in their
    own, :func:`~.makefile.recipe_shells`); one shell by default."""
    place = move or (lambda token: token)
    shell = shell_of or (lambda _line: 0)
    out: list[list[Named]] = []
    assigned = sorted((a for a in script.assignments if a.name == COMPOSE_FILE and not a.prefix), key=lambda a: (a.line, a.column))
    separators = sorted(
        (a for a in script.assignments if a.name == COMPOSE_PATH_SEPARATOR and not a.prefix), key=lambda a: (a.line, a.column)
    )
    cd, cd_shell = "", 0
    pushed: list[str] = []  # the folders pushd left
    inside: list[tuple[tuple[int, int], str]] = []  # (end of a subshell a cd was made in, the folder before)
    for command in script.commands:
        argv, wrapped_env = strip_wrappers(command.argv)  # sudo, env A=1, timeout 60, ...
        words = [t.text for t in argv]
        here, at = shell(command.line), (command.line, command.column)
        if here != cd_shell:  # another shell: the cd of the last one is not in force
            cd, cd_shell, pushed, inside = "", here, [], []
        while inside and inside[-1][0] <= at:  # past the subshell: its cd is not in force
            cd = inside.pop()[1]
        if words and words[0] == "popd":
            cd = pushed.pop() if pushed else ""
            continue
        if words and words[0] in ("cd", "pushd"):
            target = words[1] if len(words) > 1 and argv[1].resolved else None
            if words[0] == "pushd":
                pushed.append(cd)
            ends = [s.end for s in script.subshells if s.start <= at < s.end]
            if ends and (not inside or min(ends) < inside[-1][0]):
                inside.append((min(ends), cd))
            cd = posixpath.normpath(posixpath.join(cd, target)) if target and not target.startswith(("/", "~", "-")) else ""
            continue
        start = _compose_start(words)
        if start is None:
            continue
        named: list[Named] = []
        env_files: list[str] = []
        project_directory: str | None = None
        index = start
        while index < len(words) and words[index].startswith("-"):
            word, token = words[index], argv[index]
            name, eq, _value = word.partition("=")
            if name in ("--env-file", "--project-directory"):
                option = _value if eq else words[index + 1] if index + 1 < len(words) else None
                known = token.resolved if eq else index + 1 < len(words) and argv[index + 1].resolved
                if option is not None and name == "--env-file":
                    env_files.append(option if known else "$")  # `$`: a file the script does not resolve
                elif option is not None:
                    project_directory = option if known else "$"
            if name in ("-f", "--file"):
                if eq:
                    named.append(_token_named(place(token), len(name) + 1))
                elif index + 1 < len(words):
                    named.append(_token_named(place(argv[index + 1])))
                    index += 1
            elif word.startswith("-f") and not word.startswith("--") and len(word) > 2:
                named.append(_token_named(place(token), 2))
            elif name in _TAKES_VALUE and not eq:
                index += 1
            index += 1
        by_env = next((t for t in wrapped_env if t.text.startswith(COMPOSE_FILE + "=") and t.resolved), None)
        if not named and by_env is not None:
            token = place(by_env)
            value = by_env.text[len(COMPOSE_FILE) + 1 :]
            sep = _separator(command.prefix, wrapped_env, separators, (command.line, command.column))
            named = [Named(p, token.line, token.column, len(by_env.text), option=COMPOSE_FILE) for p in value.split(sep) if p]
        if not named:
            given = next((a for a in command.prefix if a.name == COMPOSE_FILE), None)
            if given is None:
                before = [a for a in assigned if (a.line, a.column) < (command.line, command.column)]
                given = before[-1] if before else None
            if given is not None and "$" not in given.value:
                sep = _separator(command.prefix, wrapped_env, separators, (command.line, command.column))
                parts = given.value.split(sep)
                named = [Named(p, given.line, given.column, len(COMPOSE_FILE), option=COMPOSE_FILE) for p in parts if p]
        if named:
            where = "" if cd == "." else cd
            out.append([replace(n, cd=where, env_files=tuple(env_files), project_directory=project_directory) for n in named])
    return out
