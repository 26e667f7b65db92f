"""Functions of a Python file that run a command built from their parameters
(``def start(model, **opts)`` building ``["vllm", "serve", model, f"--{k}", ...]``): which
they are (:func:`builders`, and every function the file defines, :func:`functions`); what one
call of them binds their parameters to is :func:`.argv.bind`.
"""

from __future__ import annotations

import ast

from vllm_upgrade_check.sources.scanners.python.names import SUBPROCESS_CALLS
from vllm_upgrade_check.sources.scanners.python.scope import Scope
from vllm_upgrade_check.sources.scanners.python.source import PythonSource


def builders(
    scopes: list[Scope], inner: dict[int, Scope], source: PythonSource
) -> dict[str, tuple[ast.FunctionDef | ast.AsyncFunctionDef, Scope]]:
    """The functions of the file (by name) that run a command with ``subprocess``/``os.system``
    and that the file calls by name: their commands are read at each call."""
    called = {
        n.func.id for n in ast.walk(source.tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
    }
    out: dict[str, tuple[ast.FunctionDef | ast.AsyncFunctionDef, Scope]] = {}
    for scope in scopes:
        for node in scope.nodes:
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or node.name not in called:
                continue
            body = inner[id(node)]
            if any(
                isinstance(n, ast.Call) and source.qualified(n.func) in SUBPROCESS_CALLS for n in body.nodes
            ):
                out[node.name] = (node, body)
    return out


def functions(
    scopes: list[Scope], inner: dict[int, Scope]
) -> dict[str, tuple[ast.FunctionDef | ast.AsyncFunctionDef, Scope]]:
    """Every function the file defines (by name; a later definition wins), with its scope:
    an argv may be the value one of them returns (``subprocess.run(build("m", seed=1))``)."""
    return {
        node.name: (node, inner[id(node)])
        for scope in scopes
        for node in scope.nodes
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
    }
