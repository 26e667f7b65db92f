"""Image references written as a repository and a tag apart: a Helm values ``image:`` mapping
(``repository`` + ``tag``) and a kustomization's ``images:`` entries (``name``/``newName`` +
``newTag``), each an ``image`` fact whose version a bump sets in the tag's value."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

import yaml

from vllm_upgrade_check.knowledge.versions import tag_version_span
from vllm_upgrade_check.model.facts import Fact, Span, Spans
from vllm_upgrade_check.parsing.words import Token, sub_span
from vllm_upgrade_check.parsing.yamlnodes import get, items, pos, scalar
from vllm_upgrade_check.parsing.yamlwords import alias_used, anchor_of, scalar_word, value_word
from vllm_upgrade_check.sources.scanners.images import image_fact, image_hint, is_vllm_image, split_image

MAPPED_IMAGE_KEY = "kustomize-vllm-image:"
"""Prefix of the :class:`~.base.Conditional` key (``kustomize-vllm-image:REPOSITORY``) of the
containers whose image is no vLLM image: they launch vLLM where a kustomization's ``images:``
maps that repository to vLLM's (``{name: REPOSITORY, newName: vllm/vllm-openai}``)."""


def image_pair(
    text: str, mapping: yaml.Node, path: str, repo_key: str = "repository", tag_key: str = "tag"
) -> tuple[list[Fact], tuple[str, str] | None, bool]:
    """Image facts of ``repository`` + ``tag`` in ``mapping`` (or its ``image`` mapping); the
    version is bumped in the ``tag:`` beside the repository (an anchor other values share is
    named and left alone). ``repo_key``/``tag_key``: other spellings of the pair (a Kustomize
    ``images:`` entry's ``name``/``newTag``)."""
    holder = get(mapping, "image") if repo_key == "repository" else mapping
    if isinstance(holder, yaml.ScalarNode):
        reference = scalar(holder) or ""
        if not is_vllm_image(reference):
            return [], None, False
        token = scalar_word(text, holder)
        return [image_fact(token, path, "helm", syntax="yaml")], image_hint(reference, path, pos(holder).line), True
    if not isinstance(holder, yaml.MappingNode):
        holder = mapping
    repo_node = get(holder, repo_key)
    repo = scalar(repo_node)
    if not isinstance(repo_node, yaml.ScalarNode) or not repo:
        return [], None, False
    tag_node = get(holder, tag_key)
    tag = (scalar(tag_node) or "").strip()  # a `tag: |` block scalar ends in a newline
    reference = f"{repo}:{tag}" if tag else repo
    if not is_vllm_image(reference):
        return [], None, False
    repo_word = scalar_word(text, repo_node)
    token = Token(reference, repo_word.line, repo_word.column, True, repo)
    version, note = tag_version_at(text, tag_node) if isinstance(tag_node, yaml.ScalarNode) and tag else (None, "")
    fact = image_fact(token, path, "helm", version=version, note=note, syntax="yaml")
    return [fact], image_hint(reference, path, repo_word.line), True


def tag_version_at(text: str, tag_node: yaml.ScalarNode) -> tuple[Span | None, str]:
    """Where the version of a ``tag:`` value is written (a bump sets it there), or why it
    cannot be set: an anchor other values share, a value not written as one word."""
    anchor = anchor_of(text, tag_node)
    found = tag_version_span((scalar(tag_node) or "").strip())
    word = value_word(text, tag_node)
    if anchor is not None and alias_used(text, anchor):
        return None, f"the tag is anchor &{anchor}, which other values use; set it by hand"
    if found is None or word.span is None:
        return None, "the tag beside the repository is not written as one value; set it by hand"
    return sub_span(word, *found), ""


def kustomize_image_facts(text: str, doc: yaml.Node, path: str) -> Iterator[Fact]:
    """Image facts of a kustomization's ``images:`` overrides whose image (``newName``, else
    ``name``) is vLLM's: ``{name: vllm/vllm-openai, newTag: v0.16.0}`` is the version every
    manifest of that image runs, bumped in ``newTag``; a ``digest:`` pin cannot be bumped.

    A mirror is vLLM's image under another name: ``{name: vllm/vllm-openai, newName:
    registry.corp/mirror/vllm-openai, newTag: v0.16.0}`` deploys vLLM 0.16.0 from the mirror,
    so its fact is named for the vLLM image ``name`` says (its ``raw`` is the mirror's
    reference as deployed), and so is the reverse, a mirror name that ``newName`` maps to
    vLLM's image (the mirror's repository is then an alias of the fact)."""
    for entry in items(get(doc, "images")):
        if not isinstance(entry, yaml.MappingNode) or (get(entry, "newTag") is None and get(entry, "digest") is None):
            continue  # a newName alone keeps each resource's tag: the version is the resource's
        repo_key = "newName" if get(entry, "newName") is not None else "name"
        facts, _hint, vllm = image_pair(text, entry, path, repo_key=repo_key, tag_key="newTag")
        if not vllm and repo_key == "newName":
            # a mirror of vLLM's image: named for the vLLM image ``name`` says, deployed as the mirror
            facts, _hint, vllm = image_pair(text, entry, path, repo_key="name", tag_key="newTag")
            mirror = (scalar(get(entry, "newName")) or "").strip()
            facts = [replace(f, raw=f"{mirror}:{f.value}" if f.value else mirror) if mirror else f for f in facts]
        elif vllm and repo_key == "newName" and (name := (scalar(get(entry, "name")) or "").strip()):
            # the name the manifests use runs vLLM's image: a vendor-looking mirror is vLLM here
            facts = [replace(f, aliases=(*f.aliases, split_image(name)[0])) for f in facts]
        if not vllm:
            continue
        if get(entry, "digest") is not None:
            facts = [replace(f, spans=Spans(syntax="yaml", note="pinned by digest; set it by hand")) for f in facts]
        yield from facts


def mapped_to_vllm(doc: yaml.Node) -> Iterator[str]:
    """The image names a kustomization's ``images:`` maps to a vLLM image that are none
    themselves (``{name: registry.corp/ml/engine, newName: vllm/vllm-openai}``): a container of
    such an image runs vLLM once kustomize builds the overlay."""
    for entry in items(get(doc, "images")):
        name, new_name = (scalar(get(entry, "name")) or "").strip(), (scalar(get(entry, "newName")) or "").strip()
        if name and new_name and is_vllm_image(new_name) and not is_vllm_image(name):
            yield split_image(name)[0]  # as the container's repository is keyed
