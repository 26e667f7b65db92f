"""Files chosen by what they say, not by their names: the pre-filter and sniffer, the
launch-line scan, requirements includes, explicit paths, templates, and the traps (prose,
changelogs, meeting notes, other programs' flags) that must stay silent."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from vllm_upgrade_check.cli import _register, app
from vllm_upgrade_check.sources import sniff
from vllm_upgrade_check.sources.scanners.launchlines import launch_lines
from vllm_upgrade_check.sources.scanners.templates import PLACEHOLDER

_register()
runner = CliRunner()
SWAP = "VUC0180-001"  # --swap-space, removed in 0.18.0
KV_SCALES = "VUC0280-001"  # --calculate-kv-scales, removed in 0.28.0


def write(root: Path, rel: str, text: str) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def scan_json(*args: str) -> tuple[int, dict, str]:
    result = runner.invoke(app, ["scan", *args, "--no-cache", "--format", "json"])
    try:
        data = json.loads(result.stdout)
    except json.JSONDecodeError:
        data = {}
    return result.exit_code, data, result.output


def found(root: Path, *args: str) -> set[tuple[str, int, str]]:
    code, data, output = scan_json(str(root), *args)
    assert code in (0, 1), output
    return {(f["path"], f["line"], f["rule_id"]) for f in data["findings"]}


def torch_rule(root: Path) -> str:
    """The rule id of a torch pin that vLLM's target release cannot be installed with."""
    write(root, "requirements.txt", "torch==1.0.0\n")
    ids = {rule for path, _line, rule in found(root) if path == "requirements.txt"}
    (root / "requirements.txt").unlink()
    assert len(ids) == 1, ids
    return ids.pop()


# ---------------------------------------------------------------- layouts, one each


@pytest.mark.parametrize(
    "rel", ["requirements/prod.txt", "requirements/serving.txt", "deps/gpu.txt", "stacks/gpu.txt", "pins"]
)
def test_requirements_file_of_any_name_is_read_by_content(tmp_path: Path, rel: str) -> None:
    rule = torch_rule(tmp_path)
    write(tmp_path, rel, "# GPU stack\n--extra-index-url https://download.pytorch.org/whl/cu128\ntorch==1.0.0\n")
    assert (rel, 3, rule) in found(tmp_path)


@pytest.mark.parametrize("rel", ["launch.txt", "ops/serve_cmd.txt", "serve", "bin/run-model.cmd"])
def test_command_template_kept_as_text_is_read(tmp_path: Path, rel: str) -> None:
    text = "# run on the GPU box\nvllm serve {model_id} --kv-cache-dtype fp8 --calculate-kv-scales --port {port}\n"
    write(tmp_path, rel, text)
    assert found(tmp_path) == {(rel, 2, KV_SCALES)}


def test_launch_line_continuations_prompt_and_python_module(tmp_path: Path) -> None:
    write(
        tmp_path,
        "ops/commands.txt",
        "Start the server:\n"
        "$ python3 -m vllm.entrypoints.openai.api_server --model m \\\n"
        "    --port 8000 \\\n"
        "    --swap-space 4\n"
        "Then the other one:\n"
        "  VLLM_LOGGING_LEVEL=DEBUG vllm serve m --calculate-kv-scales\n",
    )
    got = {f for f in found(tmp_path) if f[2] in (SWAP, KV_SCALES)}
    assert got == {("ops/commands.txt", 4, SWAP), ("ops/commands.txt", 6, KV_SCALES)}


def test_docker_run_of_a_vllm_image_in_a_text_file(tmp_path: Path) -> None:
    write(
        tmp_path,
        "runbook/start.txt",
        "docker run --gpus all -p 8000:8000 \\\n  vllm/vllm-openai:v0.10.0 \\\n  --model m --swap-space 4\n",
    )
    assert ("runbook/start.txt", 3, SWAP) in found(tmp_path)


@pytest.mark.parametrize("name", ["Dockerfile-gpu", "Containerfile.rocm", "Dockerfile_cuda", "serve.containerfile"])
def test_dockerfile_variants_by_name(tmp_path: Path, name: str) -> None:
    write(tmp_path, name, 'FROM vllm/vllm-openai:v0.10.0\nCMD ["--model", "m", "--swap-space", "4"]\n')
    assert (name, 2, SWAP) in found(tmp_path)


