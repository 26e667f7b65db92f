"""The facts of a compose project merged from several files (:mod:`.compose_merge`): each
service read as compose runs it, each word placed in the file that writes it.

What a default file with an override beside it gives (``docker-compose.yml`` and
``docker-compose.override.yml``): the override's reading is the project ``docker compose
up`` runs, both merged; a flag the override writes is reported in the override, where a
fix removes it. The default file is also a project by itself (``docker compose -f
docker-compose.yml up`` runs it without the override, as CI jobs and other hosts may): its
reading is the file alone, so a flag of its ``command`` that the override's ``command``
replaces is still reported at its line (the repository holds it, and a fix there is
harmless), while the merged launch holds the override's words only (a rule on a flag's
absence sees those).
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Sequence

from vllm_upgrade_check.model.evolve import evolve
from vllm_upgrade_check.model.facts import Fact, FactKind, Location, Span
from vllm_upgrade_check.parsing.yamlwords import node_span
from vllm_upgrade_check.sources.scanners.base import SourceFile, shared_words
from vllm_upgrade_check.sources.scanners.compose_build import built_base
from vllm_upgrade_check.sources.scanners.compose_cli import Named
from vllm_upgrade_check.sources.scanners.compose_entry import (
    MergedWords,
    built_entry,
    built_script,
    entry_command_facts,
    script_launch_facts,
)
from vllm_upgrade_check.sources.scanners.compose_env import (
    Dotenv,
    DotenvValue,
    dotenv_read,
    dotenv_span,
    read_dotenv,
    read_env_file,
)
from vllm_upgrade_check.sources.scanners.compose_merge import (
    Layer,
    Loader,
    Part,
    Project,
    Service,
    default_base,
    environment_names,
    merge,
)
from vllm_upgrade_check.sources.scanners.containers import Written, container_facts
from vllm_upgrade_check.sources.scanners.owners import launchers_only, read_by
from vllm_upgrade_check.sources.scanners.yamlenv import env_facts

Reader = Callable[[str], "SourceFile | None"]


def _launched(facts: Sequence[Fact]) -> bool:
    return any(f.kind == FactKind.LAUNCH for f in facts)


def _elsewhere(part: Part | None, path: str) -> Written | None:
    return None if part is None or part.layer.path == path else (part.layer.text, part.layer.path)


def _environment_facts(service: Service, scanner: str) -> list[Fact]:
    """The ``environment`` of every file that writes ``service``: a name a later file sets
    again is the later file's (compose merges ``environment`` by name)."""
    out: list[Fact] = []
    parts = service.environment
    for index, part in enumerate(parts):
        later: set[str] = set()
        for after in parts[index + 1 :]:
            later |= environment_names(after.node)
        for fact in env_facts(part.layer.text, part.node, part.layer.path, scanner):
            if fact.kind == FactKind.ENV_VAR and fact.name in later:
                continue
            out.append(fact)
    return out


def unresolved_launch(part: Part, who: str, why: str, scanner: str) -> Fact:
    """An unresolved launch placed where ``part`` is written: what a project cannot read
    (a missing file, an ``extends`` cycle), reported as a note, never as a finding."""
    where = node_span(part.node)
    location = Location(part.layer.path, where.line, where.column, where.end_line, where.end_column)
    return Fact(
        FactKind.LAUNCH,
        f"compose {who}",
        location,
        raw=part.layer.text[part.node.start_mark.index : part.node.end_mark.index].split("\n", 1)[0],
        value=why,
        origin="cli",
        scanner=scanner,
        resolved=False,
        group=f"{where.line}:{where.column}",
    )


def _with_unresolved(found: list[Fact], service: Service, who: str, scanner: str, notes: bool) -> list[Fact]:
    """``found`` with what ``service``'s ``extends`` could not read: its launch unresolved,
    or (no launch seen) an unresolved launch at the ``extends`` when ``notes``."""
    if not service.unresolved or not notes:
        return found
    why = "; ".join(f"{reason} ({part.layer.path}:{part.line})" for part, reason in service.unresolved)
    if _launched(found):
        return [
            evolve(f, resolved=False, value="; ".join(v for v in (f.value, why) if v)) if f.kind == FactKind.LAUNCH else f
            for f in found
        ]
    part, _reason = service.unresolved[0]
    placed = "; ".join(reason for _part, reason in service.unresolved)  # the first is where it is placed
    return [*found, unresolved_launch(part, who, placed if len(service.unresolved) == 1 else why, scanner)]


