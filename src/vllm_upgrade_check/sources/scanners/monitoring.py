"""Monitoring: ``vllm:`` metric names in Prometheus rules, Grafana dashboards and scraper code.

A removed or renamed vLLM metric leaves a dead panel or a silent alert, so every ``vllm:``
metric a PromQL expression selects becomes a ``metric`` fact:

- Prometheus rule files (``groups[].rules[].expr``) and ``PrometheusRule`` objects
  (``spec.groups``); a recording rule's own ``record:`` name is a series the user made, not
  a vLLM metric, and neither are its later uses; ``annotations`` and ``labels`` are text;
- Grafana dashboard JSON: ``targets[].expr`` of panels (rows and nested panels included)
  and ``templating.list[].query``, in ``.json`` files and as JSON text inside a ``ConfigMap``
  (the Grafana sidecar's provisioning) or a grafana-operator ``GrafanaDashboard``;
- Python string literals that hold ``vllm:`` (scraper code), read with :mod:`ast`, never
  imported; docstrings are left out.

Names are found by :func:`promql_metric_names`, a small PromQL tokenizer: it skips string
literals, label matchers' values, durations and ``$variables``, and reports identifiers
that start with ``vllm:``. A histogram or counter series (``_bucket``, ``_sum``, ``_count``,
``_total``, ``_created``) gets the base name as its ``name`` and the written name as an
alias, so a rule on either matches. vLLM's own metrics have exactly one colon
(``vllm:num_requests_running``, from ``vllm/v1/metrics/loggers.py``); a name with a second
colon follows the recording-rule convention ``level:metric:operation`` and is left out.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache

import yaml

from vllm_upgrade_check.model.facts import Fact, FactKind, Location, Skipped, Span, Spans
from vllm_upgrade_check.parsing.textpos import ByteColumns, line_index
from vllm_upgrade_check.parsing.yamlnodes import YamlProblem, documents, get, items, mapping_items, scalar
from vllm_upgrade_check.sources.scanners.base import Scanner, SourceFile
from vllm_upgrade_check.sources.scanners.manifests import YAML_SUFFIXES
from vllm_upgrade_check.sources.scanners.python.index import parsed_module

PREFIX = "vllm:"
SERIES_SUFFIXES = ("_bucket", "_sum", "_count", "_total", "_created")
"""Suffixes Prometheus client libraries add to histogram, summary and counter series."""

_NAME_START = re.compile(r"[A-Za-z_:]")
_NAME = re.compile(r"[A-Za-z0-9_:]*")


@dataclass(frozen=True)
class MetricUse:
    """A metric name inside an expression: its text and 0-based offset in the expression."""

    name: str
    offset: int


def promql_metric_names(expr: str) -> list[MetricUse]:
    """Every ``vllm:`` metric selected by the PromQL ``expr``, in order of appearance.

    Skips string literals (``"..."``, ``'...'``, backquotes), the values of label matchers
    inside ``{...}`` (a ``__name__="vllm:x"`` matcher counts as the metric ``vllm:x``),
    ranges/durations in ``[...]``, ``$``/``${...}`` dashboard variables and comments.
    """
    uses: list[MetricUse] = []
    i, n = 0, len(expr)
    depth_brace = 0
    last_label = ""
    while i < n:
        c = expr[i]
        if c in "\"'`":
            end = _string_end(expr, i)
            if depth_brace and last_label == "__name__":
                value = expr[i + 1 : end - 1]
                if value.startswith(PREFIX):
                    uses.append(MetricUse(value, i + 1))
            i = end
            continue
        if c == "#":
            nl = expr.find("\n", i)
            i = n if nl < 0 else nl
            continue
        if c == "{":
            depth_brace += 1
        elif c == "}":
            depth_brace = max(0, depth_brace - 1)
        elif c == "[":
            close = expr.find("]", i)
            i = n if close < 0 else close + 1
            continue
        elif c == "$":
            i += 1
            if i < n and expr[i] == "{":
                close = expr.find("}", i)
                i = n if close < 0 else close + 1
            else:
                i += len(_NAME.match(expr, i).group(0))  # type: ignore[union-attr]
            continue
        if _NAME_START.match(c) and (i == 0 or not (expr[i - 1].isalnum() or expr[i - 1] in "_:.")):
            word = c + _NAME.match(expr, i + 1).group(0)  # type: ignore[union-attr]
            if depth_brace:
                last_label = word
            elif (
                word.startswith(PREFIX)
                and word.count(":") == 1
                and len(word) > len(PREFIX)
                and not word[len(PREFIX)].isdigit()  # `vllm:8000` is a host and port, never a metric
            ):
                rest = expr[i + len(word) :].lstrip()
                if not rest.startswith("("):
                    uses.append(MetricUse(word, i))
            i += len(word)
            continue
        i += 1
    return uses


def _string_end(text: str, start: int) -> int:
    quote = text[start]
    i = start + 1
    while i < len(text):
        if text[i] == "\\" and quote != "`":
            i += 2
            continue
        if text[i] == quote:
            return i + 1
        i += 1
    return len(text)


def metric_fact(written: str, path: str, line: int, column: int, scanner: str, placed: bool = True) -> Fact:
    """A ``metric`` fact: ``name`` the base metric, the written series name as an alias;
    ``placed``: the series name is written at ``line``/``column`` (its name span)."""
    base = written
    for suffix in SERIES_SUFFIXES:
        if written.endswith(suffix) and len(written) > len(PREFIX) + len(suffix):
            base = written[: -len(suffix)]
            break
    aliases = (written,) if base != written else ()
    return Fact(
        FactKind.METRIC,
        base,
        Location(path, line, column, line, column + len(written)),
        raw=written,
        origin="promql",
        aliases=aliases,
        scanner=scanner,
        spans=Spans(name=Span(line, column, line, column + len(written))) if placed else None,
    )


def _line_col(text: str, offset: int) -> tuple[int, int]:
    return line_index(text).line_col(offset)


def _facts_in_span(
    text: str, start: int, end: int, expr: str, path: str, scanner: str, skip: set[str]
) -> Iterator[Fact]:
    """Facts of ``expr`` whose written form lies in ``text[start:end]`` (searched in order)."""
    cursor = start
    for use in promql_metric_names(expr):
        index = text.find(use.name, cursor, end)
        placed = index >= 0
        if not placed:
            index = start
        else:
            cursor = index + len(use.name)
        if use.name in skip:
            continue
        line, column = _line_col(text, index)
        yield metric_fact(use.name, path, line, column, scanner, placed)


# --- Prometheus rule files -------------------------------------------------------------------


def _rule_groups(doc: yaml.Node) -> list[yaml.Node]:
    groups = get(doc, "groups")
    if groups is None and scalar(get(doc, "kind")) == "PrometheusRule":
        groups = get(get(doc, "spec"), "groups")
    return items(groups)


def prometheus_rule_facts(text: str, docs: Sequence[yaml.Node], path: str) -> Iterator[Fact]:
    """Metric facts of every ``expr`` in the rule groups of ``docs``."""
    rules = [rule for doc in docs for group in _rule_groups(doc) for rule in items(get(group, "rules"))]
    recorded = {name for rule in rules if (name := scalar(get(rule, "record")))}
    for rule in rules:
        node = get(rule, "expr")
        expr = scalar(node)
        if node is None or expr is None:
            continue
        start, end = node.start_mark.index, node.end_mark.index
        yield from _facts_in_span(text, start, end, expr, path, "prometheus", recorded)


# --- Grafana dashboards ----------------------------------------------------------------------


def _dashboard_queries(data: object) -> Iterator[str]:
    """PromQL strings of a dashboard, in document order (panels, nested panels, templating)."""
    if isinstance(data, dict):
        for key, value in data.items():
            if key in ("expr", "query") and isinstance(value, str):
                yield value
            elif key == "query" and isinstance(value, dict) and isinstance(value.get("query"), str):
                yield value["query"]
            elif key not in ("annotations", "description", "title", "legendFormat"):
                yield from _dashboard_queries(value)
    elif isinstance(data, list):
        for item in data:
            yield from _dashboard_queries(item)


def grafana_facts(text: str, data: object, path: str, start: int = 0, end: int | None = None) -> Iterator[Fact]:
    """Metric facts of a parsed Grafana dashboard written in ``text[start:end]`` (the whole
    text by default); positions found by searching each query's JSON-escaped text in order.
    A query not written that way (a dashboard inside a quoted YAML string) is placed at
    ``start``."""
    end = len(text) if end is None else end
    cursor = start
    for query in _dashboard_queries(data):
        if PREFIX not in query:
            continue
        found = _find_json_string(text, query, cursor, end) or _find_json_string(text, query, start, end)
        if found is None:
            yield from _facts_in_span(text, start, start, query, path, "grafana", set())
            continue
        index, cursor = found
        yield from _facts_in_span(text, index, cursor, query, path, "grafana", set())


def _find_json_string(text: str, value: str, start: int, end: int) -> tuple[int, int] | None:
    """``(start, end)`` of the first place in ``text[start:end]`` where ``value`` is written as
    a JSON string body: as Python's encoder writes it (ASCII or not) or as Go's, which Grafana
    exports with (``<``, ``>`` and ``&`` as ``\\u003c``, ``\\u003e``, ``\\u0026``)."""
    ascii_form = json.dumps(value)[1:-1]
    forms = {ascii_form, json.dumps(value, ensure_ascii=False)[1:-1]}
    forms.add(ascii_form.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026"))
    best: tuple[int, int] | None = None
    for form in forms:
        index = text.find(form, start, end)
        if index >= 0 and (best is None or index < best[0]):
            best = (index, index + len(form))
    return best


EMBEDDED_DASHBOARD_KINDS = ("ConfigMap", "GrafanaDashboard")
"""Kubernetes objects that carry a dashboard as JSON text: a ``ConfigMap``'s ``data`` values
(what the Grafana sidecar of kube-prometheus-stack provisions from) and grafana-operator's
``GrafanaDashboard`` (``spec.json``)."""


def embedded_dashboard_facts(text: str, docs: Sequence[yaml.Node], path: str) -> Iterator[Fact | Skipped]:
    """Metric facts of the Grafana dashboards held as JSON text in :data:`EMBEDDED_DASHBOARD_KINDS`
    objects of ``docs``, at their place in the YAML file. A value under a ``*.json`` key that
    names ``vllm:`` but is not JSON is reported as skipped; other values that are not JSON
    dashboards are left alone."""
    for doc in docs:
        kind = scalar(get(doc, "kind"))
        if kind == "ConfigMap":
            values = [(key, node) for key, _key_node, node in mapping_items(get(doc, "data"))]
        elif kind == "GrafanaDashboard":
            values = [("json.json", node) for node in [get(get(doc, "spec"), "json")] if node is not None]
        else:
            continue
        for key, node in values:
            body = scalar(node)
            if body is None or PREFIX not in body:
                continue
            try:
                data = json.loads(body)
            except ValueError as exc:
                if key.endswith(".json"):
                    yield Skipped(
                        path, f"JSON error in {key}: {exc}", configures_vllm=True, line=node.start_mark.line + 1
                    )
                continue
            if is_dashboard(data):
                yield from grafana_facts(text, data, path, node.start_mark.index, node.end_mark.index)


def is_dashboard(data: object) -> bool:
    """A Grafana dashboard (or a dashboard wrapped as ``{"dashboard": {...}}``)."""
    if isinstance(data, dict) and isinstance(data.get("dashboard"), dict):
        data = data["dashboard"]
    return isinstance(data, dict) and ("panels" in data or "rows" in data or "templating" in data)


# --- scraper code ----------------------------------------------------------------------------


def python_string_facts(text: str, path: str) -> Iterator[Fact]:
    """Metric facts of every Python string literal holding ``vllm:`` (docstrings excluded),
    from the one index of the file's tree that the Python scanner reads too
    (:func:`.python.index.parsed_module`).

    Raises:
        SyntaxError: when ``text`` is not Python.
    """
    _tree, index = parsed_module(text)
    if not index.metric_strings:
        return
    lines = text.split("\n")
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line) + 1)
    for node in index.metric_strings:
        if node.end_lineno is None or node.end_col_offset is None or not isinstance(node.value, str):
            continue
        start = offsets[node.lineno - 1] + _char_col(lines[node.lineno - 1], node.col_offset)
        end = offsets[node.end_lineno - 1] + _char_col(lines[node.end_lineno - 1], node.end_col_offset)
        yield from _facts_in_span(text, start, end, node.value, path, "python-metrics", set())


@lru_cache(maxsize=64)
def _columns(line: str) -> ByteColumns:
    return ByteColumns(line)


def _char_col(line: str, byte_col: int) -> int:
    return _columns(line).chars(byte_col)


class MonitoringScanner(Scanner):
    """Prometheus rules (YAML), Grafana dashboards (JSON) and Python that name ``vllm:`` metrics."""

    name = "monitoring"
    reads_yaml = True

    def accepts_name(self, name: str) -> bool | None:
        return name.endswith((*YAML_SUFFIXES, ".json", ".py"))

    def accepts(self, source: SourceFile) -> bool:
        return source.name.endswith((*YAML_SUFFIXES, ".json", ".py"))

    def scan(self, source: SourceFile) -> Iterator[Fact | Skipped]:
        if PREFIX not in source.text:
            return
        if source.name.endswith(".py"):
            try:
                yield from python_string_facts(source.text, source.relpath)
            except (SyntaxError, ValueError) as exc:
                line = getattr(exc, "lineno", None)
                yield Skipped(source.relpath, f"Python syntax error: {exc}", configures_vllm=True, line=line)
            return
        if source.name.endswith(".json"):
            try:
                data = json.loads(source.text)
            except ValueError as exc:
                yield Skipped(
                    source.relpath,
                    f"JSON error: {exc}",
                    configures_vllm=True,
                    line=getattr(exc, "lineno", None),
                )
                return
            if is_dashboard(data):
                yield from grafana_facts(source.text, data, source.relpath)
            return
        rules = "groups" in source.text
        dashboards = any(kind in source.text for kind in EMBEDDED_DASHBOARD_KINDS)
        if not (rules or dashboards):
            return
        try:
            docs = documents(source.text)
        except YamlProblem:
            return  # the manifest scanner reports YAML that cannot be read
        if rules:
            yield from prometheus_rule_facts(source.text, docs, source.relpath)
        if dashboards:
            yield from embedded_dashboard_facts(source.text, docs, source.relpath)
