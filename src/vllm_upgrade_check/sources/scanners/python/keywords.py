"""The keywords a vLLM call is given, read from a Python file: written at the call, splatted
from dicts (literals, ``dict(...)`` calls, names bound earlier with later ``d["k"] = v`` and
``d.update(...)`` applied), each with where a fix edits it and what removing it cuts; and
where else the code reads those dicts (a fix for vLLM would change what that code gets).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass, replace

from vllm_upgrade_check.model.facts import Location, Span, Spans
from vllm_upgrade_check.parsing.words import cut
from vllm_upgrade_check.sources.scanners.python.envreads import value_text
from vllm_upgrade_check.sources.scanners.python.modules import ModuleReader, imported_names
from vllm_upgrade_check.sources.scanners.python.names import DICT_CHANGES, const_text, dotted_name, is_logging
from vllm_upgrade_check.sources.scanners.python.scope import Scope, last_binding, later_updates
from vllm_upgrade_check.sources.scanners.python.source import PythonSource
from vllm_upgrade_check.sources.scanners.python.yamlload import is_yaml_load, loaded_path, yaml_entries


@dataclass(frozen=True)
class Entry:
    """One resolved keyword: name, value text, where the key is written, and the value node
    (``None`` when the keyword stands for what cannot be read)."""

    name: str
    value: str | None
    node: ast.AST
    resolved: bool = True
    value_node: ast.AST | None = None
    source: PythonSource | None = None  # the module it is written in, when not the file read
    at: tuple[Location, Spans] | None = None  # a key of a YAML file the call's dict is loaded from


def _position(node: ast.AST) -> tuple[int, int]:
    return getattr(node, "lineno", 0), getattr(node, "col_offset", 0)


class KeywordReader:
    """Reads the keywords of calls and the entries of dicts in one file, remembering what
    removing each one cuts, which names were read as a vLLM call's keywords and where the
    dicts behind them are written."""

    def __init__(self, source: PythonSource, modules: ModuleReader | None = None) -> None:
        self.source = source
        self.modules = modules  # the repository's other modules, when they may be read
        self.imports = imported_names(source.tree) if modules is not None else {}
        self.cuts: dict[int, Span | None] = {}
        self.dict_reads: set[int] = set()  # Name nodes read as the keywords of a vLLM call
        self.dict_spans: dict[str, list[Span]] = {}  # dict name -> where it is written

    def remember_cuts(self, keys: list[ast.AST], extents: list[Span | None]) -> None:
        """Record what removing each element of one list takes out, by its key node."""
        for key, token in zip(keys, self.source.elements(extents), strict=True):
            self.cuts[id(key)] = cut([token])

    def call_cuts(self, call: ast.Call) -> None:
        """:meth:`remember_cuts` for the arguments and keywords of ``call``, in source order."""
        nodes: list[ast.AST] = sorted([*call.args, *call.keywords], key=_position)
        self.remember_cuts(nodes, [self.source.span(n) for n in nodes])

    def dict_entries(self, node: ast.AST, scope: Scope, before: int, depth: int = 0) -> list[Entry] | None:
        """Keys of a dict expression, or ``None`` when it cannot be resolved from the file. A
        dict partly read (``{**BASE, **extra}``, ``d.update(overrides)``, a key computed at run
        time) gives the keys it certainly holds and one unresolved entry per part not read."""
        if depth > 5:
            return None
        if isinstance(node, ast.Dict):
            out: list[Entry] = []
            pairs = list(zip(node.keys, node.values, strict=False))
            extents = [self._pair_span(k, v) for k, v in pairs]
            self.remember_cuts([v if k is None else k for k, v in pairs], extents)
            for key, value in pairs:
                if key is None:
                    inner = self.dict_entries(value, scope, before, depth + 1)
                    out.extend(inner if inner is not None else [self._unread("**", value)])
                    continue
                name = const_text(key)
                if name is None:
                    out.append(self._unread("", key))
                    continue
                out.append(Entry(name, value_text(self.source, value), key, value_node=value))
            return out
        if isinstance(node, ast.Call) and dotted_name(node.func) == "dict" and not node.args:
            self.call_cuts(node)
            return self.keyword_entries(node.keywords, scope, before, depth + 1)
        if isinstance(node, ast.Call) and dotted_name(node.func) == "dict" and len(node.args) == 1:
            base = self.dict_entries(node.args[0], scope, before, depth + 1)
            more = self.keyword_entries(node.keywords, scope, before, depth + 1)
            return None if base is None or more is None else base + more
        if is_yaml_load(node):
            return self.loaded_entries(node, before, scope)
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            imported = self.imports.get(node.value.id)
            if imported is not None and imported[1] is None and scope.owner(node.value.id) is None:
                return self.foreign(imported[0], imported[2], node.attr, depth)
            return None
        if isinstance(node, ast.Name):
            bound = last_binding(node.id, scope, before)
            if bound is None:
                imported = self.imports.get(node.id)
                if imported is not None and imported[1] is not None:
                    return self.foreign(imported[0], imported[2], imported[1], depth)
                return None
            bound_value, owner = bound
            entries = self.dict_entries(bound_value, owner, getattr(bound_value, "lineno", before), depth + 1)
            if entries is None:
                return None
            self.dict_reads.add(id(node))
            written = self.dict_spans.setdefault(node.id, [])
            written.extend(s for s in [self.source.span(bound_value)] if s is not None)
            for stmt in later_updates(
                node.id, owner, getattr(bound_value, "end_lineno", 0) or 0, before, scope
            ):
                updated = self.apply_update(node.id, stmt, entries, owner, depth)
                if updated is None:
                    return None
                if updated is not entries:  # the statement changes this dict
                    written.extend(s for s in [self.source.span(stmt)] if s is not None)
                entries = updated
            return entries
        return None

    def loaded_entries(self, call: ast.AST, before: int, scope: Scope) -> list[Entry]:
        """The entries of the dict yaml-load ``call`` gives (:mod:`.yamlload`): the top-level
        keys of the YAML file it reads, each placed at its key there, when the repository
        holds the file (read once the file is read again with the repository,
        :attr:`modules`); else one unresolved entry, the call as written (with the file it
        reads when the call does not name it)."""
        assert isinstance(call, ast.Call)

        def names(name: str) -> ast.AST | None:
            bound = last_binding(name, scope, getattr(call, "lineno", before))
            return bound[0] if bound is not None else None

        written = loaded_path(call, self.source.tree, before, names)
        found = None
        if written is not None and self.modules is not None:
            found = yaml_entries(written, self.source.path or "", self.modules.read)
        if found is None:
            text = self.source.segment(call)
            if written is not None and written[0] not in text:  # `yaml.safe_load(f)` of `with open(...) as f`
                text += f' of "{written[0]}"'
            return [Entry(text, None, call, resolved=False)]
        return [Entry(name, value, call, at=(where, spans)) for name, value, where, spans in found]

    def foreign(self, module: str, level: int, name: str, depth: int) -> list[Entry] | None:
        """The entries of the dict ``name`` that module ``module`` of the repository binds at
        its top level (each told the module it is written in), or ``None`` when the
        repository does not hold it or it is no dict the file says."""
        if self.modules is None:
            return None
        found = self.modules.binding(module, level, name, self.source.path)
        if found is None:
            return None
        other, value, scope = found
        reader = KeywordReader(other, self.modules)
        entries = reader.dict_entries(value, scope, getattr(value, "lineno", 0), depth + 1)
        if entries is None:
            return None
        return [e if e.source is not None else replace(e, source=other) for e in entries]

    def apply_update(
        self, name: str, stmt: ast.AST, entries: list[Entry], scope: Scope, depth: int
    ) -> list[Entry] | None:
        """``entries`` (of dict ``name``, bound in ``scope``) as statement ``stmt`` leaves them:
        ``name["k"] = v`` and ``name.update(...)`` applied, a new binding read afresh;
        ``None`` when the statement makes the keywords unknown."""
        if isinstance(stmt, ast.Assign):
            for target in stmt.targets:
                if (
                    isinstance(target, ast.Subscript)
                    and isinstance(target.value, ast.Name)
                    and target.value.id == name
                ):
                    key = const_text(target.slice)
                    if key is None:
                        return None
                    entries = [e for e in entries if e.name != key]
                    statement = self.source.span(stmt)
                    self.cuts[id(target.slice)] = (
                        None if statement is None else self.source.whole_lines(statement)
                    )
                    entries.append(
                        Entry(key, value_text(self.source, stmt.value), target.slice, value_node=stmt.value)
                    )
                elif isinstance(target, ast.Name) and target.id == name:
                    return self.dict_entries(stmt.value, scope, stmt.lineno, depth + 1)
        elif (
            isinstance(stmt, ast.Call)
            and isinstance(stmt.func, ast.Attribute)
            and dotted_name(stmt.func.value) == name
        ):
            method = stmt.func.attr
            if method == "update":
                self.call_cuts(stmt)
                more: list[Entry] = []
                for arg in stmt.args:
                    inner = self.dict_entries(arg, scope, stmt.lineno, depth + 1)
                    more.extend(inner if inner is not None else [self._unread(f"{name}.update(", arg, ")")])
                kw = self.keyword_entries(stmt.keywords, scope, stmt.lineno, depth + 1)
                if kw is None:
                    return None
                more.extend(kw)
                names = {e.name for e in more}
                entries = [e for e in entries if e.name not in names] + more
            elif method in ("pop", "setdefault", "clear", "popitem"):
                return None
        return entries

    def _unread(self, before: str, node: ast.AST, after: str = "") -> Entry:
        """The unresolved entry of a part of a dict that the file does not say."""
        text = self.source.segment(node)
        if before == "**" and not isinstance(node, (ast.Name, ast.Attribute, ast.Call, ast.Subscript)):
            text = f"({text})"
        return Entry(before + text + after, None, node, resolved=False)

    def keyword_entries(
        self, keywords: list[ast.keyword], scope: Scope, before: int, depth: int = 0
    ) -> list[Entry] | None:
        """The entries ``keywords`` give a call: each ``name=value``, and the entries of each
        ``**d`` splat, or one unresolved entry for a splat that cannot be read."""
        out: list[Entry] = []
        for kw in keywords:
            if kw.arg is None:
                inner = self.dict_entries(kw.value, scope, before, depth + 1)
                if inner is None:
                    out.append(Entry("**" + self.source.segment(kw.value), None, kw, resolved=False))
                else:
                    out.extend(inner)
            else:
                out.append(Entry(kw.arg, value_text(self.source, kw.value), kw, value_node=kw.value))
        return out

    def _pair_span(self, key: ast.AST | None, value: ast.AST) -> Span | None:
        """Where a dict entry ``key: value`` (or ``**value``) is written."""
        end = self.source.span(value)
        if key is None:
            if end is None:
                return None
            line = self.source.lines[end.line - 1]
            star = line.rfind("**", 0, end.column - 1)
            return None if star < 0 else Span(end.line, star + 1, end.end_line, end.end_column)
        start = self.source.span(key)
        return None if start is None or end is None else Span.between(start.start, end.end)

    def entry_spans(self, entry: Entry) -> Spans:
        """Where a fix edits keyword ``entry``: its name, its value, what removing it cuts."""
        if isinstance(entry.node, ast.keyword):
            loc = self.source.key_loc(entry.node, entry.name)
            name = (
                None
                if loc.line is None or loc.column is None
                else Span(loc.line, loc.column, loc.line, loc.column + len(entry.name))
            )
        else:
            name = self.source.string_span(entry.node)
        return Spans(
            name=name,
            value=self.source.value_span(entry.value_node),
            cut=self.cuts.get(id(entry.node)),
            syntax="python",
        )


    def other_readers(self) -> Iterator[tuple[Span, str]]:
        """Where the dicts that give a vLLM call its keywords are written, for each one that
        something else reads too (``other(**ARGS)``, ``self.args = ARGS``): a fix for vLLM
        would change what that other code gets. Changing the dict in place, and printing or
        logging it, are not such reads."""
        if not self.dict_spans:
            return
        ignored: set[int] = set(self.dict_reads)
        for node in ast.walk(self.source.tree):
            if isinstance(node, ast.Subscript) and isinstance(node.ctx, (ast.Store, ast.Del)):
                ignored.add(id(node.value))
            elif isinstance(node, ast.Attribute) and node.attr in DICT_CHANGES:
                ignored.add(id(node.value))
            elif isinstance(node, ast.Call) and is_logging(node.func):
                ignored.update(id(a) for a in node.args)
        for node in ast.walk(self.source.tree):
            if (
                isinstance(node, ast.Name)
                and isinstance(node.ctx, ast.Load)
                and node.id in self.dict_spans
                and id(node) not in ignored
            ):
                for span in self.dict_spans[node.id]:
                    yield span, f"the code reading {node.id} at line {node.lineno}"

