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
    """The literal default (a string, number or boolean; not ``None``) of the environment
    read ``node``, else ``None``."""
    read = env_read(source, node)
    if read is None or not isinstance(read[1], ast.Constant):
        return None
    value = read[1].value
    return read[1] if isinstance(value, (str, int, float, bool)) else None


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
    """The argv word of an environment read (``None`` for anything else): its literal default,
    placed at the default, or the unresolved ``${NAME}`` placed at the read when it has none;
    either way the whole read expression is its span, which a fix cuts as its list's element."""
    read = env_read(source, node)
    if read is None:
        return None
    span = source.span(node)
    default = env_default(source, node)
    if default is None:
        loc = source.loc(node)
        return Token(placeholder(read[0]), loc.line or 0, loc.column or 0, False, source.segment(node), span=span)
    loc = source.loc(default)
    quoted = source.segment(default)[:1] in ("'", '"')
    text = str(default.value)
    return Token(text, loc.line or 0, (loc.column or 0) + quoted, True, source.segment(node), span=span)
