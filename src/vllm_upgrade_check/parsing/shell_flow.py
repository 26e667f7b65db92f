"""Control flow the shell walker (:mod:`vllm_upgrade_check.parsing.shell`) follows: the
alternative branches of ``case``/``if``/``&&``/``||`` (a variable assigned in several of
them holds one of several values where it is used later) and the positional parameters a
function call binds (``"$@"``, ``$1`` … ``$9`` in the function's body).

Only tree-sitter-bash nodes are read here; nothing is run.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from itertools import islice, product

import tree_sitter

from vllm_upgrade_check.parsing.words import Token

MAX_COMBINATIONS = 16
"""Most argvs one command is read as when variables it expands hold alternative values
(the first ones in branch order; the rest are not read)."""

MAX_CALL_DEPTH = 4
"""Deepest nesting of function calls followed (a recursive function stops there)."""

POSITIONAL = ("@", "*", *(str(i) for i in range(1, 10)))
"""The positional parameters a function call binds."""

Alternatives = list[list[Token]]
"""The values a variable may hold, each a list of words, in branch order."""


def _after(children: Sequence[tree_sitter.Node], marker: str) -> list[tree_sitter.Node]:
    """The named children after the first anonymous ``marker`` child (``then``, ``else``, ``)``)."""
    for i, child in enumerate(children):
        if not child.is_named and child.type == marker:
            return [c for c in children[i + 1 :] if c.is_named]
    return []


def _before(children: Sequence[tree_sitter.Node], marker: str) -> list[tree_sitter.Node]:
    out = []
    for child in children:
        if not child.is_named and child.type == marker:
            break
        if child.is_named:
            out.append(child)
    return out


def branches(
    node: tree_sitter.Node, text: Callable[[tree_sitter.Node], str]
) -> tuple[list[tree_sitter.Node], list[list[tree_sitter.Node]], bool] | None:
    """The parts of a branching construct: ``(always run, [branch bodies], exhaustive)``, or
    ``None`` when ``node`` is not one. ``exhaustive``: one branch always runs (``else``, a
    ``*)`` case); otherwise none may run.

    Read: ``case_statement`` (each ``case_item``'s commands), ``if_statement`` (``then``,
    each ``elif`` and the ``else`` body; conditions always run) and a ``list`` joined by
    ``&&``/``||`` (its right-hand command may not run)."""
    kind = node.type
    children = node.children
    if kind == "case_statement":
        items = [c for c in node.named_children if c.type == "case_item"]
        plain = [c for c in node.named_children if c.type != "case_item"]
        bodies = [_after(item.children, ")") for item in items]
        patterns = [text(c).strip() for item in items for c in _before(item.children, ")")]
        return plain, bodies, "*" in patterns
    if kind == "if_statement":
        plain = [c for c in _before(children, "then") if c.type != "comment"]
        first = []
        for child in _after(children, "then"):
            if child.type in ("elif_clause", "else_clause"):
                break
            first.append(child)
        bodies = [first]
        exhaustive = False
        for clause in node.named_children:
            if clause.type == "elif_clause":
                plain.extend(_before(clause.children[1:], "then"))
                bodies.append(_after(clause.children, "then"))
            elif clause.type == "else_clause":
                bodies.append(_after(clause.children, "else"))
                exhaustive = True
        return plain, bodies, exhaustive
    if kind == "list" and any(not c.is_named and c.type in ("&&", "||") for c in children):
        named = [c for c in node.named_children if c.type != "comment"]
        if len(named) < 2:
            return None
        return named[:1], [[c] for c in named[1:]], False
    return None


def merged(
    names: Iterable[str],
    recorded: Sequence[dict[str, Alternatives]],
    before: dict[str, Alternatives],
    exhaustive: bool,
) -> dict[str, Alternatives]:
    """What each variable assigned in some branch may hold after the construct: every
    branch's values, and the value from before it when some branch may leave the variable
    alone (the construct is not exhaustive, or a branch does not assign it) and it had one.
    A value is kept once however many ways it reaches here (the same assignment); two
    assignments of the same words stay two values, so that a launch per branch stays one
    whatever a fix makes of the others."""
    out: dict[str, Alternatives] = {}
    for name in names:
        values: Alternatives = []
        for branch in recorded:
            values.extend(branch.get(name, []))
        if (not exhaustive or any(name not in b for b in recorded)) and name in before:
            values.extend(before[name])
        seen: set[int] = set()
        kept: Alternatives = []
        for value in values:
            if id(value) not in seen:
                seen.add(id(value))
                kept.append(value)
        out[name] = kept
    return out


def combinations(alternatives: dict[str, Alternatives], names: Sequence[str]) -> list[dict[str, list[Token]]]:
    """One binding of ``names`` per combination of their alternative values, at most
    :data:`MAX_COMBINATIONS`."""
    pools = [alternatives[n] for n in names]
    return [dict(zip(names, combo, strict=True)) for combo in islice(product(*pools), MAX_COMBINATIONS)]


def expansion_names(nodes: Iterable[tree_sitter.Node], name_of: Callable[[tree_sitter.Node], str | None]) -> list[str]:
    """The names of the variables expanded anywhere in ``nodes`` (``$X``, ``${X:-…}``,
    inside strings and concatenations), in order, each once; command substitutions are
    not entered (their commands are read on their own)."""
    out: dict[str, None] = {}
    stack = list(nodes)[::-1]
    while stack:
        node = stack.pop()
        if node.type in ("command_substitution", "process_substitution"):
            continue
        if node.type in ("simple_expansion", "expansion"):
            name = name_of(node)
            if name is not None:
                out[name] = None
        stack.extend(reversed(node.children))
    return list(out)


def positional(args: Sequence[Token]) -> dict[str, list[Token]]:
    """The positional parameters a call with ``args`` binds: ``@``/``*`` all of them,
    ``1`` … ``9`` one each (empty past the last)."""
    bound: dict[str, list[Token]] = {"@": list(args), "*": list(args)}
    for i in range(1, 10):
        bound[str(i)] = [args[i - 1]] if i <= len(args) else []
    return bound
