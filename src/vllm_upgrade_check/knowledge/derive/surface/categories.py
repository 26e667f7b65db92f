"""The name categories besides CLI flags: engine args, sampling params, config
fields, env vars, metrics (with their deprecation notices), quantization
methods, load formats, architectures and modules.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable

from vllm_upgrade_check.knowledge.derive.surface.model import SourceRef
from vllm_upgrade_check.knowledge.derive.surface.resolver import _Def, _Resolver
from vllm_upgrade_check.knowledge.derive.surface.sources import (
    _add,
    _const_str,
    _name_of,
    _nested_subscript,
    _Sources,
    _str_elements,
    _top_level,
)


def _class_fields(resolver: _Resolver, path: str, class_names: Iterable[str]) -> dict[str, SourceRef]:
    out: dict[str, SourceRef] = {}
    for cname in class_names:
        found = resolver.lookup(path, cname) if resolver.src.has(path) else None
        if found and isinstance(found.node, ast.ClassDef):
            for name, fld in resolver.fields(found).items():
                out.setdefault(name, fld.ref)
    return out


def _engine_args(resolver: _Resolver) -> dict[str, SourceRef]:
    return _class_fields(resolver, "vllm/engine/arg_utils.py", ("EngineArgs", "AsyncEngineArgs"))


def _sampling_params(resolver: _Resolver) -> dict[str, SourceRef]:
    return _class_fields(resolver, "vllm/sampling_params.py", ("SamplingParams",))


def _config_fields(resolver: _Resolver) -> dict[str, SourceRef]:
    out: dict[str, SourceRef] = {}
    for cls in resolver.top_classes(resolver.src.config_files()):
        cname = cls.node.name
        if not cname.endswith("Config") or resolver.is_enum(cls):
            continue
        for name, fld in resolver.fields(cls).items():
            out.setdefault(f"{cname}.{name}", fld.ref)
    return out


def _env_vars(src: _Sources) -> dict[str, SourceRef]:
    path = "vllm/envs.py"
    tree = src.tree(path)
    out: dict[str, SourceRef] = {}
    if tree is None:
        return out
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            targets, value = list(node.targets), node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        else:
            continue
        for t in targets:
            if isinstance(t, ast.Name) and t.id == "environment_variables" and isinstance(value, ast.Dict):
                for name, line in _str_elements(value):
                    _add(out, name, SourceRef(path, line))
            key = _nested_subscript(t)
            if key and key[0] == "environment_variables" and len(key[1]) == 1:
                _add(out, key[1][0], SourceRef(path, t.lineno))
    return out


_METRIC = re.compile(r"vllm:[A-Za-z_][A-Za-z0-9_]*[A-Za-z0-9]")


def _metrics(src: _Sources) -> tuple[dict[str, SourceRef], list[tuple[str, str, SourceRef]]]:
    """Exposed metric names and deprecation notices of metrics.

    Every string literal (or ``+`` concatenation of literals) under ``vllm/``
    that is a whole ``vllm:<name>``; a name ending in ``_`` is a prefix, not
    a metric.  Names passed to a counter constructor (a call whose name
    contains "counter": ``Counter``, ``self._counter_cls``) are stored as
    prometheus_client exposes them, with a ``_total`` suffix.  A
    ``documentation=`` text saying "deprecated" marks its metric deprecated."""
    out: dict[str, SourceRef] = {}
    notices: list[tuple[str, str, SourceRef]] = []
    counter_families: set[str] = set()
    for path in src.grep("vllm:"):
        tree = src.tree(path)
        if tree is None:
            continue
        counter_nodes = _counter_name_nodes(tree)
        for call in ast.walk(tree):
            if not isinstance(call, ast.Call):
                continue
            keywords = {k.arg: k.value for k in call.keywords if k.arg}
            name_node = keywords.get("name", call.args[0] if call.args else None)
            name = _const_str(name_node)
            doc = " ".join((_const_str(keywords.get("documentation"), holes=True) or "").split())
            if name and _METRIC.fullmatch(name) and "deprecat" in doc.lower():
                notices.append(
                    (_exposed(name, id(name_node) in counter_nodes), doc, SourceRef(path, call.lineno))
                )
        for node in ast.walk(tree):
            if isinstance(node, (ast.Constant, ast.BinOp)):
                value = _const_str(node)
                if value and _METRIC.fullmatch(value):
                    exposed = _exposed(value, id(node) in counter_nodes)
                    if exposed != value:
                        counter_families.add(value)
                    _add(out, exposed, SourceRef(path, node.lineno))
    # a counter's family name (e.g. compared against in a metrics reader) is
    # not a separately exposed metric
    return {k: v for k, v in out.items() if k not in counter_families}, notices


def _exposed(name: str, counter: bool) -> str:
    """Metric name as prometheus_client exposes it (counters get ``_total``)."""
    return name + "_total" if counter and not name.endswith("_total") else name


def _counter_name_nodes(tree: ast.Module) -> set[int]:
    """ids of the string nodes naming counters: the ``name`` of a call whose
    callee name contains "counter" (``Counter``, ``self._counter_cls``; a
    module-level constant passed as ``name`` is followed), and
    the strings of a value assigned to a variable whose name contains
    "counter" (``counter_specs = [("vllm:x", "doc"), ...]`` fed to such a
    call in a loop)."""
    out: set[int] = set()
    constants = {
        t.id: stmt.value
        for stmt in _top_level(tree.body)
        if isinstance(stmt, ast.Assign)
        for t in stmt.targets
        if isinstance(t, ast.Name)
    }
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and "counter" in _name_of(node.func).lower():
            keywords = {k.arg: k.value for k in node.keywords if k.arg}
            name_node = keywords.get("name", node.args[0] if node.args else None)
            if isinstance(name_node, ast.Name) and name_node.id in constants:
                name_node = constants[name_node.id]  # NAME = "vllm:x"; Counter(name=NAME)
            if name_node is not None:
                out.add(id(name_node))
        elif isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any("counter" in _name_of(t).lower() for t in targets):
                out.update(id(n) for n in ast.walk(node.value) if not isinstance(n, ast.Call))
    return out


def _named_string_sets(resolver: _Resolver, path: str, names: Iterable[str]) -> dict[str, SourceRef]:
    """Strings of the module-level values ``names`` of ``path`` (a Literal,
    a list/tuple/set literal, or dict keys), imports followed."""
    out: dict[str, SourceRef] = {}
    for name in names:
        found = resolver.lookup(path, name) if resolver.src.has(path) else None
        if found is not None:
            for value, line in _str_elements(found.node):
                _add(out, value, SourceRef(found.path, line))
    return out


def _quantization_methods(resolver: _Resolver) -> dict[str, SourceRef]:
    return _named_string_sets(
        resolver,
        "vllm/model_executor/layers/quantization/__init__.py",
        ("QuantizationMethods", "QUANTIZATION_METHODS"),
    )


def _load_formats(resolver: _Resolver) -> dict[str, SourceRef]:
    out = _named_string_sets(
        resolver,
        "vllm/model_executor/model_loader/__init__.py",
        ("LoadFormats", "_LOAD_FORMAT_TO_MODEL_LOADER"),
    )
    for cls in resolver.top_classes(resolver.src.config_files()):
        if cls.node.name != "LoadFormat":
            continue
        for stmt in _top_level(cls.node.body):
            value = _const_str(stmt.value) if isinstance(stmt, ast.Assign) else None
            if value is not None:
                _add(out, value, SourceRef(cls.path, stmt.lineno))
    return out


def _architectures(resolver: _Resolver) -> dict[str, SourceRef]:
    for path in ("vllm/model_executor/models/registry.py", "vllm/model_executor/models/__init__.py"):
        if not resolver.src.has(path):
            continue
        root = resolver.lookup(path, "_VLLM_MODELS") or resolver.lookup(path, "_MODELS")
        if root is not None:
            out: dict[str, SourceRef] = {}
            _dict_keys(resolver, root, out, set())
            return out
    return {}


def _dict_keys(resolver: _Resolver, found: _Def, out: dict[str, SourceRef], seen: set) -> None:
    """String keys of a dict literal, following ``**NAME`` spreads of other
    module-level dicts."""
    if not isinstance(found.node, ast.Dict):
        return
    for k, v in zip(found.node.keys, found.node.values, strict=True):
        if k is None:
            inner = resolver.resolve(found.path, v) if isinstance(v, ast.Name) else _Def(found.path, v)
            if inner is not None and id(inner.node) not in seen:
                seen.add(id(inner.node))
                _dict_keys(resolver, inner, out, seen)
        elif isinstance(k, ast.Constant) and isinstance(k.value, str):
            _add(out, k.value, SourceRef(found.path, k.lineno))


def _modules(src: _Sources) -> dict[str, SourceRef]:
    out = {}
    for path in src.py:
        parts = path[:-3].split("/")
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = SourceRef(path, 1)
    return out
