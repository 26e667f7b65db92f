"""GitLab CI jobs as the runner runs them: ``extends:`` and ``!reference`` resolved within one
file (``include:`` of other files is not followed).

- ``extends: .serve-base`` (or a list, each possibly extending others): the job is the
  templates merged in order, then its own keys over them. Mappings (``variables``) merge key
  by key, any other value (``script``, ``before_script``, ``image``) is replaced whole, as
  GitLab's ``extends`` merges (docs.gitlab.com/ci/yaml/#extends, "merge details"); at most
  11 levels, as GitLab allows; a cycle or a template the file does not hold stops there.
- ``!reference [.setup, script]`` in a script list: the lines of that key of that job (its
  ``extends`` resolved), nested references followed up to 10 levels
  (docs.gitlab.com/ci/yaml/yaml_optimization/#reference-tags).

The YAML nodes are the file's own, so every script line read keeps its place in the file.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

import yaml

from vllm_upgrade_check.parsing.yamlnodes import get, items, mapping_items, scalar

MAX_EXTENDS = 11
"""How many levels of ``extends`` GitLab follows."""

MAX_REFERENCES = 10
"""How deep ``!reference`` tags nest in GitLab."""

SCRIPT_KEYS = ("before_script", "script", "after_script")
"""The keys whose lines a job's shell runs, in the order it runs them."""


@dataclass
class GitlabJob:
    """One job with its ``extends`` resolved: ``keys`` maps each top-level key to the node
    that sets it (the job's own, else the nearest template's); ``variables``: every
    ``variables`` mapping of the chain, base template first, the job's own last (a later
    one wins, key by key)."""

    name: str
    node: yaml.Node
    keys: dict[str, yaml.Node] = field(default_factory=dict)
    variables: list[yaml.Node] = field(default_factory=list)


def _extends(job: yaml.Node) -> list[str]:
    """The templates a job's ``extends`` names, in the order written."""
    node = get(job, "extends")
    if isinstance(node, yaml.ScalarNode):
        return [str(node.value)] if scalar(node) else []
    return [str(n.value) for n in items(node) if isinstance(n, yaml.ScalarNode) and scalar(n)]


def resolve_job(name: str, jobs: Mapping[str, yaml.Node], depth: int = 0, seen: frozenset[str] = frozenset()) -> GitlabJob:
    """Job ``name`` of ``jobs`` (every top-level job mapping of the file, hidden ones
    included) with its ``extends`` merged in (see the module docstring); a template that is
    missing, a cycle or a chain deeper than :data:`MAX_EXTENDS` contributes nothing more."""
    node = jobs[name]
    out = GitlabJob(name, node)
    if depth < MAX_EXTENDS:
        for parent in _extends(node):
            if parent in jobs and parent not in seen and parent != name:
                base = resolve_job(parent, jobs, depth + 1, seen | {name})
                out.keys.update(base.keys)
                out.variables.extend(base.variables)
    for key, _key_node, value in mapping_items(node):
        if key != "extends":
            out.keys[str(key)] = value
    own = get(node, "variables")
    if own is not None:
        out.variables.append(own)
    return out


def script_lines(job: GitlabJob, jobs: Mapping[str, yaml.Node], default: yaml.Node | None = None) -> Iterator[yaml.ScalarNode]:
    """The script lines ``job`` runs (``before_script``, ``script``, ``after_script``, each
    as its ``extends`` chain sets it, else as the file's ``default:`` sets the first and
    the last, unless the job says ``inherit: {default: false}``), nested lists flattened
    and ``!reference [JOB, KEY]`` tags replaced by the lines they name."""
    inherit = get(job.keys.get("inherit"), "default")
    if isinstance(inherit, yaml.ScalarNode) and str(inherit.value).lower() == "false":
        default = None
    for key in SCRIPT_KEYS:
        node = job.keys.get(key)
        if node is None and key != "script" and default is not None:
            allowed = [scalar(n) for n in items(inherit)] if isinstance(inherit, yaml.SequenceNode) else None
            node = get(default, key) if allowed is None or key in allowed else None
        yield from _lines(node, jobs, 0)


def _lines(node: yaml.Node | None, jobs: Mapping[str, yaml.Node], depth: int) -> Iterator[yaml.ScalarNode]:
    if isinstance(node, yaml.ScalarNode):
        if scalar(node):
            yield node
        return
    if not isinstance(node, yaml.SequenceNode):
        return
    if node.tag == "!reference":
        if depth < MAX_REFERENCES:
            yield from _lines(referenced(node, jobs), jobs, depth + 1)
        return
    for child in node.value:
        yield from _lines(child, jobs, depth)


def referenced(node: yaml.SequenceNode, jobs: Mapping[str, yaml.Node]) -> yaml.Node | None:
    """The node a ``!reference [JOB, KEY, ...]`` names: KEY of JOB (its ``extends``
    resolved), then each further key inside it; ``None`` when the file does not hold it."""
    path = [scalar(n) for n in node.value]
    if len(path) < 2 or any(p is None for p in path) or path[0] not in jobs:
        return None
    found: yaml.Node | None = resolve_job(str(path[0]), jobs).keys.get(str(path[1]))
    for key in path[2:]:
        found = get(found, str(key))
    return found


def used_templates(jobs: Mapping[str, yaml.Node]) -> frozenset[str]:
    """The hidden jobs (``.name``) another job of the file ``extends`` or takes lines from
    with ``!reference``: GitLab never runs a hidden job itself, so their lines are read
    through the jobs that use them (a hidden job no job of the file uses is read alone: a
    file that ``include``s this one may use it)."""
    used: set[str] = set()
    for name, job in jobs.items():
        used.update(p for p in _extends(job) if p != name)
        stack: list[yaml.Node] = [job]
        while stack:
            node = stack.pop()
            if isinstance(node, yaml.SequenceNode):
                if node.tag == "!reference" and node.value and scalar(node.value[0]) not in (None, name):
                    used.add(str(scalar(node.value[0])))
                stack.extend(node.value)
            elif isinstance(node, yaml.MappingNode):
                stack.extend(value for _key, value in node.value)
    return frozenset(n for n in used if n.startswith(".") and n in jobs)
