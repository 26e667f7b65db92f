"""vLLM ``--config`` YAML files: a mapping whose top-level keys are engine args.

vLLM's ``FlexibleArgumentParser`` reads ``vllm serve --config FILE.yaml`` and turns each
top-level key into a flag (``max-num-seqs: 8`` and ``max_num_seqs: 8`` both mean
``--max-num-seqs 8``; ``vllm/utils/argparse_utils.py`` in recent wheels, ``vllm/utils.py``
``_load_config_file`` in older ones). A YAML file is read as such a config only on evidence
that vLLM reads it:

- a scanned launch names it with ``--config FILE`` (see :func:`referenced_config_paths`), or
- its name says so (``vllm*.yaml``, ``*serve*config*.yaml``, see :func:`name_says_config`) and
  it has at least one known key, or
- its text mentions vLLM (a Helm ``values*.yaml`` aside: its mention is the chart's image)
  and at least :data:`MIN_KEYS` top-level keys, :data:`MIN_KNOWN_SHARE` of them, are known
  vLLM args (:mod:`vllm_upgrade_check.knowledge.known_args`).

Keys that merely look like engine args (``model``, ``port``, ``seed`` in an application's own
settings or a Helm values file) are no such evidence: the file yields one
:class:`~vllm_upgrade_check.model.facts.Skipped` note (:data:`LOOKALIKE_NOTE`, not
``configures_vllm``) and no facts, so it never carries a finding; a launch naming it later
makes it read (the note is then dropped, :func:`without_lookalike_notes`).

Compose files and Kubernetes objects are left to the manifest scanner. Keys become ``arg``
facts with origin ``config``; a mapping or JSON-object value of a ``*_config`` key also yields
one fact per sub-key (``compilation_config.level``).
"""

from __future__ import annotations

import json
import posixpath
from collections.abc import Iterable, Iterator

import yaml

from vllm_upgrade_check.knowledge.known_args import known_args
from vllm_upgrade_check.model.facts import Fact, FactKind, Location, Skipped, Span, Spans
from vllm_upgrade_check.parsing.words import Token
from vllm_upgrade_check.parsing.yamlnodes import YamlProblem, documents, mapping_items, pos, scalar, to_python
from vllm_upgrade_check.parsing.yamlwords import EntryCuts, entry_cuts, scalar_text_span
from vllm_upgrade_check.sources.scanners.arg_facts import json_subkey_facts, missing_config_reason
from vllm_upgrade_check.sources.scanners.base import Scanner, SourceFile
from vllm_upgrade_check.sources.scanners.manifests import YAML_SUFFIXES, is_compose, is_kubernetes

MIN_KEYS = 3
"""Fewest top-level keys for the content heuristic alone."""
MIN_KNOWN_SHARE = 0.6
"""Share of top-level keys that must be known vLLM args for the content heuristic."""


LOOKALIKE_NOTE = "its keys look like vLLM engine args"
"""Start of the :class:`~vllm_upgrade_check.model.facts.Skipped` reason of a YAML file read as
no vLLM config although its keys look like engine args (see the module docstring)."""


def name_says_config(name: str) -> bool:
    """Whether a YAML file's base name says it is a vLLM config: it names vLLM
    (``vllm.yaml``, ``vllm-prod.yml``) or both serving and config (``serve-config.yaml``,
    ``serving_config.yml``). Helm's ``values*.yaml`` never does."""
    lower = name.lower()
    if _helm_values_name(lower):
        return False
    return "vllm" in lower or (("serve" in lower or "serving" in lower) and "config" in lower)


def _helm_values_name(lower: str) -> bool:
    """``values*.yaml`` and ``*-values.yaml`` (lower-cased): Helm's values files, which the
    Helm scanner reads; vLLM reads one as a config only when a launch passes it."""
    return lower.startswith("values") or lower.rsplit(".", 1)[0].endswith(("-values", ".values", "_values"))


def config_verdict(doc: yaml.Node, source: SourceFile, referenced: bool = False) -> tuple[bool, list[str]]:
    """Whether ``doc`` (a document of ``source``) reads as a vLLM ``--config`` file, by the
    evidence of the module docstring.

    Returns:
        ``(is a config, known keys)``: the known top-level keys as written, so that a caller
        can say which keys looked like engine args when the answer is ``False``.
    """
    if not isinstance(doc, yaml.MappingNode) or is_compose(doc) or is_kubernetes(doc):
        return False, []
    keys = [key for key, _k, _v in mapping_items(doc)]
    if not keys:
        return False, []
    known = known_args()
    hits = [key for key in keys if known.is_known(key.replace("-", "_"))]
    if referenced:
        return True, hits
    if name_says_config(source.name):
        return bool(hits), hits
    looks = len(keys) >= MIN_KEYS and len(hits) / len(keys) >= MIN_KNOWN_SHARE
    mention = source.mentions_vllm() and not _helm_values_name(source.name.lower())
    return looks and mention, hits if looks else []


