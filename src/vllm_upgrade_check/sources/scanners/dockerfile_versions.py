"""Where a Dockerfile writes its vLLM version: ``FROM`` lines expanded with the global
``ARG``s as Docker expands them, the ``ARG``/``ENV`` defaults placed where they are written,
and a ``pip install vllm==${V}`` pin told where ``V`` is set (so a bump edits that one place,
unless other lines expand it for something else).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace

from vllm_upgrade_check.model.facts import Fact, FactKind, Span, Spans
from vllm_upgrade_check.parsing.shell import Token, offset_locator, parse_shell
from vllm_upgrade_check.parsing.words import sub_span
from vllm_upgrade_check.sources.scanners.images import is_vllm_image

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


_VERSION_TEXT = re.compile(r"\d+(?:\.\d+)+(?:(?:a|b|rc|\.post|\.dev)\d+)?")


def arg_uses(text: str, name: str, vllm_lines: frozenset[int] = frozenset()) -> list[int]:
    """The lines (1-based, once per expansion) that expand ``name`` in ``text`` (``$V``,
    ``${V}``, ``${V:-x}``, ``${V%.*}``, ...) other than as the vLLM version itself
    (``vllm/vllm-openai:v${V}``, ``vllm==${V}``, the image of a ``FROM`` line on one of
    ``vllm_lines`` that reads as a vLLM image: a bump moves those together), comment lines
    left out."""
    use = re.compile(rf"\$\{{?{re.escape(name)}(?![A-Za-z0-9_])")
    out: list[int] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if line.lstrip().startswith("#") or number in vllm_lines:
            continue
        for match in use.finditer(line):
            head = line[: match.start()]
            word = re.split(r"[\s\"']", head)[-1]  # the start of the word the expansion is in
            if word.endswith(("vllm==", "vllm===")) or _vllm_tag_prefix(word):
                continue
            out.append(number)
    return out


def other_uses(name: str, lines: list[int]) -> str:
    """Why a variable ``name`` that other ``lines`` expand is not bumped."""
    where = ", ".join(str(n) for n in dict.fromkeys(lines))
    return (
        f"{name} is also expanded on line{'s' if len(set(lines)) > 1 else ''} {where} for something "
        "else; bumping it would change that too: set the vLLM version by hand"
    )


def _vllm_tag_prefix(prefix: str) -> bool:
    """Whether ``prefix`` (the text of a word before an expansion) is a vLLM image up to
    its tag (``vllm/vllm-openai:v``)."""
    head, colon, tag = prefix.rpartition(":")
    return bool(colon) and tag in ("", "v", "V") and is_vllm_image(head)


def from_version(
    text: str,
    word: Token,
    reference: str,
    defaults: dict[str, Token | None],
    vllm_lines: frozenset[int] = frozenset(),
) -> tuple[Span | None, str]:
    """Where the version of ``FROM`` image ``reference`` (``word`` as written, with
    variables) is written, as Docker reads it: in the word itself (a ``${NAME:-0.26.0}``
    default included) or in the default of the one global ``ARG`` that holds it; or
    ``(None, why)`` when it cannot be set there alone (an ``ARG`` other lines use, a
    version split across parts, an expansion this does not follow, a variable with no
    default in the file).

    Args:
        text: the Dockerfile.
        word: the ``FROM`` word as written.
        reference: the image it reads as.
        defaults: global ``ARG`` name -> its default as a word (``None``: no default).
        vllm_lines: lines of ``FROM`` instructions whose image is a vLLM image.
    """
    written = word.written
    # Parts of the reference as (offset in the reference, text, span of that text or None).
    parts: list[tuple[int, str, Span | None, str | None]] = []
    resolved, cursor = "", 0

    def literal(start: int, end: int) -> None:
        nonlocal resolved
        piece = Token(written, word.line, word.column, True, written, span=word.span)
        parts.append((len(resolved), written[start:end], sub_span(piece, start, end), None))
        resolved += written[start:end]

    for m in FROM_VARIABLE.finditer(written):
        if m.start() > cursor:
            literal(cursor, m.start())
        name = m.group(1) or m.group(5)
        colon, sign = m.group(2), m.group(3)
        default = defaults.get(name)
        is_set = default is not None and (default.text != "" or not colon)
        if sign == "+":
            return None, f"the reference uses ${{{name}{colon}+...}}; set the version by hand"
        if sign == "-" and not is_set:
            literal(m.start(4), m.end(4))  # the word after :-
        elif default is None:
            return None, f"ARG {name} has no default in this file; set the version where the build passes it"
        else:
            parts.append((len(resolved), default.text, sub_span(default, 0, len(default.text)), name))
            resolved += default.text
        cursor = m.end()
    if cursor < len(written):
        literal(cursor, len(written))
    if resolved != reference:
        return None, f"the reference reads {resolved!r} here, not {reference!r}"
    tag_at = resolved.rfind(":") + 1
    version = _VERSION_TEXT.search(resolved, tag_at) if tag_at > 0 and "/" not in resolved[tag_at:] else None
    if version is None:
        return None, "the tag names no version"
    for offset, piece, span, name in parts:
        if offset <= version.start() and version.end() <= offset + len(piece):
            if name is not None and (uses := arg_uses(text, name, vllm_lines)):
                return None, "ARG " + other_uses(name, uses)
            if span is None:
                return None, "the version is not written as plain text; set it by hand"
            begin = span.column + version.start() - offset
            return Span(span.line, begin, span.line, begin + len(version.group())), ""
    return None, f"the version {version.group()} is split across ARGs; set it by hand"


def defaults(structure: list[dict[str, object]], instruction: str, before_from: bool) -> dict[str, Token | None]:
    """``ARG`` (or ``ENV``) name -> its value as a word placed where it is written (``None``
    for an ``ARG`` without a default); with ``before_from``, only those before the first
    ``FROM`` (the global ``ARG``s a ``FROM`` line sees). A later definition wins."""
    found: dict[str, Token | None] = {}
    for item in structure:
        kind = str(item["instruction"]).upper()
        if kind == "FROM" and before_from:
            break
        if kind != instruction:
            continue
        content = str(item["content"])
        line = int(str(item["startline"])) + 1
        keyword_len = len(content) - len(content.lstrip()) + len(str(item["instruction"])) + 1
        body = content.lstrip()[len(str(item["instruction"])) :]
        variables: dict[str, list[Token]] = {}
        script = parse_shell(body, offset_locator(body, line, keyword_len), variables)
        for assignment in script.assignments:
            words = variables.get(assignment.name) or []
            found[assignment.name] = words[0] if len(words) == 1 else Token("", line, 1)
        for name in re.findall(r"(?<![=\w$])([A-Za-z_][A-Za-z0-9_]*)(?=\s|$)", body):
            if instruction == "ARG" and name not in {a.name for a in script.assignments}:
                found.setdefault(name, None)
    return found


def with_pin_spans(
    text: str, body: str, facts: list[Fact], variables: Mapping[str, list[Token]], vllm_lines: frozenset[int]
) -> list[Fact]:
    """``facts`` of a ``RUN`` line, a vLLM pin whose version comes from an ``ARG`` or
    ``ENV`` (``pip install vllm==${VLLM_VERSION}``) told where that version is written."""
    out = []
    for fact in facts:
        if fact.kind != FactKind.REQUIREMENT or fact.name != "vllm" or not (fact.value or "").startswith("=="):
            out.append(fact)
            continue
        pinned = (fact.value or "")[2:]
        for name in re.findall(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)", body):
            words = variables.get(name) or []
            if len(words) == 1 and words[0].text == pinned:
                uses = arg_uses(text, name, vllm_lines)
                span = sub_span(words[0], 0, len(pinned))
                note = (
                    other_uses(name, uses)
                    if uses
                    else ("" if span is not None else "the version is not written as plain text; set it by hand")
                )
                spans = replace(fact.spans or Spans(), version=None if note else span, note=note)
                fact = replace(fact, spans=spans)
                break
        out.append(fact)
    return out
