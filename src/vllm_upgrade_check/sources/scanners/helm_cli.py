"""``helm install``/``upgrade``/``template`` command lines in shell scripts: the values files
they pass (``-f FILE``, ``--values FILE``, comma lists) override the chart's values, so the
flags and env vars written there deploy with the chart. Such a file counts when the chart is a
vLLM chart: a local chart directory whose ``values.yaml`` mentions vLLM, or a chart reference
that names vLLM (``vllm/vllm-stack``, ``oci://…/vllm-chart``)."""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Sequence

import yaml

from vllm_upgrade_check.model.facts import Fact
from vllm_upgrade_check.parsing.shell import ShellScript
from vllm_upgrade_check.parsing.yamlnodes import YamlProblem, documents, get, scalar
from vllm_upgrade_check.sources.scanners.base import SourceFile
from vllm_upgrade_check.sources.scanners.helm import is_values_name, override_facts

_SUBCOMMANDS = frozenset({"install", "upgrade", "template"})
_VALUES = frozenset({"-f", "--values"})
_TAKES_VALUE = frozenset(
    "--set --set-string --set-file --set-json --set-literal -n --namespace --version --kube-context "
    "--kubeconfig --timeout -o --output --repo --username --password --post-renderer "
    "--post-renderer-args --description --ca-file --cert-file --key-file --keyring --history-max "
    "--registry-config --repository-cache --repository-config --burst-limit --qps -l --labels "
    "--name-template --kube-apiserver --kube-as-user --kube-as-group --kube-token --kube-ca-file "
    "--api-versions -a --show-only -s --output-dir --release-name".split()
)
"""helm options that take the next word as their value (helm v3 ``install``/``upgrade``/
``template --help``)."""


def helm_values_commands(script: ShellScript) -> list[tuple[str, list[str]]]:
    """``(chart, values files as written)`` of each ``helm install|upgrade|template`` command
    of ``script`` that passes values files; the chart is its last positional word."""
    out = []
    for command in script.commands:
        words = [t.text for t in command.argv]
        if len(words) < 3 or posixpath.basename(words[0]) != "helm" or words[1] not in _SUBCOMMANDS:
            continue
        positional: list[str] = []
        values: list[str] = []
        rest = iter(words[2:])
        for word in rest:
            name, eq, inline = word.partition("=")
            if name in _VALUES:
                given = inline if eq else next(rest, "")
                values.extend(v for v in given.split(",") if v)
            elif word.startswith("-f") and len(word) > 2 and not word.startswith("--"):
                values.extend(v for v in word[2:].split(",") if v)
            elif word.startswith("-"):
                if name in _TAKES_VALUE and not eq:
                    next(rest, None)
            else:
                positional.append(word)
        if values and positional:
            out.append((positional[-1], values))
    return out


def _resolve(written: str, by: str, files: set[str]) -> str | None:
    """The report path of ``written`` (relative to the script's directory or the root)."""
    if written.startswith("/") or "$" in written:
        return None
    for candidate in (posixpath.join(posixpath.dirname(by), written), written):
        path = posixpath.normpath(candidate)
        if path in files:
            return path
    return None


def linked_values_facts(
    script: ShellScript, by: str, files: Sequence[str], read: Callable[[str], SourceFile | None]
) -> list[Fact]:
    """The facts of the values files the helm commands of ``script`` (in file ``by``) pass to
    a vLLM chart, located in those files. A values file the Helm values scanner reads on its
    own (the chart's ``values.yaml``, an override beside the chart, a values file that names
    vLLM) is left to it, so nothing is reported twice."""
    names = set(files)
    out: list[Fact] = []
    seen: set[str] = set()
    for chart, values in helm_values_commands(script):
        chart_dir = _resolve(chart, by, {posixpath.dirname(f) for f in names})
        if chart_dir is not None:
            chart_values = read(posixpath.join(chart_dir, "values.yaml"))
            vllm_chart = chart_values is not None and chart_values.mentions_vllm()
        else:
            vllm_chart = "vllm" in chart.lower()
        if not vllm_chart:
            continue
        for written in values:
            rel = _resolve(written, by, names)
            if rel is None or rel in seen:
                continue
            seen.add(rel)
            directory, name = posixpath.split(rel)
            if chart_dir is not None and directory == chart_dir and is_values_name(name):
                continue  # the chart's own values, or an override beside it: read by the values scanner
            source = read(rel)
            if source is None or (is_values_name(name) and source.mentions_vllm()):
                continue
            try:
                docs = documents(source.text)
            except YamlProblem:
                continue
            for doc in docs:
                if isinstance(doc, yaml.MappingNode) and scalar(get(doc, "kind")) is None:
                    out.extend(override_facts(source.text, doc, rel))
    return out
