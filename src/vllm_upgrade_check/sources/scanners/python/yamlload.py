"""Dicts a Python file loads from a YAML file of the repository
(``cfg = yaml.safe_load(open("engine.yaml"))``, ``with open(...) as f: cfg = yaml.safe_load(f)``,
``yaml.safe_load(Path("engine.yaml").read_text())``), splatted into a vLLM call
(``LLM(**cfg)``, ``AsyncEngineArgs(**cfg)``): the YAML's top-level keys are the call's
keywords, each placed at its key in the YAML file. The file is named relative to the script
(``Path(__file__).parent / "engine.yaml"`` says so; a plain ``"engine.yaml"`` is looked for
beside the script, then at the repository's root). The user's code is never run."""

from __future__ import annotations

import ast
import posixpath
from collections.abc import Callable

import yaml

from vllm_upgrade_check.model.facts import Location, Spans
from vllm_upgrade_check.parsing.yamlnodes import YamlProblem, documents, mapping_items, pos, scalar, to_python
from vllm_upgrade_check.parsing.yamlwords import entry_cuts
from vllm_upgrade_check.sources.scanners.base import SourceFile
from vllm_upgrade_check.sources.scanners.python.names import const_text, dotted_name
from vllm_upgrade_check.sources.scanners.vllm_config import entry_spans

YAML_LOADS = frozenset(
    {"yaml.safe_load", "yaml.load", "yaml.full_load", "yaml.unsafe_load", "safe_load", "full_load"}
)
"""PyYAML's functions that read one document (``yaml.load(f, Loader=...)`` included)."""

_MAX_YAML_CHARS = 1_000_000


def is_yaml_load(node: ast.AST) -> bool:
    """Whether ``node`` is a call of one of :data:`YAML_LOADS` with its stream as first argument."""
    return isinstance(node, ast.Call) and dotted_name(node.func) in YAML_LOADS and bool(node.args)


def _opened(node: ast.AST) -> ast.AST | None:
    """The path expression of ``open(P)``, ``io.open(P)``, ``Path(P).open()``,
    ``Path(P).read_text()``, ``open(P).read()``; ``None`` for anything else."""
    if not isinstance(node, ast.Call):
        return None
    name = dotted_name(node.func)
    if name in ("open", "io.open", "codecs.open") and node.args:
        return node.args[0]
    if isinstance(node.func, ast.Attribute) and node.func.attr in ("read_text", "open", "read", "read_bytes"):
        inner = node.func.value
        if isinstance(inner, ast.Call) and dotted_name(inner.func) in ("Path", "pathlib.Path") and len(inner.args) == 1:
            return inner.args[0]
        if node.func.attr == "read":
            return _opened(inner)
        if isinstance(inner, (ast.BinOp, ast.Call)):
            return inner  # `(Path(__file__).parent / "x.yaml").read_text()`
    return None


def _script_dir(node: ast.AST) -> bool:
    """``Path(__file__).parent`` / ``Path(__file__).resolve().parent`` /
    ``os.path.dirname(__file__)`` (and ``os.path.dirname(os.path.abspath(__file__))``)."""
    if isinstance(node, ast.Attribute) and node.attr == "parent":
        inner = node.value
        if isinstance(inner, ast.Call) and isinstance(inner.func, ast.Attribute) and inner.func.attr in ("resolve", "absolute"):
            inner = inner.func.value
        return isinstance(inner, ast.Call) and dotted_name(inner.func) in ("Path", "pathlib.Path") and _is_file(inner.args)
    if isinstance(node, ast.Call) and dotted_name(node.func) == "os.path.dirname" and len(node.args) == 1:
        arg = node.args[0]
        if isinstance(arg, ast.Call) and dotted_name(arg.func) in ("os.path.abspath", "os.path.realpath") and arg.args:
            arg = arg.args[0]
        return isinstance(arg, ast.Name) and arg.id == "__file__"
    return False


def _is_file(args: list[ast.expr]) -> bool:
    return len(args) == 1 and isinstance(args[0], ast.Name) and args[0].id == "__file__"