def project_facts(
    project: Project,
    text: str,
    path: str,
    dotenv: Dotenv | None = None,
    read: Reader | None = None,
    notes: bool = True,
    scanner: str = "compose",
) -> list[Fact]:
    """Facts of every service of ``project`` as read from compose file ``path`` (``text``,
    the file the project is named by): each service's image, entry point and command from
    the file that last writes them (a ``build:``'s base image and entry-point script read
    with ``read``, see :mod:`.compose_build` and :mod:`.compose_entry`), its ``environment``
    merged by name (its ``env_file`` files are read as dotenv files, see
    :func:`~.compose_merge.env_file_links`). ``notes``: report what the project cannot read as unresolved launches
    (:func:`unresolved_launch`) where no launch says it."""
    facts: list[Fact] = []
    others: list[tuple[Span, str]] = []
    elsewhere: dict[str, list[tuple[Span, str]]] = {}
    for name, service in project.services.items():
        who = f"service {name}"
        fields = service.fields
        image, entry, command = (fields.get(k) for k in ("image", "entrypoint", "command"))
        builds = [(p.node, p.paths_from) for p in service.builds]
        base = built_base(None, path, read, builds) if builds and read is not None else None
        found = list(
            container_facts(
                text,
                path,
                scanner,
                image.node if image else None,
                entry.node if entry else None,
                command.node if command else None,
                built=base,
                dotenv=dotenv,
                layers=(_elsewhere(image, path), _elsewhere(entry, path), _elsewhere(command, path)),
            )
        )
        script = built_script(None, path, read, builds) if builds and read is not None else None
        if script is not None and not _launched(found):
            at = _elsewhere(command, path)
            words = MergedWords(
                (command.layer.text, at[1] if at else None, command.node) if command else (text, None, None),
                entry is not None,
                [p.node for p in service.environment],
            )
            found.extend(script_launch_facts(text, None, path, script, dotenv, words))
        direct = built_entry(None, path, read, builds) if builds and read is not None and script is None else None
        if direct is not None and not _launched(found):
            at = _elsewhere(command, path)
            words = MergedWords(
                (command.layer.text, at[1] if at else None, command.node) if command else (text, None, None),
                entry is not None,
                [p.node for p in service.environment],
            )
            found.extend(entry_command_facts(text, path, direct, words, dotenv))
        if not _launched(found):
            for part in (entry, command):
                if part is not None:
                    spans = list(read_by([part.node], who))
                    (others if part.layer.path == path else elsewhere.setdefault(part.layer.path, [])).extend(spans)
            for part in service.entries:
                for value in dotenv_read(part.layer.text, part.node, dotenv or {}):
                    elsewhere.setdefault(value.path, []).append((dotenv_span(value), who))
        found.extend(_environment_facts(service, scanner))
        found = _with_unresolved(found, service, who, scanner, notes)
        facts.extend(evolve(f, owner=who) for f in found)
    if notes:
        facts.extend(unresolved_launch(part, "project", why, scanner) for part, why in project.unresolved)
    return shared_words(launchers_only(facts), others, path, elsewhere)


def compose_file_facts(
    layer: Layer,
    read: Reader | None,
    dotenv: Dotenv | None = None,
    mentions: bool = True,
    exists: Callable[[str], bool] | None = None,
) -> list[Fact]:
    """The facts of compose file ``layer`` read as the project it names, its ``extends``
    and ``include`` files followed (with ``read``, the repository's files). The override of
    a folder's default file (:func:`~.compose_merge.default_base`; ``exists`` says which
    files the repository holds) reads as the project ``docker compose up`` runs there: that
    default file with the override merged over it, each word placed in the file that
    writes it. The default file is also read alone, as ``docker compose -f FILE`` runs it.
    Without ``read``, the file alone, same-file ``extends`` followed (the files it names
    are read, and noted when missing, on the next reading). ``mentions``: whether the file names
    vLLM, so that what the project cannot read is worth a note (as it is when any file of
    the project names vLLM)."""
    if read is None:
        return project_facts(merge(Loader(None, [layer]), [layer]), layer.text, layer.path, dotenv, notes=mentions)
    loader = Loader(read, [layer])
    base = default_base(layer.path, exists or (lambda rel: read(rel) is not None))
    found = loader.layer(base) if base is not None else None
    layers = [found, layer] if isinstance(found, Layer) else [layer]
    project = merge(loader, layers)
    if isinstance(found, str):
        project.unresolved.append((Part(layer, layer.doc), f"the default file beside it, {base}: {found}"))
    texts = {p.layer.path: p.layer.text for s in project.services.values() for p in s.entries}
    mentions = mentions or any("vllm" in t.lower() for t in texts.values())
    first = layers[0]
    return project_facts(project, first.text, first.path, dotenv, read, mentions)


