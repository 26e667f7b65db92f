"""Dockerfiles: ``FROM`` images (``ARG`` defaults substituted), ``ENV``, ``RUN pip install``,
and ``ENTRYPOINT``/``CMD`` in exec and shell form.

Parsed with ``dockerfile-parse``. In a stage built ``FROM`` a vLLM image, whose entry point
is vLLM's OpenAI server, exec-form ``CMD`` items are vLLM CLI flags unless the stage sets
its own ``ENTRYPOINT``.
"""

from __future__ import annotations

import io
import json
import re
import shlex
from collections.abc import Iterator

from dockerfile_parse import DockerfileParser

from vllm_upgrade_check.model.facts import Fact, Skipped
from vllm_upgrade_check.scanners.base import Scanner, SourceFile
from vllm_upgrade_check.scanners.launch import (
    arg_facts,
    env_fact,
    image_fact,
    image_hint,
    is_vllm_image,
)
from vllm_upgrade_check.scanners.shell import argv_facts, shell_facts
from vllm_upgrade_check.shellparse import Token, offset_locator


def is_dockerfile(name: str) -> bool:
    """``Dockerfile``, ``Dockerfile.*``, ``*.Dockerfile``, ``*.dockerfile``, ``Containerfile``."""
    lower = name.lower()
    return (
        lower in ("dockerfile", "containerfile")
        or lower.startswith(("dockerfile.", "containerfile."))
        or lower.endswith(".dockerfile")
    )


FROM_VARIABLE = re.compile(r"\$(?:\{(\w+)(?:(:?)([-+])([^}]*))?\}|(\w+))")
"""``$NAME``, ``${NAME}``, ``${NAME:-word}``/``${NAME-word}`` and ``${NAME:+word}``/``${NAME+word}``:
the expansions Docker applies to a ``FROM`` line (groups: name, ``:``, ``-``/``+``, word, bare name)."""


def expand_from(reference: str, args: dict[str, str | None]) -> str | None:
    """``reference`` (a ``FROM`` image, as written) with Docker's expansions applied from the
    global ``ARG``s (``args``: name -> default, ``None`` for an ``ARG`` without one), or ``None``
    when a variable has no value here (the build passes it) or another expansion is used.
    dockerfile-parse leaves ``${NAME:-word}`` half-expanded, so ``FROM`` lines are expanded here."""
    unknown = False

    def substitute(m: re.Match[str]) -> str:
        nonlocal unknown
        name = m.group(1) or m.group(5)
        value = args.get(name)
        is_set = value is not None and (value != "" or not m.group(2))
        if m.group(3) == "-":
            return value if is_set and value is not None else m.group(4)
        if m.group(3) == "+":
            return m.group(4) if is_set else ""
        if value is None:
            unknown = True
            return m.group(0)
        return value

    expanded = FROM_VARIABLE.sub(substitute, reference)
    return None if unknown or "$" in expanded else expanded


def _global_args(structure: list[dict[str, object]]) -> dict[str, str | None]:
    """The ``ARG``s before the first ``FROM`` (the only ones a ``FROM`` line sees): name ->
    default (quotes removed), ``None`` without one; a later definition wins."""
    found: dict[str, str | None] = {}
    for item in structure:
        instruction = str(item["instruction"]).upper()
        if instruction == "FROM":
            break
        if instruction != "ARG":
            continue
        try:
            words = shlex.split(str(item["value"]))
        except ValueError:
            continue
        for word in words:
            name, has_value, value = word.partition("=")
            found[name] = value if has_value else found.get(name)
    return found


def _exec_tokens(content: str, words: list[str], first_line: int) -> list[Token]:
    """Place each exec-form word at the line/column where its JSON string is written."""
    lines = content.split("\n")
    tokens: list[Token] = []
    row, cursor = 0, 0
    for word in words:
        needle = json.dumps(word)
        found = False
        while row < len(lines):
            index = lines[row].find(needle, cursor)
            if index >= 0:
                tokens.append(Token(word, first_line + row, index + 2, True, needle))
                cursor = index + len(needle)
                found = True
                break
            row, cursor = row + 1, 0
        if not found:
            tokens.append(Token(word, first_line, 1, True, needle))
    return tokens


