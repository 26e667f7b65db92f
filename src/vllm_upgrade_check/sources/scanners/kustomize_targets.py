"""The base objects a kustomize patch ``target`` selects.

A target's fields are all optional, and an object is patched when it matches every one given
(the kustomize ``patches`` reference, kubectl.docs.kubernetes.io/references/kustomize/
kustomization/patches/): ``kind``, ``name``, and a ``labelSelector`` / ``annotationSelector``
written in the Kubernetes label-selector syntax (``app=vllm,tier!=canary``, ``env in
(prod,staging)``, ``!legacy``, ``gpu``), matched against each base object's
``metadata.labels`` / ``metadata.annotations``. The kind and name are anchored regular
expressions to kustomize (``name: chat-.*`` patches ``chat-a`` and ``chat-b``). A selector that does not read as that syntax
selects nothing the tool can name: :func:`target_problem` says why, for an
``unresolved: ...`` note at the patch's line.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import yaml

from vllm_upgrade_check.parsing.yamlnodes import get, scalar
from vllm_upgrade_check.sources.scanners.base import SourceFile
from vllm_upgrade_check.sources.scanners.kustomize_removal import base_objects

Reader = Callable[[str], "SourceFile | None"]


@dataclass(frozen=True)
class Target:
    """A patch's ``target``: what it names (``""``: not given) and its selectors (``None``:
    not given)."""

    kind: str = ""
    name: str = ""
    labels: str | None = None
    annotations: str | None = None

    @property
    def selects(self) -> bool:
        """Whether it selects by label or annotation (the objects are known once the base is read)."""
        return self.labels is not None or self.annotations is not None

    @property
    def patterned(self) -> bool:
        """Whether its kind or name is a pattern (kustomize reads each as an anchored regular
        expression: ``name: chat-.*``), not one object's."""
        return _patterned(self.kind) or _patterned(self.name)

    @property
    def given(self) -> bool:
        """Whether it says anything at all (a kind or a selector)."""
        return bool(self.kind) or self.selects


_PATTERN_CHARS = re.compile(r"[\\^$.|?*+()\[\]{}]")


def _patterned(text: str) -> bool:
    return bool(_PATTERN_CHARS.search(text))


def _fits(pattern: str, value: str) -> bool:
    """Whether ``value`` is what a target field ``pattern`` names: kustomize anchors it as a
    regular expression; one that does not compile names only itself."""
    if not _patterned(pattern):
        return pattern == value
    try:
        return re.fullmatch(pattern, value) is not None
    except re.error:
        return pattern == value


def target_of(node: yaml.Node | None) -> Target:
    """The :class:`Target` a patch entry's ``target:`` mapping writes."""
    labels, annotations = get(node, "labelSelector"), get(node, "annotationSelector")
    return Target(
        scalar(get(node, "kind")) or "",
        scalar(get(node, "name")) or "",
        None if labels is None else (scalar(labels) or ""),
        None if annotations is None else (scalar(annotations) or ""),
    )


_REQUIREMENT = re.compile(
    r"\s*(?:(?P<not>!)\s*(?P<absent>[\w./-]+)"
    r"|(?P<key>[\w./-]+)\s*(?:(?P<op>==|!=|=)\s*(?P<value>[\w.-]*)"
    r"|\s+(?P<set>in|notin)\s*\((?P<values>[^()]*)\))?)\s*(?:,|$)"
)
"""One requirement of a label selector, with the comma after it."""

Requirement = tuple[str, str, frozenset[str]]
"""``(key, operator, values)``: operator ``exists``, ``!``, ``in`` or ``notin``."""


def parse_selector(text: str) -> list[Requirement] | None:
    """The requirements of label-selector ``text`` (``""``: none, every object matches), or
    ``None`` when it does not read as that syntax."""
    out: list[Requirement] = []
    pos = 0
    text = text.strip()
    while pos < len(text):
        m = _REQUIREMENT.match(text, pos)
        if m is None or m.end() == pos:
            return None
        pos = m.end()
        if m.group("not"):
            out.append((m.group("absent"), "!", frozenset()))
        elif m.group("op"):
            verb = "notin" if m.group("op") == "!=" else "in"
            out.append((m.group("key"), verb, frozenset({m.group("value")})))
        elif m.group("set"):
            values = frozenset(v.strip() for v in m.group("values").split(",") if v.strip())
            out.append((m.group("key"), m.group("set"), values))
        else:
            out.append((m.group("key"), "exists", frozenset()))
        if m.group(0).rstrip().endswith(",") and pos >= len(text):
            return None  # a trailing comma
    return out


def matches(requirements: list[Requirement], values: Mapping[str, str]) -> bool:
    """Whether an object's labels (or annotations) ``values`` meet every requirement."""
    for key, verb, wanted in requirements:
        have = values.get(key)
        if verb == "exists" and have is None:
            return False
        if verb == "!" and have is not None:
            return False
        if verb == "in" and have not in wanted:
            return False
        if verb == "notin" and have in wanted:
            return False
    return True


def _mapping(node: yaml.Node | None) -> dict[str, str]:
    if not isinstance(node, yaml.MappingNode):
        return {}
    return {str(scalar(k)): str(scalar(v) or "") for k, v in node.value if scalar(k) is not None}


def target_problem(target: Target) -> str:
    """Why ``target``'s selectors cannot be evaluated (``""``: they can)."""
    for field, text in (("labelSelector", target.labels), ("annotationSelector", target.annotations)):
        if text is not None and parse_selector(text) is None:
            return f"has a target whose {field} {text!r} does not read as a Kubernetes label selector"
    return ""


def selected(target: Target, doc: yaml.Node) -> bool:
    """Whether base object ``doc`` is one ``target`` patches."""
    meta = get(doc, "metadata")
    if target.kind and not _fits(target.kind, scalar(get(doc, "kind")) or ""):
        return False
    if target.name and not _fits(target.name, scalar(get(meta, "name")) or ""):
        return False
    for text, field in ((target.labels, "labels"), (target.annotations, "annotations")):
        if text is None:
            continue
        requirements = parse_selector(text)
        if requirements is None or not matches(requirements, _mapping(get(meta, field))):
            return False
    return True


def target_objects(read: Reader, relpath: str, doc: yaml.Node, target: Target) -> list[tuple[str, str]]:
    """``(kind, name)`` of each object a patch ``target`` selects among those kustomization
    ``doc`` (file ``relpath``) takes in, in file order, each once: ``[(kind, name)]`` when it
    names both and selects by nothing else; none found (or a selector that cannot be read):
    ``[]``."""
    if target.kind and target.name and not target.selects and not target.patterned:
        return [(target.kind, target.name)]
    if target_problem(target):
        return []
    kind = "" if _patterned(target.kind) else target.kind
    found = base_objects(read, relpath, doc, kind, "", patched=True) or []
    out = (
        (scalar(get(d, "kind")) or "", scalar(get(get(d, "metadata"), "name")) or "")
        for _s, d in found
        if selected(target, d)
    )
    return list(dict.fromkeys(o for o in out if o[0] and o[1]))
