"""Tables of vLLM flag names in wrapper code: ``SWITCHES = ["--enforce-eager",
"--calculate-kv-scales"]``, ``ENV_TO_FLAG = {"EAGER": "--enforce-eager"}``, a dict keyed by
flags. The wrapper's code decides which of them reach a launch, which is not read here, so
each is an ``arg`` fact of origin :data:`TABLE_ORIGIN` (reported at most at warning), placed
at its string, and counted only in a repository that launches vLLM.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from vllm_upgrade_check.knowledge.known_args import known_args
from vllm_upgrade_check.model.facts import Fact, FactKind, Location
from vllm_upgrade_check.sources.scanners.arg_facts import normalise_flag
from vllm_upgrade_check.sources.scanners.python.source import PythonSource

TABLE_ORIGIN = "flag-table"
"""Origin of the ``arg`` facts of flag names written in a table (a list, tuple, set or dict)."""

_FLAG = re.compile(r"--[a-z][a-z0-9]*(?:[-_.][a-z0-9]+)*")


def table_facts(source: PythonSource, node: ast.AST) -> Iterator[Fact]:
    """The ``arg`` facts of the flag names the literal ``node`` (the value of an assignment)
    holds: its string elements, or its dict's string keys and values, that are a whole
    ``--flag`` (or ``--flag=value``) some vLLM release accepts; nothing for any other value."""
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        strings = list(node.elts)
    elif isinstance(node, ast.Dict):
        strings = [k for k in node.keys if k is not None] + list(node.values)
    else:
        return
    known = known_args()
    for element in strings:
        if not (isinstance(element, ast.Constant) and isinstance(element.value, str)):
            continue
        flag, _, value = element.value.partition("=")
        if not _FLAG.fullmatch(flag):
            continue
        name, aliases = normalise_flag(flag)
        if not known.is_known(name):
            continue
        loc = source.loc(element)
        inside = source.string_span(element)
        column = inside.column if inside is not None else loc.column
        at = Location(source.path, loc.line, column, loc.line, None if column is None else column + len(flag))
        yield Fact(
            FactKind.ARG,
            name,
            at,
            raw=flag,
            value=value or None,
            origin=TABLE_ORIGIN,
            aliases=aliases,
            scanner="python",
            resolved=False,
        )


def without_launch_args(facts: list[Fact]) -> list[Fact]:
    """``facts`` without the table facts at a place a launch's own ``arg`` fact is read
    from (a list a resolved ``subprocess`` argv splats: reported once, as the launch's)."""
    taken = {
        (f.location.line, f.location.column)
        for f in facts
        if f.kind == FactKind.ARG and f.origin != TABLE_ORIGIN
    }
    return [
        f
        for f in facts
        if f.origin != TABLE_ORIGIN or (f.location.line, f.location.column) not in taken
    ]
