"""The base's words an overlay deploys with the vLLM image it sets.

An overlay that changes a container's vLLM image (a JSON 6902 ``add``/``replace`` of
``.../containers/N/image``, an inline strategic-merge patch's ``image:`` for the container of
that name, :mod:`.kustomize_images`; an ``images:`` entry's ``newTag`` for the containers
whose image is the entry's ``name``) and leaves its args as the base writes them deploys the
base's args and env with its own release. Those words are checked from the base's image's
release where the base is scanned, and here from the overlay's too: each is given again at
the base's line and column, with the version hint of the overlay's image (whose place names
the overlay), in a :class:`~.base.Conditional` keyed as the overlay's image is, so it counts
when the container launches vLLM in the base. A finding of one rule at one place is reported
once (:func:`~vllm_upgrade_check.matching.repeats.distinct`: the one checked from the older
release stands), and its fix edits the base, as the base's own would.

The base is the one object of the target's kind and name the kustomization takes in
(:func:`~.kustomize_removal.base_objects`); none, several, or a chain that patches objects on
the way: nothing is given (what the overlay deploys is not known exactly).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import replace

import yaml

from vllm_upgrade_check.model.facts import Fact, FactKind
from vllm_upgrade_check.parsing.yamlnodes import get, items, scalar
from vllm_upgrade_check.sources.scanners.base import Conditional, SourceFile
from vllm_upgrade_check.sources.scanners.containers import container_env, container_facts
from vllm_upgrade_check.sources.scanners.images import image_hint, split_image
from vllm_upgrade_check.sources.scanners.kustomize_images import CONTAINER_KEY, CONTAINER_NAME_KEY
from vllm_upgrade_check.sources.scanners.kustomize_removal import Reader, base_objects
from vllm_upgrade_check.sources.scanners.yamlenv import env_facts

_COPIED = frozenset({FactKind.ARG, FactKind.ENV_VAR})
"""The kinds of the base's facts the overlay deploys as they are written."""


def _container(doc: yaml.Node, kind: str, which: str, by_name: bool) -> yaml.Node | None:
    """The container of base object ``doc`` at index ``which`` (or named ``which``)."""
    spec = get(doc, "spec")
    pod = spec if kind == "Pod" else get(get(spec, "template"), "spec")
    containers = items(get(pod, "containers"))
    if by_name:
        return next((c for c in containers if scalar(get(c, "name")) == which), None)
    index = int(which) if which.isdigit() else len(containers)
    return containers[index] if index < len(containers) else None


def _base_words(source: SourceFile, container: yaml.Node) -> list[Fact]:
    """The arg and env facts of a base container that launches vLLM, as the manifest reading
    gives them (none when it launches none)."""
    env = container_env(get(container, "env"))
    command, args = get(container, "command"), get(container, "args")
    found = list(container_facts(source.text, source.relpath, "kubernetes", get(container, "image"), command, args, env))
    if not any(f.kind == FactKind.LAUNCH for f in found):
        return []
    found.extend(env_facts(source.text, get(container, "env"), source.relpath, "kubernetes"))
    who = f"container {scalar(get(container, 'name')) or '?'}"
    return [replace(f, owner=who) for f in found if f.kind in _COPIED]


def overlay_base_words(
    read: Reader, relpath: str, doc: yaml.Node, found: Iterable[object], keep: frozenset[str] = frozenset()
) -> Iterator[Conditional]:
    """For each vLLM image an overlay's patch sets (``found``: what the patch gives, its
    image facts in :class:`~.base.Conditional` items keyed :data:`~.kustomize_images.CONTAINER_KEY`
    or :data:`~.kustomize_images.CONTAINER_NAME_KEY`), the base container's arg and env facts
    with the version hint of that image, keyed the same (kustomization ``doc``, file
    ``relpath``). ``keep``: keys whose args the patch also removes or replaces (their words
    are the removal's to tell: none given)."""
    for c in found:
        if not isinstance(c, Conditional) or c.key in keep:
            continue
        image = next((f for f in c.facts if f.kind == FactKind.IMAGE and f.version_hint), None)
        if image is None:
            continue
        by_name = c.key.startswith(CONTAINER_NAME_KEY)
        if not by_name and not c.key.startswith(CONTAINER_KEY):
            continue
        kind, _, rest = c.key.partition(":")[2].partition("/")
        name, _, which = rest.rpartition("/")
        objects = base_objects(read, relpath, doc, kind, name)
        if not objects or len(objects) != 1:
            continue
        source, obj = objects[0]
        container = _container(obj, kind, which, by_name)
        if container is None:
            continue
        words = [replace(f, version_hint=image.version_hint, hint_source=image.hint_source) for f in _base_words(source, container)]
        if words:
            yield Conditional(c.key, tuple(words))


def images_base_words(read: Reader, relpath: str, doc: yaml.Node) -> Iterator[Conditional]:
    """For each ``images:`` entry of kustomization ``doc`` (file ``relpath``) that gives the
    vLLM image a tag (``{name: vllm/vllm-openai, newTag: v0.10.0}``, ``newName`` naming a
    vLLM image or absent), the arg and env facts of each base container whose image is the
    entry's ``name`` (whatever its registry or tag), with the version hint of the tag the
    entry sets, keyed ``CONTAINER_KEY kind/name/index``. The facts of the entry itself (the
    image to move, its bump) are read with the kustomization (:func:`~.helm_images.kustomize_image_facts`)."""
    entries = [e for e in items(get(doc, "images")) if isinstance(e, yaml.MappingNode)]
    wanted: list[tuple[str, tuple[str, str]]] = []
    for entry in entries:
        tag_node = get(entry, "newTag")
        name, tag = scalar(get(entry, "name")) or "", (scalar(tag_node) or "").strip()
        new = scalar(get(entry, "newName")) or name
        hint = image_hint(f"{new}:{tag}", relpath, tag_node.start_mark.line + 1) if tag and tag_node is not None else None
        if name and hint is not None and get(entry, "digest") is None:
            wanted.append((split_image(name)[0], hint))
    if not wanted:
        return
    for source, obj in base_objects(read, relpath, doc, "", "") or []:
        kind, name = scalar(get(obj, "kind")) or "", scalar(get(get(obj, "metadata"), "name")) or ""
        spec = get(obj, "spec")
        pod = spec if kind == "Pod" else get(get(spec, "template"), "spec")
        for index, container in enumerate(items(get(pod, "containers"))):
            repo = split_image(scalar(get(container, "image")) or "")[0]
            hint = next((h for r, h in wanted if r == repo), None)
            if hint is None or not name:
                continue
            words = [replace(f, version_hint=hint[0], hint_source=hint[1]) for f in _base_words(source, container)]
            if words:
                yield Conditional(f"{CONTAINER_KEY}{kind}/{name}/{index}", tuple(words))
