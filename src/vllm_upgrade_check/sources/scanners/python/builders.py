"""Functions of a Python file that run a command built from their parameters
(``def start(model, **opts)`` building ``["vllm", "serve", model, f"--{k}", ...]``): which
they are (:func:`builders`, and every function the file defines, :func:`functions`); what one
call of them binds their parameters to is :func:`.argv.bind`.
"""

from __future__ import annotations

import ast

from vllm_upgrade_check.sources.scanners.python.index import TreeIndex
from vllm_upgrade_check.sources.scanners.python.names import SUBPROCESS_CALLS
from vllm_upgrade_check.sources.scanners.python.scope import Scope, last_binding
from vllm_upgrade_check.sources.scanners.python.source import PythonSource


def may_run_commands(text: str) -> bool:
    """Whether the file ``text`` may call one of :data:`.names.SUBPROCESS_CALLS`: such a call
    is written ``subprocess.…``, ``os.system``, ``os.popen``, ``os.exec…`` or ``os.spawn…``
    (an import alias of vLLM never stands for them), so ASCII text without one of those
    words runs no command. Non-ASCII text may (an identifier is NFKC-normalised:
    ``ｓｕｂｐｒｏｃｅｓｓ`` is ``subprocess``)."""
    return any(word in text for word in _COMMAND_WORDS) or not text.isascii()


_COMMAND_WORDS = ("subprocess", "system", "popen", "exec", "spawn")


def builders(index: TreeIndex, source: PythonSource) -> dict[str, tuple[ast.FunctionDef | ast.AsyncFunctionDef, Scope]]:
    """The functions of the file (by name) that run a command with ``subprocess``/``os.system``
    and that the file calls by name, and the methods that do (by ``Class.method``) that the
    file calls as an attribute of that name: their commands are read at each call."""
    called = {n.func.id for n in index.calls if isinstance(n.func, ast.Name)}
    called_methods = {n.func.attr for n in index.calls if isinstance(n.func, ast.Attribute)}
    inner = index.inner
    out: dict[str, tuple[ast.FunctionDef | ast.AsyncFunctionDef, Scope]] = {}
    for scope in index.scopes:
        for node in scope.nodes:
            if isinstance(node, ast.ClassDef):
                for item in node.body:
                    if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name in called_methods:
                        if _runs_command(inner[id(item)], source):
                            out[f"{node.name}.{item.name}"] = (item, inner[id(item)])
                continue
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or node.name not in called:
                continue
            body = inner[id(node)]
            if _runs_command(body, source):
                out[node.name] = (node, body)
    return out


def _runs_command(body: Scope, source: PythonSource) -> bool:
    return any(isinstance(n, ast.Call) and source.qualified(n.func) in SUBPROCESS_CALLS for n in body.nodes)


def method_classes(scopes: list[Scope], inner: dict[int, Scope]) -> dict[int, str]:
    """``id`` of the scope of each method of a class the file defines -> the class's name
    (what ``self`` is an instance of there)."""
    out: dict[int, str] = {}
    for scope in scopes:
        for node in scope.nodes:
            if isinstance(node, ast.ClassDef):
                for item in node.body:
                    if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        out[id(inner[id(item)])] = node.name
    return out


def receiver_class(call: ast.Call, scope: Scope, classes: dict[int, str], defined: set[str]) -> str | None:
    """The class of the file whose method ``call`` calls (``obj.start(...)``): ``self`` in a
    method of that class, a name last bound to ``Class(...)``, or ``Class(...)`` itself;
    ``None`` when the file does not say (the call is then no call of the file's method)."""
    func = call.func
    if not isinstance(func, ast.Attribute):
        return None
    receiver: ast.AST = func.value
    if isinstance(receiver, ast.Name) and receiver.id == "self":
        return classes.get(id(scope))
    if isinstance(receiver, ast.Name):
        bound = last_binding(receiver.id, scope, call.lineno)
        receiver = bound[0] if bound is not None else receiver
    if isinstance(receiver, ast.Call) and isinstance(receiver.func, ast.Name) and receiver.func.id in defined:
        return receiver.func.id
    return None


def functions(index: TreeIndex) -> dict[str, tuple[ast.FunctionDef | ast.AsyncFunctionDef, Scope]]:
    """Every function the file defines (by name; a later definition wins), with its scope:
    an argv may be the value one of them returns (``subprocess.run(build("m", seed=1))``)."""
    return {node.name: (node, index.inner[id(node)]) for scope in index.scopes for node in scope.functions}
