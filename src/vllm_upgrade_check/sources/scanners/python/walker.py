"""The walk over one Python file's :mod:`ast`: every scope in source order, each call and
read told apart (an engine or sampling call, an import of vllm, an ``os.environ`` write, a
subprocess launch, a response-field read) and turned into facts, with what else reads the
dicts a vLLM call's keywords come from (:func:`file_facts`); a call's keywords and the
dicts behind them are read in :mod:`.keywords`, client code's response reads in
:mod:`.responses`.
"""

from __future__ import annotations

import ast
import shlex
from dataclasses import replace

from vllm_upgrade_check.model.facts import Fact, FactKind, Span, Spans
from vllm_upgrade_check.parsing.words import Token
from vllm_upgrade_check.sources.scanners.arg_facts import env_fact, with_model_settings
from vllm_upgrade_check.sources.scanners.base import SourceFile, shared_words
from vllm_upgrade_check.sources.scanners.python.keywords import Entry, KeywordReader
from vllm_upgrade_check.sources.scanners.python.names import (
    ENGINE_CALLS,
    RESPONSE_FIELDS,
    SAMPLING_CALLS,
    SUBPROCESS_CALLS,
    const_text,
    dotted_name,
)
from vllm_upgrade_check.sources.scanners.python.responses import ResponseReader
from vllm_upgrade_check.sources.scanners.python.scope import Scope, last_binding, later_updates
from vllm_upgrade_check.sources.scanners.python.source import PythonSource
from vllm_upgrade_check.sources.scanners.shell import argv_facts, is_env_name, shell_facts


def file_facts(source: SourceFile, tree: ast.Module) -> list[Fact]:
    """The facts of one Python file, ``tree`` being its parsed text (every one, also those
    a file that does not mention vLLM has no use for: the scanner picks)."""
    module = _Module(source, tree)
    module.run()
    return module.facts


