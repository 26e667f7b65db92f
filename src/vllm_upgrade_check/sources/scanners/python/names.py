"""What the Python reader recognises by name: the vLLM classes whose keywords are engine args
or sampling parameters, the calls that run a command, the response fields client code
reads, the dict methods that change a dict and the calls that only show their arguments;
with the two small :mod:`ast` readers every part uses (:func:`const_text`, :func:`dotted_name`).
"""

from __future__ import annotations

import ast

ENGINE_CALLS = frozenset({"LLM", "EngineArgs", "AsyncEngineArgs"})
"""vLLM classes whose keywords are engine args (``vllm/entrypoints/llm.py``, ``vllm/engine/arg_utils.py``)."""
SAMPLING_CALLS = frozenset({"SamplingParams"})
"""vLLM classes whose keywords are sampling parameters (``vllm/sampling_params.py``)."""
SUBPROCESS_CALLS = frozenset(
    {
        "subprocess.run",
        "subprocess.Popen",
        "subprocess.call",
        "subprocess.check_call",
        "subprocess.check_output",
        "os.system",
    }
)
"""Calls whose first argument is a command (argv list or shell string)."""
RESPONSE_FIELDS = frozenset({"reasoning_content", "reasoning"})
"""Response fields whose reading by client code is reported: those the bundled rules name,
and what their fixes rename them to (so a fixed client still reads as one; a test keeps
this in step with the packs)."""

DICT_CHANGES = frozenset({"update", "pop", "setdefault", "clear", "popitem", "__setitem__", "__delitem__"})
"""Methods of a dict that change it in place (the scanner follows ``update``; the others make
its keywords unknown)."""


def is_logging(func: ast.AST) -> bool:
    """``print(...)``, ``logger.info(...)`` and the like: calls that only show their arguments."""
    if isinstance(func, ast.Name):
        return func.id in ("print", "pprint", "repr", "str")
    return isinstance(func, ast.Attribute) and func.attr in (
        "debug",
        "info",
        "warning",
        "warn",
        "error",
        "exception",
        "critical",
        "log",
        "pprint",
        "dumps",
    )


def const_text(node: ast.AST) -> str | None:
    """The value of a string, number or boolean literal as text, else ``None``."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (str, int, float, bool)):
        return str(node.value)
    return None


def is_literal(node: ast.AST | None) -> bool:
    """Whether ``node`` is a literal (``"fp8"``, ``-1``, ``{"architectures": ["X"]}``: what
    :func:`ast.literal_eval` reads), so that a check may judge its value; ``True`` for no node."""
    if node is None:
        return True
    try:
        ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False
    return True


def dotted_name(node: ast.AST) -> str | None:
    """``a.b.c`` for a name or an attribute chain on a name, else ``None``."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = dotted_name(node.value)
        return f"{base}.{node.attr}" if base else None
    return None