class DockerfileScanner(Scanner):
    """Dockerfiles and Containerfiles."""

    name = "dockerfile"

    def accepts(self, source: SourceFile) -> bool:
        return is_dockerfile(source.name)

    def accepts_name(self, name: str) -> bool | None:
        return is_dockerfile(name)

    def scan(self, source: SourceFile) -> Iterator[Fact | Skipped]:
        path = source.relpath
        try:
            parser = DockerfileParser(fileobj=io.BytesIO(source.text.encode("utf-8")))
            structure = parser.structure
            parents = parser.parent_images
        except Exception as exc:  # dockerfile-parse raises plain exceptions on bad input
            yield Skipped(path, f"cannot parse Dockerfile: {exc}", configures_vllm=source.mentions_vllm())
            return
        stage = -1
        base_is_vllm = False
        hint: tuple[str, str] | None = None
        entrypoint_set = False
        variables: dict[str, list[Token]] = {}
        for item in structure:
            instruction = item["instruction"].upper()
            line = item["startline"] + 1
            content = item["content"]
            keyword_len = len(content) - len(content.lstrip()) + len(item["instruction"]) + 1
            body = content.lstrip()[len(item["instruction"]) :]
            body_offset = keyword_len
            if instruction == "FROM":
                stage += 1
                # FROM [--platform=...] image [AS name]: the image is the first word not a flag.
                from_words = [w for w in item["value"].split() if not w.startswith("--")]
                if not from_words:  # a bare FROM: nothing to read, never a crash
                    base_is_vllm, entrypoint_set, hint = False, False, None
                    continue
                reference = parents[stage] if stage < len(parents) else from_words[0]
                if "$" in from_words[0]:
                    reference = expand_from(from_words[0], _global_args(structure)) or reference
                column = content.find(from_words[0], keyword_len - 1) + 1
                token = Token(reference, line, max(column, 1), True, from_words[0])
                base_is_vllm = is_vllm_image(reference)
                entrypoint_set = False
                if base_is_vllm:
                    yield image_fact(token, path, self.name)
                    hint = image_hint(reference, path, line)
                continue
            if instruction == "ENV":
                yield from self._env(body, path, line, body_offset)
                continue
            if instruction == "RUN":
                facts, _ = shell_facts(
                    body, path, self.name, offset_locator(body, line, body_offset), variables, hint
                )
                yield from facts
                continue
            if instruction not in ("CMD", "ENTRYPOINT"):
                continue
            value = item["value"].strip()
            words = _json_array(value)
            if words is not None:
                argv = _exec_tokens(content, words, line)
                launched = argv_facts(argv, path, self.name, hint)
                if launched:
                    yield from launched
                elif instruction == "CMD" and base_is_vllm and not entrypoint_set:
                    yield from arg_facts(
                        argv, path, self.name, start=argv[0] if argv else None, entry="image vllm", hint=hint
                    )
            else:
                facts, _ = shell_facts(
                    body, path, self.name, offset_locator(body, line, body_offset), variables, hint
                )
                yield from facts
            if instruction == "ENTRYPOINT":
                entrypoint_set = True

    def _env(self, body: str, path: str, line: int, offset: int) -> Iterator[Fact]:
        words = body.split()
        if len(words) >= 2 and "=" not in words[0]:  # legacy "ENV NAME value"
            column = offset + len(body) - len(body.lstrip())
            yield env_fact(words[0], " ".join(words[1:]), path, line, column, self.name)
            return
        _facts, script = shell_facts(body, path, self.name, offset_locator(body, line, offset))
        for assignment in script.assignments:
            yield env_fact(
                assignment.name, assignment.value, path, assignment.line, assignment.column, self.name
            )


def _json_array(value: str) -> list[str] | None:
    if not value.startswith("["):
        return None
    try:
        data = json.loads(value)
    except ValueError:
        return None
    if isinstance(data, list) and all(isinstance(w, str) for w in data):
        return data
    return None
