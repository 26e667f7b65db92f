"""Values a Python launch reads from the environment: ``os.environ.get("X", "d")``,
``os.getenv("X", "d")``, ``os.environ["X"]`` (also through ``int(...)``/``float(...)``/
``str(...)``, and ``environ`` imported from ``os``).

The keyword or flag is passed whatever the environment holds, so it is a fact as written. Its
value is the literal default when the read has one (what runs when the deployment sets nothing
else); without one it is unknown, written ``${X}`` (:func:`placeholder`) so that no check
judges it, and the report names it unresolved (:data:`~vllm_upgrade_check.model.facts.ENV_VALUE`). Nothing is evaluated.
"""

from __future__ import annotations

import ast

from vllm_upgrade_check.parsing.words import Token
from vllm_upgrade_check.sources.scanners.python.source import PythonSource

ENV_CALLS = frozenset({"os.environ.get", "os.getenv"})
"""The calls that read one environment variable, a default second."""

_CASTS = frozenset({"int", "float", "str"})



def placeholder(name: str) -> str:
    """The value text of environment variable ``name`` read with no default: ``${NAME}``."""
    return "${" + name + "}"


def env_read(source: PythonSource, node: ast.AST | None) -> tuple[str, ast.expr | None] | None:
    """``(variable, default node or None)`` when ``node`` reads one environment variable
    named by a string literal, else ``None``."""
    while (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in _CASTS
        and len(node.args) == 1
        and not node.keywords
    ):
        node = node.args[0]
    if isinstance(node, ast.Call) and node.args and source.qualified(node.func) in ENV_CALLS:
        name = node.args[0]
        if not (isinstance(name, ast.Constant) and isinstance(name.value, str)):
            return None
        default = node.args[1] if len(node.args) > 1 else next((k.value for k in node.keywords if k.arg == "default"), None)
        return name.value, default
    if isinstance(node, ast.Subscript) and source.qualified(node.value) == "os.environ":
        key = node.slice
        if isinstance(key, ast.Constant) and isinstance(key.value, str):
            return key.value, None
    return None


def env_default(source: PythonSource, node: ast.AST | None) -> ast.Constant | None:
    """The value the environment read ``node`` has when the deployment sets nothing else: what
    the file itself sets the variable to at module level (``os.environ["X"] = "8"``,
    ``os.environ.setdefault("X", "8")``), else the read's literal default (a string, number
    or boolean; not ``None``), else ``None``."""
    read = env_read(source, node)
    if read is None:
        return None
    set_here = _module_sets(source).get(read[0])
    if set_here is not None:
        return set_here
    if not isinstance(read[1], ast.Constant):
        return None
    value = read[1].value
    return read[1] if isinstance(value, (str, int, float, bool)) else None


_SETS: dict[int, tuple[PythonSource, dict[str, ast.Constant]]] = {}


def _module_sets(source: PythonSource) -> dict[str, ast.Constant]:
    """The environment variables the file's module-level statements set to a string literal
    (the last one written wins), read once per file."""
    held = _SETS.get(id(source))
    if held is not None and held[0] is source:
        return held[1]
    found: dict[str, ast.Constant] = {}
    for stmt in source.tree.body:
        value: ast.expr | None = None
        key: ast.expr | None = None
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Subscript):
            if source.qualified(stmt.targets[0].value) == "os.environ":
                key, value = stmt.targets[0].slice, stmt.value
        elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and len(stmt.value.args) == 2:
            if source.qualified(stmt.value.func) == "os.environ.setdefault":
                key, value = stmt.value.args
        if isinstance(key, ast.Constant) and isinstance(key.value, str) and isinstance(value, ast.Constant):
            if isinstance(value.value, str):
                found[key.value] = value
    if len(_SETS) > 64:
        _SETS.clear()
    _SETS[id(source)] = (source, found)
    return found


def env_value_text(source: PythonSource, node: ast.AST) -> str | None:
    """The value text of an environment read: its literal default, else ``${NAME}``;
    ``None`` when ``node`` is no environment read."""
    read = env_read(source, node)
    if read is None:
        return None
    default = env_default(source, node)
    return str(default.value) if default is not None else placeholder(read[0])


def value_text(source: PythonSource, node: ast.AST) -> str:
    """A keyword's value as text: an environment read's (:func:`env_value_text`), else a
    literal's value, else its source text (:meth:`.source.PythonSource.value_text`)."""
    from_env = env_value_text(source, node)
    return from_env if from_env is not None else source.value_text(node)


def env_word(source: PythonSource, node: ast.AST) -> Token | None:
    """The argv word of an environment read (``None`` for anything else): its value when the
    deployment sets nothing else (:func:`env_default`), or the unresolved ``${NAME}`` when it
    has none; placed at the read, whose whole expression is its span (a fix cuts it as its
    list's element)."""
    read = env_read(source, node)
    if read is None:
        return None
    span = source.span(node)
    default = env_default(source, node)
    if default is None:
        loc = source.loc(node)
        return Token(placeholder(read[0]), loc.line or 0, loc.column or 0, False, source.segment(node), span=span)
    loc = source.loc(node)
    return Token(str(default.value), loc.line or 0, loc.column or 0, True, source.segment(node), span=span)
