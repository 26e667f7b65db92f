"""Which owner (a compose service, a Kubernetes container) reads which words: a YAML anchor
or merge key may put the same words in several."""

from __future__ import annotations

from collections.abc import Iterator

import yaml

from vllm_upgrade_check.model.facts import Fact, FactKind, Span
from vllm_upgrade_check.parsing.yamlwords import node_span


def launchers_only(facts: list[Fact]) -> list[Fact]:
    """``facts`` (each with its ``owner``, a service or container) without the copies that
    owners which launch no vLLM read of words a vLLM launch reads too (a YAML anchor of
    ``environment`` merged into a redis service and two vLLM services is the vLLM
    services' alone: the finding is shared by those). Words only such owners read stay
    theirs (a ``VLLM_*`` variable of a container whose launch is not seen)."""
    launching = {f.owner for f in facts if f.kind == FactKind.LAUNCH}
    if not launching:
        return facts

    def place(f: Fact) -> tuple[object, ...]:
        return (f.location.path, f.location.line, f.location.column, f.kind, f.name)

    read_by_launch = {place(f) for f in facts if f.owner in launching}
    return [f for f in facts if f.owner in launching or place(f) not in read_by_launch]


def read_by(nodes: list[yaml.Node | None], who: str) -> Iterator[tuple[Span, str]]:
    """Where the command lines of a container that does not run vLLM are written: an anchor
    a vLLM container uses as well (``command: *args``) is the same node, at the same place."""
    for node in nodes:
        if node is not None:
            yield node_span(node), who
