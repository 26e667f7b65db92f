"""Serving platforms configured in Python that run vLLM: which calls hand vLLM its engine
arguments, its environment or its pin.

- Ray Serve LLM: ``LLMConfig(engine_kwargs={...}, runtime_env={"env_vars": {...}})``
  (``ray.serve.llm``): ``engine_kwargs`` are vLLM engine args, ``env_vars`` its environment.
- Modal: an image built with ``.pip_install("vllm==0.23.0")`` / ``.uv_pip_install(...)`` holds
  those requirements; ``.env({...})`` sets the environment its functions run vLLM in.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable

RAY_CONFIGS = frozenset({"LLMConfig"})
"""Ray Serve LLM classes whose ``engine_kwargs`` are vLLM engine args (``ray.serve.llm``)."""
RAY_LLM_MODULES = ("ray.serve.llm", "ray.llm")
"""The modules (and those below them) whose :data:`RAY_CONFIGS` are Ray Serve LLM's: Ray's
``python/ray/serve/llm/__init__.py`` exports ``LLMConfig`` from
``ray.llm._internal.serve.configs.server_models``. A class of that name from any other
module (``mylib.LLMConfig``, ``ray.tune.LLMConfig``) is not Ray Serve LLM's."""
_RAY_IMPORT = re.compile(r"^[ \t]*(?:from[ \t]+ray(?:\.[\w.]+)?[ \t]+import|import[ \t]+ray)\b", re.MULTILINE)
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


def may_import_ray_llm(text: str) -> bool:
    """Whether Python ``text`` may import a :data:`RAY_LLM_MODULES` module (``from
    ray.serve.llm import LLMConfig``, ``import ray.llm``, ``from ray.serve import llm``): a
    text test (an import of ``ray`` and the word ``llm``), so a file that mentions no vLLM is
    still read for its Ray Serve LLM configs; which calls are theirs
    :func:`is_ray_llm_config` decides."""
    return "llm" in text and "ray" in text and _RAY_IMPORT.search(text) is not None


def bound_modules(imports: Iterable[ast.AST], prefix: str, text: str | None = None) -> dict[str, str]:
    """The names a file binds from module ``prefix`` or one below it, each with the dotted
    path it stands for (``import ray``: ``{"ray": "ray"}``; ``import ray.serve.llm as rsl``:
    ``{"rsl": "ray.serve.llm"}``; ``from ray.serve.llm import LLMConfig as C``: ``{"C":
    "ray.serve.llm.LLMConfig"}``; ``from ray import serve``: ``{"serve": "ray.serve"}``).
    ``imports`` and ``text`` as for :func:`imported_from`."""
    out: dict[str, str] = {}
    if text is not None and prefix not in text and text.isascii():
        return out
    for node in imports:
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            if node.module == prefix or node.module.startswith(prefix + "."):
                out.update({a.asname or a.name: f"{node.module}.{a.name}" for a in node.names})
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == prefix or alias.name.startswith(prefix + "."):
                    if alias.asname:
                        out[alias.asname] = alias.name
                    else:  # `import ray.serve.llm` binds `ray`
                        out[alias.name.split(".")[0]] = alias.name.split(".")[0]
    return out


def qualified_call(func: ast.expr, bound: dict[str, str]) -> str | None:
    """The dotted path a call's ``func`` names through the file's ``bound`` names
    (:func:`bound_modules`): ``rsl.LLMConfig`` with ``{"rsl": "ray.serve.llm"}`` ->
    ``"ray.serve.llm.LLMConfig"``; ``None`` when it starts from no bound name or reads
    through a call."""
    parts: list[str] = []
    while isinstance(func, ast.Attribute):
        parts.append(func.attr)
        func = func.value
    if not isinstance(func, ast.Name) or func.id not in bound:
        return None
    return ".".join([bound[func.id], *reversed(parts)])


def is_ray_llm_config(qualified: str | None) -> bool:
    """Whether ``qualified`` (:func:`qualified_call`) is a :data:`RAY_CONFIGS` class of a
    :data:`RAY_LLM_MODULES` module (``ray.serve.llm.LLMConfig``, ``ray.llm.LLMConfig``)."""
    if qualified is None:
        return False
    module, _, name = qualified.rpartition(".")
    return name in RAY_CONFIGS and any(module == m or module.startswith(m + ".") for m in RAY_LLM_MODULES)


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