def test_dockerfile_recognised_by_its_instructions(tmp_path: Path) -> None:
    write(tmp_path, "images/gpu-image", "# the serving image\nFROM vllm/vllm-openai:v0.10.0\nENV X=1\nCMD [\"--swap-space\", \"4\"]\n")
    assert ("images/gpu-image", 4, SWAP) in found(tmp_path)


@pytest.mark.parametrize("name", ["justfile", "Justfile", "serve.just"])
def test_justfile_recipes_are_launch_lines(tmp_path: Path, name: str) -> None:
    write(tmp_path, name, "model := \"m\"\n\nserve:\n    vllm serve {{model}} \\\n      --swap-space 4\n")
    assert found(tmp_path) == {(name, 5, SWAP)}


def test_shebang_script_with_an_unknown_suffix(tmp_path: Path) -> None:
    write(tmp_path, "ops/start.txt", "#!/usr/bin/env bash\nset -e\nexec vllm serve m --swap-space 4\n")
    assert found(tmp_path) == {("ops/start.txt", 3, SWAP)}


def test_placeholder_is_a_value_never_a_flag() -> None:
    (line, text), = launch_lines("vllm serve {model} {flags} --port {port}\n")
    assert line == 1 and "{" not in text and PLACEHOLDER in text
    assert len(text) == len("vllm serve {model} {flags} --port {port}")


# ---------------------------------------------------------------- includes


def test_requirements_include_is_followed(tmp_path: Path) -> None:
    rule = torch_rule(tmp_path)
    write(tmp_path, "requirements.txt", "-r requirements/prod.txt\n")
    write(tmp_path, "requirements/prod.txt", "-c ../constraints/gpu.lock\nvllm==0.10.0\n")
    write(tmp_path, "constraints/gpu.lock", "torch==1.0.0\n")  # no scanner takes this name
    assert ("constraints/gpu.lock", 1, rule) in found(tmp_path)


@pytest.mark.parametrize("option", ["-r", "--requirement", "-c", "--constraint=", "-r "])
def test_include_spellings(tmp_path: Path, option: str) -> None:
    rule = torch_rule(tmp_path)
    sep = "" if option.endswith(("=", " ")) else " "
    write(tmp_path, "svc/requirements.txt", f"{option}{sep}pins.data\n")
    write(tmp_path, "svc/pins.data", "torch==1.0.0\n")
    assert ("svc/pins.data", 1, rule) in found(tmp_path)


def test_include_cycle_ends_and_each_file_counts_once(tmp_path: Path) -> None:
    rule = torch_rule(tmp_path)
    write(tmp_path, "requirements.txt", "-r a.lock\n")
    write(tmp_path, "a.lock", "-r b.lock\ntorch==1.0.0\n")
    write(tmp_path, "b.lock", "-r a.lock\n-r requirements.txt\n")
    code, data, _ = scan_json(str(tmp_path))
    hits = [f for f in data["findings"] if f["rule_id"] == rule]
    assert [(f["path"], f["line"]) for f in hits] == [("a.lock", 2)]


def test_missing_include_is_reported(tmp_path: Path) -> None:
    write(tmp_path, "requirements.txt", "-r requirements/prod.txt\nvllm==0.10.0\n")
    code, data, _ = scan_json(str(tmp_path))
    reasons = [s for s in data["skipped"] if s["path"] == "requirements.txt"]
    assert reasons and "requirements/prod.txt" in reasons[0]["reason"]


# ---------------------------------------------------------------- explicit paths


@pytest.mark.parametrize(
    ("rel", "text", "rule"),
    [
        ("requirements/prod.txt", "vllm==0.10.0\nsomething-else>=1\n", None),
        ("launch.txt", "vllm serve m --swap-space 4\n", SWAP),
        ("Dockerfile-gpu", "FROM vllm/vllm-openai:v0.10.0\nCMD [\"--swap-space\", \"4\"]\n", SWAP),
    ],
)
def test_explicit_path_is_read_by_sniffing(tmp_path: Path, rel: str, text: str, rule: str | None) -> None:
    path = write(tmp_path, rel, text)
    code, data, output = scan_json(str(path))
    assert code in (0, 1), output
    assert data["summary"]["files_scanned"] == 1
    if rule:
        assert rule in {f["rule_id"] for f in data["findings"]}