Names = Callable[[str], "ast.AST | None"]
"""The value a name was last bound to before the load (``None``: bound nowhere the file says)."""


def _path_text(node: ast.AST, names: Names | None = None, depth: int = 0) -> tuple[str, bool] | None:
    """``(path as written, whether it is the script's folder's for sure)`` of a path
    expression: a string, ``Path("x")``, ``SCRIPT_DIR / "x"``, ``os.path.join(SCRIPT_DIR, "x")``,
    or a name ``names`` says is bound to one of these (``CONFIG = "engine.yaml"``)."""
    text = const_text(node)
    if text is not None:
        return text, False
    if isinstance(node, ast.Name) and names is not None and depth < 4:
        bound = names(node.id)
        return _path_text(bound, names, depth + 1) if bound is not None else None
    if isinstance(node, ast.Call) and dotted_name(node.func) in ("Path", "pathlib.Path") and len(node.args) == 1:
        return _path_text(node.args[0], names, depth + 1)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div) and _script_dir(node.left):
        rest = const_text(node.right)
        return (rest, True) if rest is not None else None
    if isinstance(node, ast.Call) and dotted_name(node.func) == "os.path.join" and len(node.args) == 2 and _script_dir(node.args[0]):
        rest = const_text(node.args[1])
        return (rest, True) if rest is not None else None
    return None


def loaded_path(call: ast.Call, tree: ast.AST, before: int, names: Names | None = None) -> tuple[str, bool] | None:
    """The YAML file yaml-load ``call`` reads, as :func:`_path_text` gives it: its stream an
    ``open(...)`` of a path written in the file, or a name ``with open(...) as f:`` binds
    (the last such ``with`` before line ``before``); a path held in a name is read with
    ``names``. ``None`` when the file does not say."""
    stream = call.args[0]
    if isinstance(stream, ast.Name):
        found: ast.AST | None = None
        for node in ast.walk(tree):
            if isinstance(node, (ast.With, ast.AsyncWith)) and node.lineno < before:
                for item in node.items:
                    if isinstance(item.optional_vars, ast.Name) and item.optional_vars.id == stream.id:
                        if found is None or node.lineno > getattr(found, "lineno", 0):
                            found = _opened(item.context_expr)
        path = found
    else:
        path = _opened(stream)
    return _path_text(path, names) if path is not None else None


YamlEntry = tuple[str, str | None, Location, Spans]
"""A top-level key of a loaded YAML file: name, value text, where the key is, its spans."""


def yaml_entries(
    written: tuple[str, bool], script: str, read: Callable[[str], SourceFile | None]
) -> list[YamlEntry] | None:
    """The top-level keys of the YAML file ``written`` names (``(path, script's folder for
    sure)``, relative to ``script``'s folder, else the root) when the repository holds it and
    its one document is a mapping, each with the spans a fix edits (its key, a scalar value,
    its entry's cut); ``None`` otherwise."""
    path, here = written
    if path.startswith("/") or not path.endswith((".yaml", ".yml")):
        return None
    folder = posixpath.dirname(script)
    candidates = [posixpath.normpath(posixpath.join(folder, path))] + ([] if here else [posixpath.normpath(path)])
    for rel in dict.fromkeys(c for c in candidates if not c.startswith("../")):
        source = read(rel)
        if source is None or len(source.text) > _MAX_YAML_CHARS:
            continue
        try:
            docs = documents(source.text)
        except YamlProblem:
            return None
        if len(docs) != 1 or not isinstance(docs[0], yaml.MappingNode):
            return None
        cuts = entry_cuts(source.text, docs[0])
        out: list[YamlEntry] = []
        for key, key_node, value_node in mapping_items(docs[0]):
            p = pos(key_node)
            value = scalar(value_node)
            if value is None and not isinstance(value_node, yaml.ScalarNode):
                try:
                    value = repr(to_python(value_node))
                except (YamlProblem, TypeError, ValueError):
                    value = None
            spans = entry_spans(source.text, key_node, value_node, cuts)
            out.append((key, value, Location(rel, p.line, p.column, p.line, p.column + len(key)), spans))
        return out
    return None