def chain_facts(
    chain: Sequence[tuple[str | None, Named, Location]],
    read: Reader,
    mentions: bool = False,
    scanner: str = "compose",
    env_files: Sequence[str | None] | None = None,
    project_directory: str | None = None,
) -> list[Fact]:
    """The facts of the project ``docker compose -f A -f B`` runs (``chain``: each file's
    report path, ``None`` when it names no file of the repository, with how and where the
    command names it), placed in the files that write them; the project is named by its
    first file (its folder's ``.env`` interpolated). A file that cannot be read is an
    unresolved launch where the command names it, when the project or the command's file
    names vLLM (``mentions``). ``env_files``: the report paths of the command's
    ``--env-file`` files (``None`` for one not in the repository), read in place of the
    ``.env``, later ones winning; ``project_directory``: the report path of its
    ``--project-directory``, where the ``.env`` is."""
    loader = Loader(read)
    layers: list[Layer] = []
    missing: list[Fact] = []
    for rel, named, where in chain:
        if not named.resolved:
            found: Layer | str = "not resolved from the repository (compose reads a file there)"
        else:
            found = loader.layer(rel) if rel is not None else "not a path in the repository"
        if isinstance(found, Layer):
            layers.append(found)
            mentions = mentions or "vllm" in found.text.lower()
        else:
            missing.append(
                Fact(FactKind.LAUNCH, "compose project", where, raw=named.written, value=f"{named.option} {named.written}: {found}",
                     origin="cli", scanner=scanner, resolved=False, group=f"{where.line}:{where.column}")
            )
    facts = missing if mentions else []
    if layers:
        first = layers[0]
        dotenv: Dotenv | None = None
        if any("$" in layer.text for layer in layers):
            if env_files:
                values: dict[str, DotenvValue] = {}
                for rel in env_files:
                    values.update(read_env_file(rel, read) if rel is not None else {})
                dotenv = values
            else:
                at = posixpath.join(project_directory, "compose.yaml") if project_directory is not None else first.path
                dotenv = read_dotenv(at, read)
        facts.extend(
            project_facts(merge(loader, layers), first.text, first.path, dotenv, read, mentions, scanner)
        )
    return facts


def _chain_path(written: str, directory: str, files: set[str], cd: str = "") -> str | None:
    """The report path of a compose file a command in ``directory`` names (after a ``cd``
    to ``cd``): relative to it, else to the repository root; the first that exists, else the
    first (a missing file); ``None`` for a path outside the repository or not written literally."""
    if written.startswith("/") or "$" in written or written == "-":
        return None
    candidates = [posixpath.normpath(posixpath.join(directory, cd, written)), posixpath.normpath(posixpath.join(cd, written))]
    candidates = [c for c in candidates if not c.startswith("../") and c != ".."]
    return next((c for c in candidates if c in files), candidates[0] if candidates else None)


def linked_chain_facts(
    chains: Sequence[Sequence[Named]],
    by: str,
    files: Sequence[str],
    read: Reader,
    directory: str | None = None,
    mentions: bool = False,
) -> list[Fact]:
    """The facts of the projects the ``docker compose`` commands of file ``by`` run with
    files of their own (:func:`~.compose_cli.compose_chains`), the files found from
    ``directory`` (the command's working directory; ``by``'s folder by default) or the
    repository root."""
    names = set(files)
    folder = posixpath.dirname(by) if directory is None else directory
    out: list[Fact] = []
    for chain in chains:
        resolved = [
            (_chain_path(n.written, folder, names, n.cd), n, Location(by, n.line, n.column, n.line, n.column + n.length))
            for n in chain
        ]
        given = chain[0] if chain else None
        env_files = [_chain_path(e, folder, names, given.cd) for e in given.env_files] if given else []
        directory = None
        if given is not None and given.project_directory is not None:
            directory = _chain_path(given.project_directory, folder, set(), given.cd) or "$"
            directory = None if "$" in directory else ("" if directory == "." else directory)
        out.extend(chain_facts(resolved, read, mentions, env_files=env_files, project_directory=directory))
    return out