@pytest.mark.parametrize(
    ("rel", "text", "why"),
    [
        ("notes.txt", "nothing about serving here\n", "names neither vLLM"),
        ("README.md", "| --swap-space | removed |\n| vllm | 0.18 |\n", "documentation"),
        ("app.js", "// vllm serve m\n", "another language"),
    ],
)
def test_explicit_path_nothing_reads_exits_2(tmp_path: Path, rel: str, text: str, why: str) -> None:
    path = write(tmp_path, rel, text)
    result = subprocess.run(
        [sys.executable, "-m", "vllm_upgrade_check", "scan", str(path), "--no-cache"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 2, result.stderr
    assert f"{path}: not a file vllm-upgrade-check reads (" in result.stderr
    assert why in result.stderr and "Traceback" not in result.stderr


# ---------------------------------------------------------------- traps


def test_traps_stay_silent(tmp_path: Path) -> None:
    write(tmp_path, "README.md", "| flag | status |\n|---|---|\n| --swap-space | removed in 0.18 |\n\n    vllm serve m --swap-space 4\n")
    write(tmp_path, "CHANGELOG", "## 0.18\n- vllm serve: dropped --swap-space\nvllm serve m --swap-space 4\n")
    write(tmp_path, "docs/CHANGES.txt", "vllm serve m --swap-space 4\n")
    write(tmp_path, "notes/2026-11-03.txt", "Meeting: vLLM upgrade\n- we should drop --swap-space\n- vllm serve is slow with --swap-space 4 here\n")
    write(tmp_path, "ops/other.txt", "our vllm box also runs:\nmyserver --swap-space 4\nredis-server --port 6379\n")
    write(tmp_path, "logs/serve.log", "vllm serve m --swap-space 4\n")
    write(tmp_path, "web/app.js", "const cmd = 'vllm serve m --swap-space 4';\n")
    code, data, output = scan_json(str(tmp_path))
    assert code == 0, output
    assert data["findings"] == []


def test_files_without_a_marker_are_not_parsed(tmp_path: Path) -> None:
    write(tmp_path, "ops/serve_cmd.txt", "someserver --swap-space 4\n")
    write(tmp_path, "deps/gpu.txt", "left-pad==1.0\n")
    code, data, _ = scan_json(str(tmp_path))
    assert data["summary"]["files_scanned"] == 0


def test_sniffer_kinds() -> None:
    assert sniff.sniff_kind("gpu.txt", "torch==2.9.1\n-r base.txt\n", False) == "requirements.txt"
    assert sniff.sniff_kind("gpu.txt", "torch is what we pin\n", False) is None
    assert sniff.sniff_kind("image", "FROM vllm/vllm-openai:v0.1\nRUN x\n", True) == "Dockerfile"
    assert sniff.sniff_kind("deploy.yaml.tpl", "", True) == "deploy.yaml"
    assert sniff.sniff_kind("values-prod.tpl", "image:\n  repository: vllm/vllm-openai\n", True) == "values-prod.yaml"
    assert sniff.sniff_kind("values-prod.tpl", "vllm serve m\n", True) == sniff.LAUNCH_LINES
    assert sniff.sniff_kind("CHANGELOG.txt", "vllm serve m\n", True) is None
    assert sniff.sniff_kind("stack.toml", "[tool.uv]\noverride-dependencies = ['torch==2.9.1']\n", True) == "pyproject.toml"
    assert not sniff.is_dockerfile_name("dockerfile_utils.py")
    assert sniff.has_marker(b"export VLLM_USE_V1=1") and not sniff.has_marker(b"LLM serving")
    assert sniff.has_distribution_marker(b"# pins\ntransformers>=4.56\n")
    assert not sniff.has_distribution_marker(b"we upgraded torch last week\n")


# ---------------------------------------------------------------- templates, charts, kustomize

CHART_TEMPLATE = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ include "llm.fullname" . }}
spec:
  template:
    spec:
      containers:
        - name: {{ .Chart.Name }}
          image: "{{ .Values.image.repository }}:{{ .Values.image.tag }}"
          args:
            - --model
            - {{ .Values.model | quote }}
            - --swap-space
            - "4"
          {{- with .Values.resources }}
          resources: {{ toYaml . | nindent 12 }}
          {{- end }}
