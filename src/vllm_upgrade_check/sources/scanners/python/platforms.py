"""Serving platforms configured in Python that run vLLM: which calls hand vLLM its engine
arguments, its environment or its pin.

- Ray Serve LLM: ``LLMConfig(engine_kwargs={...}, runtime_env={"env_vars": {...}})``
  (``ray.serve.llm``): ``engine_kwargs`` are vLLM engine args, ``env_vars`` its environment.
- Modal: an image built with ``.pip_install("vllm==0.23.0")`` / ``.uv_pip_install(...)`` holds
  those requirements; ``.env({...})`` sets the environment its functions run vLLM in.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable

RAY_CONFIGS = frozenset({"LLMConfig"})
"""Ray Serve LLM classes whose ``engine_kwargs`` are vLLM engine args (``ray.serve.llm``)."""
MODAL_INSTALLS = frozenset({"pip_install", "uv_pip_install"})
"""Methods of ``modal.Image`` whose arguments are requirements."""


def imported_from(
    imports: Iterable[ast.AST], prefix: str, text: str | None = None
) -> dict[str, str]:
    """The names a file binds from module ``prefix`` or one below it (``imports``: the file's
    ``import`` statements in :func:`ast.walk` order, :attr:`.index.TreeIndex.imports`, or any
    nodes of its tree), each with the name it
    stands for (``import modal``: ``{"modal": "modal"}``; ``from ray.serve.llm import
    LLMConfig as C``: ``{"C": "LLMConfig"}``).

    ``text``, the file's text, when given spares the walk of a tree that cannot import
    ``prefix``: ASCII text without ``prefix`` in it (a non-ASCII identifier may normalise to
    ``prefix``, NFKC, so non-ASCII text is always walked)."""
    out: dict[str, str] = {}
    if text is not None and prefix not in text and text.isascii():
        return out
    for node in imports:
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            if node.module == prefix or node.module.startswith(prefix + "."):
                out.update({a.asname or a.name: a.name for a in node.names})
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == prefix or alias.name.startswith(prefix + "."):
                    local = alias.asname or alias.name.split(".")[0]
                    out[local] = alias.name if alias.asname else local
    return out


def chain_root(node: ast.AST) -> str | None:
    """The name a chain of attribute reads and calls starts from (``modal`` for
    ``modal.Image.debian_slim().pip_install``), or ``None``."""
    while isinstance(node, (ast.Attribute, ast.Call)):
        node = node.value if isinstance(node, ast.Attribute) else node.func
    return node.id if isinstance(node, ast.Name) else None


def keyword(call: ast.Call, name: str) -> ast.expr | None:
    """The value of keyword ``name`` of ``call``, or ``None``."""
    return next((k.value for k in call.keywords if k.arg == name), None)


def dict_value(node: ast.AST | None, key: str) -> ast.expr | None:
    """The value of literal key ``key`` in dict literal ``node``, or ``None``."""
    if not isinstance(node, ast.Dict):
        return None
    for k, v in zip(node.keys, node.values, strict=False):
        if isinstance(k, ast.Constant) and k.value == key:
            return v
    return None


def engine_kwargs_call(call: ast.Call) -> ast.Call | None:
    """``LLMConfig(engine_kwargs=X)`` read as an engine call ``LLMConfig(**X)`` (positions
    kept), or ``None`` without ``engine_kwargs``."""
    value = keyword(call, "engine_kwargs")
    if value is None:
        return None
    splat = ast.keyword(arg=None, value=value)
    ast.copy_location(splat, value)
    return ast.copy_location(ast.Call(func=call.func, args=[], keywords=[splat]), call)
