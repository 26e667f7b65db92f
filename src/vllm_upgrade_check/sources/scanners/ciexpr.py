"""CI expressions and variables in the shell scripts of GitHub Actions and GitLab CI files.

A GitHub Actions ``run:`` script may hold ``${{ ... }}`` expressions, which the runner
replaces before the shell reads the script (GitHub docs, "Evaluate expressions in workflows
and actions"). They are not shell: each is overwritten, character for character, with
:data:`~.templates.PLACEHOLDER` (as Helm actions are, :mod:`.templates`), so that the words
around it keep their place and a word holding one reads as a value only the run knows, never
a flag. The words keep their written text (the expression as written), which is what notes
and the relocation of folded scalars show and search for; a launch whose command holds one
has it among its unresolved words (a note names it).

The ``env:`` of a workflow, a job and a step (GitHub Actions), and the ``variables:`` of a
GitLab CI file and of a job, set environment variables the script's shell expands
(``$EXTRA``): those whose value is a literal (no expression, no ``$``) are known to the
shell parser, each word placed where it is written in the YAML file.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace

import yaml

from vllm_upgrade_check.model.facts import Fact, FactKind
from vllm_upgrade_check.parsing.shell import ShellScript, Token
from vllm_upgrade_check.parsing.yamlnodes import get, mapping_items, scalar
from vllm_upgrade_check.parsing.yamlwords import scalar_word
from vllm_upgrade_check.sources.scanners.templates import PLACEHOLDER

Relocate = Callable[[Token], Token]

_EXPRESSION = re.compile(r"\$\{\{.*?\}\}", re.DOTALL)
"""A GitHub Actions expression ``${{ ... }}`` (GitLab CI's ``$[[ inputs.x ]]`` too)."""
_GITLAB_INPUT = re.compile(r"\$\[\[.*?\]\]", re.DOTALL)


_ENV_REFERENCE = re.compile(r"\$\{\{\s*env\.([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
"""``${{ env.NAME }}``: the value of an ``env:`` variable of the workflow, job or step."""


def env_references(text: str, known: dict[str, list[Token]]) -> str:
    """``text`` with each ``${{ env.NAME }}`` whose ``NAME`` is a literal variable of
    ``known`` written as a shell expansion of the same length (``${NAME____}``), the padded
    name bound in ``known`` to ``NAME``'s words: the runner puts that value there, so the
    script reads it (each word placed where the ``env:`` value writes it)."""

    def reference(m: re.Match[str]) -> str:
        name = m.group(1)
        if name not in known:
            return m.group(0)
        padded = name + "_" * (len(m.group(0)) - len(name) - 3)
        known[padded] = known[name]
        return "${" + padded + "}"

    return _ENV_REFERENCE.sub(reference, text) if "${{" in text else text


def neutralise_expressions(text: str) -> str:
    """``text`` with each ``${{ ... }}`` (and GitLab ``$[[ ... ]]``) overwritten by
    :data:`PLACEHOLDER` characters (same length, line breaks kept)."""

    def blank(m: re.Match[str]) -> str:
        return "".join("\n" if c == "\n" else PLACEHOLDER for c in m.group(0))

    return _GITLAB_INPUT.sub(blank, _EXPRESSION.sub(blank, text))


def _written(original: Sequence[str], neutral: Sequence[str], token: Token) -> str | None:
    """The original text of ``token`` (parsed from the neutralised rows ``neutral``) where it
    holds a neutralised expression on one line, else ``None``."""
    written = token.written or token.text
    if PLACEHOLDER not in written or "\n" in written:
        return None
    row, start = token.line - 1, token.column - 1
    if not 0 <= row < len(neutral) or neutral[row][start : start + len(written)] != written:
        return None
    return original[row][start : start + len(written)]


def restoring(original: str, neutral: str, placed: set[tuple[int, int]], inner: Relocate) -> Relocate:
    """A relocator for tokens parsed from ``neutral``: each word holding an expression gets
    its written text back from ``original`` before ``inner`` places it; a token in ``placed``
    (a variable's word, already at its file position) is left where it is."""
    rows, neutral_rows = original.split("\n"), neutral.split("\n")

    def move(token: Token) -> Token:
        if (token.line, token.column) in placed and not (token.written or "").startswith("$"):
            return token
        restored = _written(rows, neutral_rows, token)
        return inner(replace(token, written=restored) if restored is not None else token)

    return move


def with_expressions(
    facts: Iterable[Fact], script: ShellScript, original: str, neutral: str, move: Relocate
) -> list[Fact]:
    """``facts`` with each vLLM launch whose command holds ``${{ ... }}`` expressions outside
    the words it reports unresolved (the image tag of ``docker run IMAGE:${{ env.T }}``)
    given them as unresolved words too, so that a note names them; facts whose name or
    raw text is an expression are dropped, a value that is one is unknown (``None``)."""
    rows, neutral_rows = original.split("\n"), neutral.split("\n")
    held: dict[tuple[int, int], list[str]] = {}
    for command in script.commands:
        if not command.argv:
            continue
        found = [
            m.group(0)
            for token in command.argv
            if (text := _written(rows, neutral_rows, token)) is not None
            for m in _EXPRESSION.finditer(text)
        ]
        if found:
            first = move(command.argv[0])
            held[(first.line, first.column)] = found
    out: list[Fact] = []
    for fact in facts:
        if PLACEHOLDER in fact.raw or PLACEHOLDER in fact.name:
            continue
        if PLACEHOLDER in (fact.value or ""):
            if fact.kind == FactKind.MODEL:
                continue
            fact = replace(fact, value=None, resolved=False)
        found = held.get((fact.location.line or 0, fact.location.column or 0), [])
        if fact.kind == FactKind.LAUNCH and found:
            words = (fact.value or "").split()
            missing = [e for e in found if not any(e in w for w in words)]
            if missing:
                fact = replace(fact, value=" ".join([*missing, *words]), resolved=False)
        out.append(fact)
    return out


def literal_variables(
    text: str, nodes: Iterable[yaml.Node | None], variables: dict[str, list[Token]] | None = None
) -> dict[str, list[Token]]:
    """The variables a CI script's shell sees from ``env:``/``variables:`` mappings
    (``nodes``, outermost first: a later one wins), each literal value split at blanks as an
    unquoted ``$NAME`` is, its words placed where they are written in the YAML file (all at
    the value's start where the value is not written as it reads). A value holding an
    expression or a ``$`` is left out (the shell reads it as unknown); a GitLab variable
    may be a mapping with ``value:``."""
    out = dict(variables or {})
    for node in nodes:
        for name, _key, entry in mapping_items(node):
            value_node = get(entry, "value") if isinstance(entry, yaml.MappingNode) else entry
            value = scalar(value_node)
            if not isinstance(value_node, yaml.ScalarNode) or value is None or "$" in value or "\n" in value:
                out.pop(name, None)
                continue
            word = scalar_word(text, value_node)
            exact = (word.written or "").strip("'\"") == value
            out[name] = [
                Token(m.group(), word.line, word.column + (m.start() if exact else 0), True, m.group())
                for m in re.finditer(r"\S+", value)
            ]
    return out