"""


@pytest.mark.parametrize("repository", ["vllm/vllm-openai", "docker.io/vllm/vllm-openai"])
def test_chart_template_image_comes_from_the_values(tmp_path: Path, repository: str) -> None:
    write(tmp_path, "charts/llm/values.yaml", f"image:\n  repository: {repository}\n  tag: v0.10.0\n")
    write(tmp_path, "charts/llm/templates/deployment.yaml", CHART_TEMPLATE)
    assert ("charts/llm/templates/deployment.yaml", 14, SWAP) in found(tmp_path)


def test_chart_template_of_another_image_stays_silent(tmp_path: Path) -> None:
    write(tmp_path, "charts/web/values.yaml", "image:\n  repository: nginx\n  tag: '1.27'\n")
    write(tmp_path, "charts/web/templates/deployment.yaml", CHART_TEMPLATE)
    write(tmp_path, "charts/llm/values.yaml", "image:\n  repository: vllm/vllm-openai\n  tag: v0.10.0\n")
    assert not {f for f in found(tmp_path) if f[0].startswith("charts/web/")}


@pytest.mark.parametrize("suffix", [".tpl", ".tmpl", ".j2", ".gotmpl", ".jinja2"])
def test_templated_manifest_suffixes(tmp_path: Path, suffix: str) -> None:
    text = (
        "apiVersion: apps/v1\nkind: Deployment\nspec:\n  template:\n    spec:\n      containers:\n"
        "        - name: s\n          image: vllm/vllm-openai:{{ vllm_tag }}\n          {% if gpu %}\n"
        '          args: ["--model", "{{ model }}", "--calculate-kv-scales"]\n          {% endif %}\n'
    )
    write(tmp_path, f"summarizer-deploy.yaml{suffix}", text)
    assert found(tmp_path) == {(f"summarizer-deploy.yaml{suffix}", 10, KV_SCALES)}


def test_values_template_without_a_yaml_suffix(tmp_path: Path) -> None:
    write(tmp_path, "values-prod.tpl", "image:\n  repository: vllm/vllm-openai\n  tag: {{ .Env.TAG }}\nargs:\n  - --swap-space\n  - '4'\n")
    assert found(tmp_path) == {("values-prod.tpl", 5, SWAP)}


def test_placeholder_flag_in_a_template_is_never_a_flag(tmp_path: Path) -> None:
    write(tmp_path, "serve_cmd.txt", "vllm serve m {{ extra_flags }} --port {port}\n")
    code, data, _ = scan_json(str(tmp_path))
    assert data["findings"] == [] and data["summary"]["files_scanned"] == 1


@pytest.mark.parametrize("name", ["kustomization.yaml", "kustomization.yml", "Kustomization"])
def test_kustomize_image_override_is_the_version_and_is_bumped(tmp_path: Path, name: str) -> None:
    text = "resources:\n  - ../../base\nimages:\n  - name: vllm/vllm-openai\n    newTag: v0.16.0\n"
    write(tmp_path, f"overlays/prod/{name}", text)
    code, data, _ = scan_json(str(tmp_path))
    assert data["from_version"] == "0.16.0" and data["from_source"].startswith(f"overlays/prod/{name}:4")
    result = runner.invoke(app, ["fix", str(tmp_path), "--to", "0.28.0", "--bump"])
    assert result.exit_code in (0, 1), result.output
    fixed = (tmp_path / "overlays/prod" / name).read_text()
    assert fixed == text.replace("v0.16.0", "v0.28.0")


def test_kustomize_override_of_another_image_is_no_version(tmp_path: Path) -> None:
    write(tmp_path, "kustomization.yaml", "images:\n  - name: nginx\n    newTag: '1.27'\n# vllm lives elsewhere\n")
    code, data, _ = scan_json(str(tmp_path))
    assert data["from_version"] is None


# ---------------------------------------------------------------- pyproject tables


PYPROJECT = """[project]
name = "svc"
dependencies = ["vllm==0.10.0"]

[tool.uv]
override-dependencies = ["torch==1.0.0"]
constraint-dependencies = ["torch==1.0.0"]

[tool.pdm.dev-dependencies]
gpu = ["torch==1.0.0"]

[tool.poetry.dependencies]
python = "^3.11"
torch = "1.0.0"

