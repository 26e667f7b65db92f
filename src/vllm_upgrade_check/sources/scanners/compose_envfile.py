"""A compose service's ``env_file:``: the files whose variables are the container's
environment (Docker's docs, "Set environment variables within your container's environment":
``env_file`` takes a path, a list of paths, or entries ``{path: ..., required: ...}``; a
relative path is resolved from the compose file's folder, the project directory). Each file
the repository holds is read as a dotenv file and its variables are the service's, reported
at that file's lines. A file named as a dotenv file (``vllm.env``, ``.env.prod``) is read by
the dotenv scanner on its own and is not read again here."""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Iterator

import yaml

from vllm_upgrade_check.model.facts import Fact, FactKind
from vllm_upgrade_check.parsing.yamlnodes import get, items, mapping_items, scalar
from vllm_upgrade_check.sources.scanners.base import SourceFile
from vllm_upgrade_check.sources.scanners.compose_merge import Layer, Part
from vllm_upgrade_check.sources.scanners.envfiles import dotenv_facts, is_dotenv

MAX_ENV_FILE_CHARS = 256 * 1024
"""An env file larger than this is not read (it is no service's variables)."""


def env_file_paths(part: Part, base: str | None = None) -> Iterator[tuple[str, bool]]:
    """``(report path, required)`` of each file the ``env_file`` of service entry ``part``
    names, in order: relative paths from ``base`` (a folder of the repository: the project
    directory ``--project-directory`` gives), else from the folder of the compose file the
    entry's paths start from (:attr:`~.compose_merge.Part.paths_from`). A path outside the
    repository, absolute, or holding an interpolation is left out."""
    node = get(part.node, "env_file")
    entries = items(node) if isinstance(node, yaml.SequenceNode) else [node] if node is not None else []
    folder = base if base is not None else posixpath.dirname(part.paths_from)
    for entry in entries:
        required = True
        path_node: yaml.Node | None = entry
        if isinstance(entry, yaml.MappingNode):
            flag = (scalar(get(entry, "required")) or "true").lower()
            required = flag not in ("false", "no", "off")
            path_node = get(entry, "path")
        written = scalar(path_node)
        if not written or "$" in written or written.startswith(("/", "~")):
            continue
        rel = posixpath.normpath(posixpath.join(folder, written))
        if rel.startswith("../") or rel == "..":
            continue
        yield rel, required


def env_file_facts(
    parts: list[Part], read: Callable[[str], SourceFile | None], scanner: str, base: str | None = None
) -> list[Fact]:
    """The ``env_var`` facts of the env files of a service (``parts``: its entry in each
    compose file that writes it, base first; compose appends their ``env_file`` lists),
    each placed at its line in its env file; files the repository does not hold, or that
    the dotenv scanner reads itself (:func:`~.envfiles.is_dotenv`), give none."""
    out: list[Fact] = []
    seen: set[str] = set()
    for part in parts:
        for rel, _required in env_file_paths(part, base):
            if rel in seen or is_dotenv(posixpath.basename(rel)):
                continue
            seen.add(rel)
            source = read(rel)
            if source is None or len(source.text) > MAX_ENV_FILE_CHARS:
                continue
            out.extend(f for f in dotenv_facts(source.text, rel, scanner) if isinstance(f, Fact) and f.kind == FactKind.ENV_VAR)
    return out


def env_file_links(layer: Layer) -> list[str]:
    """The report paths of the env files the services of compose file ``layer`` name: the
    file is read again with them (:meth:`~.base.Scanner.with_referenced`)."""
    out: list[str] = []
    for _name, _key, service in mapping_items(get(layer.doc, "services")):
        if isinstance(service, yaml.MappingNode) and get(service, "env_file") is not None:
            out.extend(rel for rel, _required in env_file_paths(Part(layer, service)))
    return list(dict.fromkeys(out))
