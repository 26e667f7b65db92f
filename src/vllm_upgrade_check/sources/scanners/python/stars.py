"""What a star import brings into a file: ``from vllm.utils import *`` binds, at run time,
the public names the module of the installed release has; a name the file uses and never
binds itself is taken from the star import of the vLLM module that had it.

Each such name becomes an ``import`` fact of origin ``star`` (module in ``name``, the name in
``value``) at the first line that uses it, so that the target judges it as it judges
``from vllm.utils import NAME`` (a name the target's module no longer binds is a NameError
where it is used), and the name resolves to vLLM's for the calls of the file (``from vllm
import *`` then ``LLM(...)``).

A star import of a module that is not vLLM's (``from mylib import *``, ``from .compat import
*``) may bind any name: the file's name resolution is then *open*. Its star names are facts
marked ``resolved=False`` (never judged missing: the other module may bind the name), and a
name resolves to vLLM's for the calls only when no such star import follows the vLLM one.

Which names a vLLM module binds comes from the wheels (:mod:`vllm_upgrade_check.knowledge.public_names`),
loaded only for a file that star-imports from vLLM.
"""

from __future__ import annotations

import ast
import builtins
import re
from dataclasses import dataclass

from vllm_upgrade_check.model.facts import Fact, FactKind, Spans
from vllm_upgrade_check.sources.scanners.python.source import PythonSource

STAR_ORIGIN = "star"
"""The ``origin`` of an ``import`` fact for a name a star import brings."""

STAR_NOTE = "brought by a star import: import the name by name from where the target defines it, by hand"
"""Why a star-imported name is not fixed in place."""

_BUILTINS = frozenset(dir(builtins)) | {"__file__", "__name__", "__doc__", "__spec__", "__path__", "__builtins__"}


@dataclass(frozen=True)
class StarName:
    """A name a file uses that a vLLM star import brings.

    Attributes:
        name: the name (``LLM``).
        module: the vLLM module whose star import brings it (``vllm``).
        use: the first node that reads it.
        open: whether a star import of another module may bind it instead (then it is not
            judged missing).
        resolves: whether the file's calls of it are vLLM's (no other star import follows).
    """

    name: str
    module: str
    use: ast.Name
    open: bool
    resolves: bool


def star_imports(tree: ast.Module) -> list[tuple[int, str, bool]]:
    """``(position, module, is_vllm)`` of each ``from M import *`` of ``tree``, in source
    order (a relative one is the repository's own module: not vLLM's)."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names):
            module = node.module or ""
            is_vllm = not node.level and (module == "vllm" or module.startswith("vllm."))
            out.append(((node.lineno, node.col_offset), "." * node.level + module, is_vllm))
    out.sort()
    return [(i, module, is_vllm) for i, (_pos, module, is_vllm) in enumerate(out)]


def _bound(tree: ast.Module) -> set[str]:
    """Every name ``tree`` binds anywhere (assignments, definitions, parameters, imports,
    loop and ``with`` targets, handlers, patterns, ``global``/``nonlocal``)."""
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            out.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(node.name)
        elif isinstance(node, ast.arg):
            out.add(node.arg)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                if alias.name != "*":
                    out.add(alias.asname or alias.name.split(".", 1)[0])
        elif isinstance(node, ast.ExceptHandler) and node.name:
            out.add(node.name)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            out.update(node.names)
        elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
            out.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            out.add(node.rest)
    return out


def free_names(tree: ast.Module) -> dict[str, ast.Name]:
    """Name -> its first read, for each name ``tree`` reads and never binds (not a builtin)."""
    bound = _bound(tree) | _BUILTINS
    out: dict[str, ast.Name] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id not in bound:
            seen = out.get(node.id)
            if seen is None or (node.lineno, node.col_offset) < (seen.lineno, seen.col_offset):
                out[node.id] = node
    return out


def star_names(tree: ast.Module) -> list[StarName]:
    """The names ``tree`` uses that its vLLM star imports bring: for each free name, the last
    vLLM module star-imported whose public names (in any release read) include it.

    Raises:
        OSError / ValueError: only if the installed package's data is damaged.
    """
    stars = star_imports(tree)
    vllm_stars = [(i, m) for i, m, is_vllm in stars if is_vllm]
    if not vllm_stars:
        return []
    from vllm_upgrade_check.knowledge.public_names import public_names

    names = public_names()
    others = [i for i, _m, is_vllm in stars if not is_vllm]
    out = []
    for name, use in sorted(free_names(tree).items()):
        if name.startswith("_"):
            continue  # a star import leaves out private names
        for index, module in reversed(vllm_stars):
            if names.knows(module) and names.names(module).known(name):
                out.append(StarName(name, module, use, bool(others), not any(o > index for o in others)))
                break
    return out


_STAR_IMPORT = re.compile(r"\bimport[\s\\]*\*")


def star_facts(source: PythonSource) -> list[Fact]:
    """An ``import`` fact (origin :data:`STAR_ORIGIN`) for each name ``source`` uses that a
    vLLM star import brings (:func:`star_names`), at its first use; the name is recorded in
    ``source.aliases`` (it resolves to vLLM's for the file's calls) unless a star import of
    another module follows."""
    source.aliases.pop("*", None)  # import_facts records ``from M import *`` as the name "*"
    if not _STAR_IMPORT.search(source.src):  # the tree is walked only where a star import can be
        return []
    out = []
    for star in star_names(source.tree):
        if star.resolves:
            source.aliases.setdefault(star.name, f"{star.module}.{star.name}")
        out.append(
            Fact(
                FactKind.IMPORT,
                star.module,
                source.loc(star.use),
                raw=f"from {star.module} import * ({star.name})",
                value=star.name,
                origin=STAR_ORIGIN,
                scanner="python",
                resolved=not star.open,
                spans=Spans(note=STAR_NOTE, syntax="python"),
            )
        )
    return out
