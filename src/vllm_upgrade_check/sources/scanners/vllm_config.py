"""vLLM ``--config`` YAML files: a mapping whose top-level keys are engine args.

vLLM's ``FlexibleArgumentParser`` reads ``vllm serve --config FILE.yaml`` and turns each
top-level key into a flag (``max-num-seqs: 8`` and ``max_num_seqs: 8`` both mean
``--max-num-seqs 8``; ``vllm/utils/argparse_utils.py`` in recent wheels, ``vllm/utils.py``
``_load_config_file`` in older ones). A YAML file is read as such a config when

- a scanned launch names it with ``--config FILE`` (see :func:`referenced_config_paths`), or
- its name looks like one (``*vllm*config*.yaml``) and it has at least one known key, or
- at least :data:`MIN_KEYS` top-level keys, :data:`MIN_KNOWN_SHARE` of them known vLLM args
  (:mod:`vllm_upgrade_check.knowledge.known_args`).

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
from vllm_upgrade_check.sources.scanners.arg_facts import json_subkey_facts
from vllm_upgrade_check.sources.scanners.base import Scanner, SourceFile
from vllm_upgrade_check.sources.scanners.manifests import YAML_SUFFIXES, is_compose, is_kubernetes

MIN_KEYS = 3
"""Fewest top-level keys for the content heuristic alone."""
MIN_KNOWN_SHARE = 0.6
"""Share of top-level keys that must be known vLLM args for the content heuristic."""


def _name_says_config(name: str) -> bool:
    lower = name.lower()
    return "vllm" in lower and "config" in lower


def looks_like_config(doc: yaml.Node, filename: str, referenced: bool = False) -> bool:
    """``True`` when ``doc`` reads as a vLLM ``--config`` file (see the module docstring)."""
    if not isinstance(doc, yaml.MappingNode) or is_compose(doc) or is_kubernetes(doc):
        return False
    keys = [key.replace("-", "_") for key, _k, _v in mapping_items(doc)]
    if not keys:
        return False
    known = known_args()
    hits = sum(1 for key in keys if known.is_known(key))
    if referenced:
        return True
    if _name_says_config(filename):
        return hits >= 1
    return len(keys) >= MIN_KEYS and hits / len(keys) >= MIN_KNOWN_SHARE


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
    for doc in docs:
        if looks_like_config(doc, source.name, referenced):
            yield from config_facts(source.text, doc, source.relpath)


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
