"""Compose files merged as ``docker compose`` merges them: a project's services read from
every file that writes them.

A project is a list of compose files (Docker's docs, "Merge Compose files", "Extend your
Compose file", "Include"):

* ``docker compose up`` in a folder reads its first default file (``compose.yaml``,
  ``compose.yml``, ``docker-compose.yml``, ``docker-compose.yaml``) and the first
  override beside it (``compose.override.yml``, ``compose.override.yaml``,
  ``docker-compose.override.yml``, ``docker-compose.override.yaml``);
  ``-f a.yml -f b.yml`` (or ``COMPOSE_FILE=a.yml:b.yml``) reads those files, in that order.
* Each later file's service keys override the earlier's: ``image``, ``command`` and
  ``entrypoint`` replace, ``build`` merges key by key and ``environment`` by name (the
  later value wins). A ``!reset`` value removes the key; ``!override`` replaces a mapping
  whole. Extends apply within each file first, then the files merge (compose-go's order).
* ``extends: {service: X}`` (``file: other.yml`` for another file, relative to the file
  that writes it) starts the service from ``X`` as ``X`` is resolved, its own keys merged over.
* ``include:`` loads other compose files (each its own project, relative to the including
  file) whose services join the project.

Each key keeps the file and node it is written in (:class:`Part`), so that its words are
reported, and fixed, where they are written. A file that cannot be found or parsed, a
service ``extends`` names that its file does not have, and a cycle of ``extends`` are kept
as :attr:`Service.unresolved` (or :attr:`Project.unresolved`) with where they are written.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace

import yaml

from vllm_upgrade_check.parsing.yamlnodes import YamlProblem, documents, get, items, mapping_items, scalar
from vllm_upgrade_check.sources.scanners.base import SourceFile
from vllm_upgrade_check.sources.scanners.compose_build import build_files

DEFAULT_NAMES = ("compose.yaml", "compose.yml", "docker-compose.yml", "docker-compose.yaml")
"""The files ``docker compose`` reads a folder's project from, the first found."""

OVERRIDE_NAMES = (
    "compose.override.yml",
    "compose.override.yaml",
    "docker-compose.override.yml",
    "docker-compose.override.yaml",
)
"""The override ``docker compose`` merges into a folder's default file, the first found."""

REPLACED_KEYS = ("image", "command", "entrypoint")
"""Service keys a later file (or an extending service) replaces whole (``build`` merges key
by key, see :func:`~.compose_build.merged_build`)."""

MAX_FILES = 64
"""Compose files one project loads at most (includes and extended files together)."""

MAX_DEPTH = 16
"""``extends`` and ``include`` levels followed at most."""

Reader = Callable[[str], "SourceFile | None"]

NOT_READ = "not read yet"
"""What :meth:`Loader.layer` gives without a reader: the file is known on the next reading
(no note of it now)."""


@dataclass(frozen=True)
class Layer:
    """One compose file of a project: its report path, text and compose document."""

    path: str
    text: str
    doc: yaml.Node
    index: list[dict[str, yaml.Node]] = field(default_factory=list, compare=False, repr=False)
    """Its services by name, once read (:func:`_services`): every service of a file of many
    asks for its own node by name."""


@dataclass(frozen=True)
class Part:
    """A node of a service as written: in ``layer``'s file. ``relative_to``: the compose
    file its relative paths are resolved from when another than ``layer``'s (a later ``-f``
    file's paths are the first file's, Docker's "Merge Compose files")."""

    layer: Layer
    node: yaml.Node
    relative_to: str | None = None

    @property
    def paths_from(self) -> str:
        """The compose file the node's relative paths start from."""
        return self.relative_to or self.layer.path

    @property
    def line(self) -> int:
        """The 1-based line the node starts on."""
        return self.node.start_mark.line + 1

    @property
    def column(self) -> int:
        """The 1-based column the node starts at."""
        return self.node.start_mark.column + 1