[tool.poetry.group.gpu.dependencies]
torch = {version = "^1.0.0", markers = "sys_platform == 'linux'"}
"""


def test_pyproject_uv_pdm_poetry_tables_are_requirements(tmp_path: Path) -> None:
    rule = torch_rule(tmp_path)
    write(tmp_path, "pyproject.toml", PYPROJECT)
    lines = sorted(line for path, line, r in found(tmp_path) if r == rule and path == "pyproject.toml")
    assert lines == [6, 7, 10, 14, 17]


@pytest.mark.parametrize(
    ("constraint", "spec"),
    [("^2.9.1", ">=2.9.1,<3.0.0"), ("^0.4", ">=0.4,<0.5"), ("~2.9.1", ">=2.9.1,<2.10.0"), ("2.9.1", "==2.9.1"),
     ("*", ""), (">=2,<3", ">=2,<3"), ("latest", None)],
)  # fmt: skip
def test_poetry_constraints_as_pep440(constraint: str, spec: str | None) -> None:
    from vllm_upgrade_check.sources.scanners.requirements import poetry_specifier

    assert poetry_specifier(constraint) == spec


# ---------------------------------------------------------------- pre-commit and the action


def test_pre_commit_hooks_run_for_every_kind_of_file_read(repo_root: Path) -> None:
    import re

    import yaml

    hooks = yaml.safe_load((repo_root / ".pre-commit-hooks.yaml").read_text())
    read = [
        "run.sh", "app/main.py", "dash.json", "vllm.service", ".env", "prod.env", "Makefile", "Containerfile",
        "Dockerfile-gpu", "prometheus/rules.yml", "requirements/prod.txt", "deps/gpu.txt", "justfile",
        "launch.txt", "ops/serve_cmd.txt", "values-prod.tpl", "x.yaml.j2", "uv.lock", "pyproject.toml",
        "Kustomization", "snapshots/pip-freeze.txt", "bin/serve",
    ]  # fmt: skip
    for hook in hooks:
        files = re.compile(hook.get("files", ""))
        exclude = re.compile(hook.get("exclude", "^$"))
        for name in read:
            assert files.search(name) and not exclude.search(name), (hook["id"], name)
        for ext in sorted(sniff.NEVER_TEXT_SUFFIXES | sniff.PROSE_SUFFIXES):
            assert exclude.search(f"docs/file.{ext}"), (hook["id"], ext)


# ---------------------------------------------------------------- snapshots and a realistic repository


def installed_torch_rule(root: Path) -> str:
    """The rule id of an installed torch (a freeze snapshot's) that vLLM's target release replaces."""
    write(root, "snapshots/pip-freeze.txt", "aiohttp==3.10.5\nnumpy==1.26.4\ntorch==1.0.0\n")
    ids = {rule for path, _line, rule in found(root) if path == "snapshots/pip-freeze.txt"}
    (root / "snapshots/pip-freeze.txt").unlink()
    assert len(ids) == 1, ids
    return ids.pop()


def test_freeze_snapshot_anywhere_is_checked_with_file_and_line(tmp_path: Path) -> None:
    rule = installed_torch_rule(tmp_path)
    write(tmp_path, "snapshots/pip-freeze.txt", "aiohttp==3.10.5\nnumpy==1.26.4\ntorch==1.0.0\nvllm==0.10.0\n")
    code, data, _ = scan_json(str(tmp_path))
    assert ("snapshots/pip-freeze.txt", 3, rule) in {(f["path"], f["line"], f["rule_id"]) for f in data["findings"]}
    assert {f["kind"] for f in data["findings"]} == {"distribution"}  # what is installed, not pins
    assert data["from_source"].startswith("snapshots/pip-freeze.txt:4")
    assert sniff.looks_like_freeze("aiohttp==3.10.5\nnumpy==1.26.4\ntorch==2.9.1+cu128\n")
    assert not sniff.looks_like_freeze("torch>=2\nnumpy\nvllm\n")


def test_realistic_repository_every_finding_at_its_file_and_line(tmp_path: Path) -> None:
    rule = torch_rule(tmp_path)
    installed = installed_torch_rule(tmp_path)
    files = {
        "requirements.txt": "-r requirements/prod.txt\n",
        "requirements/prod.txt": "-c ../constraints/gpu.lock\nvllm==0.10.0\n",
        "constraints/gpu.lock": "# pins for the GPU image\ntorch==1.0.0\n",
        "deps/gpu.txt": "torch==1.0.0\n",
        "ops/serve_cmd.txt": "vllm serve {model_id} --kv-cache-dtype fp8 --calculate-kv-scales --port {port}\n",
        "launch.txt": "# prod launch\nexec vllm serve m \\\n  --swap-space 4\n",
        "Dockerfile-gpu": "FROM vllm/vllm-openai:v0.10.0\nCMD [\"--model\", \"m\", \"--swap-space\", \"4\"]\n",
        "Containerfile.rocm": "FROM vllm/vllm-openai:v0.10.0\nCMD [\"--calculate-kv-scales\"]\n",
        "justfile": "serve:\n    vllm serve {{model}} --swap-space 4\n",
        "charts/llm/values.yaml": "image:\n  repository: vllm/vllm-openai\n  tag: v0.10.0\n",
        "charts/llm/templates/deployment.yaml": CHART_TEMPLATE,
        "deploy/summarizer-deploy.yaml.tpl": (
            "apiVersion: apps/v1\nkind: Deployment\nspec:\n  template:\n    spec:\n      containers:\n"
            "        - name: s\n          image: vllm/vllm-openai:{{ tag }}\n"
            '          args: ["--model", "{{ model }}", "--calculate-kv-scales"]\n'
        ),
        "overlays/prod/kustomization.yaml": "images:\n  - name: vllm/vllm-openai\n    newTag: v0.16.0\n",
        "pyproject.toml": '[project]\nname = "x"\n\n[tool.uv]\noverride-dependencies = ["torch==1.0.0"]\n',
        "snapshots/pip-freeze.txt": "aiohttp==3.10.5\nnumpy==1.26.4\ntorch==1.0.0\n",
        # traps
        "README.md": "| flag | status |\n|---|---|\n| --swap-space | removed |\n",
        "CHANGELOG.md": "- vllm serve: dropped --swap-space\n",
        "notes/meeting.txt": "vLLM sync\n- we should drop --swap-space\n",
        "ops/redis.txt": "vllm box notes\nredis-server --swap-space 4\n",
    }
    for rel, text in files.items():
        write(tmp_path, rel, text)
    expected = {
        ("constraints/gpu.lock", 2, rule),
        ("deps/gpu.txt", 1, rule),
        ("ops/serve_cmd.txt", 1, KV_SCALES),
        ("launch.txt", 3, SWAP),
        ("Dockerfile-gpu", 2, SWAP),
        ("Containerfile.rocm", 2, KV_SCALES),
        ("justfile", 2, SWAP),
        ("charts/llm/templates/deployment.yaml", 14, SWAP),
        ("deploy/summarizer-deploy.yaml.tpl", 9, KV_SCALES),
        ("pyproject.toml", 5, rule),
        ("snapshots/pip-freeze.txt", 3, installed),
    }
    got = found(tmp_path)
    assert {g for g in got if g[2] in (rule, installed, SWAP, KV_SCALES)} == expected
    code, data, _ = scan_json(str(tmp_path))
    assert data["skipped"] == []
    assert "0.16.0" in " ".join(data["notes"])  # the Kustomize override is a version in use


@pytest.mark.parametrize(
    ("rel", "text", "line"),
    [
        ("Dockerfile.j2", 'FROM vllm/vllm-openai:{{ tag }}\nCMD ["--swap-space", "4"]\n', 2),
        ("docker-compose.override.yml.j2", "services:\n  llm:\n    image: vllm/vllm-openai:v0.10.0\n    command: [--swap-space, '4']\n", 4),
        ("Makefile.tmpl", "serve:\n\tvllm serve {{ .Model }} --swap-space 4\n", 2),
    ],
)
def test_templates_of_named_kinds(tmp_path: Path, rel: str, text: str, line: int) -> None:
    write(tmp_path, rel, text)
    assert (rel, line, SWAP) in found(tmp_path)


def test_utf16_text_file_passes_the_pre_filter(tmp_path: Path) -> None:
    (tmp_path / "launch.txt").write_bytes("vllm serve m --swap-space 4\n".encode("utf-16"))
    assert found(tmp_path) == {("launch.txt", 1, SWAP)}


def test_fix_edits_a_command_template_in_place(tmp_path: Path) -> None:
    text = "# prod\nvllm serve {model_id} --kv-cache-dtype fp8 --calculate-kv-scales --port {port}\nnotes: keep {port}\n"
    write(tmp_path, "ops/serve_cmd.txt", text)
    result = runner.invoke(app, ["fix", str(tmp_path), "--to", "0.28.0", "--from", "0.27.0"])
    assert result.exit_code in (0, 1), result.output
    assert (tmp_path / "ops/serve_cmd.txt").read_text() == text.replace(" --calculate-kv-scales", "")
