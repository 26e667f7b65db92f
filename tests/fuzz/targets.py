"""Fuzz targets: one function per parser, each taking raw bytes and raising only on a bug.

Used by the atheris drivers (``fuzz_<target>.py``) and by ``tests/test_fuzz_corpus.py``,
which replays the saved corpus under ``tests/fuzz/corpus/<target>/`` on every test run.
A target fails (raises) when the code under test raises anything, or returns something
other than what a scanner yields (facts, skipped records, conditionals, references).

The loaders of the tool's own inputs (configuration, baseline, freeze file, ``fleet merge``
input, rule pack) and discovery under a hostile ``.gitignore`` hold one invariant: a valid
result, or a :class:`~vllm_upgrade_check.errors.VucError` whose text is one line naming the
file (the CLI prints it and exits 2). Anything else (a traceback) is a bug; a hang is caught
by libFuzzer's ``-timeout``.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path

from vllm_upgrade_check.cli.config import Config, load_config
from vllm_upgrade_check.cli.fleet_cmd import merge_reports, read_env_reports, render_markdown
from vllm_upgrade_check.errors import RulePackError, VucError
from vllm_upgrade_check.knowledge.registry import load_pack_text
from vllm_upgrade_check.matching.baseline import load_baseline
from vllm_upgrade_check.model.environment import Environment
from vllm_upgrade_check.model.facts import Fact, Skipped
from vllm_upgrade_check.model.pack import Pack
from vllm_upgrade_check.parsing import shell as shell_module
from vllm_upgrade_check.parsing.shell import Token, offset_locator, parse_shell
from vllm_upgrade_check.parsing.shell_plain import plain_script
from vllm_upgrade_check.parsing.yamlnodes import YamlProblem, compose_documents, to_python
from vllm_upgrade_check.sources.discovery import _decode as _scan_decode
from vllm_upgrade_check.sources.discovery import walk
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
    """Shell scripts: tree-sitter-bash parse, launch recognition, pip install, env vars; text
    the plain-words fast path reads must read as the tree walk reads it."""
    text = _decode(data)
    mine: dict[str, list[Token]] = {}
    got = parse_shell(text, None, mine)
    if plain_script(text.encode(), offset_locator(text, 1, 1), {}) is not None:
        saved = shell_module.plain_script
        shell_module.plain_script = lambda *_args: None
        try:
            theirs: dict[str, list[Token]] = {}
            assert parse_shell(text, None, theirs) == got and theirs == mine, f"fast path differs on {text!r}"
        finally:
            shell_module.plain_script = saved
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


def _one_line(exc: VucError, path: object) -> None:
    """The invariant of a refused input: one line of text that starts with the file's name."""
    text = str(exc)
    assert "\n" not in text and "\r" not in text, f"error of more than one line: {text!r}"
    assert text.startswith(f"{path}:"), f"error does not name {path}: {text!r}"
    assert exc.message.strip(), "error with no message"


def rulepack(data: bytes) -> None:
    """The rule-pack loader: a :class:`Pack` or a one-line :class:`RulePackError`, nothing else."""

    try:
        pack = load_pack_text(_decode(data), "fuzz.yaml")
    except RulePackError as exc:
        _one_line(exc, "fuzz.yaml")
        return
    assert isinstance(pack, Pack)
    assert all(rule.id for rule in pack.rules)


def _scratch(name: str, data: bytes) -> Path:
    """``data`` written to a file called ``name`` in a fresh scratch directory (the caller removes it)."""
    folder = Path(tempfile.mkdtemp(prefix="vuc-fuzz-"))
    path = folder / name
    path.write_bytes(data)
    return path


def _loader(name: str, data: bytes, load: Callable[[Path], object]) -> object | None:
    """``load`` of ``data`` saved as ``name``: its result, or ``None`` after checking the error."""
    path = _scratch(name, data)
    try:
        return load(path)
    except VucError as exc:
        _one_line(exc, path)
        return None
    finally:
        shutil.rmtree(path.parent, ignore_errors=True)


def config(data: bytes) -> None:
    """``.vllm-upgrade-check.toml`` and ``[tool.vllm-upgrade-check]`` in a ``pyproject.toml``."""

    for name in (".vllm-upgrade-check.toml", "pyproject.toml"):
        result = _loader(name, data, load_config)
        if result is not None:
            assert isinstance(result, Config)
            assert all(isinstance(p, str) for p in result.exclude)
            assert all(i.id and i.id == i.id.strip() for i in result.ignores)


def baseline(data: bytes) -> None:
    """``--baseline`` files: fingerprints with positive counts, or a one-line error."""

    result = _loader("baseline.json", data, load_baseline)
    if result is not None:
        assert isinstance(result, Counter)
        assert all(isinstance(k, str) and isinstance(v, int) and v >= 1 for k, v in result.items())


def freeze(data: bytes) -> None:
    """``env --freeze`` files (pip freeze, uv pip freeze, pip list --format=freeze)."""
    from vllm_upgrade_check.sources.host.environment import read_freeze_file

    result = _loader("freeze.txt", data, read_freeze_file)
    if result is not None:
        assert isinstance(result, Environment)
        assert all(isinstance(k, str) and isinstance(v, str) for k, v in result.distributions.items())
        assert not set(result.unversioned) & set(result.distributions)


def fleet(data: bytes) -> None:
    """``fleet merge`` input: the env reports found in a log, checked and merged."""

    reports = _loader("host.log", data, read_env_reports)
    if reports is not None:
        assert isinstance(reports, list) and reports and all(isinstance(r, dict) for r in reports)
        merged = merge_reports([("host.log", r) for r in reports])
        assert len(merged["hosts"]) == len(reports)
        render_markdown(merged)
        json.dumps(merged)