@dataclass
class Service:
    """One service of a project, merged from every file and ``extends`` that writes it.

    Attributes:
        name: the service's name.
        declared: its entry in the last file that writes it.
        fields: the keys of :data:`REPLACED_KEYS` it has, each as written where it last is.
        environment: its ``environment`` nodes, base first (a later one's names win).
        builds: its ``build`` nodes, base first (merged key by key).
        entries: its service entry in every file that writes it, base first.
        unresolved: ``(where, why)`` of what its ``extends`` could not read.
    """

    name: str
    declared: Part
    fields: dict[str, Part] = field(default_factory=dict)
    environment: list[Part] = field(default_factory=list)
    builds: list[Part] = field(default_factory=list)
    entries: list[Part] = field(default_factory=list)
    unresolved: list[tuple[Part, str]] = field(default_factory=list)

    def merged_over(self, base: Service) -> Service:
        """This service's keys over ``base``'s (a later file's, or an extending service's)."""
        fields = dict(base.fields)
        environment = list(base.environment)
        for key, part in self.fields.items():
            if part.node.tag == "!reset":
                fields.pop(key, None)
            else:
                fields[key] = part
        for part in self.environment:
            if part.node.tag in ("!reset", "!override"):
                environment = []
            if part.node.tag != "!reset":
                environment.append(part)
        entries = [*base.entries, *(p for p in self.entries if p not in base.entries)]
        builds = [*base.builds, *self.builds]
        unresolved = [*base.unresolved, *self.unresolved]
        return Service(self.name, self.declared, fields, environment, builds, entries, unresolved)


@dataclass
class Project:
    """A project's services by name, and ``(where, why)`` of the files it could not read."""

    services: dict[str, Service] = field(default_factory=dict)
    unresolved: list[tuple[Part, str]] = field(default_factory=list)


TOP_LEVEL_KEYS = frozenset({"name", "version", "services", "include", "networks", "volumes", "configs", "secrets", "models"})
"""The top-level keys of a compose file (``x-*`` extension keys aside)."""


def is_compose_project(doc: yaml.Node) -> bool:
    """Whether ``doc`` is a compose file: a ``services`` mapping, or an ``include`` list with
    nothing but compose's top-level keys beside it (a GitLab CI ``include:`` is not one)."""
    if not isinstance(doc, yaml.MappingNode):
        return False
    if isinstance(get(doc, "services"), yaml.MappingNode):
        return True
    keys = [str(k) for k, _key, _v in mapping_items(doc)]
    return isinstance(get(doc, "include"), yaml.SequenceNode) and all(
        k in TOP_LEVEL_KEYS or k.startswith("x-") for k in keys
    )


def compose_document(text: str) -> yaml.Node | None:
    """The first document of ``text`` that is a compose file (:func:`is_compose_project`),
    or ``None`` (no such document, or no YAML)."""
    try:
        docs = documents(text)
    except YamlProblem:
        return None
    return next((doc for doc in docs if is_compose_project(doc)), None)


def joined(by: str, written: str) -> str | None:
    """The report path of ``written`` (relative to file ``by``'s folder), ``None`` when it
    is absolute, interpolated or leads out of the repository."""
    if not written or written.startswith("/") or "$" in written or "://" in written:
        return None
    path = posixpath.normpath(posixpath.join(posixpath.dirname(by), written))
    return None if path.startswith("../") or path == ".." else path


class Loader:
    """Reads compose files of a project once each (:func:`compose_document`), at most
    :data:`MAX_FILES`."""

    def __init__(self, read: Reader | None, first: Sequence[Layer] = ()) -> None:
        self._read = read
        self._layers: dict[str, Layer | str] = {layer.path: layer for layer in first}

    def layer(self, path: str) -> Layer | str:
        """The layer of compose file ``path``, or why it cannot be read."""
        if path not in self._layers and self._read is None:
            return NOT_READ
        if path not in self._layers and self._read is not None:
            if len(self._layers) >= MAX_FILES:
                return f"more than {MAX_FILES} compose files in one project; not read"
            source = self._read(path)
            if source is None:
                self._layers[path] = "not a file of the scanned tree (missing or ignored)"
            else:
                doc = compose_document(source.text)
                self._layers[path] = Layer(path, source.text, doc) if doc is not None else "no compose file it can parse"
        return self._layers[path]


def _own(name: str, layer: Layer, node: yaml.Node) -> Service:
    """A service as one file writes it, before ``extends``."""
    service = Service(name, Part(layer, node), entries=[Part(layer, node)])
    for key, _key, value in mapping_items(node):
        if key in REPLACED_KEYS and value is not None:
            service.fields[key] = Part(layer, value)
        elif key == "environment" and value is not None:
            service.environment.append(Part(layer, value))
        elif key == "build" and value is not None:
            service.builds.append(Part(layer, value))
    return service


