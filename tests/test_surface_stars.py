"""Star imports, the Transformers backend and hf_overrides keys, completion and embedding
response fields, and vLLM URLs of tags, tag archives and commits: each judged by the target,
with a from-version after the removal.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from packaging.version import Version

from vllm_upgrade_check.engine import run_scan
from vllm_upgrade_check.engine.scan import lost_response_fields
from vllm_upgrade_check.knowledge.public_names import public_names
from vllm_upgrade_check.knowledge.registry import load_registry
from vllm_upgrade_check.knowledge.surface import surface_history
from vllm_upgrade_check.matching.surface_values import overridden_architectures
from vllm_upgrade_check.model.facts import FactKind
from vllm_upgrade_check.model.options import ScanOptions
from vllm_upgrade_check.sources.scanners.base import SourceFile
from vllm_upgrade_check.sources.scanners.python.scanner import PythonSourceScanner
from vllm_upgrade_check.sources.scanners.python.stars import free_names, star_imports
from vllm_upgrade_check.sources.scanners.requirement_urls import url_ref, url_version

REGISTRY = load_registry()


def _findings(root: Path, to: str, start: str | None = None) -> dict[tuple[str, int, str], tuple[str, str]]:
    report = run_scan(ScanOptions.of(paths=[root], to_version=to, from_version=start), registry=REGISTRY)
    return {
        (f.location.path or "", f.location.line or 0, f.rule.id): (f.severity.value, f.rule.message)
        for f in report.findings
    }


def _gone_name(module: str, target: Version) -> str:
    """A public name ``module`` had before ``target`` and ``target``'s module lacks (read from the data)."""
    names = public_names().names(module)
    gone = sorted(n for n in names.runs if names.last_before(n, target) and not names.has(n, target))
    assert gone, f"{module} lost no name before {target}"
    return gone[0]


# --- star imports ---------------------------------------------------------------------------------


def test_free_names_leave_out_what_the_file_binds() -> None:
    tree = ast.parse(
        "from vllm import *\nimport os\nx = 1\n"
        "def f(a, *rest, k=None):\n    global g\n    return a, rest, k, x, os, LLM, len\n"
        "try:\n    pass\nexcept Exception as err:\n    print(err, Missing)\n"
        "for i in range(2):\n    print(i, [j for j in Other])\n"
    )
    assert sorted(free_names(tree)) == ["LLM", "Missing", "Other"]
    assert [(m, v) for _i, m, v in star_imports(tree)] == [("vllm", True)]


def test_a_name_a_vllm_star_import_no_longer_brings_is_a_blocker(tmp_path: Path) -> None:
    target = Version("0.28.0")
    name = _gone_name("vllm.utils", target)
    (tmp_path / "app.py").write_text(f"from vllm.utils import *\n\nvalue = {name}\n")
    got = _findings(tmp_path, "0.28.0", "0.28.0")
    severity, message = got[("app.py", 3, "VUC000-006")]
    assert severity == "blocker"
    assert "NameError" in message and f"{name} (from vllm.utils import *)" in message
    assert ("app.py", 1, "VUC000-006") not in got  # vllm.utils itself is still there


def test_a_star_import_of_a_removed_module_is_one_finding_on_the_import(tmp_path: Path) -> None:
    modules = surface_history("modules")
    target = Version("0.28.0")
    assert modules.removed_in("vllm.entrypoints.openai.protocol", target) is not None
    (tmp_path / "app.py").write_text(
        "from vllm.entrypoints.openai.protocol import *\n\nrequest = ChatCompletionRequest\n"
    )
    got = _findings(tmp_path, "0.28.0", "0.28.0")
    assert [k for k in got if k[0] == "app.py"] == [("app.py", 1, "VUC000-006")], got
    assert got[("app.py", 1, "VUC000-006")][0] == "blocker"


