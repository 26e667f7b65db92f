"""Property-based tests: bad input never crashes a parser, and the normaliser behaves.

The fixer (fix then scan: nothing fixable left; fix twice = fix once) is not in this
branch; its properties belong with it.
"""

from __future__ import annotations

import json

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vllm_upgrade_check.errors import RulePackError
from vllm_upgrade_check.knowledge.registry import load_pack_text
from vllm_upgrade_check.model.facts import Fact, FactKind, Skipped
from vllm_upgrade_check.model.pack import Pack
from vllm_upgrade_check.parsing.shell import Token, parse_shell
from vllm_upgrade_check.parsing.yamlnodes import YamlProblem, compose_documents, to_python
from vllm_upgrade_check.sources.scanners.arg_facts import arg_facts, normalise_flag
from vllm_upgrade_check.sources.scanners.base import FileReference, SourceFile
from vllm_upgrade_check.sources.scanners.dockerfile import DockerfileScanner
from vllm_upgrade_check.sources.scanners.manifests import ManifestScanner
from vllm_upgrade_check.sources.scanners.requirements import RequirementsScanner
from vllm_upgrade_check.sources.scanners.shell import ShellScanner
from vllm_upgrade_check.sources.scanners.vllm_argv import find_launch

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

WORDS = st.sampled_from(
    [
        "vllm",
        "serve",
        "python",
        "-m",
        "vllm.entrypoints.openai.api_server",
        "--model",
        "m",
        "--max-num-seqs",
        "--max_num_seqs=8",
        "--no-enable-prefix-caching",
        "--compilation-config.level",
        "-tp",
        "2",
        "-O3",
        "--",
        "-",
        "=",
        "docker",
        "run",
        "vllm/vllm-openai:v0.27.0",
        "-e",
        "VLLM_USE_V1=1",
        "pip",
        "install",
        "vllm==0.27.0",
        "sh",
        "-c",
        "'vllm serve x --port 1'",
        '"$MODEL"',
        "${X:-y}",
        "$(echo a)",
        "|",
        "&&",
        ";",
        "\\\n",
        "<<EOF\nx\nEOF",
        "#",
        "'",
        '"',
        "`",
    ]
)
SHELLISH = st.one_of(st.lists(WORDS | st.text(max_size=12), max_size=30).map(" ".join), st.text(max_size=200))


def _only_facts(items: object) -> list[Fact | Skipped]:
    out = list(items)  # type: ignore[call-overload]
    assert all(isinstance(i, Fact | Skipped) for i in out)
    return out


@SETTINGS
@given(SHELLISH)
def test_shell_parser_never_crashes(text: str) -> None:
    script = parse_shell(text)
    for command in script.commands:
        assert all(isinstance(t.text, str) and t.line >= 1 and t.column >= 1 for t in command.argv)
    _only_facts(ShellScanner().scan(SourceFile("run.sh", text + "\nvllm serve m\n")))


@SETTINGS
@given(st.lists(WORDS | st.text(max_size=10), max_size=25), st.booleans())
def test_launch_argv_reader_never_crashes(words: list[str], resolved: bool) -> None:
    tokens = [Token(w, 1, 1 + i, resolved, w) for i, w in enumerate(words)]
    facts = _only_facts(arg_facts(tokens, "x.sh", "shell", start=tokens[0] if tokens else None))
    launches = [f for f in facts if isinstance(f, Fact) and f.kind == FactKind.LAUNCH]
    args = {f.name for f in facts if isinstance(f, Fact) and f.kind == FactKind.ARG}
    if launches:
        assert args <= launches[0].args
    find_launch(tokens)


@SETTINGS
@given(st.text(alphabet=st.characters(blacklist_characters="."), max_size=30))
def test_flag_normaliser(flag: str) -> None:
    name, aliases = normalise_flag(flag)
    assert "-" not in name
    assert name == flag.lstrip("-").replace("-", "_")
    # dashes and underscores are one flag to vLLM's FlexibleArgumentParser
    if name and not name.startswith("_"):
        assert normalise_flag("--" + name.replace("_", "-")) == normalise_flag("--" + name)
    if name.startswith("no_") and len(name) > 3:
        assert aliases == (name[3:],)


@SETTINGS
@given(st.tuples(st.text(max_size=20), st.text(max_size=20)).map(".".join))
def test_flag_normaliser_dotted(flag: str) -> None:
    name, aliases = normalise_flag(flag)
    assert "." not in name and aliases and "." in aliases[0]


JSONISH = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.text(max_size=8)
    | st.sampled_from(["vllm", "--max-num-seqs"]),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.sampled_from(["services", "image", "command", "args", "containers", "env", "name", "value"])
            | st.text(max_size=6),
            inner,
            max_size=4,
        )
    ),
    max_leaves=25,
)


@SETTINGS
@given(JSONISH)
def test_manifest_walkers_never_crash_on_any_structure(data: object) -> None:
    text = "# vllm\n" + yaml.safe_dump({"apiVersion": "v1", "kind": "Pod", "spec": data, "services": data})
    # besides facts, a compose document names the files it is read again with (its .env)
    items = list(ManifestScanner().scan(SourceFile("deploy.yaml", text)))
    assert all(r.scanner == "manifest" for r in items if isinstance(r, FileReference))
    _only_facts(i for i in items if not isinstance(i, FileReference))


@SETTINGS
@given(st.text(max_size=300))
def test_yaml_reader_raises_only_yaml_problem(text: str) -> None:
    try:
        for doc in compose_documents(text):
            to_python(doc, {}, max_nodes=5_000)
    except YamlProblem as exc:
        assert exc.line is None or exc.line >= 1
    _only_facts(i for i in ManifestScanner().scan(SourceFile("compose.yaml", "vllm\n" + text)) if not isinstance(i, FileReference))


@SETTINGS
@given(JSONISH, st.text(max_size=100))
def test_lock_and_requirements_walkers_never_crash(data: object, text: str) -> None:
    scanner = RequirementsScanner()
    _only_facts(scanner.scan(SourceFile("Pipfile.lock", json.dumps({"default": data, "develop": [data]}))))
    _only_facts(scanner.scan(SourceFile("Pipfile.lock", json.dumps(data))))
    for name in ("requirements.txt", "pyproject.toml", "uv.lock"):
        _only_facts(scanner.scan(SourceFile(name, text)))


@SETTINGS
@given(st.text(max_size=300))
def test_dockerfile_scanner_never_crashes(text: str) -> None:
    _only_facts(DockerfileScanner().scan(SourceFile("Dockerfile", "FROM vllm/vllm-openai:v0.27.0\n" + text)))
    _only_facts(DockerfileScanner().scan(SourceFile("Dockerfile", text)))


PACKISH = st.fixed_dictionaries(
    {"release": st.sampled_from(["0.27.0", "x", 1, None]), "rules": st.lists(JSONISH, max_size=3)},
    optional={"previous": JSONISH, "wheel": JSONISH, "schema_version": st.integers(), "extra": JSONISH},
)


@SETTINGS
@given(PACKISH | JSONISH)
def test_rule_pack_loader_raises_only_rule_pack_error(data: object) -> None:
    try:
        pack = load_pack_text(yaml.safe_dump(data), "p.yaml")
    except RulePackError as exc:
        assert str(exc).startswith("p.yaml") and "\n" not in str(exc).strip()
        return
    assert isinstance(pack, Pack)


@SETTINGS
@given(st.text(max_size=300))
def test_rule_pack_loader_on_any_text(text: str) -> None:
    try:
        load_pack_text(text, "p.yaml")
    except RulePackError as exc:
        assert str(exc).startswith("p.yaml")