def _services(layer: Layer) -> dict[str, yaml.Node]:
    """The service mappings of ``layer`` by name, read once per layer (read for every service
    of the file, a file of many services was quadratic)."""
    if not layer.index:
        layer.index.append(
            {str(k): v for k, _key, v in mapping_items(get(layer.doc, "services")) if isinstance(v, yaml.MappingNode)}
        )
    return layer.index[0]


def resolve(loader: Loader, layer: Layer, name: str, chain: tuple[tuple[str, str], ...] = ()) -> Service | None:
    """Service ``name`` of ``layer`` with its ``extends`` followed (``chain``: the services
    that extend it, a cycle's witness); ``None`` when ``layer`` has no such service."""
    node = _services(layer).get(name)
    if node is None:
        return None
    own = _own(name, layer, node)
    extends = get(node, "extends")
    if extends is None:
        return own
    target = scalar(extends) if isinstance(extends, yaml.ScalarNode) else scalar(get(extends, "service"))
    written = None if isinstance(extends, yaml.ScalarNode) else scalar(get(extends, "file"))
    where = Part(layer, extends)
    if not target:
        own.unresolved.append((where, "extends names no service"))
        return own
    base_layer: Layer | str = layer
    if written:
        rel = joined(layer.path, written)
        base_layer = loader.layer(rel) if rel is not None else f"{written} is not a path in the repository"
        if isinstance(base_layer, str):
            if base_layer is not NOT_READ:
                own.unresolved.append((where, f"extends {written}: {base_layer}"))
            return own
    assert isinstance(base_layer, Layer)
    here = (layer.path, name)
    key = (base_layer.path, target)
    if key in chain or key == here:
        steps = [*chain, here, key]
        one_file = len({p for p, _n in steps}) == 1
        loop = " -> ".join(n if one_file else f"{p} {n}" for p, n in steps)
        own.unresolved.append((where, f"extends a cycle: {loop}"))
        return own
    if len(chain) >= MAX_DEPTH:
        own.unresolved.append((where, f"extends more than {MAX_DEPTH} services deep; not followed"))
        return own
    base = resolve(loader, base_layer, target, (*chain, here))
    if base is None:
        own.unresolved.append((where, f"extends service {target}, which {base_layer.path} does not define"))
        return own
    return own.merged_over(base)


def _include_paths(entry: yaml.Node) -> Iterator[tuple[str, yaml.Node]]:
    """The files one ``include:`` entry names (``- a.yml``, ``- path: a.yml``, ``- path: [a, b]``)."""
    path = entry if isinstance(entry, yaml.ScalarNode) else get(entry, "path")
    nodes = items(path) if isinstance(path, yaml.SequenceNode) else [path]
    for node in nodes:
        written = scalar(node)
        if written and node is not None:
            yield written, node


def layer_project(loader: Loader, layer: Layer, depth: int = 0) -> Project:
    """The services one compose file defines: those of the files it includes, then its own
    (their ``extends`` followed)."""
    project = Project()
    for entry in items(get(layer.doc, "include")):
        chain = []
        for written, node in _include_paths(entry):
            rel = joined(layer.path, written)
            found = loader.layer(rel) if rel is not None else f"{written} is not a path in the repository"
            if found is NOT_READ:
                continue
            if isinstance(found, str):
                project.unresolved.append((Part(layer, node), f"includes {written}: {found}"))
            elif depth >= MAX_DEPTH or found.path == layer.path:
                project.unresolved.append((Part(layer, node), f"includes {written} again (an include cycle); not followed"))
            else:
                chain.append(found)
        if chain:
            included = merge(loader, chain, depth + 1)
            project.services.update(included.services)
            project.unresolved.extend(included.unresolved)
    for name in _services(layer):
        service = resolve(loader, layer, name)
        if service is not None:
            project.services[name] = service
    return project