class _Module:
    """State for one file: the source (with its vLLM import aliases), the facts collected."""

    def __init__(self, source: SourceFile, tree: ast.Module) -> None:
        self.source = PythonSource(source, tree)
        self.keywords = KeywordReader(self.source)
        self.facts: list[Fact] = []
        self.responses: ResponseReader  # set by run once the imports are read

    def _add(self, fact: Fact | None) -> None:
        if fact is not None:
            self.facts.append(fact)

    # ---- facts -----------------------------------------------------------------
    def engine_call(self, call: ast.Call, what: str, scope: Scope) -> None:
        origin = "sampling" if what in SAMPLING_CALLS else "python"
        first_fact = len(self.facts)
        self.keywords.call_cuts(call)
        entries = self.keywords.keyword_entries(call.keywords, scope, call.lineno) or []
        names: set[str] = set()
        unresolved: list[str] = []
        served: str | None = None
        if origin == "python" and call.args:
            first = call.args[0]
            model = const_text(first)
            served = model
            if model is not None:
                self.facts.append(
                    Fact(
                        FactKind.MODEL,
                        model,
                        self.source.loc(first),
                        raw=model,
                        value=model,
                        scanner="python",
                    )
                )
            names.add("model")
        for entry in entries:
            if not entry.resolved:
                unresolved.append(entry.name)
                continue
            names.add(entry.name)
            self.facts.append(
                Fact(
                    FactKind.ARG,
                    entry.name,
                    self.source.key_loc(entry.node, entry.name),
                    raw=entry.name,
                    value=entry.value,
                    origin=origin,
                    scanner="python",
                    spans=self.keywords.entry_spans(entry),
                )
            )
            if origin == "python" and entry.name == "model" and entry.value:
                served = entry.value
                self.facts.append(
                    Fact(
                        FactKind.MODEL,
                        entry.value,
                        self.source.key_loc(entry.node, entry.name),
                        raw=entry.value,
                        value=entry.value,
                        scanner="python",
                    )
                )
        group = f"{call.lineno}:{call.col_offset + 1}"
        self.facts[first_fact:] = [replace(f, group=group) for f in self.facts[first_fact:]]
        if origin == "python":
            self.facts[first_fact:] = with_model_settings(self.facts[first_fact:])
            self.facts.append(
                Fact(
                    FactKind.LAUNCH,
                    f"{what}(...)",
                    self.source.loc(call.func),
                    raw=self.source.segment(call.func),
                    value=" ".join(unresolved) or None,
                    origin="python",
                    args=frozenset(names),
                    scanner="python",
                    resolved=not unresolved,
                    model=served,
                    group=group,
                )
            )

    def import_facts(self, node: ast.Import | ast.ImportFrom) -> None:
        if isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level or not (module == "vllm" or module.startswith("vllm.")):
                return
            spans = Spans(name=self.source.module_span(node, module), syntax="python")
            for alias in node.names:
                self.source.aliases[alias.asname or alias.name] = f"{module}.{alias.name}"
                self.facts.append(
                    Fact(
                        FactKind.IMPORT,
                        module,
                        self.source.loc(alias if hasattr(alias, "lineno") else node),
                        raw=f"from {module} import {alias.name}",
                        value=alias.name,
                        origin="python",
                        scanner="python",
                        spans=spans,
                    )
                )
            return
        for alias in node.names:
            if not (alias.name == "vllm" or alias.name.startswith("vllm.")):
                continue
            if alias.asname:
                self.source.aliases[alias.asname] = alias.name
            at = self.source.span(alias) if hasattr(alias, "lineno") else None
            name = None if at is None else Span(at.line, at.column, at.line, at.column + len(alias.name))
            self.facts.append(
                Fact(
                    FactKind.IMPORT,
                    alias.name,
                    self.source.loc(alias if hasattr(alias, "lineno") else node),
                    raw=f"import {alias.name}",
                    origin="python",
                    scanner="python",
                    spans=Spans(name=name, syntax="python"),
                )
            )

    def env_from(self, name_node: ast.AST, value: ast.AST | None) -> None:
        name = const_text(name_node)
        if name is None or not is_env_name(name):
            return
        loc = self.source.key_loc(name_node, name)
        self.facts.append(
            env_fact(
                name,
                None if value is None else self.source.value_text(value),
                self.source.path,
                loc.line or 0,
                loc.column or 0,
                "python",
                origin="python",
                spans=Spans(name=self.source.string_span(name_node), syntax="python"),
            )
        )

    def is_environ(self, node: ast.AST) -> bool:
        return self.source.qualified(node) == "os.environ"

    def env_assign(self, stmt: ast.Assign) -> None:
        for target in stmt.targets:
            if isinstance(target, ast.Subscript) and self.is_environ(target.value):
                self.env_from(target.slice, stmt.value)

    def env_call(self, call: ast.Call, qualified: str) -> None:
        if qualified in ("os.putenv", "os.environ.setdefault") and call.args:
            self.env_from(call.args[0], call.args[1] if len(call.args) > 1 else None)
        elif qualified == "os.environ.update" and call.args and isinstance(call.args[0], ast.Dict):
            for key, value in zip(call.args[0].keys, call.args[0].values, strict=False):
                if key is not None:
                    self.env_from(key, value)

    def subprocess_call(self, call: ast.Call, scope: Scope) -> None:
        if not call.args:
            return
        command = call.args[0]
        text = const_text(command)
        if isinstance(command, ast.Constant) and text is not None:
            facts, _ = shell_facts(text, self.source.path, "python", relocate=self.source.string_relocator(command))
            self.facts.extend(facts)
            return
        tokens = ArgvBuilder(self, scope, call.lineno).argv(command)
        if tokens:
            self.facts.extend(argv_facts(tokens, self.source.path, "python", syntax="python"))

    # ---- walk ------------------------------------------------------------------
    def run(self) -> None:
        # Every scope is collected first (one pass over the tree), so that the imports of
        # the whole file are known before any call is resolved.
        module = Scope(self.source.tree.body, None)
        inner: dict[int, Scope] = {}
        scopes = [module]
        for scope in scopes:  # grows while iterated: breadth first
            for node in scope.nodes:
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    inner[id(node)] = child = Scope(node.body, scope)
                    scopes.append(child)
                elif isinstance(node, (ast.Import, ast.ImportFrom)):
                    self.import_facts(node)
        imports_vllm = bool(self.source.aliases) or any(f.kind == FactKind.IMPORT for f in self.facts)
        self.responses = ResponseReader(self.source, imports_vllm)
        self.walk_scope(module, inner)
        self.facts = shared_words(self.facts, list(self.keywords.other_readers()))

    def walk_scope(self, scope: Scope, inner: dict[int, Scope]) -> None:
        for node in scope.nodes:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                self.walk_scope(inner[id(node)], inner)
                continue
            if isinstance(node, ast.Lambda):
                continue
            if isinstance(node, ast.Assign):
                self.env_assign(node)
            elif isinstance(node, ast.Call):
                self.visit_call(node, scope)
            elif isinstance(node, ast.Attribute) and node.attr in RESPONSE_FIELDS:
                if isinstance(node.ctx, ast.Load):
                    self._add(self.responses.response_field(node, node.attr))
            elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
                key = const_text(node.slice)
                if key in RESPONSE_FIELDS:
                    self._add(self.responses.response_field(node, key, node.slice))

    def visit_call(self, call: ast.Call, scope: Scope) -> None:
        qualified = self.source.qualified(call.func)
        if qualified is None:
            if isinstance(call.func, ast.Attribute):
                self._add(self.responses.response_getter(call))
            return
        head, _, last = qualified.rpartition(".")
        if head.startswith("vllm") and (last in ENGINE_CALLS or last in SAMPLING_CALLS):
            self.engine_call(call, last, scope)
        elif qualified in SUBPROCESS_CALLS:
            self.subprocess_call(call, scope)
        elif qualified.startswith("os."):
            self.env_call(call, qualified)
        if isinstance(call.func, ast.Attribute):
            self._add(self.responses.response_getter(call))
        elif qualified == "getattr" and len(call.args) >= 2:
            key = const_text(call.args[1])
            if key in RESPONSE_FIELDS:
                self._add(self.responses.response_field(call, key, call.args[1]))