def discovery(data: bytes) -> None:
    """Discovery under a hostile ``.gitignore`` and ``--exclude``: the first line of ``data``
    is an ``--exclude`` pattern, the rest the ``.gitignore``; a fixed tree of long names is
    walked. Every file yielded exists under the root and is not ``.git`` content; a walk that
    does not end is the hang libFuzzer's ``-timeout`` reports."""

    text = data.decode("utf-8", "replace").replace("\0", "")
    first, _, rest = text.partition("\n")
    root = Path(tempfile.mkdtemp(prefix="vuc-fuzz-"))
    try:
        names = ["a" * 120 + "b.sh", "a" * 60 + "/" + "ab" * 40 + ".yaml", "x/y/run.sh", ".hidden/é.sh"]
        for name in names:
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_text("vllm serve m\n")
        (root / ".gitignore").write_text(rest, encoding="utf-8")
        skipped: list[Skipped] = []
        try:
            found = list(walk(root, exclude=[first] if first.strip() else [], skipped=skipped))
        except VucError as exc:  # an --exclude pattern refused: exit 2 with one line
            text = str(exc)
            assert "\n" not in text and exc.message.strip(), text
            return
        rels = [rel for _, rel in found]
        assert len(rels) == len(set(rels)), rels
        assert set(rels) <= {*names, ".gitignore"}, rels
        assert all(Path(path).is_file() for path, _ in found)
    finally:
        shutil.rmtree(root, ignore_errors=True)


FIX_REMOVED = ("--max-num-partial-prefills", "2", "--calculate-kv-scales", "--swap-space", "4")
"""Flags vLLM removed (0.27.0, 0.28.0, 0.18.0) that the fix target writes among the input's words."""

FIX_FORMS = ("serve.sh", "serve-continued.sh", "docker-compose.yml", "Dockerfile", "launch.py")


def _fix_file(form: str, argv: list[str]) -> str:
    """The text of file ``form`` running ``argv``: a shell line (one or continued), a
    compose command list, a Dockerfile exec form, a Python ``subprocess.run`` list."""
    import shlex

    if form == "serve.sh":
        return "#!/bin/sh\n" + shlex.join(argv) + "\n"
    if form == "serve-continued.sh":
        return "#!/bin/sh\n" + " \\\n  ".join(shlex.quote(w) for w in argv) + "\n"
    if form == "docker-compose.yml":
        items = "".join(f"      - {json.dumps(w)}\n" for w in argv[2:])
        return f"services:\n  engine:\n    image: vllm/vllm-openai:v0.20.0\n    command:\n{items}"
    if form == "Dockerfile":
        return "FROM vllm/vllm-openai:v0.20.0\nCMD " + json.dumps(argv) + "\n"
    return "import subprocess\n\nsubprocess.run(" + repr(argv) + ")\n"


def fix(data: bytes) -> None:
    """``fix`` of a launch made of the input's words with removed flags among them, written
    as a shell line, a continued shell line, a compose list, a Dockerfile exec form or a
    Python list: it raises nothing but a one-line usage error, every file it writes still
    parses (a scan after it skips no file the one before did not), and each launch serves
    the model it served."""
    from vllm_upgrade_check.engine import run_scan
    from vllm_upgrade_check.engine.fix import fix_paths
    from vllm_upgrade_check.model.facts import FactKind
    from vllm_upgrade_check.model.options import ScanOptions

    if len(data) < 2:
        return
    form = FIX_FORMS[data[0] % len(FIX_FORMS)]
    words = [w for w in _decode(data[1:]).replace("\x00", "").split(" ") if w][:24]
    mixed: list[str] = []
    for i, word in enumerate(words):
        mixed.append(word)
        if i % 3 == 1:
            mixed.extend(FIX_REMOVED[(i // 3) % 3 * 2 : (i // 3) % 3 * 2 + 2])
    argv = ["vllm", "serve", "acme/fuzz-model", *mixed, *FIX_REMOVED[:2]]
    root = Path(tempfile.mkdtemp(prefix="vuc-fuzz-"))
    try:
        (root / form).write_text(_fix_file(form, argv), encoding="utf-8")
        options = ScanOptions.of(paths=[root], to_version="0.28.0", from_version="0.20.0")

        def reading() -> tuple[set[str], Counter[str | None]]:
            facts: list[Fact] = []
            report = run_scan(options, facts_out=facts)
            models = Counter(f.model for f in facts if f.kind == FactKind.LAUNCH)
            return {s.path for s in report.skipped}, models

        skipped, models = reading()
        try:
            fix_paths(options, unsafe=True, bump=False)
        except VucError as exc:
            _one_line(exc, root / form)
            return
        after_skipped, after_models = reading()
        assert after_skipped <= skipped, f"fix wrote a file that does not parse: {after_skipped - skipped}"
        assert after_models == models, f"fix changed the served models: {models} -> {after_models}"
    finally:
        shutil.rmtree(root, ignore_errors=True)


TARGETS: dict[str, Callable[[bytes], None]] = {
    "shell": shell,
    "flags": flags,
    "yaml": yaml_manifest,
    "dockerfile": dockerfile,
    "requirements": requirements,
    "rulepack": rulepack,
    "config": config,
    "baseline": baseline,
    "freeze": freeze,
    "fleet": fleet,
    "discovery": discovery,
    "fix": fix,
}
"""Target name (also the corpus folder name) -> function."""