@pytest.mark.parametrize(
    "other",
    ["from acme_compat import *", "from .compat import *", "from acme.vllm_shims import *"],
)
@pytest.mark.parametrize("order", ["vllm first", "other first"])
def test_a_star_import_of_another_module_opens_the_names(tmp_path: Path, other: str, order: str) -> None:
    name = _gone_name("vllm.utils", Version("0.28.0"))
    stars = ["from vllm.utils import *", other]
    if order == "other first":
        stars.reverse()
    (tmp_path / "app.py").write_text("\n".join(stars) + f"\nvalue = {name}\n")
    got = _findings(tmp_path, "0.28.0", "0.28.0")
    assert ("app.py", 3, "VUC000-006") not in got, got
    facts = [
        f
        for f in PythonSourceScanner().scan(SourceFile("app.py", (tmp_path / "app.py").read_text()))
        if getattr(f, "origin", "") == "star"
    ]
    assert [(f.value, f.resolved) for f in facts] == [(name, False)]


def test_a_vllm_star_import_resolves_the_calls(tmp_path: Path) -> None:
    engine = surface_history("engine_args")
    gone = sorted(n for n in engine.runs if engine.last_before(n, Version("0.28.0")) and not engine.has(n, Version("0.28.0")))
    keyword = gone[0]
    (tmp_path / "app.py").write_text(f"from vllm import *\n\nargs = EngineArgs(model='m', {keyword}=1)\n")
    (tmp_path / "shadow.py").write_text(
        f"from vllm import *\nfrom acme_compat import *\n\nargs = EngineArgs(model='m', {keyword}=1)\n"
    )
    (tmp_path / "last.py").write_text(
        f"from acme_compat import *\nfrom vllm import *\n\nargs = EngineArgs(model='m', {keyword}=1)\n"
    )
    got = _findings(tmp_path, "0.28.0", "0.28.0")
    lines = {(k[0], k[1]) for k, v in got.items() if v[0] == "blocker"}
    assert ("app.py", 3) in lines and ("last.py", 4) in lines, got
    assert ("shadow.py", 4) not in lines, got


# --- the Transformers backend and hf_overrides ------------------------------------------------------


def _dropped_architecture(target: Version) -> str:
    history = surface_history("architectures")
    gone = sorted(n for n in history.runs if history.last_before(n, target) and not history.has(n, target))
    assert gone
    return gone[0]


def test_model_impl_values_come_from_the_wheels() -> None:
    impls = surface_history("model_impls")
    assert impls.has("transformers", Version("0.28.0"))
    assert not impls.has("transformers", Version("0.7.0"))  # --model-impl came with 0.7.2
    assert impls.ref("transformers")


@pytest.mark.parametrize(
    ("launch", "severity"),
    [
        ("vllm serve m --hf-overrides '{{\"architectures\": [\"{a}\"]}}'", "blocker"),
        ("vllm serve m --model-impl transformers --hf-overrides '{{\"architectures\": [\"{a}\"]}}'", "warning"),
        ("vllm serve m --hf-overrides='{{\"architectures\": \"{a}\"}}' --model-impl=transformers", "warning"),
        ("vllm serve m --model-impl vllm --hf-overrides '{{\"architectures\": [\"{a}\"]}}'", "blocker"),
    ],
)
def test_the_transformers_backend_makes_a_dropped_architecture_a_warning(
    tmp_path: Path, launch: str, severity: str
) -> None:
    arch = _dropped_architecture(Version("0.28.0"))
    (tmp_path / "serve.sh").write_text(launch.format(a=arch) + "\n")
    got = _findings(tmp_path, "0.28.0", "0.28.0")
    assert got[("serve.sh", 1, "VUC000-014")][0] == severity, got


