"""Compose services built from a Dockerfile whose ``ENTRYPOINT`` is a script of the build
context: the service's ``command`` replaces the Dockerfile's ``CMD``, so its words are the
script's arguments (``"$@"``).

``build: {context: ., dockerfile: Dockerfile.x}`` whose Dockerfile has ``COPY entrypoint.sh
/entrypoint.sh`` + ``ENTRYPOINT ["/entrypoint.sh"]``, ``entrypoint.sh`` running ``exec vllm
serve "$MODEL" "$@"``, and ``command: ["--swap-space", "4"]``: the container launches vLLM
with ``--swap-space 4``. The script is read as
:class:`~.dockerfile_entry.LinkedDockerfileScanner` reads it for a ``CMD`` (Docker's
``ENTRYPOINT`` + ``CMD`` rule, which compose keeps: its ``command`` overrides the image's
``CMD`` only), with the stage's ``ENV`` and the service's ``environment`` as its
environment; the flags the service's words give are reported where the compose file
writes them, so that a fix edits them there.
"""

from __future__ import annotations

import io
import posixpath
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import yaml
from dockerfile_parse import DockerfileParser

from vllm_upgrade_check.model.facts import Fact, FactKind
from vllm_upgrade_check.parsing.shell import Token
from vllm_upgrade_check.parsing.yamlnodes import get, items, mapping_items, pos, scalar
from vllm_upgrade_check.sources.scanners.arg_facts import token_location
from vllm_upgrade_check.sources.scanners.base import SourceFile
from vllm_upgrade_check.sources.scanners.compose_build import merged_build, service_build
from vllm_upgrade_check.sources.scanners.compose_env import Dotenv
from vllm_upgrade_check.sources.scanners.containers import command_syntax, command_words
from vllm_upgrade_check.sources.scanners.dockerfile import DockerfileScanner
from vllm_upgrade_check.sources.scanners.dockerfile_copies import EntryScript
from vllm_upgrade_check.sources.scanners.dockerfile_entry import entry_launch_facts
from vllm_upgrade_check.sources.scanners.shell import argv_facts


@dataclass(frozen=True)
class BuiltScript:
    """The entry-point script a built service runs: ``entry`` (from the Dockerfile, its
    ``path`` the script's report path) and the script's text."""

    entry: EntryScript
    script: SourceFile


def entry_stage(text: str, target: str | None) -> int | None:
    """The 0-based index of the stage whose ``ENTRYPOINT`` a build of Dockerfile ``text``
    ending in stage ``target`` (else the last) runs: that stage's own, else the nearest
    stage it is built ``FROM`` that sets one. ``None`` when no stage of the chain sets one
    (the base image's stands) or the file cannot be parsed."""
    try:
        structure = DockerfileParser(fileobj=io.BytesIO(text.encode("utf-8"))).structure
    except Exception:  # dockerfile-parse raises plain exceptions on bad input
        return None
    stages: list[tuple[str | None, str, bool]] = []  # (name, FROM word, sets ENTRYPOINT)
    for item in structure:
        instruction = str(item["instruction"]).upper()
        if instruction == "FROM":
            words = [w for w in str(item["value"]).split() if not w.startswith("--")] or [""]
            named = words[2].lower() if len(words) >= 3 and words[1].lower() == "as" else None
            stages.append((named, words[0].lower(), False))
        elif instruction == "ENTRYPOINT" and stages:
            stages[-1] = (stages[-1][0], stages[-1][1], True)
    names = {s[0]: i for i, s in enumerate(stages) if s[0]}
    index = names.get(target.lower()) if target else len(stages) - 1
    seen: set[int] = set()
    while index is not None and 0 <= index < len(stages) and index not in seen:
        seen.add(index)
        if stages[index][2]:
            return index
        parent = names.get(stages[index][1])
        index = parent if parent is not None and parent < index else None
    return None


def built_scripts(doc: yaml.Node, compose_rel: str, read: Callable[[str], SourceFile | None]) -> dict[str, BuiltScript]:
    """Service name -> the :class:`BuiltScript` its build's ``ENTRYPOINT`` runs, for each
    service of compose document ``doc`` built from a Dockerfile of the repository whose
    entry point is a script copied from the build context that mentions vLLM."""
    out: dict[str, BuiltScript] = {}
    for name, _key, service in mapping_items(get(doc, "services")):
        found = built_script(get(service, "build"), compose_rel, read)
        if found is not None:
            out[str(name)] = found
    return out


def built_script(
    build: yaml.Node | None,
    compose_rel: str,
    read: Callable[[str], SourceFile | None],
    merged: Sequence[tuple[yaml.Node, str]] = (),
) -> BuiltScript | None:
    """The :class:`BuiltScript` one service's ``build`` (written in ``compose_rel``;
    ``merged``: the builds of every file that writes it, see
    :func:`~.compose_build.merged_build`) runs as its ``ENTRYPOINT``, when that is a script of
    the build context that mentions vLLM."""
    given = _build_entry(build, compose_rel, read, merged)
    if given is None or given[0].direct:
        return None
    found, context = given
    path = posixpath.normpath(posixpath.join(context, found.source)) if found.source else found.path
    script = read(path)
    if script is not None and script.mentions_vllm():
        return BuiltScript(replace(found, path=path), script)
    return None


