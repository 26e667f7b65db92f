"""YAML files that run shell commands and containers without being a deployment manifest:
GitHub Actions workflows (``.github/workflows/*.yml``: each step's ``run:`` script, the job's
``container`` image and its ``services.*.image``), GitLab CI files (``.gitlab-ci.yml``,
``*.gitlab-ci.yml``, ``.gitlab/ci/*.yml``: each job's ``before_script``/``script``/
``after_script`` lines, read as one shell session per job, its ``image`` and ``services``) and
Ansible task lists and playbooks (a ``pip`` task's ``name:`` requirements, ``command``/
``shell`` tasks' command lines).

A CI script that deploys a vLLM chart with ``helm upgrade … -f FILE`` (:mod:`.helm_cli`) names
values files whose flags deploy with the chart: the file is read again with them
(:meth:`CiYamlScanner.with_referenced`), paths relative to the step's ``working-directory``
(GitHub Actions) or to the repository root, as the runner starts there.

The scripts are read by the shell scanner's parser (:func:`~.shell.shell_facts`) at the
place the YAML scalar is written, so launches, ``pip install vllm==X`` and their flags are
reported at their ``file:line`` and fixed where the scalar is plain enough to place them;
images and requirements are facts as in compose files and requirements files. A script's
``${{ ... }}`` expressions are unresolved words in place, and the literal ``env:`` /
``variables:`` of its scopes are the variables its shell expands (:mod:`.ciexpr`).
"""

from __future__ import annotations

import bisect
import posixpath
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace

import yaml

from vllm_upgrade_check.model.facts import Fact, Span, Spans
from vllm_upgrade_check.parsing.shell import Token, parse_shell
from vllm_upgrade_check.parsing.yamlnodes import (
    YamlProblem,
    compose_documents,
    get,
    items,
    mapping_items,
    scalar,
)
from vllm_upgrade_check.parsing.yamlwords import scalar_word
from vllm_upgrade_check.sources.scanners.base import FileReference, ScanItem, Scanner, SourceFile
from vllm_upgrade_check.sources.scanners.ci_gitlab import resolve_job, script_lines, used_templates
from vllm_upgrade_check.sources.scanners.ciexpr import (
    env_references,
    literal_variables,
    matrix_env,
    matrix_references,
    matrix_values,
    neutralise_expressions,
    pins_at_matrix_values,
    restoring,
    with_expressions,
)
from vllm_upgrade_check.sources.scanners.compose_cli import compose_chains, may_run_compose
from vllm_upgrade_check.sources.scanners.compose_project import linked_chain_facts
from vllm_upgrade_check.sources.scanners.containers import scalar_relocator
from vllm_upgrade_check.sources.scanners.helm_cli import (
    helm_set_args,
    helm_set_tags,
    helm_values_commands,
    may_pass_helm_values,
)
from vllm_upgrade_check.sources.scanners.helm_links import linked_values_facts, set_arg_facts, set_tag_facts
from vllm_upgrade_check.sources.scanners.images import image_fact, image_hint, is_vllm_image
from vllm_upgrade_check.sources.scanners.manifests import YAML_SUFFIXES
from vllm_upgrade_check.sources.scanners.requirements import requirement_fact
from vllm_upgrade_check.sources.scanners.shell import shell_facts

_PIP_MODULES = frozenset({"pip", "ansible.builtin.pip"})
_COMMAND_MODULES = frozenset({"command", "shell", "ansible.builtin.command", "ansible.builtin.shell"})
_TASK_LISTS = ("tasks", "pre_tasks", "post_tasks", "handlers", "block", "rescue", "always")


_GITLAB_SCRIPTS = ("before_script", "script", "after_script")
_GITLAB_RESERVED = frozenset({"stages", "variables", "workflow", "include", "default", "image", "services", "cache"})


