"""Whether a file's text still parses as what it is, for the check before a fix is written.

A fix may only write text that parses wherever the old text did, whatever the file is and
whether or not it configures vLLM by itself (a kustomize patch file is read through its
kustomization: a patch left as ``"value": }`` would be dropped from a later scan in silence).
The parsers are those the scanners read these files with: YAML nodes (:mod:`.yamlnodes`;
a Helm template after its actions are neutralised, :mod:`.templates`),
JSON, TOML (:mod:`.toml`), Python (:mod:`ast`), shell (tree-sitter, :mod:`.shell`) and
Dockerfiles (``dockerfile-parse``, each exec form as JSON and each shell form as shell).
"""

from __future__ import annotations

import ast
import io
import json
import re
import warnings
from collections.abc import Sequence

from vllm_upgrade_check.parsing.shell import parse_shell
from vllm_upgrade_check.parsing.toml import TomlProblem, load_toml
from vllm_upgrade_check.parsing.yamlnodes import YamlProblem, documents
from vllm_upgrade_check.sources.scanners.templates import has_template_actions, neutralise_templates
from vllm_upgrade_check.sources.sniff import is_dockerfile_name

_SHELL_SUFFIXES = (".sh", ".bash", ".ksh", ".zsh")
_SHELL_FORMS = frozenset({"RUN", "CMD", "ENTRYPOINT", "HEALTHCHECK"})


def syntax_problems(relpath: str, text: str, scanners: Sequence[str] = ()) -> tuple[str, ...]:
    """Why ``text`` (of file ``relpath``) does not parse as the kind of file it is, one
    reason per part that does not (numbers blanked: a shift of lines is no new problem);
    ``()`` when it parses or is of no kind checked here.

    The kind comes from the name (``.json``, ``.yaml``/``.yml``, ``.toml``, ``.py``, shell
    suffixes, Dockerfile names) and from ``scanners``, the names of the scanners that read
    the file (``shell`` for a script without a suffix, ``python``). Never raises.
    """
    name = relpath.rsplit("/", 1)[-1]
    lower = name.lower()
    found: list[str] = []
    if lower.endswith(".json"):
        found.extend(_json(text))
    elif lower.endswith((".yaml", ".yml")) or name in ("Kustomization",):
        found.extend(_yaml(text))
    elif lower.endswith(".toml"):
        found.extend(_toml(text))
    elif lower.endswith(".py") or "python" in scanners:
        found.extend(_python(text))
    elif is_dockerfile_name(name):
        found.extend(_dockerfile(text))
    elif lower.endswith(_SHELL_SUFFIXES) or "shell" in scanners:
        if parse_shell(text).has_error:
            found.append("shell: a syntax error")
    return tuple(re.sub(r"\d+", "N", f) for f in found)


def _json(text: str) -> list[str]:
    if not text.strip():
        return []
    try:
        json.loads(text)
    except ValueError as exc:
        return [f"JSON: {exc}"]
    return []


def _yaml(text: str) -> list[str]:
    if has_template_actions(text):  # a Helm template, read as the scan reads it
        text = neutralise_templates(text)
    try:
        documents(text)
    except YamlProblem as exc:
        return [f"YAML: {exc}"]
    return []


def _toml(text: str) -> list[str]:
    try:
        load_toml(text)
    except TomlProblem as exc:
        return [f"TOML: {exc}"]
    return []


def _python(text: str) -> list[str]:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escapes and the like: still Python
            ast.parse(text)
    except (SyntaxError, ValueError) as exc:
        return [f"Python: {exc.__class__.__name__}"]
    return []


def _dockerfile(text: str) -> list[str]:
    from dockerfile_parse import DockerfileParser

    try:
        structure = DockerfileParser(fileobj=io.BytesIO(text.encode("utf-8"))).structure
    except Exception as exc:  # dockerfile-parse raises plain exceptions on bad input
        return [f"Dockerfile: {exc.__class__.__name__}"]
    out: list[str] = []
    for item in structure:
        instruction = str(item.get("instruction", "")).upper()
        if instruction not in _SHELL_FORMS:
            continue
        value = str(item.get("value", "")).strip()
        if instruction == "HEALTHCHECK":
            _options, cmd, value = value.partition("CMD")
            if not cmd:
                continue  # HEALTHCHECK NONE
            value = value.strip()
        if value.startswith("["):
            try:
                json.loads(value)
            except ValueError:
                out.append(f"Dockerfile {instruction}: its exec form is no JSON array")
        elif parse_shell(value).has_error:
            out.append(f"Dockerfile {instruction}: a shell syntax error")
    return out
