"""The ``cli_flags`` of a release and their arity: :class:`_CliCollector` walks
the parser-building code from the ``vllm serve`` subparser, one
:class:`_FunctionScan` per function, and adds the spellings that
``FlexibleArgumentParser`` rewrites or pairs.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from vllm_upgrade_check.knowledge.derive.surface.function_scan import _FunctionScan, _Scope
from vllm_upgrade_check.knowledge.derive.surface.get_kwargs import _kwargs_semantics, _KwargsModel
from vllm_upgrade_check.knowledge.derive.surface.model import FlagArity, SourceRef
from vllm_upgrade_check.knowledge.derive.surface.resolver import _Def, _Field, _Resolver
from vllm_upgrade_check.knowledge.derive.surface.sources import _const_str, _name_of, _Sources, _top_level

#: Files that may define the ``vllm serve`` subparser: ``vllm/scripts.py``
#: (0.6-0.7, with ``add_parser("serve", ...)``) and
#: ``vllm/entrypoints/cli/serve.py`` (0.8+, any ``add_parser`` call).
_SERVE_ENTRY_FILES = ("vllm/entrypoints/cli/serve.py", "vllm/scripts.py")


#: Where ``FlexibleArgumentParser`` lives, newest layout first.
_FLEXIBLE_PARSER_FILES = ("vllm/utils/argparse_utils.py", "vllm/utils/__init__.py", "vllm/utils.py")
_PREPROCESSED_FLAG = re.compile(r"-[A-Za-z]|--[a-z][a-z0-9-]*[a-z0-9]")


class _CliCollector:
    """Collects ``vllm serve`` option strings by walking the parser-building
    code from the serve subparser (see ``_SERVE_ENTRY_FILES``) through every
    vllm function it hands the parser to (``make_arg_parser(parser)``,
    ``AsyncEngineArgs.add_cli_args(parser)``, ``FrontendArgs.add_cli_args``,
    ``EngineArgs.add_cli_args``, wherever the release defines them).

    Three shapes of ``add_argument`` are understood, in any mix:

    1. ``parser.add_argument("--foo", "-f", ..., action=argparse.BooleanOptionalAction)``
       (literal option strings, also bound by ``for arg in ["--a", "--b"]``
       loops; 0.6-0.8 style, and the odd flag later);
    2. ``group.add_argument("--foo", **cfg_kwargs["foo"])`` where
       ``cfg_kwargs = get_kwargs(SomeConfig)`` (0.8.5+): ``--no-foo`` is added
       when the field's annotation contains ``bool`` and get_kwargs turns bool
       fields into BooleanOptionalAction (``**{**cfg_kwargs["foo"], ...}``
       dict splats and ``x = cfg_kwargs["foo"]`` aliases are followed, an
       explicit ``action=`` wins);
    3. ``for key, value in kw.items(): group.add_argument(f"--{key.replace('_', '-')}", **value)``
       where ``kw = get_kwargs(FrontendArgs)`` or ``get_kwargs(cls)`` (the
       class the method was reached through): one flag per dataclass field
       not removed with ``del kw["field"]``; aliases set with
       ``kw["field"]["flags"] = [...]`` and action overrides set with
       ``kw["field"]["action"] = ...`` in the class's methods are honoured.
    """

    def __init__(self, src: _Sources, resolver: _Resolver) -> None:
        self.src = src
        self.resolver = resolver
        self.sem = _kwargs_semantics(src)
        self.kwmodel = _KwargsModel(src, resolver)
        self.flags: dict[str, SourceRef] = {}
        self.arity: dict[str, FlagArity] = {}
        self._boolean_optional: dict[str, bool] = {}
        self.deprecated: list[tuple[str, str, SourceRef]] = []
        self.scanned: list[str] = []

    def collect(self) -> dict[str, SourceRef]:
        """Scan from the serve entry point; returns flag -> SourceRef."""
        seen: set[tuple] = set()
        todo = list(self._entries())
        while todo:
            scope = todo.pop()
            key = (scope.func.path, scope.func.node.lineno, scope.owner.node.name if scope.owner else None)
            if key in seen:
                continue
            seen.add(key)
            self.scanned.append(f"{scope.func.path}:{scope.func.node.name}")
            todo.extend(_FunctionScan(self, scope).run())
        self._enable_disable_pairs()
        self._preprocessed_flags()
        return self.flags

    def _preprocessed_flags(self) -> None:
        """Spellings that ``FlexibleArgumentParser`` rewrites before argparse
        sees them (``-O3`` -> ``--optimization-level 3`` since 0.12): flag
        literals compared with ``==`` or ``startswith`` in that class."""
        for path in _FLEXIBLE_PARSER_FILES:
            found = self.resolver.lookup(path, "FlexibleArgumentParser") if self.src.has(path) else None
            if found is None or not isinstance(found.node, ast.ClassDef) or found.path != path:
                continue
            for node in ast.walk(found.node):
                if isinstance(node, ast.Compare) and any(isinstance(op, ast.Eq) for op in node.ops):
                    candidates = [node.left, *node.comparators]
                elif isinstance(node, ast.Call) and _name_of(node.func) == "startswith":
                    candidates = list(node.args)
                else:
                    continue
                for c in candidates:
                    flag = _const_str(c)
                    if (
                        flag
                        and _PREPROCESSED_FLAG.fullmatch(flag)
                        and flag not in self.flags
                        and flag != "--help"
                    ):
                        self.flags[flag] = SourceRef(path, c.lineno)
                        self.arity[flag] = FlagArity(self._rewritten_takes(found.node, flag))
            return

    def _rewritten_takes(self, cls: ast.ClassDef, flag: str) -> str | None:
        """``takes`` of a flag that FlexibleArgumentParser rewrites: a
        branch testing ``arg == FLAG`` that appends one option string in its
        place (``-O`` -> ``--optimization-level`` / ``-O.mode``) makes the
        next word that option's value: the target's ``takes``, ``"1"`` for
        a dotted ``-X.key`` (a JSON sub-key).  None when no such branch
        exists (``-O3`` attached forms only: a bare flag is not rewritten)."""
        for node in ast.walk(cls):
            if not isinstance(node, ast.If):
                continue
            tests = [n for n in ast.walk(node.test) if isinstance(n, ast.Compare)]
            if not any(
                any(isinstance(op, ast.Eq) for op in t.ops) and flag in {_const_str(x) for x in [t.left, *t.comparators]}
                for t in tests
            ):
                continue
            appended = [
                n.args[0]
                for stmt in node.body
                for n in ast.walk(stmt)
                if isinstance(n, ast.Call) and _name_of(n.func) == "append" and len(n.args) == 1
            ]
            if len(appended) != 1:
                return None
            target = _const_str(appended[0], holes=True)
            if target is None:
                return None
            target = target.split("=", 1)[0]
            if "=" in (_const_str(appended[0], holes=True) or ""):
                return None  # -O<value> rewritten with its value attached
            if target.startswith("--") and "." not in target:
                known = self.arity.get("--" + target[2:].replace("_", "-"))
                return known.takes if known else None
            if "." in target:
                return "1"
            return None
        return None

    def _enable_disable_pairs(self) -> None:
        """0.33+: FlexibleArgumentParser registers an action class for
        ``BooleanOptionalAction`` that pairs ``--enable-x`` with
        ``--disable-x`` (``_inverse_prefixes``); those spellings are flags too."""
        for path in _FLEXIBLE_PARSER_FILES:
            tree = self.src.tree(path)
            if tree is None:
                continue
            prefixes: dict[str, str] = {}
            for cls in (n for n in _top_level(tree.body) if isinstance(n, ast.ClassDef)):
                for stmt in _top_level(cls.body):
                    if (
                        isinstance(stmt, ast.Assign)
                        and any(_name_of(t) == "_inverse_prefixes" for t in stmt.targets)
                        and isinstance(stmt.value, ast.Dict)
                        and any(_name_of(b) == "BooleanOptionalAction" for b in cls.bases)
                        and self._registered_for_boolean_optional(tree, cls.name)
                    ):
                        for k, v in zip(stmt.value.keys, stmt.value.values, strict=True):
                            ks, vs = _const_str(k), _const_str(v)
                            if ks and vs:
                                prefixes[ks] = vs
            if not prefixes:
                continue
            for flag in sorted(self.flags):
                if self.arity.get(flag) != FlagArity("0") or flag.startswith("--no-"):
                    continue
                if not self._boolean_optional.get(flag):
                    continue
                for prefix, inverse in prefixes.items():
                    if flag.startswith(prefix):
                        self._record(inverse + flag[len(prefix) :], self.flags[flag], FlagArity("0"))
            return

    @staticmethod
    def _registered_for_boolean_optional(tree: ast.Module, name: str) -> bool:
        """``self.register("action", BooleanOptionalAction, NAME)`` somewhere in ``tree``."""
        return any(
            isinstance(n, ast.Call)
            and _name_of(n.func) == "register"
            and len(n.args) == 3
            and _name_of(n.args[1]) == "BooleanOptionalAction"
            and _name_of(n.args[2]) == name
            for n in ast.walk(tree)
        )

    def _entries(self) -> list[_Scope]:
        """The function(s) creating the serve subparser, in the first of
        ``_SERVE_ENTRY_FILES`` that has one."""
        for path in _SERVE_ENTRY_FILES:
            tree = self.src.tree(path)
            entries = []
            for owner, func in _functions(path, tree) if tree else ():
                for node in ast.walk(func):
                    if not (
                        isinstance(node, ast.Assign)
                        and isinstance(node.value, ast.Call)
                        and _name_of(node.value) == "add_parser"
                        and isinstance(node.targets[0], ast.Name)
                    ):
                        continue
                    first = _const_str(node.value.args[0]) if node.value.args else None
                    if path == "vllm/scripts.py" and first != "serve":
                        continue
                    entries.append(_Scope(_Def(path, func), owner, frozenset({node.targets[0].id})))
            if entries:
                return entries
        return []

    def add_flag(self, flag: str, ref: SourceRef, bool_optional: bool, arity: FlagArity | None = None) -> None:
        """Record ``flag`` (and ``--no-`` form for BooleanOptionalAction)
        with its :class:`FlagArity` (unknown when not given); long options
        are stored dashed (FlexibleArgumentParser accepts ``--foo_bar`` and
        ``--foo-bar`` alike)."""
        if flag.startswith("--"):
            flag = "--" + flag[2:].replace("_", "-")
        arity = arity or FlagArity(None)
        if bool_optional:
            arity = FlagArity("0")
        self._record(flag, ref, arity)
        self._boolean_optional[flag] = self._boolean_optional.get(flag, False) or bool_optional
        if bool_optional and flag.startswith("--"):
            self._record("--no-" + flag[2:], ref, FlagArity("0"))

    def _record(self, flag: str, ref: SourceRef, arity: FlagArity) -> None:
        """Keep the first definition of ``flag`` (smallest ref) and its arity."""
        if flag not in self.flags or ref < self.flags[flag]:
            self.flags[flag] = ref
            self.arity[flag] = arity

    def field_bool_optional(self, fld: _Field) -> bool:
        """Whether get_kwargs makes dataclass field ``fld`` a
        BooleanOptionalAction flag."""
        if not self.sem.bool_optional:
            return False
        members = self.resolver.union_members(fld.ref.path, fld.annotation)
        if "bool" not in members:
            return False
        return not (self.sem.bool_str_none_excluded and members == {"bool", "str", "None"})


def _functions(
    path: str, tree: ast.Module
) -> Iterator[tuple[_Def | None, ast.FunctionDef | ast.AsyncFunctionDef]]:
    """Top-level functions and methods of top-level classes (with the owning
    class); nested functions are part of their enclosing function."""
    for stmt in _top_level(tree.body):
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield None, stmt
        elif isinstance(stmt, ast.ClassDef):
            for sub in _top_level(stmt.body):
                if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    yield _Def(path, stmt), sub
