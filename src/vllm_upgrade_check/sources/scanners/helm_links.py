"""The values files shell scripts pass to a vLLM chart (``helm upgrade … -f FILE``, see
:mod:`.helm_cli`), read with the chart they override: the shell scanner that reads them."""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace

import yaml

from vllm_upgrade_check.knowledge.versions import tag_version_span
from vllm_upgrade_check.model.facts import Fact, FactKind, Spans
from vllm_upgrade_check.parsing.shell import Sourced, Token, parse_shell
from vllm_upgrade_check.parsing.words import sub_span
from vllm_upgrade_check.parsing.yamlnodes import YamlProblem, documents, get, items, scalar
from vllm_upgrade_check.sources.scanners.arg_facts import arg_facts
from vllm_upgrade_check.sources.scanners.base import Conditional, FileReference, ScanItem, SourceFile
from vllm_upgrade_check.sources.scanners.compose_cli import compose_chains, may_run_compose
from vllm_upgrade_check.sources.scanners.compose_project import linked_chain_facts
from vllm_upgrade_check.sources.scanners.helm import (
    HelmValuesScanner,
    chart_repository,
    is_values_name,
    override_facts,
    override_image_facts,
)
from vllm_upgrade_check.sources.scanners.helm_cli import (
    SetItems,
    helm_set_args,
    helm_set_tags,
    helm_values_commands,
    may_pass_helm_values,
)
from vllm_upgrade_check.sources.scanners.images import image_fact
from vllm_upgrade_check.sources.scanners.makefile import MakefileScanner, make_shell_text, recipe_shells
from vllm_upgrade_check.sources.scanners.shell import ShellScanner, compose_references, shell_facts


def _resolve(written: str, by: str, files: set[str]) -> str | None:
    """The report path of ``written`` (relative to the script's directory or the root)."""
    if written.startswith("/") or "$" in written:
        return None
    for candidate in (posixpath.join(posixpath.dirname(by), written), written):
        path = posixpath.normpath(candidate)
        if path in files:
            return path
    return None


_SCRIPT_DIR = ('$(dirname "$0")/', "$(dirname $0)/", '$(dirname "${BASH_SOURCE[0]}")/', "${BASH_SOURCE%/*}/")
"""How a script names its own directory in front of a path it sources."""


def sourced_reader(by: str, files: Sequence[str], read: Callable[[str], SourceFile | None]) -> Sourced:
    """What a script ``by`` reads for ``source FILE``: the repository file ``FILE`` names,
    relative to the script's directory (written so, or plainly) or else to the root, taken
    literally (a path with other expansions is not looked for)."""
    names = set(files)

    def sourced(written: str) -> tuple[str, str] | None:
        rel = None
        for prefix in _SCRIPT_DIR:
            if written.startswith(prefix):
                rest = written[len(prefix) :]
                rel = None if "$" in rest else _resolve(posixpath.join(posixpath.dirname(by), rest), "", names)
                break
        else:
            rel = _resolve(written, by, names)
        found = read(rel) if rel is not None and rel != by else None
        return (found.text, rel) if found is not None and rel is not None else None

    return sourced


def substituted_reader(by: str, files: Sequence[str], read: Callable[[str], SourceFile | None]) -> Sourced:
    """What a script ``by`` reads for ``$(cat FILE)``: the repository file ``FILE`` names
    (relative to the script's directory, or to the root), or for an absolute path
    (``/etc/vllm/args``, where an image or a host keeps it) the one repository file whose
    path ends with the longest tail of it that any file's does (``deploy/etc/vllm/args``,
    else ``vllm/args``, else ``args``), when exactly one does. ``None`` otherwise."""
    names = set(files)
    by_tail: dict[str, list[str]] = {}

    def tail_match(written: str) -> str | None:
        parts = [p for p in written.split("/") if p not in ("", ".")]
        if not by_tail:
            for name in names:
                by_tail.setdefault(posixpath.basename(name), []).append(name)
        candidates = by_tail.get(parts[-1], []) if parts else []
        for k in range(len(parts), 0, -1):
            tail = "/".join(parts[-k:])
            hits = [c for c in candidates if c == tail or c.endswith("/" + tail)]
            if hits:
                return hits[0] if len(hits) == 1 else None
        return None

    def substituted(written: str) -> tuple[str, str] | None:
        if "$" in written or ".." in written.split("/"):
            return None
        rel = tail_match(written) if written.startswith("/") else _resolve(written, by, names)
        found = read(rel) if rel is not None and rel != by else None
        return (found.text, rel) if found is not None and rel is not None else None

    return substituted