def test_the_transformers_backend_in_python_and_for_a_config_json(tmp_path: Path) -> None:
    arch = _dropped_architecture(Version("0.28.0"))
    (tmp_path / "app.py").write_text(
        "from vllm import LLM\n"
        f"a = LLM('m', hf_overrides={{'architectures': ['{arch}']}}, model_impl='transformers')\n"
        f"b = LLM('m', hf_overrides=dict(architectures=['{arch}']))\n"
    )
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "config.json").write_text(f'{{"architectures": ["{arch}"], "model_type": "x"}}\n')
    got = _findings(tmp_path, "0.28.0", "0.28.0")
    assert got[("app.py", 2, "VUC000-014")][0] == "warning"
    assert got[("app.py", 3, "VUC000-014")][0] == "blocker"
    assert got[("model/config.json", 1, "VUC000-014")][0] == "warning"  # a launch of the scan asks for it
    (tmp_path / "app.py").write_text("from vllm import LLM\na = LLM('m')\n")
    assert _findings(tmp_path, "0.28.0", "0.28.0")[("model/config.json", 1, "VUC000-014")][0] == "blocker"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ('{"architectures": ["A"], "rope_scaling": {"rope_type": "yarn", "factor": 4.0}}', ["A"]),
        ('{"model_type": "llama", "num_hidden_layers": 2}', []),
        ('{"text_config": {"architectures": ["A"]}}', []),
        ("dict(architectures=['A'], max_position_embeddings=8192)", ["A"]),
        ("dict(architectures=ARCHS)", []),
        ("dict(**base)", []),
        ("{'architectures': ARCHS}", []),
        ("lambda c: c", []),
        ('["A"]', []),
        ('{"architectures": [1, "", "A"]}', ["A"]),
        ("{not json", []),
        ("", []),
    ],
)
def test_overridden_architectures_reads_only_the_architectures_key(value: str, expected: list[str]) -> None:
    assert overridden_architectures(value) == expected


# --- completion and embedding responses ---------------------------------------------------------------


def test_completion_and_embedding_fields_come_from_the_wheels() -> None:
    completion = surface_history("completion_fields")
    embedding = surface_history("embedding_fields")
    target = Version("0.28.0")
    assert {"text", "logprobs", "choices", "usage"} <= set(completion.names_at(target))
    assert {"data", "embedding", "usage"} <= set(embedding.names_at(target))
    assert "field_names" not in completion.runs  # a ClassVar of the base model, not a field
    gone = [n for n in completion.runs if completion.last_before(n, target) and not completion.has(n, target)]
    assert gone and set(gone) <= lost_response_fields()


def _lost_completion_field(target: Version) -> str:
    completion = surface_history("completion_fields")
    return sorted(n for n in completion.runs if completion.last_before(n, target) and not completion.has(n, target))[0]


def test_a_completion_field_the_target_dropped_is_a_warning_gated_by_the_server(tmp_path: Path) -> None:
    field = _lost_completion_field(Version("0.28.0"))
    client = "from openai import OpenAI\nclient = OpenAI(base_url='{url}', api_key='x')\n"
    (tmp_path / "ours.py").write_text(
        client.format(url="http://vllm.internal:8000/v1")
        + f"r = client.completions.create(model='m', prompt='x')\nprint(r.choices[0].{field})\n"
    )
    (tmp_path / "hosted.py").write_text(
        client.format(url="https://api.openai.com/v1")
        + f"r = client.completions.create(model='m', prompt='x')\nprint(r.choices[0].{field})\n"
    )
    (tmp_path / "raw.py").write_text(
        "import requests\n"
        "r = requests.post('http://10.0.0.5:8000/v1/completions', json={}).json()\n"
        f"print(r['choices'][0]['{field}'])\n"
    )
    (tmp_path / "raw_hosted.py").write_text(
        "import requests\n"
        "r = requests.post('https://api.openai.com/v1/completions', json={}).json()\n"
        f"print(r['choices'][0]['{field}'])\n"
    )
    got = _findings(tmp_path, "0.28.0", "0.28.0")
    ours = {k: v for k, v in got.items() if k[2] == "VUC000-015"}
    assert set(ours) == {("ours.py", 4, "VUC000-015"), ("raw.py", 3, "VUC000-015")}, got
    assert all(v[0] == "warning" for v in ours.values())
    assert "field of a completion response" in ours[("ours.py", 4, "VUC000-015")][1]


