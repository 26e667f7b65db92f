"""systemd units and dotenv files: how a vLLM service is started and with which environment.

- systemd ``*.service`` units: ``ExecStart=`` (also ``ExecStartPre=``) is an argv; its
  prefixes ``-@:+!`` are dropped and it is read by the shell helpers (systemd's quoting and
  ``$VAR``/``${VAR}`` expansion from ``Environment=`` are close enough to the shell's for
  argv words). ``Environment=`` assignments are ``env_var`` facts; ``EnvironmentFile=``
  names a dotenv-style file that is read when the repository holds it (matched by path
  suffix: ``/etc/vllm/vllm.env`` is found as ``deploy/etc/vllm/vllm.env`` or ``vllm.env``).
- dotenv files (``.env``, ``.env.*``, ``*.env``): parsed with python-dotenv's own parser
  (:func:`dotenv.parser.parse_stream`), which keeps each binding's original text and line;
  every key is an ``env_var`` fact at its line.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterator

from dotenv.parser import parse_stream

from vllm_upgrade_check.model.facts import Fact, Skipped
from vllm_upgrade_check.parsing.shell import Token
from vllm_upgrade_check.sources.scanners.arg_facts import env_fact
from vllm_upgrade_check.sources.scanners.base import FileReference, ScanItem, Scanner, SourceFile
from vllm_upgrade_check.sources.scanners.dockerfile import is_dockerfile
from vllm_upgrade_check.sources.scanners.shell import shell_facts

_EXEC_KEYS = ("ExecStart", "ExecStartPre")
_WORD = re.compile(r'"(?:[^"\\]|\\.)*"|\'[^\']*\'|\S+')
_MAX_ENV_FILE_CHARS = 256 * 1024


def is_dotenv(name: str) -> bool:
    """``.env``, ``.env.production``, ``vllm.env``, ``prod.env`` (not ``.envrc``, nor a
    Dockerfile named ``Dockerfile.env``)."""
    if is_dockerfile(name):
        return False
    return name == ".env" or name.startswith(".env.") or (name.endswith(".env") and len(name) > 4)


def dotenv_facts(text: str, path: str, scanner: str = "dotenv") -> Iterator[Fact | Skipped]:
    """``env_var`` facts of a dotenv file, each at its key; a line python-dotenv cannot parse
    yields one :class:`Skipped` naming it (the rest of the file is still read)."""
    for binding in parse_stream(io.StringIO(text)):
        if binding.error:
            yield Skipped(
                path,
                f"dotenv syntax error at line {binding.original.line}: the line was not read",
                configures_vllm="vllm" in binding.original.string.lower(),
                line=binding.original.line,
            )
            continue
        if binding.key is None:
            continue
        original = binding.original.string
        column = original.find(binding.key) + 1
        yield env_fact(binding.key, binding.value, path, binding.original.line, max(column, 1), scanner)


def _unit_lines(text: str) -> Iterator[tuple[int, str, int, str, list[str]]]:
    """``(line, key, column of the value, value, continuation lines)`` of every ``Key=value``
    line of a unit file; a value ending in ``\\`` continues on the next lines (as written)."""
    lines = text.split("\n")
    number = 0
    while number < len(lines):
        line = lines[number]
        number += 1
        stripped = line.lstrip()
        if not stripped or stripped[0] in "#;[" or "=" not in stripped:
            continue
        key, _, value = stripped.partition("=")
        indent = len(line) - len(stripped)
        column = indent + len(key) + 2
        lead = len(value) - len(value.lstrip())
        more: list[str] = []
        while (more[-1] if more else line).rstrip().endswith("\\") and number < len(lines):
            more.append(lines[number])
            number += 1
        yield number - len(more), key.strip(), column + lead, value.strip(), more


def _environment_words(value: str, line: int, column: int) -> Iterator[tuple[str, str, int]]:
    for match in _WORD.finditer(value):
        word = match.group(0)
        quoted = word[:1] in "\"'"
        body = word[1:-1] if quoted else word
        if "=" in body:
            name, _, val = body.partition("=")
            yield name, val, column + match.start() + (1 if quoted else 0)


class SystemdScanner(Scanner):
    """systemd ``*.service`` units, dotenv files, and the files units name in ``EnvironmentFile=``
    (yielded as :class:`~.base.FileReference` items; the engine finds the file by path suffix
    and hands it to :meth:`read_referenced`)."""

    name = "systemd"

    def accepts_name(self, name: str) -> bool | None:
        return name.endswith(".service") or is_dotenv(name)

    def accepts(self, source: SourceFile) -> bool:
        return source.name.endswith(".service") or is_dotenv(source.name)

    def scan(self, source: SourceFile) -> Iterator[ScanItem]:
        if source.name.endswith(".service"):
            yield from self._unit(source)
        else:
            yield from dotenv_facts(source.text, source.relpath)

    def referenced_file_matches(self, relpath: str, wanted: str) -> bool:
        # A dotenv file by name is read anyway: not twice.
        return not is_dotenv(relpath.rsplit("/", 1)[-1]) and _suffix_match(relpath, wanted)

    def read_referenced(self, source: SourceFile) -> Iterator[Fact | Skipped]:
        if len(source.text) <= _MAX_ENV_FILE_CHARS:
            yield from dotenv_facts(source.text, source.relpath)

    def _unit(self, source: SourceFile) -> Iterator[ScanItem]:
        path = source.relpath
        variables: dict[str, list[Token]] = {}
        exec_lines: dict[int, str] = {}
        for line, key, column, value, more in _unit_lines(source.text):
            if key == "Environment":
                for name, val, col in _environment_words(value, line, column):
                    # systemd splits an unbraced $VAR at whitespace into several words
                    # (systemd.service(5), "Command lines"): ExecStart=vllm serve $EXTRA.
                    start = col + len(name) + 1
                    words = [(m.group(), start + m.start()) for m in re.finditer(r"\S+", val)]
                    variables[name] = [Token(w, line, c, True, w) for w, c in words] or [Token(val, line, start, True, val)]
                    yield env_fact(name, val, path, line, col, self.name)
            elif key == "EnvironmentFile":
                yield FileReference(value.lstrip("-").strip(), self.name)
            elif key in _EXEC_KEYS:
                stripped = value.lstrip("-@:+!")
                exec_lines[line] = " " * (column + len(value) - len(stripped) - 1) + stripped
                for offset, text in enumerate(more, start=1):
                    exec_lines[line + offset] = text
        if not exec_lines:
            return
        # One shell text with every ExecStart value at its own line and column.
        lines = source.text.split("\n")
        shell_lines = [exec_lines.get(n, "") for n in range(1, len(lines) + 1)]
        facts, _ = shell_facts("\n".join(shell_lines), path, self.name, variables=variables)
        yield from facts


def _suffix_match(relpath: str, wanted: str) -> bool:
    """``True`` when repository file ``relpath`` can be the file ``wanted`` (by path suffix)."""
    want = wanted.lstrip("/")
    if not want or "$" in want or "%" in want:
        return False
    return relpath == want or relpath.endswith("/" + want) or want.endswith("/" + relpath)