def config_arg_fact(
    key: str,
    value: str | None,
    path: str,
    line: int,
    column: int,
    scanner: str,
    entry_aliases: tuple[str, ...] = (),
    name: str | None = None,
    hint: tuple[str, str] | None = None,
    spans: Spans | None = None,
    raw: str | None = None,
) -> Fact:
    """An ``arg`` fact (origin ``config``) for an engine-arg key of a config file.

    Args:
        key: the key as written (``max-model-len`` or ``max_model_len``); also ``raw``.
        value: its value as text, if any.
        path, line, column: where the key is written (1-based).
        scanner: the calling scanner's name.
        entry_aliases: other names the fact answers to.
        name: the engine arg, when it is not the key itself (a Helm chart key mapped to a flag).
        hint: ``(version, source)`` of the vLLM version the file runs, if known.
        spans: where a fix edits the key (:func:`entry_spans`).
        raw: the fact's ``raw`` when it is not ``key`` (``compilation-config.level`` for the
            sub-key ``level``).
    """
    return Fact(
        FactKind.ARG,
        name or key.replace("-", "_"),
        Location(path, line, column, line, column + len(key)),
        raw=key if raw is None else raw,
        value=value,
        origin="config",
        aliases=entry_aliases,
        scanner=scanner,
        version_hint=hint[0] if hint else None,
        hint_source=hint[1] if hint else None,
        spans=spans,
    )


def entry_spans(
    text: str, key_node: yaml.Node, value_node: yaml.Node, cuts: dict[int, Span | None], syntax: str = "yaml"
) -> Spans:
    """Where a fix edits the mapping entry ``key: value``: the key, a scalar value (inside
    its quotes), and the entry's cut from :func:`~vllm_upgrade_check.parsing.yamlwords.entry_cuts`,
    with what replaces the mapping when the cuts take every entry (``{}``, see
    :class:`~vllm_upgrade_check.parsing.yamlwords.EntryCuts`)."""
    taken = cuts.get(id(key_node))
    extent = cuts.extent if isinstance(cuts, EntryCuts) and taken is not None else None
    return Spans(
        name=scalar_text_span(text, key_node) if isinstance(key_node, yaml.ScalarNode) else None,
        value=scalar_text_span(text, value_node) if isinstance(value_node, yaml.ScalarNode) else None,
        cut=taken,
        syntax=syntax,
        listed=extent[0] if extent else None,
        left=extent[1] if extent else "",
        emptied=extent[2] if extent else "",
    )


def config_facts(text: str, doc: yaml.Node, path: str, scanner: str = "vllm-config") -> Iterator[Fact]:
    """``arg`` facts (origin ``config``) for every top-level key of a config document."""
    cuts = entry_cuts(text, doc)
    for key, key_node, value_node in mapping_items(doc):
        name = key.replace("-", "_")
        p = pos(key_node)
        value = scalar(value_node)
        if value is None and not isinstance(value_node, yaml.ScalarNode):
            try:
                value = json.dumps(to_python(value_node), default=str)
            except (YamlProblem, TypeError, ValueError):
                value = None
        spans = entry_spans(text, key_node, value_node, cuts)
        yield config_arg_fact(key, value, path, p.line, p.column, scanner, spans=spans)
        if not name.endswith("_config"):
            continue
        if isinstance(value_node, yaml.MappingNode):
            sub_cuts = entry_cuts(text, value_node)
            for sub, sub_key, sub_value in mapping_items(value_node):
                sp = pos(sub_key)
                sub_text = scalar(sub_value)
                if sub_text is None:
                    try:
                        sub_text = json.dumps(to_python(sub_value), default=str)
                    except (YamlProblem, TypeError, ValueError):
                        sub_text = None
                yield config_arg_fact(
                    sub,
                    sub_text,
                    path,
                    sp.line,
                    sp.column,
                    scanner,
                    name=f"{name}.{sub}",
                    spans=entry_spans(text, sub_key, sub_value, sub_cuts),
                    raw=f"{key}.{sub}",
                )
        elif value is not None:
            vp = pos(value_node)
            start, end = value_node.start_mark.index, value_node.end_mark.index
            token = Token(value, vp.line, vp.column, True, text[start:end])
            yield from json_subkey_facts(name, key, value, token, path, scanner, "config")


