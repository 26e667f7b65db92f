"""Compose services built from a Dockerfile of the repository (``build: {context, dockerfile,
target}``): the image the build starts from says whether the service runs vLLM's server.

The compose file names the Dockerfile as a :class:`~.base.FileReference`; once the engine
has the repository's files, the file is read again with each built service's base image
(:func:`built_bases`), so that ``image: summarizer-engine:dev`` with ``build:
{dockerfile: Containerfile.rocm}`` whose ``FROM`` is ``vllm/vllm-openai-rocm:v0.26.0`` has
its ``command`` read as vLLM's flags, checked from that image's release.
"""

from __future__ import annotations

import io
import posixpath
from collections.abc import Callable, Iterator, Sequence

import yaml
from dockerfile_parse import DockerfileParser

from vllm_upgrade_check.parsing.yamlnodes import get, mapping_items, scalar
from vllm_upgrade_check.sources.scanners.base import SourceFile
from vllm_upgrade_check.sources.scanners.dockerfile_versions import expand_from


def build_files(doc: yaml.Node, compose_rel: str) -> Iterator[tuple[str, str, str | None]]:
    """``(service, Dockerfile report path, target stage)`` of each service of a compose
    document built from a Dockerfile (``build: DIR`` or ``build: {context, dockerfile,
    target}``; the Dockerfile defaults to ``Dockerfile`` in the context, paths relative to the
    compose file). A build from a URL or outside the repository is left out."""
    for name, rel, target, _context in builds(doc, compose_rel):
        yield name, rel, target


def builds(doc: yaml.Node, compose_rel: str) -> Iterator[tuple[str, str, str | None, str]]:
    """:func:`build_files` with the build context's report path (``""``: the repository
    root) last: what a ``COPY`` of the Dockerfile copies is relative to it."""
    for name, _key, service in mapping_items(get(doc, "services")):
        found = service_build(get(service, "build"), compose_rel)
        if found is not None:
            yield (str(name), *found)


def service_build(build: yaml.Node | None, compose_rel: str) -> tuple[str, str | None, str] | None:
    """``(Dockerfile report path, target stage, context report path)`` of one service's
    ``build`` (written in compose file ``compose_rel``), or ``None`` (no build, a build from a
    URL, outside the repository or from an interpolated path)."""
    return merged_build([(build, compose_rel)]) if build is not None else None


def merged_build(parts: Sequence[tuple[yaml.Node, str]]) -> tuple[str, str | None, str] | None:
    """:func:`service_build` of a ``build`` merged from several compose files (``(node,
    compose file)``, base first): compose merges the mapping key by key (``context``,
    ``dockerfile``, ``target``: the last file's that sets each), ``!reset`` drops what came
    before, ``!override`` replaces it whole; the context is relative to the file that sets it."""
    values: dict[str, tuple[str, str]] = {}
    for node, rel in parts:
        if node.tag in ("!reset", "!override"):
            values = {}
            if node.tag == "!reset":
                continue
        if isinstance(node, yaml.ScalarNode):
            if scalar(node):
                values["context"] = (str(scalar(node)), rel)
            continue
        for key in ("context", "dockerfile", "target"):
            value = scalar(get(node, key))
            if value is not None:
                values[key] = (value, rel)
    if not parts or not values and parts[-1][0].tag == "!reset":
        return None
    context, context_rel = values.get("context", (".", parts[-1][1]))
    dockerfile = values["dockerfile"][0] if "dockerfile" in values else None
    target = values["target"][0] if "target" in values else None
    if "://" in context or context.startswith(("git@", "/")) or "$" in context + (dockerfile or ""):
        return None
    here = posixpath.dirname(context_rel)
    rel = posixpath.normpath(posixpath.join(here, context, dockerfile or "Dockerfile"))
    root = posixpath.normpath(posixpath.join(here, context))
    if rel.startswith("../") or root.startswith("../"):
        return None
    return rel, target, "" if root == "." else root


def dockerfile_base(text: str, target: str | None) -> tuple[str, int, bool] | None:
    """``(image reference, FROM line, sets its own ENTRYPOINT)`` of the stage a build of
    Dockerfile ``text`` ends in (``target``, else the last), following ``FROM <stage>``; the
    reference with the global ``ARG`` defaults applied. ``None`` when it cannot be told."""
    try:
        parser = DockerfileParser(fileobj=io.BytesIO(text.encode("utf-8")))
        structure = parser.structure
    except Exception:  # dockerfile-parse raises plain exceptions on bad input
        return None
    defaults: dict[str, str | None] = {}
    stages: list[tuple[str | None, str, int, bool]] = []  # (name, from, line, entrypoint)
    for item in structure:
        instruction = str(item["instruction"]).upper()
        if instruction == "ARG" and not stages:
            for word in str(item["value"]).split():
                key, eq, value = word.partition("=")
                defaults[key] = value.strip("\"'") if eq else None
        elif instruction == "FROM":
            words = [w for w in str(item["value"]).split() if not w.startswith("--")]
            if words:
                named = words[2].lower() if len(words) >= 3 and words[1].lower() == "as" else None
                stages.append((named, words[0], int(item["startline"]) + 1, False))
        elif instruction == "ENTRYPOINT" and stages:
            stages[-1] = (*stages[-1][:3], True)
    by_name = {s[0]: s for s in stages if s[0]}
    stage = by_name.get(target.lower()) if target else (stages[-1] if stages else None)
    entry = False
    for _hop in range(len(stages)):
        if stage is None:
            return None
        entry = entry or stage[3]
        parent = by_name.get(stage[1].lower())
        if parent is None or parent is stage:
            reference = expand_from(stage[1], defaults) if "$" in stage[1] else stage[1]
            return (reference, stage[2], entry) if reference else None
        stage = parent
    return None


Built = dict[str, tuple[str, str, int]]
"""Service name -> ``(base image, Dockerfile report path, its FROM line)``."""


def built_bases(doc: yaml.Node, compose_rel: str, read: Callable[[str], SourceFile | None]) -> Built:
    """The base image of each built service whose Dockerfile is in the repository and keeps
    its base image's entry point (one that sets its own runs something else: left out)."""
    out: Built = {}
    for name, _key, service in mapping_items(get(doc, "services")):
        found = built_base(get(service, "build"), compose_rel, read)
        if found is not None:
            out[str(name)] = found
    return out


def built_base(
    build: yaml.Node | None,
    compose_rel: str,
    read: Callable[[str], SourceFile | None],
    merged: Sequence[tuple[yaml.Node, str]] = (),
) -> tuple[str, str, int] | None:
    """``(base image, Dockerfile report path, its FROM line)`` of one service's ``build``
    (written in ``compose_rel``; ``merged``: instead, the builds of every file that writes
    the service, see :func:`merged_build`), when its Dockerfile is in the repository and
    keeps its base image's entry point; else ``None``."""
    given = merged_build(merged) if merged else service_build(build, compose_rel)
    if given is None:
        return None
    rel, target, _context = given
    source = read(rel)
    found = dockerfile_base(source.text, target) if source is not None else None
    if found is None or found[2]:
        return None
    return found[0], rel, found[1]
