"""Fuzz targets: one function per parser, each taking raw bytes and raising only on a bug.

Used by the atheris drivers (``fuzz_<target>.py``) and by ``tests/test_fuzz_corpus.py``,
which replays the saved corpus under ``tests/fuzz/corpus/<target>/`` on every test run.
A target fails (raises) when the code under test raises anything, or returns something
other than what a scanner yields (facts, skipped records, conditionals, references).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from vllm_upgrade_check.errors import RulePackError
from vllm_upgrade_check.model.facts import Fact, Skipped
from vllm_upgrade_check.model.pack import Pack
from vllm_upgrade_check.parsing.shell import Token, parse_shell
from vllm_upgrade_check.parsing.yamlnodes import YamlProblem, compose_documents, to_python
from vllm_upgrade_check.sources.discovery import _decode as _scan_decode
from vllm_upgrade_check.sources.scanners.arg_facts import arg_facts, normalise_flag
from vllm_upgrade_check.sources.scanners.base import Conditional, FileReference, Reference, SourceFile
from vllm_upgrade_check.sources.scanners.dockerfile import DockerfileScanner
from vllm_upgrade_check.sources.scanners.manifests import ManifestScanner
from vllm_upgrade_check.sources.scanners.monitoring import MonitoringScanner
from vllm_upgrade_check.sources.scanners.requirements import RequirementsScanner
from vllm_upgrade_check.sources.scanners.shell import ShellScanner
from vllm_upgrade_check.sources.scanners.vllm_argv import find_launch


def _decode(data: bytes) -> str:
    """The text a scan reads from ``data`` (bytes that start as UTF-16 but do not decode are
    skipped by the scan; here they are read as Latin-1, so that the scanners still get them)."""
    try:
        return _scan_decode(data)
    except UnicodeDecodeError:
        return data.decode("latin-1")


def _check(items: Iterable[object]) -> None:
    for item in items:
        assert isinstance(item, Fact | Skipped | Conditional | Reference | FileReference), f"unexpected item {item!r}"


def shell(data: bytes) -> None:
    """Shell scripts: tree-sitter-bash parse, launch recognition, pip install, env vars."""
    text = _decode(data)
    parse_shell(text)
    _check(ShellScanner().scan(SourceFile("launch.sh", text + "\nvllm serve m\n")))
    _check(ShellScanner().scan(SourceFile("run.sh", text)))


def flags(data: bytes) -> None:
    """The flag normaliser and the argv reader of a ``vllm serve`` command line."""
    text = _decode(data)
    words = text.split()
    for word in words[:64]:
        name, aliases = normalise_flag(word)
        assert isinstance(name, str) and all(isinstance(a, str) for a in aliases)
    tokens = [Token(w, 1, i + 1, True, w) for i, w in enumerate(words)]
    _check(arg_facts(tokens, "x.sh", "shell", start=tokens[0] if tokens else None))
    find_launch(tokens)
    find_launch([Token("vllm", 1, 1, True, "vllm"), Token("serve", 1, 6, True, "serve"), *tokens])


def yaml_manifest(data: bytes) -> None:
    """YAML: the composer, ``to_python`` (node budget), the compose/Kubernetes walkers and the
    monitoring walkers (rule groups, dashboards held as JSON in a ConfigMap)."""
    text = _decode(data)
    _check(ManifestScanner().scan(SourceFile("deploy.yaml", "# vllm\n" + text)))
    _check(MonitoringScanner().scan(SourceFile("monitoring.yaml", text)))
    try:
        for doc in compose_documents(text):
            to_python(doc, {}, max_nodes=20_000)
    except YamlProblem:
        pass


def dockerfile(data: bytes) -> None:
    """Dockerfiles: dockerfile-parse, exec-form JSON arrays, RUN shell, ENV."""
    _check(DockerfileScanner().scan(SourceFile("Dockerfile", _decode(data))))


def requirements(data: bytes) -> None:
    """requirements.txt, pyproject.toml (TOML) and lock files (TOML and JSON walkers)."""
    text = _decode(data)
    scanner = RequirementsScanner()
    for name in ("requirements.txt", "pyproject.toml", "uv.lock", "Pipfile.lock"):
        _check(scanner.scan(SourceFile(name, text)))


def rulepack(data: bytes) -> None:
    """The rule-pack loader: a :class:`Pack` or a :class:`RulePackError`, nothing else."""
    from vllm_upgrade_check.knowledge.registry import load_pack_text

    try:
        pack = load_pack_text(_decode(data), "fuzz.yaml")
    except RulePackError as exc:
        assert "\n" not in str(exc).strip() or str(exc).startswith("fuzz.yaml"), str(exc)
        return
    assert isinstance(pack, Pack)


TARGETS: dict[str, Callable[[bytes], None]] = {
    "shell": shell,
    "flags": flags,
    "yaml": yaml_manifest,
    "dockerfile": dockerfile,
    "requirements": requirements,
    "rulepack": rulepack,
}
"""Target name (also the corpus folder name) -> function."""
