"""Environment variables set in YAML: compose ``environment`` (a map or ``K=V`` items),
Kubernetes ``env`` (``name``/``value`` items) and ConfigMap ``data`` keys, each an
``env_var`` fact whose name span lies inside any quotes."""

from __future__ import annotations

from collections.abc import Iterator

import yaml

from vllm_upgrade_check.model.facts import Fact, Spans
from vllm_upgrade_check.parsing.words import part, sub_span
from vllm_upgrade_check.parsing.yamlnodes import Pos, get, items, mapping_items, pos, scalar
from vllm_upgrade_check.parsing.yamlwords import scalar_word
from vllm_upgrade_check.sources.scanners.arg_facts import env_fact


def key_env_fact(text: str, key: str, key_node: yaml.Node, value: str | None, path: str, scanner: str, origin: str = "env") -> Fact:
    """An ``env_var`` fact for a mapping key, its name span inside any quotes."""
    word = scalar_word(text, key_node) if isinstance(key_node, yaml.ScalarNode) else None
    name = None if word is None else sub_span(word, 0, len(word.text))
    p = pos(key_node) if word is None else Pos(word.line, word.column)
    return env_fact(key, value, path, p.line, p.column, scanner, origin=origin, spans=Spans(name=name, syntax="yaml"))


def env_facts(text: str, node: yaml.Node | None, path: str, scanner: str) -> Iterator[Fact]:
    """compose ``environment`` (map or ``K=V`` list) and Kubernetes ``env`` (name/value list)."""
    if isinstance(node, yaml.MappingNode):
        for key, key_node, value_node in mapping_items(node):
            yield key_env_fact(text, key, key_node, scalar(value_node), path, scanner)
        return
    for child in items(node):
        if isinstance(child, yaml.MappingNode):
            name_node = get(child, "name")
            name = scalar(name_node)
            if name and isinstance(name_node, yaml.ScalarNode):
                yield key_env_fact(text, name, name_node, scalar(get(child, "value")), path, scanner)
        elif isinstance(child, yaml.ScalarNode):
            value = scalar(child)
            if value and "=" in value:
                name, _, val = value.partition("=")
                word = part(scalar_word(text, child), 0, len(name))
                spans = Spans(name=word.span, syntax="yaml")
                yield env_fact(name, val, path, word.line, word.column, scanner, raw=value, spans=spans)