def is_gitlab_ci(relpath: str) -> bool:
    """Whether ``relpath`` is a GitLab CI file (``.gitlab-ci.yml``, ``NAME.gitlab-ci.yml``, or
    a YAML file under ``.gitlab/ci/``, where projects keep the files they ``include``)."""
    head, _sep, name = relpath.rpartition("/")
    if name in (".gitlab-ci.yml", ".gitlab-ci.yaml") or name.endswith((".gitlab-ci.yml", ".gitlab-ci.yaml")):
        return True
    return (head == ".gitlab/ci" or head.startswith(".gitlab/ci/") or "/.gitlab/ci" in head) and name.endswith(
        YAML_SUFFIXES
    )


def is_workflow(relpath: str) -> bool:
    """Whether ``relpath`` is a GitHub Actions workflow (``.github/workflows/NAME.yml``)."""
    head, _sep, name = relpath.rpartition("/")
    return (head == ".github/workflows" or head.endswith("/.github/workflows")) and name.endswith(
        YAML_SUFFIXES
    )


def _ansible_like(text: str) -> bool:
    """A cheap test before parsing: the text names a task module this scanner reads."""
    return any(f"{m}:" in text for m in (*_PIP_MODULES, *_COMMAND_MODULES)) and "- " in text


class CiYamlScanner(Scanner):
    """Facts of GitHub Actions workflows and Ansible tasks (see the module docstring)."""

    name = "ci-yaml"

    def accepts_name(self, name: str) -> bool:
        return name.endswith(YAML_SUFFIXES)

    def accepts(self, source: SourceFile) -> bool:
        if not source.name.endswith(YAML_SUFFIXES):
            return False
        ci = is_workflow(source.relpath) or is_gitlab_ci(source.relpath)
        if ci and (may_pass_helm_values(source.text) or may_run_compose(source.text)):
            return True  # a deploy job may pass values files to a vLLM chart, or compose files
        if "vllm" not in source.text.lower():
            return False
        return ci or _ansible_like(source.text)

    def scan(self, source: SourceFile) -> Iterator[ScanItem]:
        try:
            documents = compose_documents(source.text)
        except YamlProblem:
            return  # the manifest scanner, which reads every YAML file, reports it skipped
        workflow, gitlab = is_workflow(source.relpath), is_gitlab_ci(source.relpath)
        mentions = source.mentions_vllm()
        for document in documents:
            if mentions and workflow:
                yield from self._workflow(source, document)
            elif mentions and gitlab:
                yield from self._gitlab(source, document)
            elif mentions:
                yield from self._tasks(source, document)
            if workflow or gitlab:
                for _chart, values, _by in self._helm_releases(source, document):
                    for written in values:
                        yield FileReference(written, self.name)
                if "--set" in source.text:
                    yield FileReference("values.yaml", self.name)  # a --set image.tag: read again
                if may_run_compose(source.text):  # docker compose -f: read again with the project
                    for node, _directory in self._scripts(source, document):
                        for chain in compose_chains(parse_shell(str(node.value))):
                            yield from (FileReference(named.written, self.name) for named in chain)

    def with_referenced(
        self, source: SourceFile, files: Sequence[str], read: Callable[[str], SourceFile | None]
    ) -> list[Fact] | None:
        """The file's facts with those of the values files its scripts' helm commands pass to
        a vLLM chart (:func:`~.helm_links.linked_values_facts`) and of the compose projects
        their ``docker compose -f`` commands run; ``None`` when they do neither."""
        helm, compose = may_pass_helm_values(source.text), may_run_compose(source.text)
        if not helm and not compose:
            return None
        try:
            documents = compose_documents(source.text)
        except YamlProblem:
            return None
        linked: list[Fact] = []
        for document in documents:
            if compose:
                linked.extend(self._compose_chains(source, document, files, read))
            if not helm:
                continue
            by_dir: dict[str, list[tuple[str, list[str]]]] = {}
            for chart, values, by in self._helm_releases(source, document):
                by_dir.setdefault(by, []).append((chart, values))
            for by, releases in by_dir.items():
                linked.extend(linked_values_facts(releases, by, files, read))
            for node, directory in self._scripts(source, document):
                if "--set" in str(node.value):
                    linked.extend(self._set_tags(source, node, directory, files, read))
        if not linked:
            return None
        return [*(f for f in self.scan(source) if isinstance(f, Fact)), *linked]

    def _compose_chains(
        self, source: SourceFile, document: yaml.Node, files: Sequence[str], read: Callable[[str], SourceFile | None]
    ) -> list[Fact]:
        """The facts of the compose projects the steps' ``docker compose -f`` commands run
        (:func:`~.compose_project.linked_chain_facts`), files found from each step's directory."""
        out: list[Fact] = []
        for node, directory in self._scripts(source, document):
            text = str(node.value)
            if not may_run_compose(text):
                continue
            chains = compose_chains(parse_shell(text), scalar_relocator(source.text, node))
            found = linked_chain_facts(chains, source.relpath, files, read, directory or "", source.mentions_vllm())
            out.extend(found)
        return out

    def _set_tags(
        self,
        source: SourceFile,
        node: yaml.ScalarNode,
        directory: str,
        files: Sequence[str],
        read: Callable[[str], SourceFile | None],
    ) -> list[Fact]:
        """The ``--set image.tag=TAG`` image facts (:func:`~.helm_links.set_tag_facts`) and the
        ``--set KEY.args={...}`` flag facts (:func:`~.helm_links.set_arg_facts`) of one script,
        placed in this file; charts resolved from the directory the script runs in."""
        script = parse_shell(str(node.value))
        tags, sets = helm_set_tags(script), helm_set_args(script)
        if not tags and not sets:
            return []
        move = scalar_relocator(source.text, node)
        placed = [(chart, move(token), start, end) for chart, token, start, end in tags]
        by = posixpath.join(directory, "_") if directory not in ("", ".") else "_"
        facts = set_tag_facts(placed, by, files, read)
        lists = [
            (chart, key, move(word), None if found is None else [(move(t), at, text) for t, at, text in found])
            for chart, key, word, found in sets
        ]
        facts += set_arg_facts(lists, by, files, read)
        return [replace(f, location=replace(f.location, path=source.relpath)) for f in facts]

    def _helm_releases(self, source: SourceFile, document: yaml.Node) -> Iterator[tuple[str, list[str], str]]:
        """``(chart, values files as written, path they are relative to)`` of each helm
        command of the file's scripts that passes values files. ``path`` stands for a file in
        the directory the script runs in (the step's ``working-directory``, else the root)."""
        for node, directory in self._scripts(source, document):
            if not may_pass_helm_values(str(node.value)):
                continue
            by = posixpath.join(posixpath.normpath(directory), "_") if directory not in ("", ".") else "_"
            for chart, values in helm_values_commands(parse_shell(str(node.value))):
                yield chart, values, by

    def _scripts(self, source: SourceFile, document: yaml.Node) -> Iterator[tuple[yaml.ScalarNode, str]]:
        """Each shell script of a workflow or GitLab CI file, with the directory it runs in."""
        if is_workflow(source.relpath):
            default = scalar(get(get(get(document, "defaults"), "run"), "working-directory")) or ""
            for _name, _key, job in mapping_items(get(document, "jobs")):
                job_dir = scalar(get(get(get(job, "defaults"), "run"), "working-directory")) or default
                for step in items(get(job, "steps")):
                    run = get(step, "run")
                    if isinstance(run, yaml.ScalarNode) and scalar(run):
                        yield run, scalar(get(step, "working-directory")) or job_dir
        else:
            jobs = dict(_gitlab_jobs(document))
            for name in jobs:
                for node in script_lines(resolve_job(name, jobs), jobs, get(document, "default")):
                    yield node, ""

    # -- GitHub Actions ---------------------------------------------------------------------
    def _workflow(self, source: SourceFile, document: yaml.Node) -> Iterator[Fact]:
        for _name, _key, job in mapping_items(get(document, "jobs")):
            hint = None
            container = get(job, "container")
            image = container if scalar(container) is not None else get(container, "image")
            if isinstance(image, yaml.ScalarNode) and scalar(image):
                yield self._image(source, image)
                if is_vllm_image(str(image.value)):
                    hint = image_hint(str(image.value), source.relpath, image.start_mark.line + 1)
            for _service, _k, service in mapping_items(get(job, "services")):
                found = get(service, "image")
                if isinstance(found, yaml.ScalarNode) and scalar(found):
                    yield self._image(source, found)
            matrix = matrix_values(source.text, job) if "matrix." in source.text else {}
            for step in items(get(job, "steps")):
                run = get(step, "run")
                if isinstance(run, yaml.ScalarNode) and scalar(run):
                    scopes = (get(document, "env"), get(job, "env"), get(step, "env"))
                    known = literal_variables(source.text, scopes)
                    held = matrix_env(scopes, matrix, known) if matrix else {}
                    yield from self._script(source, run, hint, known, matrix, held)

    # -- GitLab CI --------------------------------------------------------------------------
    def _gitlab(self, source: SourceFile, document: yaml.Node) -> Iterator[Fact]:
        default_image = _gitlab_image(get(document, "image")) or _gitlab_image(get(get(document, "default"), "image"))
        if default_image is not None:
            yield self._image(source, default_image)
        jobs = dict(_gitlab_jobs(document))
        templates = used_templates(jobs)
        for name, job in jobs.items():
            hint = None
            image = _gitlab_image(get(job, "image"))
            if image is not None:
                yield self._image(source, image)
            resolved = resolve_job(name, jobs)  # its extends merged in
            image = image or _gitlab_image(resolved.keys.get("image")) or default_image
            if image is not None and is_vllm_image(str(image.value)):
                hint = image_hint(str(image.value), source.relpath, image.start_mark.line + 1)
            for service in items(get(job, "services")):
                found = _gitlab_image(service)
                if found is not None:
                    yield self._image(source, found)
            if name in templates:
                continue  # its lines are read through the jobs that use it
            scopes = (get(document, "variables"), *resolved.variables)
            lines = list(script_lines(resolved, jobs, get(document, "default")))
            yield from self._session(source, lines, hint, literal_variables(source.text, scopes))

    def _session(
        self,
        source: SourceFile,
        nodes: list[yaml.ScalarNode],
        hint: tuple[str, str] | None,
        variables: dict[str, list[Token]] | None = None,
    ) -> list[Fact]:
        """The facts of a job's script lines read as the one shell session the runner runs
        them in (a variable one line sets is read by the next), each token placed in the
        scalar it is written in."""
        if not nodes:
            return []
        starts: list[int] = []  # 1-based line of each scalar's text in the joined text
        line = 1
        for node in nodes:
            starts.append(line)
            line += str(node.value).count("\n") + 1
        movers = [scalar_relocator(source.text, node) for node in nodes]

        def relocate(token: Token) -> Token:
            index = max(bisect.bisect_right(starts, token.line) - 1, 0)
            offset = starts[index] - 1
            return movers[index](token.moved(lambda p: (p[0] - offset, p[1])))

        text = "\n".join(str(node.value) for node in nodes)
        return self._shell(source, text, relocate, hint, variables)

    def _shell(
        self,
        source: SourceFile,
        text: str,
        relocate: Callable[[Token], Token],
        hint: tuple[str, str] | None,
        variables: dict[str, list[Token]] | None,
        matrix: dict[str, list[list[Token]]] | None = None,
        held: dict[str, list[list[Token]]] | None = None,
    ) -> list[Fact]:
        """The facts of a CI script ``text``: its ``${{ }}`` expressions neutralised, the
        literal variables its scopes set known, each literal ``matrix`` value read in turn,
        as the ``env:`` variables that hold one (``held``) are (:mod:`.ciexpr`)."""
        known = dict(variables or {})
        text = env_references(text, known)
        alternatives: dict[str, list[list[Token]]] = dict(held or {})
        if matrix:
            text = matrix_references(text, matrix, alternatives)
        neutral = neutralise_expressions(text)
        placed = {(t.line, t.column) for tokens in known.values() for t in tokens}
        placed.update((t.line, t.column) for values in alternatives.values() for tokens in values for t in tokens)
        move = restoring(text, neutral, placed, relocate)
        facts, script = shell_facts(
            neutral, source.relpath, self.name, variables=known, hint=hint, relocate=move, alternatives=alternatives
        )
        if alternatives:
            facts = pins_at_matrix_values(facts, script, alternatives, move)
        if neutral == text:
            return facts
        return with_expressions(facts, script, text, neutral, move)

    def _image(self, source: SourceFile, node: yaml.ScalarNode) -> Fact:
        return image_fact(scalar_word(source.text, node), source.relpath, self.name, syntax="yaml")

    def _script(
        self,
        source: SourceFile,
        node: yaml.ScalarNode,
        hint: tuple[str, str] | None = None,
        variables: dict[str, list[Token]] | None = None,
        matrix: dict[str, list[list[Token]]] | None = None,
        held: dict[str, list[list[Token]]] | None = None,
    ) -> list[Fact]:
        return self._shell(source, str(node.value), scalar_relocator(source.text, node), hint, variables, matrix, held)

    # -- Ansible ----------------------------------------------------------------------------
    def _tasks(self, source: SourceFile, node: yaml.Node | None, depth: int = 0) -> Iterator[Fact]:
        if depth > 8:
            return
        for task in items(node):
            for key, _k, value in mapping_items(task):
                if key in _TASK_LISTS:
                    yield from self._tasks(source, value, depth + 1)
                elif key in _PIP_MODULES:
                    yield from self._pip(source, value)
                elif key in _COMMAND_MODULES:
                    line = value if scalar(value) is not None else get(value, "cmd")
                    if isinstance(line, yaml.ScalarNode) and scalar(line):
                        yield from self._script(source, line)

    def _pip(self, source: SourceFile, module: yaml.Node | None) -> Iterator[Fact]:
        """The requirements of a ``pip`` task: ``name:`` (one or a list of PEP 508 strings;
        with ``version:``, one distribution at that version, which a bump sets there)."""
        names = get(module, "name")
        version_node = get(module, "version")
        version = scalar(version_node)
        for node in [names, *items(names)]:
            if not isinstance(node, yaml.ScalarNode) or not scalar(node):
                continue
            word = scalar_word(source.text, node)
            text = str(node.value)
            if (
                version
                and isinstance(version_node, yaml.ScalarNode)
                and not any(op in text for op in "=<>~!@")
            ):
                fact = requirement_fact(
                    f"{text}=={version}", source.relpath, word.line, word.column, self.name
                )
                if fact is not None:
                    at = scalar_word(source.text, version_node)
                    place = (
                        Span(at.line, at.column, at.line, at.column + len(version))
                        if "\n" not in version
                        else None
                    )
                    note = (
                        ""
                        if place is not None
                        else "the task's version: is not written on one line; change it by hand"
                    )
                    fact = replace(fact, spans=Spans(version=place, syntax="yaml", note=note))
            else:
                fact = requirement_fact(
                    text, source.relpath, word.line, word.column, self.name, token=word, syntax="yaml"
                )
            if fact is not None:
                yield fact


def _gitlab_jobs(document: yaml.Node) -> Iterator[tuple[str, yaml.Node]]:
    """The jobs of a GitLab CI file: top-level mappings (hidden ``.template`` jobs included,
    as jobs ``extends`` them) that are not a global keyword."""
    for name, _key, job in mapping_items(document):
        if name not in _GITLAB_RESERVED and isinstance(job, yaml.MappingNode):
            yield name, job


def _gitlab_image(node: yaml.Node | None) -> yaml.ScalarNode | None:
    """The image of a GitLab ``image:``/``services:`` entry (a string, or ``name:``)."""
    found = node if isinstance(node, yaml.ScalarNode) else get(node, "name")
    return found if isinstance(found, yaml.ScalarNode) and scalar(found) else None
