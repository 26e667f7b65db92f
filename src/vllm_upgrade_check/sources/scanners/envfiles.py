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
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace

from dotenv.parser import parse_stream

from vllm_upgrade_check.model.facts import Fact, FactKind, Skipped, Span, Spans
from vllm_upgrade_check.parsing.shell import Token
from vllm_upgrade_check.parsing.words import link
from vllm_upgrade_check.sources.scanners.arg_facts import env_fact
from vllm_upgrade_check.sources.scanners.base import FileReference, ScanItem, Scanner, SourceFile
from vllm_upgrade_check.sources.scanners.compose_env import dotenv_compose_files
from vllm_upgrade_check.sources.scanners.compose_project import linked_chain_facts
from vllm_upgrade_check.sources.scanners.dockerfile import is_dockerfile
from vllm_upgrade_check.sources.scanners.shell import shell_facts

_EXEC_KEYS = ("ExecStart", "ExecStartPre")
_MAX_ENV_FILE_CHARS = 256 * 1024


NOT_DOTENV_SUFFIXES = (".yaml", ".yml", ".json", ".toml", ".py", ".sh", ".bash", ".md")
"""Suffixes of files that are never dotenv files whatever their name starts with
(``.env.compose.yml`` is a compose file, ``.env.example.json`` JSON): the YAML scanners and
the others read them."""


def is_dotenv(name: str) -> bool:
    """``.env``, ``.env.production``, ``vllm.env``, ``prod.env`` (not ``.envrc``, nor a
    Dockerfile named ``Dockerfile.env``, nor a file of another syntax such as ``.env.yaml``,
    see :data:`NOT_DOTENV_SUFFIXES`)."""
    if is_dockerfile(name) or name.lower().endswith(NOT_DOTENV_SUFFIXES):
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
        column = max(original.find(binding.key) + 1, 1)
        line = binding.original.line
        value = _value_span(original, column - 1 + len(binding.key), binding.value, line)
        spans = Spans(name=Span(line, column, line, column + len(binding.key)), value=value)
        yield env_fact(binding.key, binding.value, path, line, column, scanner, spans=spans)


def _value_span(original: str, after_key: int, value: str | None, line: int) -> Span | None:
    """Where a dotenv binding's ``value`` is written on its line (inside its quotes), when it
    is written there as it reads (one line, no escapes); else ``None``."""
    if not value or "\n" in value:
        return None
    equals = original.find("=", after_key)
    if equals < 0:
        return None
    start = equals + 1
    while start < len(original) and original[start] in " \t":
        start += 1
    if start < len(original) and original[start] in "'\"":
        start += 1
    if original[start : start + len(value)] != value:
        return None
    return Span(line, start + 1, line, start + 1 + len(value))


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


def _unit_words(value: str) -> Iterator[tuple[str, int, int]]:
    """``(word, start, end)`` of each word of a unit file value, quotes removed as systemd
    removes them (anywhere in a word: ``NAME="a b"`` is one word ``NAME=a b``); ``start`` and
    ``end`` index ``value``."""
    i, n = 0, len(value)
    while i < n:
        if value[i].isspace():
            i += 1
            continue
        start, out, quote = i, [], ""
        while i < n and (quote or not value[i].isspace()):
            char = value[i]
            if char == "\\" and i + 1 < n and quote != "'":
                i += 1
                out.append(value[i])
            elif quote and char == quote:
                quote = ""
            elif not quote and char in "\"'":
                quote = char
            else:
                out.append(char)
            i += 1
        yield "".join(out), start, i


def _environment_words(value: str, line: int, column: int) -> Iterator[tuple[str, str, int, int, bool]]:
    """``(name, value, column of the name, column of the value, whether the value is written
    as it reads from that column on)`` of each ``Environment=`` assignment."""
    for word, start, end in _unit_words(value):
        if "=" not in word:
            continue
        name, _, val = word.partition("=")
        written = value[start:end]
        at = written.find("=") + 1
        if written[at : at + 1] in ("\"", "'"):
            at += 1
        exact = written[at : at + len(val)] == val
        yield name, val, column + start + (1 if written[:1] in "\"'" else 0), column + start + at, exact


def value_tokens(value: str, line: int, column: int, path: str | None = None, exact: bool = False) -> list[Token]:
    """A variable's value as systemd splits an unbraced ``$VAR`` (at whitespace), each word
    at its column when the value is written as it reads from ``column`` on (``path``: the
    file it is written in, when not the unit). ``exact``: it is (an ``Environment=`` value
    with nothing escaped): each word then has its span and its neighbours, so that a fix
    cuts a flag and its value out of the value (``Environment="OPTS=--swap-space 4 --seed
    1"`` -> ``Environment="OPTS=--seed 1"``)."""
    words = [(m.group(), column + m.start()) for m in re.finditer(r"\S+", value)]
    if exact and words:
        return link([Token(w, line, c, True, w, path=path, span=Span(line, c, line, c + len(w))) for w, c in words])
    return [Token(w, line, c, True, w, path=path) for w, c in words] or [Token(value, line, column, True, value, path=path)]