def linked_values_facts(
    releases: Sequence[tuple[str, Sequence[str]]],
    by: str,
    files: Sequence[str],
    read: Callable[[str], SourceFile | None],
) -> list[Fact]:
    """The facts of the values files ``releases`` (``(chart, values files as written)`` of the
    helm commands of a script, or the releases of a helmfile, in file ``by``) pass to a vLLM
    chart, located in those files. A values file the Helm values scanner reads on its
    own (the chart's ``values.yaml``, an override beside the chart, a values file that names
    vLLM) is left to it, so nothing is reported twice."""
    names = set(files)
    out: list[Fact] = []
    seen: set[str] = set()
    for chart, values in releases:
        chart_dir = _resolve(chart, by, {posixpath.dirname(f) for f in names})
        repository = None
        if chart_dir is not None:
            chart_values = read(posixpath.join(chart_dir, "values.yaml"))
            vllm_chart = chart_values is not None and chart_values.mentions_vllm()
            repository = chart_repository(chart_values) if chart_values is not None and vllm_chart else None
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
                    out.extend(override_facts(source.text, doc, rel, repository))
    return out


def set_tag_facts(
    tags: Sequence[tuple[str, Token, int, int]],
    by: str,
    files: Sequence[str],
    read: Callable[[str], SourceFile | None],
) -> list[Fact]:
    """Image facts of the ``--set image.tag=TAG`` words of helm commands in file ``by``
    (:func:`~.helm_cli.helm_set_tags`) that deploy a local vLLM chart: the chart's image at
    that tag, located at the tag in ``by`` (a bump sets it there)."""
    dirs = {posixpath.dirname(f) for f in files}
    out = []
    for chart, token, start, end in tags:
        chart_dir = _resolve(chart, by, dirs)
        values = read(posixpath.join(chart_dir, "values.yaml")) if chart_dir is not None else None
        repository = chart_repository(values) if values is not None else None
        if repository is None:
            continue
        tag = token.text[start:end]
        found = tag_version_span(tag)
        version = sub_span(token, start + found[0], start + found[1]) if found is not None else None
        placed = sub_span(token, start, end)
        at = placed.start if placed is not None else (token.line, token.column)
        reference = Token(f"{repository}:{tag}", at[0], at[1], True, tag)
        note = "" if version is not None else "the tag is not written as one plain word with a version; set it by hand"
        out.append(image_fact(reference, by, "helm", version=version, note=note, syntax="shell"))
    return out


def set_arg_facts(
    sets: Sequence[tuple[str, str, Token, SetItems | None]],
    by: str,
    files: Sequence[str],
    read: Callable[[str], SourceFile | None],
) -> list[Fact]:
    """The flag facts of the container argument lists helm commands in file ``by`` set on a
    vLLM chart (:func:`~.helm_cli.helm_set_args`: ``--set 'vllm.args={--model,m,--swap-space,4}'``,
    ``--set args[2]=--swap-space``, ``--set-json``), each at its place in the ``--set`` word
    (the word's place when the word is not written as its text), no fix placed (the list is
    edited by hand). A list the script does not resolve is one unresolved launch fact, so a
    note names it. A chart is a vLLM chart when its local ``values.yaml`` mentions vLLM or
    its reference names vLLM, as for the values files it is passed."""
    dirs = {posixpath.dirname(f) or "." for f in files}  # "." for the root (`helm upgrade r .`)
    out: list[Fact] = []
    for chart, key, word, listed in sets:
        chart_dir = _resolve(chart, by, dirs)
        values = read(posixpath.normpath(posixpath.join(chart_dir, "values.yaml"))) if chart_dir is not None else None
        if not (values.mentions_vllm() if values is not None else "vllm" in chart.lower()):
            continue
        entry = f"helm --set {key}"
        if listed is None:
            unknown = Token(word.text, word.line, word.column, False, word.written)
            out.extend(
                f
                for f in arg_facts([unknown], by, "helm", positional_model=False, entry=entry, start=word)
                if f.kind == FactKind.LAUNCH
            )
            continue
        tokens = []
        for token, start, text in listed:
            span = sub_span(token, start, start + len(text))
            line, column = span.start if span is not None else (token.line, token.column)
            tokens.append(Token(text, line, column, True, text))
        note = f"the flag is an item of helm's --set {key} list; edit the list by hand"
        out.extend(
            replace(f, spans=Spans(note=note)) if f.kind == FactKind.ARG else f
            for f in arg_facts(tokens, by, "helm", positional_model=False, entry=entry, start=word)
            if f.kind != FactKind.LAUNCH
        )
    return out


