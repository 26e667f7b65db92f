"""Compose interpolation from the project's ``.env`` file.

Compose substitutes ``${VAR}``, ``$VAR``, ``${VAR:-default}`` and ``${VAR-default}`` in the
compose file itself from, highest first: the shell environment, the ``.env`` file of the
project directory (the compose file's own directory), then the default written in the
expression. ``environment:`` and ``env_file:`` set the container's environment only: they
take no part in that interpolation (Docker's docs, "Set, use, and manage variables in a
Compose file with interpolation" and "Environment variables precedence in Docker Compose").
The shell environment is not in the repository, so what ``.env`` says is read as the value in
use, placed at its own line there; a variable neither sets stays unresolved (or takes its
default).

A command written as one string is interpolated first and split into words after, so a
``.env`` value of several flags gives several words, each at its place in ``.env``; an item
of a command list stays one word.
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace

import yaml
from dotenv.parser import parse_stream

from vllm_upgrade_check.knowledge.versions import tag_version_span
from vllm_upgrade_check.model.facts import Span
from vllm_upgrade_check.parsing.words import Token
from vllm_upgrade_check.sources.scanners.base import SourceFile
from vllm_upgrade_check.sources.scanners.compose_cli import COMPOSE_FILE, Named
from vllm_upgrade_check.sources.scanners.images import split_image

MAX_DOTENV_CHARS = 1_000_000
"""A ``.env`` larger than this is not read (it is no project's variables)."""


@dataclass(frozen=True)
class DotenvValue:
    """One variable of a compose project's ``.env``: its value, and where the value is written
    (``path``, 1-based ``line`` and ``column`` of its first character; ``exact``: the value is
    written as it reads there, so each of its characters has its own column)."""

    value: str
    path: str
    line: int
    column: int
    exact: bool


Dotenv = Mapping[str, DotenvValue]
"""A compose project's ``.env`` variables by name."""

_REFERENCE = re.compile(r"\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?+])([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)")
"""``$$`` (a literal ``$``), ``${VAR}``, ``${VAR:-default}``/``${VAR-default}`` (and the
``?``/``+`` forms), ``$VAR``: compose's interpolation syntax."""


def project_dotenv_path(compose_relpath: str) -> str:
    """The ``.env`` of the project a compose file at ``compose_relpath`` belongs to: in the
    same directory (compose's default project directory)."""
    folder = compose_relpath.rpartition("/")[0]
    return f"{folder}/.env" if folder else ".env"


def read_dotenv(compose_relpath: str, read: Callable[[str], SourceFile | None]) -> Dotenv:
    """The variables of the project ``.env`` of a compose file (none when the repository
    holds no such file or it cannot be read). Values compose would interpolate further
    (holding ``$``) are left out: what they read as is not known here."""
    return read_env_file(project_dotenv_path(compose_relpath), read)


def read_env_file(rel: str, read: Callable[[str], SourceFile | None]) -> dict[str, DotenvValue]:
    """The variables of dotenv file ``rel`` as compose interpolates them (the project
    ``.env``, or a file ``docker compose --env-file`` names), each placed at its value; none
    when the repository holds no such file. Values holding ``$`` are left out."""
    source = read(rel)
    if source is None or len(source.text) > MAX_DOTENV_CHARS:
        return {}
    return dotenv_values(source.text, rel)


def dotenv_values(text: str, rel: str) -> dict[str, DotenvValue]:
    """The variables of dotenv ``text`` (file ``rel``) as compose reads them (python-dotenv's
    parser), each placed where its value is written; a value holding ``$`` outside single
    quotes is left out (compose interpolates it further)."""
    out: dict[str, DotenvValue] = {}
    for binding in parse_stream(io.StringIO(text)):
        if binding.key is None or binding.value is None or binding.error:
            continue
        original = binding.original.string
        at = original.find("=", original.find(binding.key) + len(binding.key)) + 1
        quoted = original[at : at + 1]
        if quoted in ("\"", "'"):
            at += 1
        if "$" in binding.value and quoted != "'":
            out.pop(binding.key, None)
            continue
        exact = original[at : at + len(binding.value)] == binding.value
        column = at + 1 if exact else max(original.find(binding.key), 0) + 1
        out[binding.key] = DotenvValue(binding.value, rel, binding.original.line, column, exact)
    return out


COMPOSE_PATH_SEPARATOR = "COMPOSE_PATH_SEPARATOR"
"""The variable that sets :data:`COMPOSE_FILE`'s separator (``:`` on Linux and macOS)."""


def dotenv_compose_files(text: str, rel: str) -> list[Named]:
    """The compose files a project ``.env`` (``text``, file ``rel``) names in
    ``COMPOSE_FILE``, in order, each placed where it is written there (the value's start when
    it is not written as it reads): ``docker compose`` run in that folder without ``-f``
    merges them as ``-f a -f b`` (Docker's docs, "Pre-defined environment variables":
    ``COMPOSE_FILE`` split at ``COMPOSE_PATH_SEPARATOR``, ``:`` unless that says otherwise).
    None when the file sets no ``COMPOSE_FILE``, or one that holds ``$``."""
    if COMPOSE_FILE not in text:
        return []
    values = dotenv_values(text, rel)
    found = values.get(COMPOSE_FILE)
    if found is None:
        return []
    separator = values[COMPOSE_PATH_SEPARATOR].value if COMPOSE_PATH_SEPARATOR in values else ":"
    out: list[Named] = []
    offset = 0
    for part in found.value.split(separator or ":"):
        stripped = part.strip()
        if stripped:
            column = found.column + offset + part.index(stripped) if found.exact else found.column
            out.append(Named(stripped, found.line, column, len(stripped) if found.exact else len(COMPOSE_FILE), option=COMPOSE_FILE))
        offset += len(part) + len(separator or ":")
    return out


def interpolate(text: str, dotenv: Dotenv) -> tuple[str, bool]:
    """``text`` with compose's references substituted from ``dotenv`` (else their defaults),
    and whether every reference was known (``False``: the shell environment alone can say)."""
    known = True

    def sub(m: re.Match[str]) -> str:
        nonlocal known
        if m.group(0) == "$$":
            return "$"
        name = m.group(1) or m.group(4)
        op, default = m.group(2), m.group(3) or ""
        found = dotenv.get(name)
        value = found.value if found is not None else None
        if op in (":-", "-"):
            if value is None or (op == ":-" and not value):
                return default
            return value
        if op in (":+", "+"):
            return default if value is not None and (op == "+" or value) else ("" if value is not None else m.group(0))
        if value is None:
            known = False
            return m.group(0)
        return value

    return _REFERENCE.sub(sub, text), known


def whole_reference(text: str, dotenv: Dotenv) -> DotenvValue | None:
    """The ``.env`` variable ``text`` is nothing but a reference to (``${VAR}``, ``$VAR``,
    ``${VAR:-default}`` with ``VAR`` set), or ``None``."""
    m = _REFERENCE.fullmatch(text)
    if m is None or m.group(0) == "$$" or (m.group(2) or "") not in ("", ":-", "-"):
        return None
    found = dotenv.get(m.group(1) or m.group(4) or "")
    if found is None or (m.group(2) == ":-" and not found.value):
        return None
    return found


def value_words(found: DotenvValue) -> list[Token]:
    """A ``.env`` value as the words compose splits a command string into, each placed in
    ``.env`` (at the value's start when it is not written as it reads)."""
    words = list(re.finditer(r"\S+", found.value))
    if not found.exact:
        return [Token(m.group(), found.line, found.column, True, m.group(), path=found.path) for m in words]
    out = []
    line, base = found.line, found.column
    for index, m in enumerate(words):
        before = (line, base + words[index - 1].end()) if index else None
        after = (line, base + words[index + 1].start()) if index + 1 < len(words) else None
        span = Span(line, base + m.start(), line, base + m.end())
        out.append(Token(m.group(), line, base + m.start(), True, m.group(), span, prev_end=before, next_start=after, path=found.path))
    return out


def interpolated_words(tokens: list[Token], dotenv: Dotenv, split: bool) -> list[Token]:
    """Command words with the references compose resolves from ``dotenv`` substituted.

    ``split``: the command is one string (a word that is only a reference becomes the words
    of its value, placed in ``.env``); else each word is a list item (it stays one word, placed
    in ``.env`` when it is only a reference). A word holding a reference ``.env`` does not set
    is left as it was read.
    """
    if not dotenv:
        return tokens
    out: list[Token] = []
    for token in tokens:
        written = token.written or token.text
        if "$" not in written:
            out.append(token)
            continue
        bare = written.strip("\"") if split else token.text
        found = whole_reference(bare, dotenv)
        if found is not None:
            if split and not written.startswith("\""):
                out.extend(value_words(found))
            else:
                out.append(Token(found.value, found.line, found.column, True, found.value, path=found.path))
            continue
        text, known = interpolate(token.text if not split else _unquoted(written), dotenv)
        out.append(replace(token, text=text, resolved=known) if known else token)
    return out


def _unquoted(written: str) -> str:
    if len(written) >= 2 and written[0] == written[-1] and written[0] in "\"'":
        return written[1:-1]
    return written


def dotenv_image(image: str, dotenv: Dotenv) -> tuple[str, DotenvValue, Span | None] | None:
    """A compose ``image`` whose tag a ``.env`` variable sets (``vllm/vllm-openai:${TAG:-v0.16.0}``
    with ``TAG=v0.12.0``): the image as compose reads it, the variable, and where the tag's
    version is written in ``.env`` (``None`` when it is not written there as it reads)."""
    if not dotenv or "$" not in image:
        return None
    used: DotenvValue | None = None
    for m in _REFERENCE.finditer(image):
        found = dotenv.get(m.group(1) or m.group(4) or "")
        op = m.group(2) or ""
        if found is not None and op in ("", ":-", "-") and (found.value or op != ":-"):
            used = found  # the value .env sets is the one read (not the default)
    if used is None:
        return None
    expanded, known = interpolate(image, dotenv)
    if not known:
        return None
    tag = split_image(expanded)[1] or ""
    version = tag_version_span(tag) if tag else None
    at = expanded.rfind(used.value)
    if version is None or not used.exact or at < 0:
        return expanded, used, None
    begin, end = len(expanded) - len(tag) + version[0], len(expanded) - len(tag) + version[1]
    if not (at <= begin and end <= at + len(used.value)):
        return expanded, used, None  # the version is written in the compose file, not in .env
    return expanded, used, Span(used.line, used.column + begin - at, used.line, used.column + end - at)


def dotenv_read(text: str, node: yaml.Node, dotenv: Dotenv) -> list[DotenvValue]:
    """The ``.env`` variables compose interpolates into ``node`` (a service, as written in
    compose file ``text``): those its text references (``${VAR}``, ``$VAR``, with or without
    a default), once each."""
    if not dotenv:
        return []
    region = text[node.start_mark.index : node.end_mark.index]
    names = dict.fromkeys(m.group(1) or m.group(4) for m in _REFERENCE.finditer(region) if m.group(0) != "$$")
    return [dotenv[n] for n in names if n and n in dotenv]


def dotenv_span(value: DotenvValue) -> Span:
    """Where a ``.env`` value is written (its first line; its start when not written as it
    reads)."""
    length = len(value.value.split("\n", 1)[0]) if value.exact else 1
    return Span(value.line, value.column, value.line, value.column + max(length, 1))
