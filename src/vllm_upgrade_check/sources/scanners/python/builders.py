"""Functions of a Python file that run a command built from their parameters
(``def start(model, **opts)`` building ``["vllm", "serve", model, f"--{k}", ...]``): which
they are (:func:`builders`), and what one call of them binds their parameters to (:func:`bind`).
"""

from __future__ import annotations

import ast

from vllm_upgrade_check.parsing.words import Token
from vllm_upgrade_check.sources.scanners.python.argv import ArgvBuilder, CallBinding
from vllm_upgrade_check.sources.scanners.python.keywords import Entry, KeywordReader
from vllm_upgrade_check.sources.scanners.python.names import SUBPROCESS_CALLS
from vllm_upgrade_check.sources.scanners.python.scope import Scope
from vllm_upgrade_check.sources.scanners.python.source import PythonSource


def bind(
    func: ast.FunctionDef | ast.AsyncFunctionDef,
    call: ast.Call,
    caller: ArgvBuilder,
    keywords: KeywordReader,
    scope: Scope,
) -> CallBinding | None:
    """What ``call`` binds the parameters of ``func`` to, read by ``caller`` (the builder of
    the calling scope); ``None`` when the call passes ``*args`` (which parameter gets what
    is not known). A parameter left to its default is its default; one the call does not
    say is an unresolved word; the keywords no parameter names go to ``**opts``."""
    if any(isinstance(a, ast.Starred) for a in call.args):
        return None
    args = func.args
    positional = [*args.posonlyargs, *args.args]
    params: dict[str, Token] = {}
    defaults = dict(zip([a.arg for a in positional][len(positional) - len(args.defaults) :], args.defaults, strict=True))
    defaults.update({a.arg: d for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d is not None})
    for param, value in zip(positional, call.args, strict=False):
        params[param.arg] = caller.word(value, {})
    named = {a.arg for a in [*positional, *args.kwonlyargs]}
    extra: list[ast.keyword] = []
    for kw in call.keywords:
        if kw.arg is not None and kw.arg in named:
            params[kw.arg] = caller.word(kw.value, {})
        else:
            extra.append(kw)
    for name, default in defaults.items():
        params.setdefault(name, caller.word(default, {}))
    kwargs: dict[str, list[Entry]] = {}
    if args.kwarg is not None:
        kwargs[args.kwarg.arg] = keywords.keyword_entries(extra, scope, call.lineno) or []
    return CallBinding(params, kwargs)


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
