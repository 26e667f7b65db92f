"""The Python sources of a release, parsed lazily with :mod:`ast`, and the small
AST readers every category uses: constant strings, string collections,
top-level statements, dotted names, ``v["a"]["b"]`` subscripts.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from vllm_upgrade_check.knowledge.derive.surface.files import _ReleaseFiles
from vllm_upgrade_check.knowledge.derive.surface.model import SourceRef


class _Sources:
    """Lazily parsed ``vllm/**/*.py`` of a release."""

    def __init__(self, files: _ReleaseFiles) -> None:
        self.files = files
        self.py = [n for n in files.names if n.startswith("vllm/") and n.endswith(".py")]
        self._py_set = set(self.py)
        self._trees: dict[str, ast.Module | None] = {}
        self._text: dict[str, str] = {}
        self.unparsed: list[str] = []

    def has(self, path: str) -> bool:
        return path in self._py_set

    def text(self, path: str) -> str:
        if path not in self._text:
            self._text[path] = self.files.read(path).decode("utf-8", errors="replace")
        return self._text[path]

    def tree(self, path: str) -> ast.Module | None:
        if path not in self._trees:
            tree = None
            if self.has(path):
                try:
                    tree = ast.parse(self.text(path), filename=path)
                except (SyntaxError, ValueError):
                    self.unparsed.append(path)
            self._trees[path] = tree
        return self._trees[path]

    def grep(self, needle: str, *, ignore_case: bool = False) -> Iterator[str]:
        """Python files whose text contains ``needle``."""
        for path in self.py:
            text = self.text(path)
            if (needle.lower() in text.lower()) if ignore_case else (needle in text):
                yield path

    def config_files(self) -> list[str]:
        """``vllm/config.py`` and ``vllm/config/**.py``."""
        return [p for p in self.py if p == "vllm/config.py" or p.startswith("vllm/config/")]


def _const_str(node: ast.AST | None, holes: bool = False) -> str | None:
    """Value of a string expression made of literals, implicit/explicit ``+``
    concatenation and, with ``holes``, f-strings (placeholders as ``{...}``)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _const_str(node.left, holes), _const_str(node.right, holes)
        return None if left is None or right is None else left + right
    if holes and isinstance(node, ast.JoinedStr):
        parts = []
        for v in node.values:
            s = _const_str(v, holes)
            parts.append("{...}" if s is None else s)
        return "".join(parts)
    return None


def _str_elements(node: ast.AST | None) -> list[tuple[str, int]]:
    """``(value, line)`` of the string constants of a Literal[...] subscript,
    a list/tuple/set literal, or a dict literal's keys."""
    if isinstance(node, ast.Subscript):
        node = node.slice
    items: list[ast.expr | None]
    if isinstance(node, ast.Dict):
        items = list(node.keys)
    elif isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        items = list(node.elts)
    else:
        items = [node] if isinstance(node, ast.expr) else []
    return [(k.value, k.lineno) for k in items if isinstance(k, ast.Constant) and isinstance(k.value, str)]


def _top_level(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Statements of a module/class body, descending into ``if``/``try``
    blocks (``if TYPE_CHECKING: ... else: ...`` style)."""
    for stmt in body:
        if isinstance(stmt, ast.If):
            yield from _top_level(stmt.body)
            yield from _top_level(stmt.orelse)
        elif isinstance(stmt, ast.Try):
            yield from _top_level(stmt.body)
            for h in stmt.handlers:
                yield from _top_level(h.body)
            yield from _top_level(stmt.orelse)
        else:
            yield stmt


def _name_of(node: ast.AST) -> str:
    """Last dotted component of a Name/Attribute/Call expression, else ''."""
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    return ""


def _add(out: dict[str, SourceRef], name: str, ref: SourceRef) -> None:
    if name not in out or ref < out[name]:
        out[name] = ref


def _nested_subscript(node: ast.AST) -> tuple[str, list[str]] | None:
    """``v["a"]["b"]`` -> ("v", ["a", "b"]); None for anything else."""
    keys: list[str] = []
    while isinstance(node, ast.Subscript):
        if not (isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str)):
            return None
        keys.insert(0, node.slice.value)
        node = node.value
    if isinstance(node, ast.Name) and keys:
        return node.id, keys
    return None
