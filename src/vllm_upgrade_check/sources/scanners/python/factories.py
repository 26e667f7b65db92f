"""Functions of a Python file that make a vLLM engine from their keyword arguments
(``def make_llm(**kw): return LLM(model="m", **kw)``): the keywords each call of them passes
(``make_llm(swap_space=4)``) are the engine's keywords, reported at that call.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from vllm_upgrade_check.parsing.words import Token
from vllm_upgrade_check.sources.scanners.python.index import TreeIndex
from vllm_upgrade_check.sources.scanners.python.keywords import Entry, KeywordReader
from vllm_upgrade_check.sources.scanners.python.names import ENGINE_CALLS
from vllm_upgrade_check.sources.scanners.python.scope import Scope
from vllm_upgrade_check.sources.scanners.python.source import PythonSource


@dataclass(frozen=True)
class Factory:
    """A function that passes its ``**kwarg`` on to a vLLM engine call.

    Attributes:
        func: the function's definition.
        scope: its body's scope.
        engine: the engine call in it (``LLM(model="m", **kw)``).
        what: the engine class called (``LLM``).
        kwarg: the name of its ``**`` parameter (``kw``).
    """

    func: ast.FunctionDef | ast.AsyncFunctionDef
    scope: Scope
    engine: ast.Call
    what: str
    kwarg: str


def factories(index: TreeIndex, source: PythonSource) -> dict[str, Factory]:
    """The functions of the file (by name) that the file calls by name and whose body calls
    one vLLM engine class (:data:`.names.ENGINE_CALLS`) with ``**kwarg``, their ``**``
    parameter, spread into it. A function with several such calls is left out (which one a
    keyword reaches is not told)."""
    called = {n.func.id for n in index.calls if isinstance(n.func, ast.Name)}
    out: dict[str, Factory] = {}
    for scope in index.scopes:
        for node in scope.functions:
            if node.name not in called or node.args.kwarg is None:
                continue
            kwarg = node.args.kwarg.arg
            body = index.inner[id(node)]
            found = [
                (call, what)
                for call in body.nodes
                if isinstance(call, ast.Call)
                and (what := _engine(source, call)) is not None
                and any(k.arg is None and isinstance(k.value, ast.Name) and k.value.id == kwarg for k in call.keywords)
            ]
            if len(found) == 1:
                out[node.name] = Factory(node, body, found[0][0], found[0][1], kwarg)
    return out


def _engine(source: PythonSource, call: ast.Call) -> str | None:
    """The vLLM engine class ``call`` calls (``LLM``), else ``None``."""
    qualified = source.qualified(call.func) or ""
    head, _, last = qualified.rpartition(".")
    return last if head.startswith("vllm") and last in ENGINE_CALLS else None


def spliced_entries(
    keywords: KeywordReader,
    call: ast.Call,
    scope: Scope,
    spliced: dict[str, list[Entry]] | None,
    params: dict[str, Token] | None = None,
) -> list[Entry]:
    """The keyword entries of engine ``call``, each ``**name`` of ``spliced`` (a factory's
    ``**kwarg`` as one call of it binds it) replaced by that call's keywords, and each
    ``key=param`` of a parameter in ``params`` that the call binds to a literal word given
    that word as its value (``LLM(model=model, **kw)`` of ``make_llm("acme/m")``)."""
    if not spliced:
        return keywords.keyword_entries(call.keywords, scope, call.lineno) or []
    out: list[Entry] = []
    for kw in call.keywords:
        if kw.arg is None and isinstance(kw.value, ast.Name) and kw.value.id in spliced:
            out.extend(spliced[kw.value.id])
        elif kw.arg is not None and isinstance(kw.value, ast.Name) and (bound := (params or {}).get(kw.value.id)):
            if bound.resolved:  # the literal the call passes, placed at the keyword here
                out.append(Entry(kw.arg, bound.text, kw, value_node=ast.Constant(bound.text)))
            else:
                out.extend(keywords.keyword_entries([kw], scope, call.lineno) or [])
        else:
            out.extend(keywords.keyword_entries([kw], scope, call.lineno) or [])
    return out