class LinkedShellScanner(ShellScanner):
    """The shell scanner, reading a script again with the values files its helm commands pass
    to a vLLM chart (:meth:`with_referenced`)."""

    def with_referenced(
        self, source: SourceFile, files: Sequence[str], read: Callable[[str], SourceFile | None]
    ) -> list[Fact] | None:
        """The script's facts read with the variables the files it sources assign
        (:func:`sourced_reader`) and the words its ``$(cat FILE)`` reads
        (:func:`substituted_reader`), and with those of the values files its helm commands pass to
        a vLLM chart (:func:`linked_values_facts`); ``None`` when it does neither."""
        helm = may_pass_helm_values(source.text)
        compose = may_run_compose(source.text)
        if source.mentions_vllm():
            sourced = sourced_reader(source.relpath, files, read)
            catted = substituted_reader(source.relpath, files, read)
            facts, script = shell_facts(source.text, source.relpath, self.name, sourced=sourced, files=catted)
        elif helm or compose:
            facts, script = [], parse_shell(source.text)
        else:
            return None
        linked = linked_values_facts(helm_values_commands(script), source.relpath, files, read) if helm else []
        if helm:
            linked += set_tag_facts(helm_set_tags(script), source.relpath, files, read)
            linked += set_arg_facts(helm_set_args(script), source.relpath, files, read)
        if compose:
            chains = compose_chains(script)
            linked += linked_chain_facts(chains, source.relpath, files, read, mentions=source.mentions_vllm())
        return [*facts, *linked] if linked or script.sourced or script.substituted else None


HELMFILE_NAMES = frozenset({"helmfile.yaml", "helmfile.yml"})
"""The names helmfile reads its releases from."""


def helmfile_releases(text: str) -> list[tuple[str, list[str]]]:
    """``(chart, values files)`` of each release of a helmfile whose ``values:`` names files
    (inline value mappings and templated entries left out); none when it does not parse."""
    try:
        docs = documents(text)
    except YamlProblem:
        return []
    out = []
    for doc in docs:
        for release in items(get(doc, "releases")):
            chart = scalar(get(release, "chart"))
            values = [v for v in (scalar(item) for item in items(get(release, "values"))) if v and "{{" not in v]
            if chart and values:
                out.append((chart, values))
    return out


class LinkedHelmValuesScanner(HelmValuesScanner):
    """The Helm values scanner, reading a ``helmfile.yaml`` as well: the values files its
    releases pass to a vLLM chart (:func:`linked_values_facts`)."""

    def accepts(self, source: SourceFile) -> bool:
        return source.name in HELMFILE_NAMES or super().accepts(source)

    def scan(self, source: SourceFile) -> Iterator[ScanItem]:
        if source.name not in HELMFILE_NAMES:
            yield from super().scan(source)
            return
        for _chart, values in helmfile_releases(source.text):
            for written in values:
                yield FileReference(written, self.name)

    def with_referenced(
        self, source: SourceFile, files: Sequence[str], read: Callable[[str], SourceFile | None]
    ) -> Sequence[Fact | Conditional] | None:
        """A helmfile read with the values files its releases pass to a vLLM chart; a values
        override beside a chart that sets only the image tag, with the chart's repository
        (:func:`~.helm.override_image_facts`)."""
        if source.name not in HELMFILE_NAMES:
            return override_image_facts(source, read) if is_values_name(source.name) else None
        linked = linked_values_facts(helmfile_releases(source.text), source.relpath, files, read)
        return linked or None


class LinkedMakefileScanner(MakefileScanner):
    """The Makefile scanner, reading a Makefile again with the values files its recipes'
    helm commands pass to a vLLM chart (make variables expanded as the recipes read them)."""

    def scan(self, source: SourceFile) -> Iterator[ScanItem]:
        yield from super().scan(source)
        if may_pass_helm_values(source.text):
            shell, variables = make_shell_text(source.text)
            script = parse_shell(shell, variables=variables)
            for _chart, values in helm_values_commands(script):
                for written in values:
                    yield FileReference(written, self.name)
            for chart, _token, _start, _end in helm_set_tags(script):
                yield FileReference(f"{chart.rstrip('/')}/values.yaml", self.name)
        if may_run_compose(source.text):
            shell, variables = make_shell_text(source.text)
            yield from compose_references(parse_shell(shell, variables=variables), self.name)

    def with_referenced(
        self, source: SourceFile, files: Sequence[str], read: Callable[[str], SourceFile | None]
    ) -> list[Fact] | None:
        """The Makefile's facts with those of the values files its helm commands pass and of
        the compose projects its ``docker compose -f`` commands run."""
        helm, compose = may_pass_helm_values(source.text), may_run_compose(source.text)
        if not helm and not compose:
            return None
        shell, variables = make_shell_text(source.text)
        if source.mentions_vllm():
            facts, script = shell_facts(shell, source.relpath, self.name, variables=dict(variables))
        else:
            facts, script = [], parse_shell(shell, variables=dict(variables))
        linked: list[Fact] = []
        if helm:
            linked += linked_values_facts(helm_values_commands(script), source.relpath, files, read)
            linked += set_tag_facts(helm_set_tags(script), source.relpath, files, read)
        if compose:
            chains = compose_chains(script, shell_of=recipe_shells(source.text))
            linked += linked_chain_facts(chains, source.relpath, files, read, mentions=source.mentions_vllm())
        return [*facts, *linked] if linked else None
