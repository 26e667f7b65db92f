"""The walk over one Python file's :mod:`ast`: every scope in source order, each call and read (an
engine or sampling call, a vllm import, an ``os.environ`` write, a subprocess launch, a response-field
read) turned into facts (:func:`file_facts`), with readers: :mod:`.keywords` (a call's keywords and
their dicts), :mod:`.argv` (a subprocess argv), :mod:`.responses`, :mod:`.stars` (star imports).
"""

from __future__ import annotations

import ast

from vllm_upgrade_check.model.facts import Fact, FactKind, Location, Spans
from vllm_upgrade_check.parsing.words import Token
from vllm_upgrade_check.sources.scanners.arg_facts import env_fact, with_model_settings
from vllm_upgrade_check.sources.scanners.base import SourceFile, shared_words
from vllm_upgrade_check.sources.scanners.python.argv import ArgvBuilder, CallBinding, bind
from vllm_upgrade_check.sources.scanners.python.builders import (
    builders,
    functions,
    may_run_commands,
    method_classes,
    receiver_class,
)
from vllm_upgrade_check.sources.scanners.python.envreads import env_default
from vllm_upgrade_check.sources.scanners.python.factories import Factory, factories, spliced_entries
from vllm_upgrade_check.sources.scanners.python.imports import import_facts
from vllm_upgrade_check.sources.scanners.python.index import TreeIndex
from vllm_upgrade_check.sources.scanners.python.keywords import KeywordReader
from vllm_upgrade_check.sources.scanners.python.modules import ModuleReader
from vllm_upgrade_check.sources.scanners.python.names import (
    ENGINE_CALLS,
    RESPONSE_FIELDS,
    SAMPLING_CALLS,
    SUBPROCESS_CALLS,
    command_argument,
    const_text,
    is_literal,
)
from vllm_upgrade_check.sources.scanners.python.platforms import (
    MODAL_INSTALLS,
    bound_modules,
    chain_root,
    dict_value,
    engine_kwargs_call,
    imported_from,
    is_ray_llm_config,
    keyword,
    qualified_call,
)
from vllm_upgrade_check.sources.scanners.python.responses import ResponseReader
from vllm_upgrade_check.sources.scanners.python.scope import Scope, last_binding
from vllm_upgrade_check.sources.scanners.python.shellstrings import shell_string_facts
from vllm_upgrade_check.sources.scanners.python.source import PythonSource
from vllm_upgrade_check.sources.scanners.python.stars import star_facts
from vllm_upgrade_check.sources.scanners.python.tables import table_facts, without_launch_args
from vllm_upgrade_check.sources.scanners.requirements import pip_install_facts
from vllm_upgrade_check.sources.scanners.shell import argv_facts, is_env_name, shell_facts


def file_facts(
    source: SourceFile,
    tree: ast.Module,
    fields: frozenset[str] = RESPONSE_FIELDS,
    modules: ModuleReader | None = None,
    index: TreeIndex | None = None,
) -> list[Fact]:
    """The facts of one Python file, ``tree`` being its parsed text (every one, also those
    a file that does not mention vLLM has no use for: the scanner picks); ``fields``: the
    response fields whose reads are facts; ``modules``: the repository's other modules, for
    the dicts the file imports from them (not read without it); ``index``: its one walk (.index)."""
    module = _Module(source, tree, fields, modules, index)
    module.run()
    return module.facts


