"""Generate ``names.json`` and the ``response_fields`` kind, read from the vLLM wheels with ``ast``.

Usage: ``python scripts/gen_public_names.py [WHEELS_DIR]`` (default ``/work/wheels``): for every
``vllm-<VERSION>-*.whl`` there, oldest first, each ``.py`` module of ``vllm/`` is parsed (never
imported) and its public top-level names are read:

- what the module binds at run time: ``def``/``class``, assignments (also inside top-level
  ``if``/``try``/``with`` blocks), ``import``/``from ... import`` (re-exports), names a
  ``from M import *`` of another vLLM module brings; a ``if TYPE_CHECKING:`` body binds
  nothing, its ``else:`` does;
- every string of its ``__all__`` (a lazy ``__getattr__`` serves them, as ``vllm/__init__.py``
  does for ``LLM``);
- whether the module has a top-level ``__getattr__`` and no ``__all__``: its names are then
  not known (the module is "open").

Names starting with ``_`` are left out. Writes ``src/vllm_upgrade_check/data/surface/names.json``:
``{"releases": [...], "modules": {module: '{"open": runs, "names": {name: runs}, "defs": [names]}'}}``
(each module's entry as JSON text, parsed on demand)
where ``runs`` is a flat list ``[first, last, first, last, ...]`` of release indexes and ``defs``
the names the module defines itself (not imported) in the newest release that binds them (the
"new home" of a name that moved).

It also adds the kind ``response_fields`` to ``history.json``: the fields of the OpenAI-compatible
server's chat response models (``ChatCompletionResponse``, its choice, ``ChatMessage``, the stream
chunk, its choice, ``DeltaMessage``, ``UsageInfo``), with the fields of their vLLM base classes, and
the wheel file and line of each.
"""

from __future__ import annotations

import ast
import json
import sys
import zipfile
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from packaging.version import InvalidVersion, Version

OUT = Path(__file__).resolve().parents[1] / "src" / "vllm_upgrade_check" / "data" / "surface"

RESPONSE_MODELS = (
    "ChatCompletionResponse",
    "ChatCompletionResponseChoice",
    "ChatMessage",
    "ChatCompletionStreamResponse",
    "ChatCompletionResponseStreamChoice",
    "DeltaMessage",
    "UsageInfo",
)
"""The pydantic models of a chat completion response as the server returns it."""


def _module_name(path: str) -> str | None:
    parts = path[: -len(".py")].split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    if not all(p.isidentifier() for p in parts) or any(p.startswith("_") for p in parts[1:]):
        return None
    return ".".join(parts)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _targets(node: ast.expr) -> list[str]:
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, (ast.Tuple, ast.List)):
        return [n for elt in node.elts for n in _targets(elt)]
    if isinstance(node, ast.Starred):
        return _targets(node.value)
    return []


def _resolve(module: str, is_package: bool, level: int, name: str | None) -> str:
    if not level:
        return name or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - (level - 1)] if level > 1 else base
    return ".".join([*base, name] if name else base)


class _Reader:
    """The top-level bindings of one module."""

    def __init__(self, module: str, is_package: bool) -> None:
        self.module, self.is_package = module, is_package
        self.defs: set[str] = set()
        self.imported: set[str] = set()
        self.stars: list[str] = []
        self.all: set[str] | None = None
        self.getattr = False

    def body(self, stmts: list[ast.stmt]) -> None:
        for stmt in stmts:
            self.stmt(stmt)

    def stmt(self, stmt: ast.stmt) -> None:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            self.defs.add(stmt.name)
            self.getattr |= stmt.name == "__getattr__"
        elif isinstance(stmt, ast.Assign):
            for target in stmt.targets:
                names = _targets(target)
                self.defs.update(names)
                if "__all__" in names:
                    self._all(stmt.value)
        elif isinstance(stmt, (ast.AnnAssign, ast.AugAssign)) and isinstance(stmt.target, ast.Name):
            self.defs.add(stmt.target.id)
            if stmt.target.id == "__all__" and stmt.value is not None:
                self._all(stmt.value, extend=isinstance(stmt, ast.AugAssign))
        elif isinstance(stmt, ast.Import):
            for alias in stmt.names:
                self.imported.add(alias.asname or alias.name.split(".", 1)[0])
        elif isinstance(stmt, ast.ImportFrom):
            source = _resolve(self.module, self.is_package, stmt.level, stmt.module)
            for alias in stmt.names:
                if alias.name == "*":
                    self.stars.append(source)
                else:
                    self.imported.add(alias.asname or alias.name)
        elif isinstance(stmt, ast.If):
            if _is_type_checking(stmt.test):
                self.body(stmt.orelse)
            else:
                self.body(stmt.body)
                self.body(stmt.orelse)
        elif isinstance(stmt, ast.Try) or type(stmt).__name__ == "TryStar":
            for part in (stmt.body, *(h.body for h in stmt.handlers), stmt.orelse, stmt.finalbody):  # type: ignore[attr-defined]
                self.body(part)
        elif isinstance(stmt, (ast.With, ast.AsyncWith)):
            self.body(stmt.body)
        elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            func = stmt.value.func
            if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "__all__":
                for arg in stmt.value.args:
                    self._all(arg, extend=True)

    def _all(self, value: ast.expr, extend: bool = False) -> None:
        names = set()
        if isinstance(value, (ast.List, ast.Tuple, ast.Set)):
            names = {e.value for e in value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)}
        elif isinstance(value, ast.BinOp):
            for side in (value.left, value.right):
                self._all(side, extend=True)
            return
        self.all = (self.all or set()) | names if extend or self.all else names


def _fields(cls: ast.ClassDef) -> dict[str, int]:
    return {
        s.target.id: s.lineno
        for s in cls.body
        if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name) and not s.target.id.startswith("_")
    }