class ArgvBuilder:
    """Evaluate an argv expression to tokens positioned where each word is written.

    Handles list/tuple literals, ``+``, ``*spread``, names bound earlier (with ``+=``,
    ``.append``, ``.extend`` and ``for k, v in D.items(): ...`` loops over a literal dict),
    ``shlex.split("...")``, and comprehensions over a literal dict's ``.items()``. A word
    that cannot be computed becomes an unresolved token (its source text), never a guess.
    """

    def __init__(self, module: _Module, scope: Scope, before: int) -> None:
        self.m = module
        self.scope = scope
        self.before = before

    def argv(self, node: ast.AST, env: dict[str, Token] | None = None, depth: int = 0) -> list[Token]:
        """Tokens of ``node``; unresolved tokens for what cannot be evaluated."""
        env = env or {}
        if depth > 8:
            return [self.unresolved(node)]
        if isinstance(node, (ast.List, ast.Tuple)):
            out: list[Token] = []
            elements = self.m.source.elements([self.m.source.span(e) for e in node.elts])
            for element, placed in zip(node.elts, elements, strict=True):
                if isinstance(element, ast.Starred):
                    out.extend(self.argv(element.value, env, depth + 1))
                    continue
                token = self.word(element, env)
                if token.span is not None and token.span == placed.span:
                    token = replace(
                        token, element=placed.element, prev_end=placed.prev_end, next_start=placed.next_start
                    )
                out.append(token)
            return out
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            return self.argv(node.left, env, depth + 1) + self.argv(node.right, env, depth + 1)
        if isinstance(node, ast.Call) and self.m.source.qualified(node.func) == "shlex.split" and node.args:
            text = const_text(node.args[0])
            if text is None:
                return [self.unresolved(node)]
            move = self.m.source.string_relocator(node.args[0])
            try:
                words = shlex.split(text)
            except ValueError:
                return [self.unresolved(node)]
            cursor = 0
            out = []
            for word in words:
                index = text.find(word, cursor)
                index = max(index, 0)
                cursor = index + len(word)
                row = text.count("\n", 0, index)
                col = index - (text.rfind("\n", 0, index) + 1) + 1
                out.append(move(Token(word, row + 1, col, True, word)))
            return out
        if isinstance(node, (ast.ListComp, ast.GeneratorExp)):
            return self.comprehension(node, env, depth)
        if isinstance(node, ast.Name) and node.id not in env:
            return self.name(node, depth)
        return [self.unresolved(node)]

    def name(self, node: ast.Name, depth: int) -> list[Token]:
        bound = last_binding(node.id, self.scope, self.before)
        if bound is None:
            return [self.unresolved(node)]
        value, owner = bound
        tokens = ArgvBuilder(self.m, owner, getattr(value, "lineno", self.before)).argv(
            value, None, depth + 1
        )
        end = getattr(value, "end_lineno", 0) or 0
        for stmt in later_updates(node.id, owner, end, self.before, self.scope):
            tokens = self.update(node.id, stmt, tokens, owner, depth)
        return tokens

    def update(self, name: str, stmt: ast.AST, tokens: list[Token], owner: Scope, depth: int) -> list[Token]:
        builder = ArgvBuilder(self.m, owner, getattr(stmt, "lineno", self.before))
        if isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name) and stmt.target.id == name:
            return tokens + builder.argv(stmt.value, None, depth + 1)
        if isinstance(stmt, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == name for t in stmt.targets
        ):
            return builder.argv(stmt.value, None, depth + 1)
        if isinstance(stmt, ast.For):
            items = self.dict_items(stmt.iter, stmt.target)
            if items is None:
                return tokens
            for env in items:
                for inner in stmt.body:
                    if isinstance(inner, ast.Expr) and isinstance(inner.value, ast.Call):
                        tokens = builder.method(name, inner.value, tokens, env, depth)
                    elif (
                        isinstance(inner, ast.AugAssign)
                        and isinstance(inner.target, ast.Name)
                        and inner.target.id == name
                    ):
                        tokens = tokens + builder.argv(inner.value, env, depth + 1)
            return tokens
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            return builder.method(name, stmt.value, tokens, {}, depth)
        return tokens

    def method(
        self, name: str, call: ast.Call, tokens: list[Token], env: dict[str, Token], depth: int
    ) -> list[Token]:
        func = call.func
        if not (isinstance(func, ast.Attribute) and dotted_name(func.value) == name and call.args):
            return tokens
        if func.attr == "append":
            return [*tokens, self.word(call.args[0], env)]
        if func.attr == "extend":
            return tokens + self.argv(call.args[0], env, depth + 1)
        return tokens

    def dict_items(self, iterable: ast.AST, target: ast.AST) -> list[dict[str, Token]] | None:
        """``for k, v in D.items()`` over a resolvable dict: one binding per entry."""
        if not (
            isinstance(iterable, ast.Call)
            and isinstance(iterable.func, ast.Attribute)
            and iterable.func.attr == "items"
            and isinstance(target, ast.Tuple)
            and len(target.elts) == 2
            and all(isinstance(e, ast.Name) for e in target.elts)
        ):
            return None
        entries = self.m.keywords.dict_entries(iterable.func.value, self.scope, self.before)
        if entries is None:
            return None
        k_name, v_name = (e.id for e in target.elts)  # type: ignore[attr-defined]
        out = []
        for entry in entries:
            key_loc = self.m.source.key_loc(entry.node, entry.name)
            value_node = self._value_node(entry)
            value_loc = self.m.source.loc(value_node) if value_node is not None else key_loc
            out.append(
                {
                    k_name: Token(entry.name, key_loc.line or 0, key_loc.column or 0, True, entry.name),
                    v_name: Token(
                        entry.value or "", value_loc.line or 0, value_loc.column or 0, True, entry.value or ""
                    ),
                }
            )
        return out

    def _value_node(self, entry: Entry) -> ast.AST | None:
        node = entry.node
        if isinstance(node, ast.keyword):
            return node.value
        for parent in ast.walk(self.m.source.tree):
            if isinstance(parent, ast.Dict) and node in parent.keys:
                return parent.values[parent.keys.index(node)]
            if isinstance(parent, ast.Assign) and any(
                isinstance(t, ast.Subscript) and t.slice is node for t in parent.targets
            ):
                return parent.value
        return None

    def comprehension(
        self, node: ast.ListComp | ast.GeneratorExp, env: dict[str, Token], depth: int
    ) -> list[Token]:
        if not node.generators or node.generators[0].ifs:
            return [self.unresolved(node)]
        first = node.generators[0]
        items = self.dict_items(first.iter, first.target)
        if items is None:
            return [self.unresolved(node)]
        out: list[Token] = []
        for binding in items:
            inner_env = {**env, **binding}
            rest = node.generators[1:]
            if not rest:
                if isinstance(node.elt, (ast.List, ast.Tuple)):
                    out.extend(self.argv(node.elt, inner_env, depth + 1))
                else:
                    out.append(self.word(node.elt, inner_env))
                continue
            gen = rest[0]
            if len(rest) != 1 or gen.ifs or not isinstance(gen.target, ast.Name):
                return [self.unresolved(node)]
            for word in self.argv(gen.iter, inner_env, depth + 1):
                out.append(self.word(node.elt, {**inner_env, gen.target.id: word}))
        return out

    def word(self, node: ast.AST, env: dict[str, Token]) -> Token:
        """One argv word; positioned at the string literal, or at the dict key/value it came from."""
        text, anchor = self.evaluate(node, env)
        if text is None:
            return self.unresolved(node)
        if anchor is not None:
            return Token(text, anchor.line, anchor.column, True, anchor.written)
        loc = self.m.source.loc(node)
        column = loc.column or 1
        line_text = self.m.source.lines[(loc.line or 1) - 1] if loc.line else ""
        if isinstance(node, ast.Constant) and line_text[column - 1 : column] in ("'", '"'):
            column += 1
        inside = self.m.source.string_span(node)
        if inside is None:
            return Token(text, loc.line or 0, column, True, text)
        # A plain string literal: a word written in quotes, cut out as its list's element.
        return Token(text, loc.line or 0, column, True, self.m.source.segment(node), span=self.m.source.span(node))

    def evaluate(self, node: ast.AST, env: dict[str, Token]) -> tuple[str | None, Token | None]:
        """``(text, anchor)``: the string value and the token it derives from (for positions)."""
        if isinstance(node, ast.Constant) and isinstance(node.value, (str, int, float)):
            return str(node.value), None
        if dotted_name(node) == "sys.executable":
            return "python", None  # the interpreter running the launcher
        if isinstance(node, ast.Name) and node.id in env:
            return env[node.id].text, env[node.id]
        if isinstance(node, ast.Call) and dotted_name(node.func) == "str" and len(node.args) == 1:
            return self.evaluate(node.args[0], env)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            base, base_anchor = self.evaluate(node.func.value, env)
            if base is None:
                return None, None
            args = [const_text(a) for a in node.args]
            if any(a is None for a in args):
                return None, None
            method = node.func.attr
            if method == "replace" and len(args) == 2:
                return base.replace(args[0] or "", args[1] or ""), base_anchor
            if method in ("lower", "upper", "strip") and not args:
                return getattr(base, method)(), base_anchor
            return None, None
        if isinstance(node, ast.JoinedStr):
            parts: list[str] = []
            anchor: Token | None = None
            for value in node.values:
                if isinstance(value, ast.Constant):
                    parts.append(str(value.value))
                elif isinstance(value, ast.FormattedValue) and value.format_spec is None:
                    text, inner = self.evaluate(value.value, env)
                    if text is None:
                        return None, None
                    parts.append(text)
                    anchor = anchor or inner
                else:
                    return None, None
            return "".join(parts), anchor
        return None, None

    def unresolved(self, node: ast.AST) -> Token:
        loc = self.m.source.loc(node)
        text = self.m.source.segment(node)
        return Token(text, loc.line or 0, loc.column or 0, False, text)

