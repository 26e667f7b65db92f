""":class:`_FieldEval`: the body of a release's ``get_kwargs`` loop run
statically on one field, giving the argparse kwargs that decide its arity.
"""

from __future__ import annotations

import ast
from typing import Any

from vllm_upgrade_check.knowledge.derive.surface.kwargs_syntax import (
    _hint_pred,
    _is_field_type,
    _is_kw,
    _kw_key,
    _origins,
    _relevant,
    _type_name,
    _type_set,
)
from vllm_upgrade_check.knowledge.derive.surface.resolver import _Field
from vllm_upgrade_check.knowledge.derive.surface.sources import _name_of
from vllm_upgrade_check.knowledge.derive.surface.type_hints import _Expansion, _Hint, _TypeReader
from vllm_upgrade_check.knowledge.derive.surface.unknown import UNKNOWN


class _FieldEval:
    """Runs the per-field body of a release's ``get_kwargs`` loop on one
    field, statically.  The result is the argparse kwargs that matter for
    arity (``action``, ``nargs``, ``choices``, ``metavar``, ``type`` as a
    Literal :class:`_Hint` or ``"other"``), with :data:`UNKNOWN` values
    where the code could not be followed, or None when the whole field is
    unknown (a test that cannot be decided, or a ``raise``).

    ``types`` reads the annotations; ``literal_metavar``: the release's
    ``literal_to_kwargs`` sets ``metavar`` instead of ``choices`` when the
    hints hold ``str`` besides the Literal (see :class:`_KwargsModel`)."""

    def __init__(
        self, types: _TypeReader, literal_metavar: bool, fld: _Field, hints: list[_Hint] | None
    ) -> None:
        self.types = types
        self.literal_metavar = literal_metavar
        self.fld = fld
        self.hints = hints
        self.env: dict[str, Any] = {"type_hints": hints if hints is not None else UNKNOWN}
        self.kw: dict[str, Any] = {}
        self.failed = False
        self.stopped = False

    def run(self, body: list[ast.stmt]) -> dict[str, Any] | None:
        """Execute ``body``; the field's kwargs or None (unknown)."""
        self._exec(body)
        return None if self.failed else self.kw

    # -- statements ----------------------------------------------------------

    def _exec(self, body: list[ast.stmt]) -> None:
        for stmt in body:
            if self.failed or self.stopped:
                return
            self._stmt(stmt)

    def _stmt(self, stmt: ast.stmt) -> None:
        if isinstance(stmt, (ast.Continue, ast.Return, ast.Break)):
            self.stopped = True
        elif isinstance(stmt, ast.Raise):
            self.failed = True
        elif isinstance(stmt, ast.If):
            if not _relevant(stmt):
                return
            test = self._test(stmt.test)
            if test is UNKNOWN:
                self.failed = True
            else:
                self._exec(stmt.body if test else stmt.orelse)
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign)):
            value = stmt.value
            targets = list(stmt.targets) if isinstance(stmt, ast.Assign) else [stmt.target]
            if value is None:
                return
            for t in targets:
                self._assign(t, value)
        elif isinstance(stmt, ast.AugAssign):
            key = _kw_key(stmt.target)
            if key == "choices" and isinstance(stmt.op, ast.Add):
                extra = self._value(stmt.value)
                cur = self.kw.get("choices")
                self.kw["choices"] = cur + extra if isinstance(cur, list) and isinstance(extra, list) else UNKNOWN
            elif key not in (None, "help", "default"):
                self.kw[key] = UNKNOWN
        elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            self._call_stmt(stmt.value)
        elif isinstance(stmt, ast.Delete):
            for t in stmt.targets:
                key = _kw_key(t)
                if key is not None:
                    self.kw.pop(key, None)
        elif isinstance(stmt, (ast.For, ast.While, ast.With, ast.Try, ast.Match)):
            if _relevant(stmt):
                self.failed = True

    def _assign(self, target: ast.AST, value: ast.AST) -> None:
        if _is_kw(target):
            got = self._value(value)
            self.kw = dict(got) if isinstance(got, dict) else {"action": UNKNOWN, "nargs": UNKNOWN}
            return
        key = _kw_key(target)
        if key is not None:
            if key not in ("default", "help"):
                self.kw[key] = self._value(value)
            return
        if isinstance(target, ast.Name) and target.id == "type_hints":
            # the hints were computed up front; 0.33's dict-subclass mapping
            # ({dict if is_dict_subclass(th) else th for th in type_hints})
            if isinstance(value, ast.SetComp) and self.hints is not None:
                if any(isinstance(n, ast.Call) and _name_of(n.func) == "is_dict_subclass" for n in ast.walk(value)):
                    self.env["type_hints"] = [_Hint("dict") if h.dict_subclass else h for h in self.hints]
            return
        if isinstance(target, ast.Name):
            self.env[target.id] = self._value(value)

    def _call_stmt(self, call: ast.Call) -> None:
        func = call.func
        if not isinstance(func, ast.Attribute):
            return
        if func.attr == "update" and _is_kw(func.value) and call.args:
            got = self._value(call.args[0])
            if isinstance(got, dict):
                self.kw.update(got)
                return
            helper = _name_of(call.args[0].func) if isinstance(call.args[0], ast.Call) else ""
            if helper == "literal_to_kwargs":
                # sets type and choices (or metavar) only
                self.kw.update({"choices": UNKNOWN, "type": UNKNOWN})
            elif helper == "collection_to_kwargs":
                self.kw.update({"nargs": UNKNOWN, "type": UNKNOWN})
            else:
                self.kw.update({"action": UNKNOWN, "nargs": UNKNOWN, "choices": UNKNOWN})
            return
        key = _kw_key(func.value)
        if key == "choices" and func.attr in ("append", "remove") and call.args:
            cur = self.kw.get("choices")
            item = self._value(call.args[0])
            if not isinstance(cur, list) or item is UNKNOWN:
                self.kw["choices"] = UNKNOWN
            elif func.attr == "append":
                # optional_type() turns the word "None" into None: an appended
                # None is accepted as "None", an appended "None" string never
                # matches the converted value
                if item is None:
                    self.kw["choices"] = cur + [None]
            elif item in cur:
                self.kw["choices"] = [c for c in cur if c != item]

    # -- expressions -----------------------------------------------------------

    def _value(self, node: ast.AST) -> Any:
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Dict):
            out: dict[str, Any] = {}
            for k, v in zip(node.keys, node.values, strict=True):
                if k is None:
                    inner = self._value(v)
                    if not isinstance(inner, dict):
                        return UNKNOWN
                    out.update(inner)
                elif isinstance(k, ast.Constant) and isinstance(k.value, str):
                    out[k.value] = self._value(v) if k.value not in ("default", "help") else None
            return out
        if isinstance(node, (ast.Set, ast.List, ast.Tuple)):
            items = [self._value(e) for e in node.elts]
            return UNKNOWN if any(i is UNKNOWN for i in items) else items
        if isinstance(node, ast.Name):
            if node.id in self.env:
                return self.env[node.id]
            if node.id in ("name",):
                return self.fld.name
            if node.id == "Ellipsis":
                return Ellipsis
            return ("name", node.id)
        if isinstance(node, ast.Attribute):
            if node.attr == "BooleanOptionalAction":
                return "BooleanOptionalAction"
            if isinstance(node.value, ast.Name) and node.value.id == "field" and node.attr == "name":
                return self.fld.name
            return ("name", node.attr)
        if isinstance(node, ast.Subscript):
            if _is_kw(node):
                return self.kw
            base = self._value(node.value)
            idx = self._value(node.slice)
            if isinstance(base, list) and isinstance(idx, int) and -len(base) <= idx < len(base):
                return base[idx]
            if isinstance(base, dict) and isinstance(idx, str):
                return base.get(idx, UNKNOWN)
            return UNKNOWN
        if isinstance(node, ast.IfExp):
            test = self._test(node.test)
            if test is UNKNOWN:
                return UNKNOWN
            return self._value(node.body if test else node.orelse)
        if isinstance(node, ast.Call):
            return self._call(node)
        if isinstance(node, ast.GeneratorExp):
            return self._generator(node)
        if isinstance(node, (ast.Lambda, ast.JoinedStr, ast.BinOp)):
            return "other"  # a parser function or a help text: never a Literal
        return UNKNOWN

    def _generator(self, node: ast.GeneratorExp) -> Any:
        """``(th for th in type_hints if is_dataclass(th))``: the matching hints."""
        if len(node.generators) != 1:
            return UNKNOWN
        gen = node.generators[0]
        items = self._value(gen.iter)
        if not isinstance(items, list) or not isinstance(gen.target, ast.Name):
            return UNKNOWN
        out = []
        for item in items:
            verdict: Any = True
            for cond in gen.ifs:
                c = _hint_pred(cond, gen.target.id, item)
                if c is UNKNOWN:
                    return UNKNOWN
                verdict = verdict and c
            if verdict:
                out.append(item)
        return out

    def _hints_of(self, node: ast.AST) -> list[_Hint] | Any:
        got = self._value(node)
        if isinstance(got, _Hint):
            return [got]
        if isinstance(got, list) and all(isinstance(h, _Hint) for h in got):
            return got
        return UNKNOWN

    def _call(self, node: ast.Call) -> Any:
        fname = _name_of(node.func)
        args = node.args
        if isinstance(node.func, ast.Attribute) and fname == "get" and _is_kw(node.func.value) and args:
            key = self._value(args[0])
            return self.kw.get(key) if isinstance(key, str) else UNKNOWN
        if fname == "get_type_hints" and args:
            return self.env["type_hints"]
        if fname == "next" and args:
            got = self._value(args[0])
            if isinstance(got, list):
                if got:
                    return got[0]
                return self._value(args[1]) if len(args) > 1 else UNKNOWN
            return UNKNOWN
        if fname == "get_type" and len(args) == 2:
            hints = self._hints_of(args[0])
            want = _type_name(args[1])
            if hints is UNKNOWN or want is None:
                return UNKNOWN
            return next((h for h in hints if h.origin == want), None)
        if fname == "get_args" and args:
            h = self._value(args[0])
            if isinstance(h, _Hint):
                if h.origin == "Literal":
                    return list(h.values) if h.values is not None else UNKNOWN
                return [self._arg_hint(h.path, a) for a in h.args]
            return UNKNOWN
        if fname in ("sorted", "list") and args:
            got = self._value(args[0])
            if isinstance(got, list):
                try:
                    return sorted(got) if fname == "sorted" else list(got)
                except TypeError:
                    return UNKNOWN
            return UNKNOWN
        if fname == "len" and args:
            got = self._value(args[0])
            return len(got) if isinstance(got, list) else UNKNOWN
        if fname == "literal_to_kwargs" and args:
            return self._literal_to_kwargs(args[0])
        if fname == "collection_to_kwargs" and len(args) == 2:
            return self._collection_to_kwargs(args[0], args[1])
        if fname == "type" and args:
            return "other"
        return "other"

    def _arg_hint(self, path: str, arg: ast.AST) -> Any:
        """A subscript argument (``list[X]``'s X) as a value: Ellipsis, a
        Literal or Union hint, or a plain hint."""
        if isinstance(arg, ast.Constant) and arg.value is Ellipsis:
            return Ellipsis
        if isinstance(arg, ast.Subscript) and _name_of(arg.value) in ("Union", "Optional"):
            return _Hint("Union", path, builtin=False, name="Union")
        if isinstance(arg, ast.BinOp):
            return _Hint("Union", path, builtin=False, name="UnionType")
        got = self.types.hints(path, arg, _Expansion(True, "no"), top=False)
        if got is None:
            return UNKNOWN
        if len(got) == 1:
            return got[0]
        return _Hint("Union", path, builtin=False, name="Union")

    def _literal_to_kwargs(self, arg: ast.AST) -> Any:
        hints = self._hints_of(arg)
        if hints is UNKNOWN:
            return UNKNOWN
        lit = next((h for h in hints if h.origin == "Literal"), None)
        if lit is None or lit.values is None:
            return UNKNOWN
        key = "metavar" if self.literal_metavar and any(h.origin == "str" for h in hints) else "choices"
        try:
            options = sorted(lit.values)
        except TypeError:
            return UNKNOWN
        return {"type": "other", key: options}

    def _collection_to_kwargs(self, hints_arg: ast.AST, type_arg: ast.AST) -> Any:
        hints = self._hints_of(hints_arg)
        want = _type_name(type_arg)
        if hints is UNKNOWN or want is None:
            return UNKNOWN
        hint = next((h for h in hints if h.origin == want), None)
        if hint is None:
            return UNKNOWN
        types = [self._arg_hint(hint.path, a) for a in hint.args]
        if not types or any(t is UNKNOWN for t in types):
            return UNKNOWN
        elem = types[0]
        if isinstance(elem, _Hint) and elem.origin == "Union":
            elem = "other"
        nargs = "+" if want != "tuple" or Ellipsis in types else len(types)
        return {"type": elem if isinstance(elem, _Hint) and elem.origin == "Literal" else "other", "nargs": nargs}

    # -- tests -------------------------------------------------------------

    def _test(self, node: ast.AST) -> Any:
        """True / False / UNKNOWN."""
        if isinstance(node, ast.BoolOp):
            results = [self._test(v) for v in node.values]
            if isinstance(node.op, ast.And):
                if any(r is False for r in results):
                    return False
                return UNKNOWN if any(r is UNKNOWN for r in results) else True
            if any(r is True for r in results):
                return True
            return UNKNOWN if any(r is UNKNOWN for r in results) else False
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            r = self._test(node.operand)
            return UNKNOWN if r is UNKNOWN else not r
        if isinstance(node, ast.Compare) and len(node.ops) == 1:
            return self._compare(node.left, node.ops[0], node.comparators[0])
        if isinstance(node, ast.Call):
            return self._pred_call(node)
        value = self._value(node)
        if value is UNKNOWN or (isinstance(value, tuple) and value and value[0] == "name"):
            return UNKNOWN
        return bool(value)

    def _pred_call(self, node: ast.Call) -> Any:
        fname = _name_of(node.func)
        args = node.args
        if fname == "contains_type" and len(args) == 2:
            hints = self._hints_of(args[0])
            want = _type_name(args[1])
            if hints is UNKNOWN or want is None:
                return UNKNOWN
            return any(h.origin == want for h in hints)
        if fname == "any" and args and isinstance(args[0], ast.GeneratorExp):
            got = self._generator(args[0])
            return UNKNOWN if got is UNKNOWN else bool(got)
        if fname in ("is_optional", "is_type_in_union") and args and _is_field_type(args[0]):
            # 0.8.4: get_origin(field.type) is Union and X in get_args(field.type)
            want = "None" if fname == "is_optional" else _type_name(args[1]) if len(args) > 1 else None
            raw = self._raw_union()
            if raw is UNKNOWN or want is None:
                return UNKNOWN
            return raw is not None and any(h.origin == want for h in raw)
        if fname in ("hasattr", "isinstance", "is_in_doc_build"):
            return UNKNOWN
        value = self._value(node)
        if value is UNKNOWN or value == "other":
            return UNKNOWN
        return bool(value)

    def _raw_union(self) -> Any:
        """Members of ``field.type`` when its origin is ``typing.Union``
        (``Optional``/``Union``, not ``X | Y``), None for other types."""
        ann = self.fld.annotation
        if isinstance(ann, ast.Constant) and isinstance(ann.value, str):
            try:
                ann = ast.parse(ann.value, mode="eval").body
            except SyntaxError:
                return UNKNOWN
        if isinstance(ann, ast.Subscript) and _name_of(ann.value) in ("Optional", "Union"):
            got = self.types.hints(self.fld.ref.path, ann, _Expansion(False, "no"))
            return UNKNOWN if got is None else got
        if isinstance(ann, (ast.Name, ast.Attribute)):
            found = self.types.resolver.resolve(self.fld.ref.path, ann)
            if found is not None and isinstance(found.node, ast.Subscript):
                if _name_of(found.node.value) in ("Optional", "Union"):
                    got = self.types.hints(found.path, found.node, _Expansion(False, "no"))
                    return UNKNOWN if got is None else got
        return None

    def _compare(self, left: ast.AST, op: ast.cmpop, right: ast.AST) -> Any:
        # field.type is bool (0.8.4)
        if _is_field_type(left) and isinstance(op, (ast.Is, ast.IsNot)):
            ann = self.fld.annotation
            hit = isinstance(ann, ast.Name) and ann.id == _name_of(right) and _type_name(right) is not None
            if not isinstance(ann, ast.Name):
                hit = False
            return hit if isinstance(op, ast.Is) else not hit
        # get_origin(kwargs[name].get("type")) is Literal
        if (
            isinstance(left, ast.Call)
            and _name_of(left.func) == "get_origin"
            and left.args
            and isinstance(op, (ast.Is, ast.IsNot, ast.In, ast.NotIn))
        ):
            target = self._value(left.args[0])
            origins = _origins(right)
            if origins is None:
                return UNKNOWN
            if target is UNKNOWN:
                return UNKNOWN
            origin = target.origin if isinstance(target, _Hint) else None
            if isinstance(target, _Hint) and target.origin == "Union":
                origin = "Union" if target.name == "Union" else "UnionType"
            hit = origin in origins
            return hit if isinstance(op, (ast.Is, ast.In)) else not hit
        # type(None) in type_hints
        if (
            isinstance(left, ast.Call)
            and _name_of(left.func) == "type"
            and left.args
            and isinstance(left.args[0], ast.Constant)
            and left.args[0].value is None
            and isinstance(op, (ast.In, ast.NotIn))
        ):
            hints = self._hints_of(right)
            if hints is UNKNOWN:
                return UNKNOWN
            hit = any(h.origin == "None" for h in hints)
            return hit if isinstance(op, ast.In) else not hit
        # type_hints == {bool, str, type(None)}
        if isinstance(op, (ast.Eq, ast.NotEq)) and isinstance(right, ast.Set):
            hints = self._hints_of(left)
            want = _type_set(right)
            if hints is UNKNOWN or want is None:
                return UNKNOWN
            have: set = set()
            for h in hints:
                if h.origin == "class":
                    have.add(("class", h.name))
                else:
                    have.add(h.origin)
            hit = have == want
            return hit if isinstance(op, ast.Eq) else not hit
        # Ellipsis in types
        lval = self._value(left)
        rval = self._value(right)
        if lval is UNKNOWN or rval is UNKNOWN:
            return UNKNOWN
        if isinstance(op, (ast.In, ast.NotIn)) and isinstance(rval, list):
            hit = any(lval is r or (not isinstance(r, _Hint) and lval == r) for r in rval)
            return hit if isinstance(op, ast.In) else not hit
        if isinstance(op, (ast.Is, ast.IsNot)) and (lval is None or rval is None):
            hit = lval is rval
            return hit if isinstance(op, ast.Is) else not hit
        if isinstance(op, (ast.Eq, ast.NotEq)) and isinstance(lval, (str, int)) and isinstance(rval, (str, int)):
            hit = lval == rval
            return hit if isinstance(op, ast.Eq) else not hit
        return UNKNOWN