def model_fields(
    classes: dict[str, tuple[str, ast.ClassDef]],
    models: tuple[str, ...],
    fields_of: Callable[[ast.ClassDef], dict[str, int]],
) -> dict[str, str]:
    """``{field: "path:line"}`` of the pydantic ``models`` (class names, looked up in
    ``classes``: name -> (wheel path, class)), with the fields of their base classes found
    there (five levels deep at most); ``fields_of`` reads one class's fields."""
    fields: dict[str, str] = {}

    def collect(name: str, depth: int = 0) -> None:
        found = classes.get(name)
        if found is None or depth > 5:
            return
        path, cls = found
        for field, line in fields_of(cls).items():
            fields.setdefault(field, f"{path}:{line}")
        for base in cls.bases:
            if isinstance(base, ast.Name):
                collect(base.id, depth + 1)

    for model in models:
        collect(model)
    return fields


def read_wheel(wheel: str) -> tuple[dict[str, list[object]], dict[str, str]]:
    """``({module: [open, names, defs]}, {response field: "path:line"})`` of one wheel."""
    readers: dict[str, _Reader] = {}
    classes: dict[str, tuple[str, ast.ClassDef]] = {}
    with zipfile.ZipFile(wheel) as archive:
        for path in archive.namelist():
            if not (path.startswith("vllm/") and path.endswith(".py")):
                continue
            module = _module_name(path)
            if module is None:
                continue
            try:
                tree = ast.parse(archive.read(path))
            except (SyntaxError, ValueError):
                continue
            reader = readers[module] = _Reader(module, path.endswith("__init__.py"))
            reader.body(tree.body)
            if "/entrypoints/" in path and path.endswith("protocol.py"):
                for node in tree.body:
                    if isinstance(node, ast.ClassDef):
                        classes.setdefault(node.name, (path, node))

    def names(module: str, seen: frozenset[str] = frozenset()) -> set[str]:
        reader = readers.get(module)
        if reader is None or module in seen:
            return set()
        out = reader.defs | reader.imported | (reader.all or set())
        for star in reader.stars:
            inner = readers.get(star)
            if inner is None:
                continue
            out |= inner.all if inner.all is not None else {n for n in names(star, seen | {module})}
        return out

    modules: dict[str, list[object]] = {}
    for module, reader in readers.items():
        public = sorted(n for n in names(module) if not n.startswith("_"))
        is_open = reader.getattr and reader.all is None
        modules[module] = [is_open, public, sorted(n for n in reader.defs if not n.startswith("_"))]
    return modules, model_fields(classes, RESPONSE_MODELS, _fields)


def _runs(indexes: list[int]) -> list[int]:
    runs: list[int] = []
    for i in indexes:
        if runs and runs[-1] == i - 1:
            runs[-1] = i
        else:
            runs.extend([i, i])
    return runs


def main(argv: list[str]) -> int:
    """Write the data; returns the exit code."""
    wheels = Path(argv[1]) if len(argv) > 1 else Path("/work/wheels")
    found: list[tuple[Version, Path]] = []
    for path in wheels.glob("vllm-*.whl"):
        try:
            found.append((Version(path.name.split("-")[1]), path))
        except InvalidVersion:
            continue
    found.sort()
    history_file = OUT / "history.json"
    history = json.loads(history_file.read_text(encoding="utf-8"))
    releases = history["releases"]
    found = [(v, p) for v, p in found if str(v) in releases]
    if [str(v) for v, _p in found] != releases:
        print("the wheels do not match history.json's releases", file=sys.stderr)
        return 2
    with ProcessPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(read_wheel, [str(p) for _v, p in found]))
    opened: dict[str, list[int]] = {}
    bound: dict[str, dict[str, list[int]]] = {}
    defs: dict[str, set[str]] = {}
    fields: dict[str, list[int]] = {}
    refs: dict[str, str] = {}
    for index, (modules, response) in enumerate(results):
        for module, (is_open, public, defined) in modules.items():
            if is_open:
                opened.setdefault(module, []).append(index)
            per = bound.setdefault(module, {})
            for name in public:  # type: ignore[attr-defined]
                per.setdefault(name, []).append(index)
            mine = defs.setdefault(module, set())
            mine.difference_update(public)  # type: ignore[arg-type]
            mine.update(defined)  # type: ignore[arg-type]
        for field, ref in response.items():
            fields.setdefault(field, []).append(index)
            refs[field] = ref
    data = {
        "schema": 2,
        "source": "the vLLM wheels on PyPI, each module of vllm/ read with ast (never imported): its public "
        "top-level names (definitions, imports, __all__), as runs of release indexes",
        "releases": releases,
        # Each module's entry is JSON text of its own: loading the file builds 4,000 strings,
        # not a million lists; an entry is parsed when a scan asks about that module.
        "modules": {
            module: json.dumps(
                {
                    "open": _runs(opened.get(module, [])),
                    "names": {n: _runs(i) for n, i in sorted(per.items())},
                    "defs": sorted(defs[module]),
                },
                separators=(",", ":"),
            )
            for module, per in sorted(bound.items())
        },
    }
    target = OUT / "names.json"
    target.write_text(json.dumps(data, separators=(",", ":")) + "\n", encoding="utf-8")
    print(f"{target}: {len(bound)} modules, {sum(len(p) for p in bound.values())} names")
    history["kinds"]["response_fields"] = {
        f: [[[a, b] for a, b in zip(_runs(i)[::2], _runs(i)[1::2], strict=True)], refs[f]] for f, i in sorted(fields.items())
    }
    history_file.write_text(json.dumps(history, separators=(",", ":")) + "\n", encoding="utf-8")
    print(f"{history_file}: response_fields {len(fields)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