def _build_entry(
    build: yaml.Node | None,
    compose_rel: str,
    read: Callable[[str], SourceFile | None],
    merged: Sequence[tuple[yaml.Node, str]] = (),
) -> tuple[EntryScript, str] | None:
    """The exec-form ``ENTRYPOINT`` a service's build runs (a script, or ``direct``: vLLM
    itself), with the build context's report path; ``None`` when the Dockerfile is not in
    the repository or its entry point is the base image's or not an exec form."""
    given = merged_build(merged) if merged else service_build(build, compose_rel)
    if given is None:
        return None
    rel, target, context = given
    source = read(rel)
    index = entry_stage(source.text, target) if source is not None else None
    if source is None or index is None:
        return None
    scripts: list[EntryScript] = []
    for _item in DockerfileScanner().read(source, scripts):
        pass
    found = next((s for s in scripts if s.stage == index), None)
    return (found, context) if found is not None else None


def built_entry(
    build: yaml.Node | None,
    compose_rel: str,
    read: Callable[[str], SourceFile | None],
    merged: Sequence[tuple[yaml.Node, str]] = (),
) -> EntryScript | None:
    """The ``direct`` :class:`~.dockerfile_copies.EntryScript` of one service's build (as
    :func:`built_script` takes its arguments): the Dockerfile's exec-form ``ENTRYPOINT``
    launches vLLM itself (``["vllm", "serve"]``, ``["python3", "-m",
    "vllm.entrypoints.openai.api_server"]``, behind ``tini --``), so that the service's
    ``command``, which replaces the ``CMD``, is the launch's arguments."""
    given = _build_entry(build, compose_rel, read, merged)
    return given[0] if given is not None and given[0].direct else None


def entry_command_facts(
    text: str,
    path: str,
    entry: EntryScript,
    merged: MergedWords,
    dotenv: Dotenv | None = None,
) -> list[Fact]:
    """The facts of the launch a built service makes when its Dockerfile's ``ENTRYPOINT``
    launches vLLM itself (``entry``, :func:`built_entry`) and the service gives a
    ``command`` (compose file ``text`` at ``path``; ``merged`` as
    :func:`script_launch_facts` reads it): the ``ENTRYPOINT`` words then the command's,
    read as one argv. Only the command's words are reported (the ``ENTRYPOINT``'s are the
    Dockerfile's); the launch is placed at the command's first word. None when the
    service sets its own ``entrypoint`` or no ``command`` (the Dockerfile's ``CMD`` stands,
    read with the Dockerfile)."""
    command_text, command_path, command = merged.command
    if merged.entrypoint or command is None:
        return []
    words = command_words(command_text, command, dotenv)
    if command_path is not None:
        words = [replace(w, path=w.path or command_path) for w in words]
    if not words:
        return []
    ours = {(at.path, at.line, at.column) for at in (token_location(path, w) for w in words)}
    found = argv_facts([*entry.entry_words, *words], path, "compose", entry.hint, syntax=command_syntax(command))
    place = token_location(path, words[0])
    group = f"{place.line}:{place.column}"
    out: list[Fact] = []
    for fact in found:
        loc = fact.location
        if fact.kind == FactKind.LAUNCH:
            out.append(replace(fact, location=place, group=group, spans=None))
        elif (loc.path, loc.line, loc.column) in ours:
            out.append(replace(fact, group=group))
    return out


def service_env(node: yaml.Node | None) -> dict[str, list[Token]]:
    """A compose service's ``environment`` (a mapping, or a list of ``NAME=value``) as the
    script's variables: each value one word, placed at its value (a name with no value,
    passed from the host, is left out: what it holds is not known here)."""
    out: dict[str, list[Token]] = {}
    if isinstance(node, yaml.MappingNode):
        for name, _key, value in mapping_items(node):
            text = scalar(value)
            if text is not None and isinstance(value, yaml.ScalarNode) and value.tag != "tag:yaml.org,2002:null":
                at = pos(value)
                out[str(name)] = [Token(text, at.line, at.column, True, text)]
    for child in items(node) if isinstance(node, yaml.SequenceNode) else []:
        text = scalar(child)
        if text and "=" in text:
            name, _eq, given = text.partition("=")
            at = pos(child)
            out[name] = [Token(given, at.line, at.column, True, given)]
    return out


def script_launch_facts(
    text: str,
    service: yaml.Node | None,
    path: str,
    built: BuiltScript,
    dotenv: Dotenv | None = None,
    merged: MergedWords | None = None,
) -> list[Fact]:
    """The facts of the launch a built service's entry-point script makes with the
    service's ``command`` words (compose file ``text`` at ``path``): none when the service
    sets its own ``entrypoint`` (the script does not run) or no ``command`` (the
    Dockerfile's ``CMD`` stands, read with the Dockerfile). The launch is placed at the
    command's first word; only the command's words are reported (the Dockerfile's and the
    script's own are reported in their files). ``merged``: a service merged from several
    compose files (:mod:`.compose_merge`), read instead of ``service``."""
    if merged is None:
        merged = MergedWords((text, None, get(service, "command")), get(service, "entrypoint") is not None, [get(service, "environment")])
    command_text, command_path, command = merged.command
    if merged.entrypoint or command is None:
        return []
    words = command_words(command_text, command, dotenv)
    if command_path is not None:
        words = [replace(w, path=w.path or command_path) for w in words]
    if not words:
        return []
    entry = built.entry
    fixed = entry.args[: entry.entry_args]
    env = dict(entry.env)
    for node in merged.environment:
        env.update(service_env(node))
    run = replace(entry, args=[*fixed, *words], env=env)
    return entry_launch_facts(run, built.script, path, "compose", reported=words, syntax=command_syntax(command), at=words[0])


@dataclass(frozen=True)
class MergedWords:
    """What :func:`script_launch_facts` reads of a service: its ``command`` as ``(text of the
    file it is written in, that file's report path when another than the one read, node)``,
    whether it sets an ``entrypoint``, and its ``environment`` nodes, base first."""

    command: tuple[str, str | None, yaml.Node | None]
    entrypoint: bool
    environment: list[yaml.Node | None]
