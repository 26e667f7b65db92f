"""The argv of a subprocess launch, read from a Python expression: list and tuple literals,
``+``, ``*spread``, names bound earlier (with later ``+=``, ``.append``, ``.extend``), ``shlex.split``
of a literal, and comprehensions over a dict's ``.items()``; each word a token placed where it
is written (:class:`ArgvBuilder`). Inside a function, its parameters may be bound as one call
binds them (:class:`CallBinding`, :func:`bind`): ``**opts`` iterated with ``.items()`` gives
the call's keywords, each placed at its keyword; a call of a function of the file that
returns an argv is read the same way.
"""

from __future__ import annotations

import ast
import re
import shlex
from dataclasses import dataclass, field, replace

from vllm_upgrade_check.parsing.words import Token
from vllm_upgrade_check.sources.scanners.python.attributes import self_attribute
from vllm_upgrade_check.sources.scanners.python.envreads import env_word
from vllm_upgrade_check.sources.scanners.python.keywords import Entry, KeywordReader
from vllm_upgrade_check.sources.scanners.python.names import const_text, dotted_name
from vllm_upgrade_check.sources.scanners.python.scope import Scope, last_binding, later_updates
from vllm_upgrade_check.sources.scanners.python.source import PythonSource

Functions = dict[str, tuple[ast.FunctionDef | ast.AsyncFunctionDef, Scope]]
"""The functions a file defines, by name, with their scopes."""


@dataclass(frozen=True)
class CallBinding:
    """What one call of a function defined in the file binds its parameters to, for reading
    the argv the function builds as that call builds it (``start("m", port=9100)``).

    Attributes:
        params: parameter name -> the word it is bound to (placed at the call's argument,
            or at the parameter's default; unresolved when the call passes what the file
            does not say).
        kwargs: the ``**opts`` parameter's name -> the call's extra keywords (each placed
            at its keyword in the call).
        varargs: the ``*extra`` parameter's name -> the call's extra positional words (each
            placed at its argument in the call; a ``*spread`` the file does not say is one
            unresolved word).
    """

    params: dict[str, Token] = field(default_factory=dict)
    kwargs: dict[str, list[Entry]] = field(default_factory=dict)
    varargs: dict[str, list[Token]] = field(default_factory=dict)


def bind(
    func: ast.FunctionDef | ast.AsyncFunctionDef,
    call: ast.Call,
    caller: ArgvBuilder,
    keywords: KeywordReader,
    scope: Scope,
    method: bool = False,
) -> CallBinding | None:
    """What ``call`` binds the parameters of ``func`` to, read by ``caller`` (the builder of
    the calling scope); ``method``: ``func`` is a method called on an instance (its first
    parameter is the instance). ``None`` when which parameter gets what is not known (a
    ``*spread`` of words the file does not say, before a named parameter). A parameter left
    to its default is its default; one the call does not say is an unresolved word; the
    positional words no parameter takes go to ``*extra``, the keywords to ``**opts``."""
    args = func.args
    positional = [*args.posonlyargs, *args.args][1 if method else 0 :]
    words: list[Token] = []
    for value in call.args:
        if isinstance(value, ast.Starred):
            spread = caller.argv(value.value, {})
            if any(not w.resolved for w in spread) and len(words) < len(positional):
                return None  # how many words it holds decides which parameter gets what
            words.extend(spread)
            continue
        words.append(caller.word(value, {}))
    params: dict[str, Token] = {}
    n = min(len(args.defaults), len(positional))
    names = [a.arg for a in positional][len(positional) - n :]
    defaults = dict(zip(names, args.defaults[len(args.defaults) - n :], strict=True))
    defaults.update({a.arg: d for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d is not None})
    for param, word in zip(positional, words, strict=False):
        params[param.arg] = word
    varargs: dict[str, list[Token]] = {}
    if args.vararg is not None:
        varargs[args.vararg.arg] = words[len(positional) :]
    named = {a.arg for a in [*positional, *args.kwonlyargs]}
    extra: list[ast.keyword] = []
    for kw in call.keywords:
        if kw.arg is not None and kw.arg in named:
            params[kw.arg] = caller.word(kw.value, {})
        else:
            extra.append(kw)
    for name, default in defaults.items():
        params.setdefault(name, caller.word(default, {}))
    kwargs: dict[str, list[Entry]] = {}
    if args.kwarg is not None:
        kwargs[args.kwarg.arg] = keywords.keyword_entries(extra, scope, call.lineno) or []
    return CallBinding(params, kwargs, varargs)