def merge(loader: Loader, layers: Sequence[Layer], depth: int = 0) -> Project:
    """The project of compose files ``layers`` (in ``-f`` order): each file's services
    merged over the earlier files' of the same name, a later file's ``build`` paths read
    from the first file's folder."""
    project = Project()
    for index, layer in enumerate(layers):
        found = layer_project(loader, layer, depth)
        project.unresolved.extend(found.unresolved)
        for name, service in found.services.items():
            if index:  # relative to the first file, as compose resolves a later -f file's paths
                service.builds = [replace(p, relative_to=layers[0].path) if p.layer is layer else p for p in service.builds]
            earlier = project.services.get(name)
            project.services[name] = service.merged_over(earlier) if earlier is not None else service
    return project


def default_override(path: str, files: Callable[[str], bool]) -> str | None:
    """The override ``docker compose`` merges into compose file ``path`` (report path) when
    it is its folder's default file: the first of :data:`OVERRIDE_NAMES` beside it that
    ``files`` says exists; ``None`` otherwise."""
    folder, name = posixpath.split(path)
    if name not in DEFAULT_NAMES:
        return None
    first = next((n for n in DEFAULT_NAMES if files(posixpath.join(folder, n))), None)
    if first != name:
        return None
    return next((p for n in OVERRIDE_NAMES if files(p := posixpath.join(folder, n))), None)


def default_base(path: str, files: Callable[[str], bool]) -> str | None:
    """The default file compose file ``path`` is merged into when it is its folder's
    override (:func:`default_override`); ``None`` otherwise."""
    folder, name = posixpath.split(path)
    if name not in OVERRIDE_NAMES:
        return None
    base = next((p for n in DEFAULT_NAMES if files(p := posixpath.join(folder, n))), None)
    return base if base is not None and default_override(base, files) == path else None


def environment_names(node: yaml.Node | None) -> set[str]:
    """The names a compose ``environment`` (a mapping, or ``NAME=value`` items) sets."""
    if isinstance(node, yaml.MappingNode):
        return {str(k) for k, _key, _v in mapping_items(node)}
    out = set()
    for child in items(node):
        text = scalar(child)
        if text:
            out.add(text.partition("=")[0])
    return out


def compose_links(doc: yaml.Node, path: str) -> list[str]:
    """The report paths of the files compose file ``path`` (document ``doc``) is read
    again with: its services' Dockerfiles, the default file beside it when it is an
    override, the files its ``extends`` and ``include`` name (its project's ``.env`` is
    named where the file interpolates a variable)."""
    folder, name = posixpath.split(path)
    out = [rel for _s, rel, _t in build_files(doc, path)]
    if name in OVERRIDE_NAMES:
        out.extend(posixpath.join(folder, n) for n in DEFAULT_NAMES)
    for service in _services_of(doc):
        extends = get(service, "extends")
        written = scalar(get(extends, "file")) if isinstance(extends, yaml.MappingNode) else None
        rel = joined(path, written) if written else None
        if rel is not None:
            out.append(rel)
    for entry in items(get(doc, "include")):
        for written, _node in _include_paths(entry):
            rel = joined(path, written)
            if rel is not None:
                out.append(rel)
    return list(dict.fromkeys(out))


def env_file_links(doc: yaml.Node, path: str) -> list[tuple[str, bool, int]]:
    """``(report path, required, line)`` of each file a service of compose file ``path``
    (document ``doc``) names in ``env_file:`` (a path, a list of paths, or items of the long
    form ``{path: x, required: false}``, Docker's docs "env_file"), relative to ``path``'s
    folder; an interpolated or absolute path is left out. Those files are the service's
    environment, in dotenv syntax."""
    out: list[tuple[str, bool, int]] = []
    for service in _services_of(doc):
        node = get(service, "env_file")
        for entry in items(node) if isinstance(node, yaml.SequenceNode) else [node]:
            written_node = get(entry, "path") if isinstance(entry, yaml.MappingNode) else entry
            written = scalar(written_node)
            required = scalar(get(entry, "required")) if isinstance(entry, yaml.MappingNode) else None
            rel = joined(path, written) if written else None
            if rel is not None and written_node is not None:
                out.append((rel, (required or "true").lower() != "false", written_node.start_mark.line + 1))
    return out


def _services_of(doc: yaml.Node) -> list[yaml.Node]:
    return [v for _k, _key, v in mapping_items(get(doc, "services")) if isinstance(v, yaml.MappingNode)]
