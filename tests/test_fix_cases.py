"""``fix`` on the layouts a first trial as a new user broke: each case is the text before,
the command, and the text after (or what the output must say)."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner

from vllm_upgrade_check.cli import _register, app

_register()
runner = CliRunner()


def _run(tmp_path: Path, files: dict[str, str], args: str) -> tuple[int, str]:
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    result = runner.invoke(app, ["fix", str(tmp_path), *shlex.split(args)])
    return result.exit_code, result.output


def _text(tmp_path: Path, name: str) -> str:
    return (tmp_path / name).read_text()


def test_a_variable_of_flags_is_fixed_where_the_flags_are_written_and_once(tmp_path: Path) -> None:
    script = 'COMMON="--swap-space 4 --disable-log-requests"\nvllm serve m $COMMON --port 8000\n'
    code, out = _run(tmp_path, {"run.sh": script}, "--from 0.16.0 --to 0.18.0 --no-bump")
    assert code == 0, out
    assert _text(tmp_path, "run.sh") == 'COMMON=""\nvllm serve m $COMMON --port 8000\n'
    code, out = _run(tmp_path, {}, "--from 0.16.0 --to 0.18.0 --no-bump")
    assert "Fixed 0 issue(s)" in out


def test_a_value_variable_is_cut_where_it_is_used(tmp_path: Path) -> None:
    script = "SWAP=4\nvllm serve m --swap-space $SWAP --port 8000\necho $SWAP\n"
    _run(tmp_path, {"run.sh": script}, "--from 0.16.0 --to 0.18.0 --no-bump")
    assert _text(tmp_path, "run.sh") == "SWAP=4\nvllm serve m --port 8000\necho $SWAP\n"


def test_sh_c_arguments_in_a_script_are_edited_in_place(tmp_path: Path) -> None:
    script = "echo hi\nsh -c \"vllm serve m --swap-space 4 --port 1\"\nbash -c 'vllm serve m --disable-log-requests'\n"
    _run(tmp_path, {"s.sh": script}, "--from 0.16.0 --to 0.18.0 --no-bump")
    assert _text(tmp_path, "s.sh") == "echo hi\nsh -c \"vllm serve m --port 1\"\nbash -c 'vllm serve m'\n"


def test_appended_arrays_reach_the_launch_in_every_branch(tmp_path: Path) -> None:
    script = (
        "opts=(--max-model-len 4096)\n"
        'case "$MODE" in\n  fast) opts+=(--max-long-partial-prefills=4) ;;\n  safe) opts+=(--enforce-eager) ;;\nesac\n'
        'vllm serve m "${opts[@]}"\n'
    )
    code, out = _run(tmp_path, {"run.sh": script}, "--from 0.26.0 --to 0.28.0 --no-bump")
    assert code == 0 and "VUC0270-002" in out, out
    assert "fast) opts+=() ;;" in _text(tmp_path, "run.sh")
    assert "--max-model-len 4096" in _text(tmp_path, "run.sh")


@pytest.mark.parametrize(
    ("client", "expected"),
    [
        ('client = OpenAI(base_url="http://vllm.internal:8000/v1")\n', "blocker"),
        ('client = OpenAI(base_url="https://api.deepseek.com")\n', None),
        ("client = OpenAI()\n", "warning"),
        ("", "warning"),
    ],
)
def test_response_fields_count_where_the_client_talks_to_vllm(
    tmp_path: Path, client: str, expected: str | None
) -> None:
    code = "from openai import OpenAI\n" + client + "print(resp.choices[0].message.reasoning_content)\n"
    (tmp_path / "client.py").write_text(code)
    scan = runner.invoke(app, ["scan", str(tmp_path), "--from", "0.11.1", "--to", "0.16.0", "--fail-on", "never"])
    if expected is None:
        assert "VUC0160-018" not in scan.output, scan.output
    else:
        assert f"{expected} VUC0160-018" in scan.output, scan.output
    result = runner.invoke(app, ["fix", str(tmp_path), "--from", "0.11.1", "--to", "0.16.0", "--unsafe-fixes"])
    renamed = "message.reasoning)" in _text(tmp_path, "client.py")
    assert renamed == (expected == "blocker"), result.output


def test_lock_files_are_made_again_not_edited_and_hold_nothing_back(tmp_path: Path) -> None:
    lock = (
        'version = 1\n\n[[package]]\nname = "vllm"\nversion = "0.26.0"\ndependencies = [\n    { name = "torch" },\n]\n\n'
        '[[package]]\nname = "torch"\nversion = "2.11.0"\n'
    )
    files = {"pyproject.toml": '[project]\nname = "s"\nversion = "1"\ndependencies = ["vllm==0.26.0"]\n', "uv.lock": lock}
    code, out = _run(tmp_path, files, "--to 0.28.0")
    assert code == 1, out  # the lock still pins the old torch until it is made again
    assert '"vllm==0.28.0"' in _text(tmp_path, "pyproject.toml")
    assert _text(tmp_path, "uv.lock") == lock
    assert "uv.lock:11:" in out and "Lock files to make again for vLLM 0.28.0 (1):\n  uv.lock" in out


def test_an_arg_every_use_of_which_is_the_vllm_version_is_bumped(tmp_path: Path) -> None:
    docker = "ARG V=0.26.0\nFROM vllm/vllm-openai:v${V}\nRUN pip install vllm==${V} hf_transfer\n"
    _run(tmp_path, {"Dockerfile": docker}, "--to 0.28.0")
    assert _text(tmp_path, "Dockerfile") == docker.replace("0.26.0", "0.28.0")
    other = "ARG V=0.26.0\nFROM vllm/vllm-openai:v${V}\nRUN echo ${V} > /version\n"
    code, out = _run(tmp_path, {"Dockerfile": other}, "--to 0.28.0")
    assert _text(tmp_path, "Dockerfile") == other and "is also expanded on line 3 for something else" in out


def test_an_anchor_several_services_merge_is_bumped_once(tmp_path: Path) -> None:
    compose = (
        "x-vllm: &vllm\n  image: vllm/vllm-openai:v0.26.0\nservices:\n"
        "  chat: {<<: *vllm, command: [--model, acme/chat]}\n  embed: {<<: *vllm, command: --model acme/embed}\n"
    )
    code, out = _run(tmp_path, {"docker-compose.yaml": compose}, "--to 0.28.0")
    assert code == 0 and "Not bumped" not in out, out
    assert _text(tmp_path, "docker-compose.yaml") == compose.replace("v0.26.0", "v0.28.0")


def test_diff_lists_lines_of_the_file_on_disk(tmp_path: Path) -> None:
    code = (
        "from vllm import LLM\n\nBASE = {\n    \"model\": \"m\",\n    \"swap_space\": 4,\n    \"seed\": 0,\n}\n\n"
        "llm = LLM(\n    **BASE,\n    swap_space=8,\n    guided_decoding_backend=\"xgrammar\",\n)\n"
    )
    (tmp_path / "offline.py").write_text(code)
    result = runner.invoke(app, ["fix", str(tmp_path), "--from", "0.10.0", "--to", "0.18.0", "--diff"])
    assert "offline.py:12:5: VUC0120-001" in result.stderr, result.stderr
    assert "offline.py:12:5: VUC0120-001 guided_decoding_backend" in result.stderr


def test_flow_list_items_on_their_own_line_go_with_it(tmp_path: Path) -> None:
    pod = (
        "apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec:\n  containers:\n    - name: v\n"
        "      image: vllm/vllm-openai:v0.17.0\n      args: [\n"
        '        "--model", "Qwen/Qwen3-8B",   # the model\n        "--swap-space", "4"           # gone in 0.18\n      ]\n'
    )
    _run(tmp_path, {"pod.yaml": pod}, "--to 0.18.0 --no-bump")
    assert _text(tmp_path, "pod.yaml").endswith('      args: [\n        "--model", "Qwen/Qwen3-8B",   # the model\n      ]\n')


@pytest.mark.parametrize(
    ("args", "fixed"),
    [
        ('["--swap-space", "4"]', "[]"),
        ('[--model, m, --swap-space, "$(SWAP)"]', "[--model, m]"),
    ],
)
def test_kubernetes_args_that_hold_only_removed_flags_or_references_are_cut(
    tmp_path: Path, args: str, fixed: str
) -> None:
    pod = (
        "apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec:\n  containers:\n    - name: v\n"
        f"      image: vllm/vllm-openai:v0.17.0\n      env: [{{name: SWAP, value: \"4\"}}]\n      args: {args}\n"
    )
    code, out = _run(tmp_path, {"pod.yaml": pod}, "--to 0.18.0")
    assert code == 0 and "Not written" not in out, out
    assert _text(tmp_path, "pod.yaml") == pod.replace(args, fixed).replace("v0.17.0", "v0.18.0")


def test_ray_serve_engine_kwargs_are_removed_with_their_line(tmp_path: Path) -> None:
    config = (
        "applications:\n  - name: llm\n    args:\n      llm_configs:\n        - model_loading_config:\n"
        "            model_id: acme/m\n          engine_kwargs:\n            swap_space: 4\n            max_num_seqs: 8\n"
    )
    _run(tmp_path, {"serve.yaml": config}, "--from 0.17.0 --to 0.18.0")
    assert _text(tmp_path, "serve.yaml") == config.replace("            swap_space: 4\n", "")


def test_an_unreadable_vllm_file_holds_the_bump_back(tmp_path: Path) -> None:
    compose = "services:\n  a:\n    image: vllm/vllm-openai:v0.17.0\n    command:\n\t- --swap-space\n"
    code, out = _run(tmp_path, {"docker-compose.yaml": compose, "requirements.txt": "vllm==0.17.0\n"}, "--to 0.18.0")
    assert _text(tmp_path, "requirements.txt") == "vllm==0.17.0\n"
    assert "cannot be read" in out, out


def test_a_dockerfile_named_like_an_env_file_is_no_env_file(tmp_path: Path) -> None:
    docker = "FROM vllm/vllm-openai:v0.17.0\nCMD [\"--model\", \"m\", \"--swap-space\", \"4\"]\n"
    code, out = _run(tmp_path, {"Dockerfile.env": docker}, "--to 0.18.0")
    assert "dotenv" not in out, out
    assert _text(tmp_path, "Dockerfile.env") == docker.replace(', "--swap-space", "4"', "").replace("0.17.0", "0.18.0")


def test_a_compose_image_with_a_default_tag_is_read_and_bumped_in_the_default(tmp_path: Path) -> None:
    compose = (
        "services:\n  r1:\n    image: vllm/vllm-openai:v${VLLM_VERSION:-0.17.0}\n    command: --model m --swap-space=4\n"
        '  r2:\n    image: "vllm/vllm-openai:${TAG:-v0.17.0}"\n'
    )
    code, out = _run(tmp_path, {"docker-compose.yaml": compose}, "--to 0.18.0")
    assert code == 0, out
    assert _text(tmp_path, "docker-compose.yaml") == compose.replace(" --swap-space=4", "").replace("0.17.0", "0.18.0")


def test_a_subprocess_launch_through_sys_executable_is_fixed(tmp_path: Path) -> None:
    code = (
        "import subprocess, sys\n"
        'subprocess.run([sys.executable, "-m", "vllm.entrypoints.openai.api_server", "--model", "m", '
        '"--override-attention-dtype", "float16"])\n'
    )
    _run(tmp_path, {"launch.py": code}, "--from 0.26.0 --to 0.28.0 --no-bump")
    assert ', "--override-attention-dtype", "float16"' not in _text(tmp_path, "launch.py")


@pytest.mark.parametrize("quote", ["'", '"'])
def test_a_move_into_a_quoted_compose_command_is_quoted_for_yaml_and_shell(tmp_path: Path, quote: str) -> None:
    compose = (
        f"services:\n  a:\n    image: vllm/vllm-openai:v0.11.0\n    command: {quote}--model m --guided-decoding-backend xgrammar{quote}\n"
    )
    code, out = _run(tmp_path, {"docker-compose.yaml": compose}, "--from 0.11.0 --to 0.12.0 --unsafe-fixes --no-bump")
    assert code == 0 and "Not written" not in out, out
    import yaml

    command = yaml.safe_load(_text(tmp_path, "docker-compose.yaml"))["services"]["a"]["command"]
    assert shlex.split(command) == ["--model", "m", "--structured-outputs-config", '{"backend": "xgrammar"}']


SHARED = {
    "run.sh": (
        'OPTS=(--max-num-partial-prefills 2 --port 8000)\nvllm serve m "${OPTS[@]}"\nmy-proxy "${OPTS[@]}"\n',
        "my-proxy",
    ),
    "docker-compose.yml": (
        "services:\n  side:\n    image: busybox\n    command: &shared [\"--max-num-partial-prefills\", \"2\"]\n"
        "  llm:\n    image: vllm/vllm-openai:v0.26.0\n    command: *shared\n",
        "service side",
    ),
    "deploy.yaml": (
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n"
        "    - name: vllm\n      image: vllm/vllm-openai:v0.26.0\n"
        "      args: &a [\"--model\", \"m\", \"--max-num-partial-prefills\", \"2\"]\n"
        "    - name: proxy\n      image: envoyproxy/envoy:v1.30\n      args: *a\n",
        "container proxy",
    ),
    "serve.py": (
        "from vllm import LLM\nimport mylib\nARGS = dict(model='m', max_num_partial_prefills=2)\n"
        "llm = LLM(**ARGS)\nmylib.record(**ARGS)\n",
        "reading ARGS at line 5",
    ),
}


@pytest.mark.parametrize("name", sorted(SHARED))
def test_words_another_program_reads_too_are_left_to_a_person(tmp_path: Path, name: str) -> None:
    text, who = SHARED[name]
    code, out = _run(tmp_path, {name: text}, "--from 0.26.0 --to 0.27.0 --no-bump")
    assert _text(tmp_path, name) == text, out
    assert "Needs a person" in out and who in out, out
    assert code == 1, out


def test_words_only_vllm_launches_share_are_fixed_once_and_reported_once(tmp_path: Path) -> None:
    compose = (
        "x-vllm: &vllm\n  image: vllm/vllm-openai:v0.26.0\n"
        '  command: ["--model", "m", "--max-num-partial-prefills", "2"]\n'
        "services:\n  a:\n    <<: *vllm\n  b:\n    <<: *vllm\n"
    )
    (tmp_path / "docker-compose.yml").write_text(compose)
    scan = runner.invoke(app, ["scan", str(tmp_path), "--to", "0.27.0"])
    assert scan.output.count("VUC0270-001") == 1, scan.output
    code, out = _run(tmp_path, {}, "--to 0.27.0")
    assert code == 0, out
    assert _text(tmp_path, "docker-compose.yml") == compose.replace(', "--max-num-partial-prefills", "2"', "").replace(
        "0.26.0", "0.27.0"
    )


def test_a_dict_only_changed_and_logged_besides_vllm_is_fixed(tmp_path: Path) -> None:
    code = (
        "import logging\nfrom vllm import LLM\nlog = logging.getLogger(__name__)\n"
        "ARGS = {'model': 'm', 'max_num_partial_prefills': 2}\nARGS['enforce_eager'] = True\n"
        "log.info('args: %s', ARGS)\nllm = LLM(**ARGS)\n"
    )
    _run(tmp_path, {"serve.py": code}, "--from 0.26.0 --to 0.27.0 --no-bump")
    assert _text(tmp_path, "serve.py") == code.replace(", 'max_num_partial_prefills': 2", "")