class ArgvBuilder:
    """Evaluate an argv expression to tokens positioned where each word is written.

    Handles list/tuple literals, ``+``, ``*spread``, names bound earlier (with ``+=``,
    ``.append``, ``.extend`` and ``for k, v in D.items(): ...`` loops over a literal dict),
    ``shlex.split("...")``, and comprehensions over a literal dict's ``.items()``. A word
    that cannot be computed becomes an unresolved token (its source text), never a guess.
    """

    def __init__(
        self,
        source: PythonSource,
        keywords: KeywordReader,
        scope: Scope,
        before: int,
        call: CallBinding | None = None,
        functions: Functions | None = None,
    ) -> None:
        self.source = source
        self.keywords = keywords
        self.scope = scope
        self.before = before
        self.call = call  # a function's parameters as one call of it binds them
        self.functions = functions or {}  # the file's functions, whose return values are read

    def child(self, scope: Scope, before: int) -> ArgvBuilder:
        """A builder for an expression of ``scope`` before line ``before``, with the same call."""
        return ArgvBuilder(self.source, self.keywords, scope, before, self.call, self.functions)

    def returned(self, node: ast.Call, depth: int) -> list[Token] | None:
        """The argv a call of a function of the file returns (``build("m", seed=1)``), read
        with its parameters bound as this call binds them; ``None`` when it is no such call
        or the function does not end in one ``return`` of a value."""
        name, method = self.called_function(node.func)
        if name is None:
            return None
        func, inner = self.functions[name]
        returns = [n for n in inner.nodes if isinstance(n, ast.Return) and n.value is not None]
        binding = bind(func, node, self, self.keywords, self.scope, method=method)
        if len(returns) != 1 or binding is None or returns[0].value is None:
            return None
        builder = ArgvBuilder(self.source, self.keywords, inner, returns[0].lineno, binding, self.functions)
        return builder.argv(returns[0].value, None, depth + 1)

    def called_function(self, func: ast.AST) -> tuple[str | None, bool]:
        """``(name, method)``: the function of the file ``func`` calls, by name (``build``),
        or the method ``self.build_cmd`` (``method``: its first parameter is ``self``);
        ``(None, False)`` for any other call."""
        if isinstance(func, ast.Name) and func.id in self.functions:
            return func.id, False
        if (
            isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Name)
            and func.value.id == "self"
            and func.attr in self.functions
        ):
            params = [*self.functions[func.attr][0].args.posonlyargs, *self.functions[func.attr][0].args.args]
            if params and params[0].arg == "self":
                return func.attr, True
        return None, False

    def argv(self, node: ast.AST, env: dict[str, Token] | None = None, depth: int = 0) -> list[Token]:
        """Tokens of ``node``; unresolved tokens for what cannot be evaluated."""
        env = env or {}
        if depth > 8:
            return [self.unresolved(node)]
        if isinstance(node, (ast.List, ast.Tuple)):
            out: list[Token] = []
            elements = self.source.elements([self.source.span(e) for e in node.elts])
            for element, placed in zip(node.elts, elements, strict=True):
                if isinstance(element, ast.Starred):
                    out.extend(self.argv(element.value, env, depth + 1))
                    continue
                token = self.word(element, env)
                if token.span is not None and token.span == placed.span:
                    token = replace(
                        token,
                        element=placed.element,
                        prev_end=placed.prev_end,
                        next_start=placed.next_start,
                        line_start=placed.line_start,
                        line_end=placed.line_end,
                    )
                out.append(token)
            return out
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            return self.argv(node.left, env, depth + 1) + self.argv(node.right, env, depth + 1)
        plain_split = (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "split"
            and not node.args
            and not node.keywords
        )
        if isinstance(node, ast.Call) and (plain_split or (self.source.qualified(node.func) == "shlex.split" and node.args)):
            # shlex.split(BASE), BASE.split(): the words of a string constant, each in its literal
            literal = node.func.value if isinstance(node.func, ast.Attribute) and plain_split else node.args[0]
            if isinstance(literal, ast.Name):  # shlex.split(BASE) of a string constant
                literal = self.constant(literal) or literal
            text = const_text(literal)
            if text is None:
                return [self.unresolved(node)]
            move = self.source.string_relocator(literal)
            try:
                words = text.split() if plain_split else shlex.split(text)
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
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "join"
            and (const_text(node.func.value) or "x").isspace()
            and len(node.args) == 1
        ):
            # `" ".join(cmd)` run by a shell: cmd's words, unless one would split or expand
            joined = self.argv(node.args[0], env, depth + 1)
            plain = re.compile(r"[^\s$`\\\"'*?;&|<>()]*")
            return [w if plain.fullmatch(w.text) else replace(w, resolved=False) for w in joined]
        if isinstance(node, (ast.ListComp, ast.GeneratorExp)):
            return self.comprehension(node, env, depth)
        if isinstance(node, ast.Call) and (returned := self.returned(node, depth)) is not None:
            return returned
        if isinstance(node, ast.Name) and self.call is not None and node.id in self.call.params:
            return [self.call.params[node.id]]
        if isinstance(node, ast.Name) and self.call is not None and node.id in self.call.varargs:
            return list(self.call.varargs[node.id])  # `*extra`: the call's extra positional words
        if isinstance(node, ast.Call) and dotted_name(node.func) in ("list", "tuple") and len(node.args) == 1:
            return self.argv(node.args[0], env, depth + 1)  # list(extra), tuple(words)
        if isinstance(node, ast.Name) and node.id not in env:
            return self.name(node, depth)
        return [self.unresolved(node)]

    def name(self, node: ast.Name, depth: int) -> list[Token]:
        """Tokens of the list ``node`` names: its last binding, with the later statements that
        change it applied (:meth:`update`)."""
        bound = last_binding(node.id, self.scope, self.before)
        if bound is None:
            return [self.unresolved(node)]
        value, owner = bound
        tokens = self.child(owner, getattr(value, "lineno", self.before)).argv(value, None, depth + 1)
        end = getattr(value, "end_lineno", 0) or 0
        read_until = 0  # the last line of a loop read whole: its statements are not read again
        for stmt in later_updates(node.id, owner, end, self.before, self.scope):
            if getattr(stmt, "lineno", 0) <= read_until:
                continue
            tokens = self.update(node.id, stmt, tokens, owner, depth)
            if isinstance(stmt, ast.For) and self.dict_items(stmt.iter, stmt.target) is not None:
                read_until = getattr(stmt, "end_lineno", 0) or 0
        return tokens

    def update(self, name: str, stmt: ast.AST, tokens: list[Token], owner: Scope, depth: int) -> list[Token]:
        """``tokens`` (of list ``name``) as ``stmt`` leaves them: ``+=``, a new binding,
        ``.append``/``.extend`` (also in a ``for k, v in D.items()`` loop over a dict)."""
        builder = self.child(owner, getattr(stmt, "lineno", self.before))
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
        """``tokens`` (of list ``name``) after ``name.append(...)`` or ``name.extend(...)``."""
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
        base = iterable.func.value
        if self.call is not None and isinstance(base, ast.Name) and base.id in self.call.kwargs:
            entries: list[Entry] | None = self.call.kwargs[base.id]  # `**opts` of the call
        else:
            entries = self.keywords.dict_entries(base, self.scope, self.before)
        if entries is None:
            return None
        k_name, v_name = (e.id for e in target.elts)  # type: ignore[attr-defined]
        out = []
        for entry in entries:
            if not entry.resolved:  # a part of the dict the file does not say
                loc = self.source.loc(entry.node)
                unread = Token(entry.name, loc.line or 0, loc.column or 0, False, entry.name)
                out.append({k_name: unread, v_name: replace(unread, text="", written="")})
                continue
            key_loc = self.source.key_loc(entry.node, entry.name)
            value_node = self._value_node(entry)
            value_loc = self.source.loc(value_node) if value_node is not None else key_loc
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
        for parent in ast.walk(self.source.tree):
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
        """Tokens of a comprehension over a dict's ``.items()`` (optionally with one inner
        ``for`` over a list), unresolved for any other comprehension."""
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
        if (from_env := env_word(self.source, node)) is not None:
            return from_env  # os.environ.get("X", "default"): the default, cut as the element
        text, anchor = self.evaluate(node, env)
        if text is None:
            return self.unresolved(node)
        if anchor is not None and not anchor.resolved:
            return anchor
        if anchor is not None:
            return Token(text, anchor.line, anchor.column, True, anchor.written)
        loc = self.source.loc(node)
        column = loc.column or 1
        line_text = self.source.lines[(loc.line or 1) - 1] if loc.line else ""
        if isinstance(node, ast.Constant) and line_text[column - 1 : column] in ("'", '"'):
            column += 1
        inside = self.source.string_span(node)
        if inside is None:
            return Token(text, loc.line or 0, column, True, text)
        # A plain string literal: a word written in quotes, cut out as its list's element.
        written = self.source.segment(node)
        return Token(text, loc.line or 0, column, True, written, span=self.source.span(node))

    def evaluate(self, node: ast.AST, env: dict[str, Token]) -> tuple[str | None, Token | None]:
        """``(text, anchor)``: the string value and the token it derives from (for positions)."""
        if isinstance(node, ast.Constant) and isinstance(node.value, (str, int, float)):
            return str(node.value), None
        if (from_env := env_word(self.source, node)) is not None:
            return (from_env.text, from_env) if from_env.resolved else (None, None)  # the default
        if dotted_name(node) == "sys.executable":
            return "python", None  # the interpreter running the launcher
        if isinstance(node, ast.Name) and node.id in env:
            return env[node.id].text, env[node.id]
        if isinstance(node, ast.Name) and self.call is not None and node.id in self.call.params:
            bound = self.call.params[node.id]
            return (bound.text, bound) if bound.resolved else (None, None)
        if isinstance(node, ast.Name) and (constant := self.constant(node)) is not None:
            loc = self.source.loc(constant)
            shown = str(constant.value)  # placed at the constant, with no span: a fix leaves it to a person
            quoted = self.source.segment(constant)[:1] in ("'", '"')
            return shown, Token(shown, loc.line or 0, (loc.column or 0) + quoted, True, self.source.segment(constant))
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            left, left_at = self.evaluate(node.left, env)
            right, right_at = self.evaluate(node.right, env)
            return (left + right, left_at or right_at) if left is not None and right is not None else (None, None)
        if isinstance(node, ast.Attribute) and dotted_name(node) == f"self.{node.attr}":
            held = self_attribute(self.source, getattr(node, "lineno", 0), node.attr)  # set in __init__
            if held is not None:
                loc = self.source.loc(held)
                quoted = isinstance(held.value, str) and self.source.segment(held)[:1] in ("'", '"')
                return str(held.value), Token(str(held.value), loc.line or 0, (loc.column or 0) + quoted, True,
                                              str(held.value))
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

    def constant(self, node: ast.Name) -> ast.Constant | None:
        """The string or number literal ``node`` was last bound to (``MODEL = "acme/x"`` at
        module level, read in a function), else ``None``."""
        bound = last_binding(node.id, self.scope, self.before)
        if bound is None:
            return None
        value = bound[0]
        if isinstance(value, ast.Constant) and isinstance(value.value, (str, int, float)):
            return None if isinstance(value.value, bool) else value
        return None

    def unresolved(self, node: ast.AST) -> Token:
        """A word that cannot be computed: its source text, marked unresolved. An f-string
        reads as its literal parts with each unknown field as ``{expression}``, so that a
        flag name written literally (``f"--num-scheduler-steps={n * 2}"``) is still a flag."""
        if (from_env := env_word(self.source, node)) is not None:
            return from_env  # os.environ["X"]: ${X}, a value no check judges
        loc = self.source.loc(node)
        written = self.source.segment(node)
        text = written
        if isinstance(node, ast.JoinedStr) and node.values and isinstance(node.values[0], ast.Constant):
            text = "".join(
                str(v.value) if isinstance(v, ast.Constant) else "{" + self.source.segment(v.value) + "}"
                for v in node.values
                if isinstance(v, (ast.Constant, ast.FormattedValue))
            )
            opening = len(written) - len(written.lstrip("rRfFbBuU"))
            quotes = 3 if written[opening : opening + 3] in ('"""', "'''") else 1
            return Token(text, loc.line or 0, (loc.column or 0) + opening + quotes, False, written)
        return Token(text, loc.line or 0, loc.column or 0, False, written)