def scan_config(source: SourceFile, referenced: bool = False) -> Iterator[Fact | Skipped]:
    """Facts of ``source`` if it reads as a vLLM config file; nothing otherwise.

    A file named by ``--config`` that cannot be parsed yields :class:`Skipped`; other YAML
    errors are left to the manifest scanner (which reports them once).
    """
    try:
        docs = documents(source.text)
    except YamlProblem as exc:
        if referenced:
            yield Skipped(source.relpath, str(exc), configures_vllm=True, line=exc.line, column=exc.column)
        return
    lookalike: list[str] = []
    line = 1
    for doc in docs:
        verdict, hits = config_verdict(doc, source, referenced)
        if verdict:
            yield from config_facts(source.text, doc, source.relpath)
        elif hits and not lookalike:
            lookalike, line = hits, pos(doc).line
    if lookalike:
        shown = ", ".join(lookalike[:4]) + (", ..." if len(lookalike) > 4 else "")
        why = (
            "it is a Helm values file (read as such)"
            if source.mentions_vllm()
            else "neither its name nor its text names vLLM"
        )
        yield Skipped(
            source.relpath,
            f"{LOOKALIKE_NOTE} ({shown}), but no scanned launch passes it with --config and {why}:"
            " not checked as a vLLM config",
            line=line,
        )


def without_lookalike_notes(skipped: list[Skipped], paths: Iterable[str]) -> None:
    """Drop, in place, the :data:`LOOKALIKE_NOTE` of each of ``paths``: files a launch names
    with ``--config`` after all, which are then read as vLLM configs."""
    named = set(paths)
    if named:
        skipped[:] = [s for s in skipped if s.path not in named or not s.reason.startswith(LOOKALIKE_NOTE)]


def referenced_config_paths(facts: Iterable[Fact]) -> list[tuple[str, Fact]]:
    """``(relative path, fact)`` for each ``--config FILE`` given to a scanned vLLM launch.

    The path is tried relative to the scanned root and to the launching file's directory;
    both candidates are returned (the engine keeps those that exist).
    """
    out = []
    for fact in facts:
        if fact.kind != FactKind.ARG or fact.name != "config" or not fact.value or not fact.resolved:
            continue
        if fact.origin not in ("cli", "python"):
            continue
        value = fact.value.strip()
        if not value.endswith(YAML_SUFFIXES):
            continue
        base = posixpath.dirname(fact.location.path or "")
        for candidate in (value.lstrip("./"), posixpath.normpath(posixpath.join(base, value))):
            out.append((candidate.lstrip("/"), fact))
    return out


def missing_config_notes(facts: Iterable[Fact], found: set[int]) -> Iterator[Skipped]:
    """An unresolved note for each ``--config FILE`` of a launch (see
    :func:`referenced_config_paths`) whose fact's id is not in ``found`` (no candidate path
    is a file of the scanned tree), placed at the launch's file and line. A Dockerfile's
    launches are left to the Dockerfile scanner, which knows what its ``COPY`` lines put
    where (:func:`~.dockerfile_copies.config_copies`)."""
    seen: set[int] = set()
    for _rel, fact in referenced_config_paths(facts):
        if (
            id(fact) in found
            or id(fact) in seen
            or fact.scanner == "dockerfile"
            or fact.location.path is None
        ):
            continue
        seen.add(id(fact))
        yield Skipped(fact.location.path, missing_config_reason(fact.value or ""), line=fact.location.line)


class VllmConfigScanner(Scanner):
    """vLLM ``--config`` YAML files recognised by name or content (see the module docstring)."""

    name = "vllm-config"
    reads_yaml = True

    def accepts_name(self, name: str) -> bool | None:
        return name.endswith(YAML_SUFFIXES)

    def accepts(self, source: SourceFile) -> bool:
        return source.name.endswith(YAML_SUFFIXES)

    def scan(self, source: SourceFile) -> Iterator[Fact | Skipped]:
        yield from scan_config(source)

    def referenced_file_matches(self, relpath: str, wanted: str) -> bool:
        """A Dockerfile's ``--config`` file is named by its report path (``wanted``)."""
        return relpath == wanted

    def read_referenced(self, source: SourceFile) -> Iterator[Fact | Skipped]:
        """A file a launch passes with ``--config``: read as a config whatever its keys."""
        yield from scan_config(source, referenced=True)