def test_a_field_read_in_a_file_of_embeddings_is_judged_by_the_embedding_response(tmp_path: Path) -> None:
    field = _lost_completion_field(Version("0.28.0"))
    embedding = surface_history("embedding_fields")
    assert not embedding.known(field)  # the embedding response never had it: nothing to report
    (tmp_path / "vectors.py").write_text(
        "from openai import OpenAI\nclient = OpenAI(base_url='http://vllm:8000/v1', api_key='x')\n"
        f"e = client.embeddings.create(model='m', input='x')\nprint(e.data[0].embedding, e.{field})\n"
    )
    facts = [
        f
        for f in PythonSourceScanner(frozenset({field})).scan(SourceFile("vectors.py", (tmp_path / "vectors.py").read_text()))
        if getattr(f, "kind", None) == FactKind.RESPONSE_FIELD
    ]
    assert [f.value for f in facts] == ["embedding"]
    got = _findings(tmp_path, "0.28.0", "0.28.0")
    assert not [k for k in got if k[2] == "VUC000-015"], got


# --- vLLM URLs of tags, archives and commits ----------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "version", "ref"),
    [
        ("git+https://github.com/vllm-project/vllm@v0.20.0", "0.20.0", None),
        ("git+https://github.com/vllm-project/vllm.git@refs/tags/v0.20.0", "0.20.0", None),
        ("https://github.com/vllm-project/vllm/archive/refs/tags/v0.20.0.tar.gz", "0.20.0", None),
        ("https://github.com/vllm-project/vllm/archive/refs/tags/v0.20.0.zip", "0.20.0", None),
        ("https://github.com/vllm-project/vllm/archive/v0.21.0.tar.gz", "0.21.0", None),
        ("https://github.com/vllm-project/vllm/archive/3f2b1c9d8e7a.tar.gz", None, "3f2b1c9d8e7a"),
        ("git+https://github.com/vllm-project/vllm@3f2b1c9d8e7a6b5c", None, "3f2b1c9d8e7a6b5c"),
        ("git+https://github.com/vllm-project/vllm@main", None, "main"),
        ("git+ssh://git@github.com/vllm-project/vllm.git", None, "the default branch"),
    ],
)
def test_url_version_reads_tags_and_archives(url: str, version: str | None, ref: str | None) -> None:
    found = url_version(url)
    if version is None:
        assert found is None
        assert url_ref(url) == ref
        return
    assert found is not None and found[0] == version
    assert url[found[1] :].startswith(version)


def test_tag_urls_move_commit_urls_are_unknown_and_fix_bumps_only_a_plain_tag(tmp_path: Path) -> None:
    from vllm_upgrade_check.engine.fix import fix_paths

    lines = {
        "tag": "vllm @ git+https://github.com/vllm-project/vllm@v0.20.0",
        "archive": "vllm @ https://github.com/vllm-project/vllm/archive/refs/tags/v0.20.0.zip",
        "hashed": "vllm @ https://github.com/vllm-project/vllm/archive/refs/tags/v0.20.0.tar.gz#sha256=00ff",
        "commit": "vllm @ git+https://github.com/vllm-project/vllm@3f2b1c9d8e7a6b5c4d3e",
    }
    for name, line in lines.items():
        (tmp_path / name).mkdir()
        (tmp_path / name / "requirements.txt").write_text(line + "\n")
    got = _findings(tmp_path, "0.28.0", "0.20.0")
    for name in ("tag", "archive", "hashed"):
        assert got[(f"{name}/requirements.txt", 1, "VUC000-010")][0] == "info"
    severity, message = got[("commit/requirements.txt", 1, "VUC000-011")]
    assert severity == "info" and "cannot be read" in message
    fix_paths(ScanOptions.of(paths=[tmp_path], to_version="0.28.0", from_version="0.20.0"))
    assert (tmp_path / "tag" / "requirements.txt").read_text() == lines["tag"].replace("0.20.0", "0.28.0") + "\n"
    assert (tmp_path / "archive" / "requirements.txt").read_text() == lines["archive"].replace("0.20.0", "0.28.0") + "\n"
    assert (tmp_path / "hashed" / "requirements.txt").read_text() == lines["hashed"] + "\n"  # a new hash is needed
    assert (tmp_path / "commit" / "requirements.txt").read_text() == lines["commit"] + "\n"
