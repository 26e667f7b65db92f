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
from itertools import islice, product

import yaml

from vllm_upgrade_check.model.facts import Fact, FactKind, Span, Spans
from vllm_upgrade_check.parsing.shell import ShellScript, Token
from vllm_upgrade_check.parsing.shell_flow import MAX_COMBINATIONS
from vllm_upgrade_check.parsing.yamlnodes import get, items, mapping_items, scalar
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
            # an expression holds blanks (``${{ inputs.args }}``): look for it in the whole value
            missing = [e for e in dict.fromkeys(found) if e not in (fact.value or "")]
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


_MATRIX_REFERENCE = re.compile(r"\$\{\{\s*matrix\.([A-Za-z_][A-Za-z0-9_-]*(?:\.[A-Za-z_][A-Za-z0-9_-]*)?)\s*\}\}")
"""``${{ matrix.NAME }}`` (or ``matrix.NAME.FIELD`` of a matrix of mappings): one value of
the job's ``strategy.matrix`` per run of the job."""


def matrix_values(text: str, job: yaml.Node | None) -> dict[str, list[list[Token]]]:
    """The values of each name of a GitHub Actions job's ``strategy.matrix`` (``NAME`` and,
    for a list of mappings, ``NAME.FIELD``): the list items of ``NAME`` and the ``include``
    entries' values of it, in the order written, each split at blanks as the runner's
    substitution is read by the shell, its words placed where the YAML file writes them.

    A name with a value that is no literal (an expression, a ``$``, a mapping where a word
    is expected), or a matrix that is itself an expression (``${{ fromJSON(...) }}``), is left
    out: the script's reference to it stays unresolved (a note names it). ``exclude``
    entries remove combinations, never values, so they are not read (GitHub docs,
    "Running variations of jobs in a workflow")."""
    matrix = get(get(job, "strategy"), "matrix")
    if not isinstance(matrix, yaml.MappingNode):
        return {}
    nodes: dict[str, list[yaml.Node]] = {}
    for name, _key, entry in mapping_items(matrix):
        if name == "include":
            for item in items(entry):
                for field, _k, value in mapping_items(item):
                    nodes.setdefault(field, []).append(value)
                    for sub, _k2, inner in mapping_items(value):
                        nodes.setdefault(f"{field}.{sub}", []).append(inner)
        elif name != "exclude":
            values = list(items(entry)) if isinstance(entry, yaml.SequenceNode) else [entry]
            nodes.setdefault(name, []).extend(values)
            for value in values:
                for sub, _k2, inner in mapping_items(value):
                    nodes.setdefault(f"{name}.{sub}", []).append(inner)
    out: dict[str, list[list[Token]]] = {}
    for name, found in nodes.items():
        words = [_literal_words(text, node) for node in found]
        if words and all(w is not None for w in words):
            out[name] = [w for w in words if w is not None]
    return out


def _literal_words(text: str, node: yaml.Node | None) -> list[Token] | None:
    """The words of a literal scalar value placed in the YAML file, ``None`` for any other."""
    value = scalar(node)
    if not isinstance(node, yaml.ScalarNode) or value is None or "$" in value or "\n" in value:
        return None
    word = scalar_word(text, node)
    exact = (word.written or "").strip("'\"") == value
    return [
        Token(m.group(), word.line, word.column + (m.start() if exact else 0), True, m.group())
        for m in re.finditer(r"\S+", value)
    ]


def matrix_env(
    nodes: Iterable[yaml.Node | None], matrix: dict[str, list[list[Token]]], known: dict[str, list[Token]]
) -> dict[str, list[list[Token]]]:
    """The ``env:`` variables (``nodes``, outermost first: a later one wins) whose whole value
    is one matrix value (``VLLM_VERSION: ${{ matrix.vllm }}``) with literal ``matrix``
    values: each holds one of them, as the script's shell expands it (``$VLLM_VERSION``).
    Each is taken out of ``known``, the variables of one literal value."""
    out: dict[str, list[list[Token]]] = {}
    for node in nodes:
        for name, _key, entry in mapping_items(node):
            m = _MATRIX_REFERENCE.fullmatch((scalar(entry) or "").strip())
            if m is not None and m.group(1) in matrix:
                out[name] = matrix[m.group(1)]
                known.pop(name, None)
            elif name in out:
                del out[name]
    return out


def matrix_references(
    text: str, values: dict[str, list[list[Token]]], alternatives: dict[str, list[list[Token]]]
) -> str:
    """``text`` with each ``${{ matrix.NAME }}`` whose ``NAME`` has literal ``values``
    (:func:`matrix_values`) written as a shell expansion of the same length, the padded name
    bound in ``alternatives`` to ``NAME``'s values: the script is then read once per value
    (:func:`~vllm_upgrade_check.parsing.shell.parse_shell`), each word placed where the
    matrix writes it."""

    def reference(m: re.Match[str]) -> str:
        name = m.group(1)
        if name not in values:
            return m.group(0)
        shell = "MATRIX_" + re.sub(r"[^A-Za-z0-9_]", "_", name)
        padded = shell + "_" * (len(m.group(0)) - len(shell) - 3)
        alternatives[padded] = values[name]
        return "${" + padded + "}"

    return _MATRIX_REFERENCE.sub(reference, text) if "matrix." in text else text


def pins_at_matrix_values(
    facts: list[Fact], script: ShellScript, alternatives: dict[str, list[list[Token]]], move: Relocate
) -> list[Fact]:
    """``facts`` with each requirement read from a word that expands a matrix value
    (``pip install vllm==${{ matrix.vllm }}``, read once per value) placed at the value it
    was read with, where the matrix writes the version: the version in use is that value,
    and a bump sets it there (``version`` span, YAML syntax). The parser reads a command once
    per combination of the values it expands, in order (the first name's values slowest), so
    the k-th requirement read at a word is the k-th combination's. A requirement whose
    version is not that value written on its own is left where it is."""
    words: dict[tuple[int, int], tuple[str, list[str]]] = {}  # word -> (its name, the command's names)
    expands = {n: re.compile(r"\$\{?" + re.escape(n) + r"(?![A-Za-z0-9_])") for n in alternatives}

    def first(name: str, written: list[str]) -> tuple[int, int]:
        return min((i, m.start()) for i, w in enumerate(written) if (m := expands[name].search(w)))

    for command in script.commands:
        written = [t.written or "" for t in command.argv]
        names = sorted((n for n in alternatives if any(expands[n].search(w) for w in written)), key=lambda n: first(n, written))
        for token, text in zip(command.argv, written, strict=True):
            mine = [n for n in names if expands[n].search(text)]
            if mine:
                at = move(token)
                words[(at.line, at.column)] = (mine[0], names)
    if not words:
        return facts
    seen: dict[tuple[int, int], int] = {}
    out = []
    for fact in facts:
        where = (fact.location.line or 0, fact.location.column or 0)
        if fact.kind == FactKind.REQUIREMENT and where in words and fact.value:
            name, names = words[where]
            k = seen[where] = seen.get(where, -1) + 1
            combos = list(islice(product(*(range(len(alternatives[n])) for n in names)), MAX_COMBINATIONS))
            tokens = alternatives[name][combos[k][names.index(name)]] if k < len(combos) else []
            version = fact.value.lstrip("=~<>!")
            if len(tokens) == 1 and tokens[0].text == version:
                value = tokens[0]
                span = Span(value.line, value.column, value.line, value.column + len(version))
                fact = replace(
                    fact,
                    location=replace(fact.location, line=value.line, column=value.column),
                    spans=Spans(version=span, syntax="yaml"),
                )
        out.append(fact)
    return out
