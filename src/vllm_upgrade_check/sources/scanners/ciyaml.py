"""YAML files that run shell commands and containers without being a deployment manifest:
GitHub Actions workflows (``.github/workflows/*.yml``: each step's ``run:`` script, the job's
``container`` image and its ``services.*.image``) and Ansible task lists and playbooks (a
``pip`` task's ``name:`` requirements, ``command``/``shell`` tasks' command lines).

The scripts are read by the shell scanner's parser (:func:`~.shell.shell_facts`) at the
place the YAML scalar is written, so launches, ``pip install vllm==X`` and their flags are
reported at their ``file:line`` and fixed where the scalar is plain enough to place them;
images and requirements are facts as in compose files and requirements files.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

import yaml

from vllm_upgrade_check.model.facts import Fact, Skipped, Span, Spans
from vllm_upgrade_check.parsing.yamlnodes import (
    YamlProblem,
    compose_documents,
    get,
    items,
    mapping_items,
    scalar,
)
from vllm_upgrade_check.parsing.yamlwords import scalar_word
from vllm_upgrade_check.sources.scanners.base import Scanner, SourceFile
from vllm_upgrade_check.sources.scanners.containers import scalar_relocator
from vllm_upgrade_check.sources.scanners.images import image_fact, image_hint, is_vllm_image
from vllm_upgrade_check.sources.scanners.manifests import YAML_SUFFIXES
from vllm_upgrade_check.sources.scanners.requirements import requirement_fact
from vllm_upgrade_check.sources.scanners.shell import shell_facts

_PIP_MODULES = frozenset({"pip", "ansible.builtin.pip"})
_COMMAND_MODULES = frozenset({"command", "shell", "ansible.builtin.command", "ansible.builtin.shell"})
_TASK_LISTS = ("tasks", "pre_tasks", "post_tasks", "handlers", "block", "rescue", "always")


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
        if not source.name.endswith(YAML_SUFFIXES) or "vllm" not in source.text.lower():
            return False
        return is_workflow(source.relpath) or _ansible_like(source.text)

    def scan(self, source: SourceFile) -> Iterator[Fact | Skipped]:
        try:
            documents = compose_documents(source.text)
        except YamlProblem:
            return  # the manifest scanner, which reads every YAML file, reports it skipped
        workflow = is_workflow(source.relpath)
        for document in documents:
            if workflow:
                yield from self._workflow(source, document)
            else:
                yield from self._tasks(source, document)

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
            for step in items(get(job, "steps")):
                run = get(step, "run")
                if isinstance(run, yaml.ScalarNode) and scalar(run):
                    yield from self._script(source, run, hint)

    def _image(self, source: SourceFile, node: yaml.ScalarNode) -> Fact:
        return image_fact(scalar_word(source.text, node), source.relpath, self.name, syntax="yaml")

    def _script(
        self, source: SourceFile, node: yaml.ScalarNode, hint: tuple[str, str] | None = None
    ) -> list[Fact]:
        facts, _script = shell_facts(
            str(node.value),
            source.relpath,
            self.name,
            hint=hint,
            relocate=scalar_relocator(source.text, node),
        )
        return facts

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