def _braced_as_one_word(text: str, known: set[str]) -> str:
    """``text`` with each ``${NAME}`` of a known variable outside quotes written ``"$NAME"``
    (the same length): systemd expands it to one word, never split."""
    out, quote, i = [], "", 0
    while i < len(text):
        char = text[i]
        if char == "\\":
            out.append(text[i : i + 2])
            i += 2
            continue
        if quote:
            quote = "" if char == quote else quote
        elif char in "\"'":
            quote = char
        elif (m := re.match(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}", text[i:])) and m.group(1) in known:
            out.append(f'"${m.group(1)}"')
            i += m.end()
            continue
        out.append(char)
        i += 1
    return "".join(out)


_QUOTED_SCRIPT = re.compile(r'"([^"\'\\]*\s[^"\'\\]*)"')
"""A double-quoted word with blanks in it and no quote or backslash inside (a ``bash -c``
script)."""


def _unexpanded_in_words(text: str) -> str:
    """``text`` with each double-quoted word that holds blanks and no ``${`` written in single
    quotes (the same length): systemd replaces ``$NAME`` only as a word of its own and
    ``${NAME}`` anywhere (systemd.service(5), "Command lines"), so the ``$OPTS`` of
    ``bash -lc "exec vllm serve m $OPTS"`` reaches bash as written and bash expands it from
    the service's environment, as it does in single quotes."""
    out, quote, i = [], "", 0
    while i < len(text):
        char = text[i]
        if quote == "'":
            quote = "" if char == "'" else quote
        elif char == "'":
            quote = "'"
        elif char == '"' and (m := _QUOTED_SCRIPT.match(text, i)) and "${" not in m.group(1):
            out.append(f"'{m.group(1)}'")
            i = m.end()
            continue
        out.append(char)
        i += 1
    return "".join(out)


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
            if source.name == ".env":  # read again with the compose files it names (:meth:`with_referenced`)
                yield from (FileReference(n.written, self.name) for n in dotenv_compose_files(source.text, source.relpath))

    def referenced_file_matches(self, relpath: str, wanted: str) -> bool:
        # A dotenv file by name is read anyway: not twice; a YAML (or other syntax) file never.
        name = relpath.rsplit("/", 1)[-1]
        if is_dotenv(name) or name.lower().endswith(NOT_DOTENV_SUFFIXES):
            return False
        return _suffix_match(relpath, wanted)

    def read_referenced(self, source: SourceFile) -> Iterator[Fact | Skipped]:
        if len(source.text) <= _MAX_ENV_FILE_CHARS and not source.name.lower().endswith(NOT_DOTENV_SUFFIXES):
            yield from dotenv_facts(source.text, source.relpath)

    def with_referenced(
        self, source: SourceFile, files: Sequence[str], read: Callable[[str], SourceFile | None]
    ) -> list[Fact] | None:
        """A unit read again with the values of the files its ``EnvironmentFile=`` lines
        name (see :func:`environment_file`); a project ``.env`` that sets ``COMPOSE_FILE``
        with the project those files make (:func:`~.compose_env.dotenv_compose_files`,
        what ``docker compose`` runs in its folder; each word placed in the file that writes
        it); ``None`` for a file that names none."""
        if source.name == ".env":
            chain = dotenv_compose_files(source.text, source.relpath)
            if not chain:
                return None
            own = [f for f in dotenv_facts(source.text, source.relpath) if isinstance(f, Fact)]
            return own + linked_chain_facts([chain], source.relpath, files, read, mentions=source.mentions_vllm())
        if not source.name.endswith(".service"):
            return None
        named = [v for _l, key, _c, v, _m in _unit_lines(source.text) if key == "EnvironmentFile"]
        if not named:
            return None
        found = {value: environment_file(value, files, read) for value in named}
        return [f for f in self._unit(source, found) if isinstance(f, Fact)]

    def _unit(
        self, source: SourceFile, env_files: dict[str, tuple[dict[str, list[Token]], str]] | None = None
    ) -> Iterator[ScanItem]:
        path = source.relpath
        variables: dict[str, list[Token]] = {}
        from_files: dict[str, list[Token]] = {}
        problems: list[str] = []
        exec_lines: dict[int, str] = {}
        for line, key, column, value, more in _unit_lines(source.text):
            if key == "Environment":
                # a word that is no assignment (`Environment=OPTS=--swap-space 4`: systemd
                # sets OPTS=--swap-space and ignores `4`) leaves what was meant unsure: no cut
                stray = any("=" not in word for word, _s, _e in _unit_words(value))
                for name, val, col, start, exact in _environment_words(value, line, column):
                    # systemd splits an unbraced $VAR at whitespace into several words
                    # (systemd.service(5), "Command lines"): ExecStart=vllm serve $EXTRA.
                    variables[name] = value_tokens(val, line, start, exact=exact and not more and not stray)
                    yield env_fact(name, val, path, line, col, self.name)
            elif key == "EnvironmentFile":
                yield FileReference(value.lstrip("-").strip(), self.name)
                if env_files is not None and value in env_files:
                    values, problem = env_files[value]
                    from_files.update(values)  # a later file wins
                    problems.extend([problem] if problem else [])
            elif key in _EXEC_KEYS:
                stripped = value.lstrip("-@:+!")
                exec_lines[line] = " " * (column + len(value) - len(stripped) - 1) + stripped
                for offset, text in enumerate(more, start=1):
                    exec_lines[line + offset] = text
        if not exec_lines:
            return
        variables.update(from_files)  # EnvironmentFile= values win over Environment= ones
        # One shell text with every ExecStart value at its own line and column.
        lines = source.text.split("\n")
        shell_lines = [
            _unexpanded_in_words(_braced_as_one_word(exec_lines.get(n, ""), set(variables))) for n in range(1, len(lines) + 1)
        ]
        # the variables are the service's environment: a `bash -lc 'SCRIPT'` sees them too
        facts, script = shell_facts(
            "\n".join(shell_lines), path, self.name, variables=variables, environment=dict(variables)
        )
        for fact in facts:
            if fact.kind == FactKind.LAUNCH and not fact.resolved and fact.value and problems:
                fact = replace(fact, value=f"{fact.value} ({'; '.join(problems)})")
            yield fact
        if script.has_error:  # systemd refuses such a line too (unbalanced quotes, ...)
            yield Skipped(
                path,
                f"command line syntax error at line {script.error_line}: the unit's Exec lines were only partly read",
                configures_vllm=True,
                line=script.error_line,
            )


def environment_file(
    wanted: str, files: Sequence[str], read: Callable[[str], SourceFile | None]
) -> tuple[dict[str, list[Token]], str]:
    """The variables of the repository file an ``EnvironmentFile=`` value names, and what
    kept it from being read (``""`` when nothing did).

    The file is the one whose path ends in most of ``wanted``'s trailing components
    (``/opt/judge/serve-flags.env`` is ``deploy/judge/serve-flags.env``, else any file named
    ``serve-flags.env``); when several match equally none is used, and the problem names
    them. Values are split as an unbraced ``$VAR`` is, each word at its place in that file.
    """
    optional = wanted.startswith("-")
    want = [p for p in wanted.lstrip("-").strip().split("/") if p]
    if not want or any(c in "".join(want) for c in "$%"):
        return {}, f"EnvironmentFile={wanted.lstrip('-')} names a path the repository cannot say"

    def common(rel: str) -> int:
        parts, n = rel.split("/"), 0
        while n < min(len(parts), len(want)) and parts[-1 - n] == want[-1 - n]:
            n += 1
        return n

    scores = {rel: common(rel) for rel in files}
    best = max(scores.values(), default=0)
    found = sorted(rel for rel, score in scores.items() if score == best and best > 0)
    shown = "/" + "/".join(want)
    if not found:
        return {}, "" if optional else f"EnvironmentFile={shown} is not in the repository"
    if len(found) > 1:
        return {}, f"EnvironmentFile={shown} matches {len(found)} files ({', '.join(found)}); none was used"
    source = read(found[0])
    if source is None or len(source.text) > _MAX_ENV_FILE_CHARS:
        return {}, f"EnvironmentFile={shown} ({found[0]}) could not be read"
    values: dict[str, list[Token]] = {}
    for binding in parse_stream(io.StringIO(source.text)):
        if binding.key is None or binding.value is None or binding.error:
            continue
        original = binding.original.string
        at = original.find("=", original.find(binding.key) + len(binding.key)) + 1
        at += 1 if original[at : at + 1] in ("\"", "'") else 0
        exact = original[at : at + len(binding.value)] == binding.value
        column = at + 1 if exact else max(original.find(binding.key), 0) + 1
        one_line = exact and "\n" not in binding.value
        values[binding.key] = value_tokens(binding.value, binding.original.line, column, found[0], exact=one_line)
    return values, ""


def _suffix_match(relpath: str, wanted: str) -> bool:
    """``True`` when repository file ``relpath`` can be the file ``wanted`` (by path suffix)."""
    want = wanted.lstrip("/")
    if not want or "$" in want or "%" in want:
        return False
    return relpath == want or relpath.endswith("/" + want) or want.endswith("/" + relpath)