class _Module:
    """State for one file: the source (with its vLLM import aliases), the readers of its
    keywords and response reads, the facts collected."""

    def __init__(
        self,
        source: SourceFile,
        tree: ast.Module,
        fields: frozenset[str] = RESPONSE_FIELDS,
        modules: ModuleReader | None = None,
        index: TreeIndex | None = None,
    ) -> None:
        self.source = PythonSource(source, tree)
        self.index = index if index is not None else TreeIndex(tree)
        self.fields = fields
        self.keywords = KeywordReader(self.source, modules)
        self.responses: ResponseReader  # set by run once the imports are read
        self.facts: list[Fact] = []
        self.ray: dict[str, str] = {}  # names bound from ray and modal (see .platforms)
        self.modal: dict[str, str] = {}
        # functions of the file that run a command built from their parameters, by name,
        # with their scopes: read at each call of them in the file (see builder_call)
        self.builders: dict[str, tuple[ast.FunctionDef | ast.AsyncFunctionDef, Scope]] = {}
        self.functions: dict[str, tuple[ast.FunctionDef | ast.AsyncFunctionDef, Scope]] = {}
        self.factories: dict[str, Factory] = {}  # functions passing **kwarg to an engine (factory_call)
        self.classes: dict[int, str] = {}  # a method's scope -> its class (see builders.method_classes)
        self.class_names: set[str] = set()
        self.called: set[str] = set()  # the builders some call of the file was read with

    def _add(self, fact: Fact | None) -> None:
        if fact is not None:
            self.facts.append(fact)

    # ---- facts -----------------------------------------------------------------
    def engine_call(self, call: ast.Call, what: str, scope: Scope, spliced: CallBinding | None = None) -> None:
        """The facts of a call of vLLM class ``what``: its keywords as ``arg`` facts (origin
        ``sampling`` for sampling parameters), and for an engine its model and ``launch``;
        ``spliced``: what one call of a factory binds its parameters to (its ``**kwarg``)."""
        origin = "sampling" if what in SAMPLING_CALLS else "python"
        first_fact = len(self.facts)
        self.keywords.call_cuts(call)
        entries = spliced_entries(
            self.keywords, call, scope, spliced.kwargs if spliced else None, spliced.params if spliced else None
        )
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
                where = entry.source or self.source
                unresolved.append(entry.name if entry.source is None else f"{entry.name} ({where.path}:{getattr(entry.node, 'lineno', '?')})")
                continue
            names.add(entry.name)
            written = entry.source or self.source
            literal = is_literal(entry.value_node) or env_default(written, entry.value_node) is not None
            if entry.at is not None:  # a key of the YAML file the dict is loaded from
                placed, spans = entry.at
            else:
                placed = written.key_loc(entry.node, entry.name)
                spans = (
                    self.keywords.entry_spans(entry)
                    if entry.source is None
                    else Spans(syntax="python", note=f"written in {written.path}, which other code may import; change it there by hand")
                )
            self.facts.append(
                Fact(
                    FactKind.ARG,
                    entry.name,
                    placed,
                    raw=entry.name,
                    value=entry.value,
                    origin=origin,
                    scanner="python",
                    resolved=literal,
                    spans=spans,
                )
            )
            if origin == "python" and entry.name == "model" and entry.value and literal:
                served = entry.value
                self.facts.append(
                    Fact(
                        FactKind.MODEL,
                        entry.value,
                        placed,
                        raw=entry.value,
                        value=entry.value,
                        scanner="python",
                    )
                )
        group = f"{call.lineno}:{call.col_offset + 1}"
        self.facts[first_fact:] = [f.evolve(group=group) for f in self.facts[first_fact:]]
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
        """``import`` facts for an import of vllm, whose names are recorded as aliases."""
        self.facts.extend(import_facts(self.source, node))

    def sampling_attribute(self, stmt: ast.Assign | ast.AugAssign | ast.AnnAssign, scope: Scope) -> None:
        """``params.<field> = value`` on a name last bound to ``SamplingParams(...)``: an
        ``arg`` fact of origin ``sampling`` at the field's name (a statement to change by hand)."""
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        for target in targets:
            if not (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)):
                continue
            bound = last_binding(target.value.id, scope, stmt.lineno)
            if bound is None or not isinstance(bound[0], ast.Call):
                continue
            head, _, last = (self.source.qualified(bound[0].func) or "").rpartition(".")
            if not head.startswith("vllm") or last not in SAMPLING_CALLS:
                continue
            loc = self.source.loc(target)
            if loc.end_line is None or loc.end_column is None:
                continue
            start = loc.end_column - len(target.attr)
            value = const_text(stmt.value) if stmt.value is not None else None
            self.facts.append(
                Fact(
                    FactKind.ARG,
                    target.attr,
                    Location(self.source.path, loc.end_line, start, loc.end_line, loc.end_column),
                    raw=target.attr,
                    value=value if value is not None else (self.source.segment(stmt.value) if stmt.value else None),
                    origin="sampling",
                    scanner="python",
                    spans=Spans(syntax="python", note="set as an attribute of a SamplingParams object; change it by hand"),
                )
            )

    def envs_attribute(self, node: ast.Attribute) -> None:
        """An ``import`` fact (module ``vllm.envs``, name the attribute) for a read of
        ``envs.VLLM_X`` through ``import vllm.envs as envs`` (or ``vllm.envs.VLLM_X``):
        ``vllm/envs.py`` resolves such names in a module ``__getattr__``, which raises
        ``AttributeError`` for one the release does not register."""
        if self.source.qualified(node) != f"vllm.envs.{node.attr}":
            return
        loc = self.source.loc(node)
        at = None
        if loc.end_line is not None and loc.end_column is not None:
            start = loc.end_column - len(node.attr)
            at = Location(self.source.path, loc.end_line, start, loc.end_line, loc.end_column)
        self.facts.append(
            Fact(
                FactKind.IMPORT,
                "vllm.envs",
                at or loc,
                raw=self.source.segment(node),
                value=node.attr,
                origin="python",
                scanner="python",
            )
        )

    def env_from(self, name_node: ast.AST, value: ast.AST | None) -> None:
        """An ``env_var`` fact for setting the variable ``name_node`` names to ``value``."""
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
        """Whether ``node`` stands for ``os.environ``."""
        return self.source.qualified(node) == "os.environ"

    def env_assign(self, stmt: ast.Assign) -> None:
        """The facts of ``os.environ["X"] = value``."""
        for target in stmt.targets:
            if isinstance(target, ast.Subscript) and self.is_environ(target.value):
                self.env_from(target.slice, stmt.value)

    def env_call(self, call: ast.Call, qualified: str) -> None:
        """The facts of ``os.putenv``, ``os.environ.setdefault`` and ``os.environ.update``."""
        if qualified in ("os.putenv", "os.environ.setdefault") and call.args:
            self.env_from(call.args[0], call.args[1] if len(call.args) > 1 else None)
        elif qualified == "os.environ.update" and call.args and isinstance(call.args[0], ast.Dict):
            for key, value in zip(call.args[0].keys, call.args[0].values, strict=False):
                if key is not None:
                    self.env_from(key, value)

    def subprocess_call(
        self, call: ast.Call, scope: Scope, binding: CallBinding | None = None, alone: bool = False
    ) -> None:
        """The facts of a command run by ``call``: a string read as shell, else an argv
        (``binding``: the parameters of the function it is in, as one call binds them;
        ``alone``: read where it is written, its function's parameters unresolved)."""
        command = command_argument(call, self.source.qualified(call.func) or "")
        if command is None or (binding is None and not alone and any(scope is s for _f, s in self.builders.values())):
            return  # no command; or read at each call of the function that runs it (builder_call)
        text = const_text(command)
        if isinstance(command, ast.Constant) and text is not None:
            relocate = self.source.string_relocator(command)
            facts, _ = shell_facts(text, self.source.path, "python", relocate=relocate)
            self.facts.extend(facts)
            return
        builder = ArgvBuilder(self.source, self.keywords, scope, call.lineno, binding, self.functions)
        if (built := shell_string_facts(builder, command)) is not None:
            self.facts.extend(built)
            return
        tokens = builder.argv(command)
        found = argv_facts(tokens, self.source.path, "python", syntax="python") if tokens else []
        if isinstance(command, ast.Call) and isinstance(command.func, ast.Name) and command.func.id in self.functions:
            # an argv a function of the file returns: one launch per call, told at the call
            group, at = f"call {command.lineno}:{command.col_offset + 1}", self.source.loc(command)
            found = [f.evolve(group=group, location=at if f.kind == FactKind.LAUNCH else f.location) for f in found]
        self.facts.extend(found)
        if tokens and not tokens[0].resolved and not any(f.kind == FactKind.LAUNCH for f in found):
            # a command the file does not say (`" ".join(cmd)` of an unknown list, a
            # function's result) in a file that speaks of vLLM: named in an unresolved note
            written = self.source.segment(command)
            if "vllm" in self.source.src.lower():
                at = self.source.loc(command)
                self.facts.append(Fact(FactKind.LAUNCH, "subprocess", at, raw=written, value=written,
                                       origin="python", scanner="python", resolved=False))

    # ---- walk ------------------------------------------------------------------
    def run(self) -> None:
        """Collect the facts of the file."""
        # every scope was collected first (.index): the file's imports are known before any call
        index = self.index
        for scope in index.scopes:
            for statement in scope.imports:
                self.import_facts(statement)
                self.source.command_import(statement)
        self.facts.extend(star_facts(self.source))
        text = self.source.src
        if may_run_commands(text):  # else no builder, no method's class is asked for
            self.builders = builders(index, self.source)
            self.functions = functions(index)
            if self.builders:
                self.classes = method_classes(index.scopes, index.inner)
                self.class_names = set(self.classes.values())
        imports_vllm = bool(self.source.aliases) or any(f.kind == FactKind.IMPORT for f in self.facts)
        if self.source.aliases and "**" in text:
            self.factories = factories(index, self.source)
            self.functions = self.functions or functions(index)
        self.responses = ResponseReader(self.source, imports_vllm, self.fields, index.calls)
        self.ray, self.modal = bound_modules(index.imports, "ray", text), imported_from(index.imports, "modal", text)
        self.walk_scope(index.module, index.inner)
        for key, (_func, body) in self.builders.items():
            if key not in self.called and "." in key:  # a method no call of the file reaches
                for node in body.nodes:
                    if isinstance(node, ast.Call) and self.source.qualified(node.func) in SUBPROCESS_CALLS:
                        self.subprocess_call(node, body, alone=True)
        self.facts = without_launch_args(shared_words(self.facts, list(self.keywords.other_readers())))

    def walk_scope(self, scope: Scope, inner: dict[int, Scope]) -> None:
        """Read every node of ``scope`` in source order, and the scopes defined in it."""
        for node in scope.nodes:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                self.walk_scope(inner[id(node)], inner)
                continue
            if isinstance(node, ast.Lambda):
                continue
            if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
                self.facts.extend(table_facts(self.source, node.value))
            if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
                self.sampling_attribute(node, scope)
            if isinstance(node, ast.Assign):
                self.env_assign(node)
            elif isinstance(node, ast.Call):
                self.visit_call(node, scope)
            elif isinstance(node, ast.Attribute) and node.attr in self.fields:
                if isinstance(node.ctx, ast.Load):
                    self._add(self.responses.response_field(node, node.attr))
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
                self.envs_attribute(node)
            elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
                key = const_text(node.slice)
                if key in self.fields:
                    self._add(self.responses.response_field(node, key, node.slice))

    def platform_call(self, call: ast.Call, scope: Scope) -> None:
        """Ray Serve LLM's ``LLMConfig`` and a Modal image's installs and env (:mod:`.platforms`)."""
        func = call.func
        root = chain_root(func)
        name = func.attr if isinstance(func, ast.Attribute) else ""
        if is_ray_llm_config(qualified_call(func, self.ray)):
            engine = engine_kwargs_call(call)
            if engine is not None:
                self.engine_call(engine, "LLMConfig", scope)
            env = dict_value(keyword(call, "runtime_env"), "env_vars")
            for key, value in zip(getattr(env, "keys", []), getattr(env, "values", []), strict=False):
                if key is not None:
                    self.env_from(key, value)
        elif root in self.modal and isinstance(func, ast.Attribute):
            if name in MODAL_INSTALLS:
                words = [Token("pip", 0, 0), Token("install", 0, 0)]
                for arg in call.args:
                    text = const_text(arg)
                    if text is not None:
                        loc = self.source.loc(arg)
                        at = self.source.string_span(arg)
                        words.append(Token(text, loc.line or 0, (loc.column or 0) + (1 if at else 0), True, text, span=at))
                self.facts.extend(pip_install_facts(words, self.source.path, "python"))
            elif name == "env" and call.args and isinstance(call.args[0], ast.Dict):
                for key, value in zip(call.args[0].keys, call.args[0].values, strict=False):
                    if key is not None:
                        self.env_from(key, value)

    def visit_call(self, call: ast.Call, scope: Scope) -> None:
        """Read ``call`` by what it calls."""
        if self.ray or self.modal:
            self.platform_call(call, scope)
        if isinstance(call.func, ast.Attribute) and self.class_names:
            cls = receiver_class(call, scope, self.classes, self.class_names)
            if cls is not None and f"{cls}.{call.func.attr}" in self.builders:
                self.builder_call(call, scope, f"{cls}.{call.func.attr}")  # srv.start(...), self.start(...)
                return
        qualified = self.source.qualified(call.func)
        if qualified is None:
            if isinstance(call.func, ast.Attribute):
                self._add(self.responses.response_getter(call))
            return
        head, _, last = qualified.rpartition(".")
        if head.startswith("vllm") and (last in ENGINE_CALLS or last in SAMPLING_CALLS):
            if not any(call is f.engine for f in self.factories.values()):  # else read at each call
                self.engine_call(call, last, scope)
        elif isinstance(call.func, ast.Name) and qualified in self.factories:
            self.factory_call(call, scope, self.factories[qualified])
        elif qualified in SUBPROCESS_CALLS:
            self.subprocess_call(call, scope)
        elif isinstance(call.func, ast.Name) and qualified in self.builders:
            self.builder_call(call, scope)
        elif qualified.startswith("os."):
            self.env_call(call, qualified)
        if isinstance(call.func, ast.Attribute):
            self._add(self.responses.response_getter(call))
        elif qualified == "getattr" and len(call.args) >= 2:
            key = const_text(call.args[1])
            if key in self.fields:
                self._add(self.responses.response_field(call, key, call.args[1]))

    def factory_call(self, call: ast.Call, scope: Scope, factory: Factory) -> None:
        """The engine a call of a factory makes (``make_llm(swap_space=4)`` of ``def
        make_llm(**kw): return LLM(model="m", **kw)``): each keyword of the call for ``**kw``
        is an engine keyword, reported (and fixed) at the call; the launch is placed at the call."""
        caller = ArgvBuilder(self.source, self.keywords, scope, call.lineno, None, self.functions)
        binding = bind(factory.func, call, caller, self.keywords, scope)
        if binding is None:
            return
        self.keywords.call_cuts(call)
        first = len(self.facts)
        self.engine_call(factory.engine, factory.what, factory.scope, binding)
        group, at = f"call {call.lineno}:{call.col_offset + 1}", self.source.loc(call.func)
        self.facts[first:] = [
            f.evolve(group=group, location=at if f.kind == FactKind.LAUNCH else f.location) for f in self.facts[first:]
        ]

    def builder_call(self, call: ast.Call, scope: Scope, method: str | None = None) -> None:
        """The launches a call of a function of the file runs, read with its parameters bound
        as this call binds them (:func:`bind`): ``start("m", port=9100, preemption_mode="swap")``
        of ``def start(model, **opts)`` building ``["vllm", "serve", model, f"--{k}", ...]``;
        each flag from a keyword is reported at that keyword, the launch at the call."""
        self.called.add(method or self.source.qualified(call.func) or "")
        func, inner = self.builders[method or self.source.qualified(call.func) or ""]
        caller = ArgvBuilder(self.source, self.keywords, scope, call.lineno, None, self.functions)
        binding = bind(func, call, caller, self.keywords, scope, method=method is not None)
        if binding is None:  # a *spread the file does not say: which parameter gets what is not known
            spread = " ".join(self.source.segment(a) for a in call.args if isinstance(a, ast.Starred))
            self.facts.append(
                Fact(FactKind.LAUNCH, "subprocess", self.source.loc(call.func), raw=spread, value=spread,
                     origin="python", scanner="python", resolved=False)
            )
            return
        first = len(self.facts)
        for node in inner.nodes:
            if isinstance(node, ast.Call) and self.source.qualified(node.func) in SUBPROCESS_CALLS:
                self.subprocess_call(node, inner, binding)
        group = f"call {call.lineno}:{call.col_offset + 1}"
        at = self.source.loc(call.func)
        self.facts[first:] = [
            f.evolve(group=group, location=at if f.kind == FactKind.LAUNCH else f.location)
            for f in self.facts[first:]
        ]
