"""A line continuation inside a launch word (``--flag=\\`` then the value on the next line,
or ``=bfl\\`` then ``oat16``) is one word for bash: the fix of a removed flag takes the
whole word, continuation and all, and keeps a separator, so that the served model and
every other word read as before; a fixed text whose other words would change is refused."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from vllm_upgrade_check.cli import _register, app
from vllm_upgrade_check.fixing.verify import check, read_file
from vllm_upgrade_check.sources.scanners import default_scanners

_register()
runner = CliRunner()

FLAG = "--override-attention-dtype"


def _fix(root: Path) -> None:
    runner.invoke(app, ["fix", str(root), "--from", "0.23.0", "--to", "0.30.0", "--no-bump"])


def _argv(command: str) -> list[str]:
    """The words bash reads after ``vllm`` in ``command`` (a ``vllm`` function prints them)."""
    script = "vllm() { printf '%s\\0' \"$@\"; }\n" + command
    out = subprocess.run(["bash", "-c", script], capture_output=True, check=True).stdout
    return out.decode().split("\0")[:-1]


SCRIPTS = [
    (f"vllm serve my-model {FLAG}=\\\nbfloat16 --port 8000\n", "vllm serve my-model --port 8000\n"),
    (f"vllm serve my-model --port 8000 {FLAG}=\\\nbfloat16\n", "vllm serve my-model --port 8000\n"),
    (f"vllm serve my-model {FLAG}=bfl\\\noat16 --port 8000\n", "vllm serve my-model --port 8000\n"),
    (f"vllm serve my-model {FLAG}\\\n=bfloat16 --port 8000\n", "vllm serve my-model --port 8000\n"),
    (f'vllm serve my-model {FLAG}=\\\n"bfloat16" --port 8000\n', "vllm serve my-model --port 8000\n"),
    (f"vllm serve my-model {FLAG}=bf\\\n\\\n16 --port 8000\n", "vllm serve my-model --port 8000\n"),
    (f"vllm serve my-model \\\n  {FLAG}=\\\nbfloat16 \\\n  --port 8000\n", "vllm serve my-model \\\n  --port 8000\n"),
]


@pytest.mark.parametrize(("text", "fixed"), SCRIPTS)
def test_script_cut_takes_the_continued_word(tmp_path: Path, text: str, fixed: str) -> None:
    (tmp_path / "run.sh").write_text("#!/bin/sh\n" + text)
    _fix(tmp_path)
    after = (tmp_path / "run.sh").read_text()
    assert after == "#!/bin/sh\n" + fixed
    before_words = [w for w in _argv(text) if not w.startswith(FLAG)]
    assert _argv(after) == before_words


def test_continued_value_is_read_as_one_word() -> None:
    reading = read_file("run.sh", f"vllm serve my-model {FLAG}=bfl\\\noat16 --port 8000\n", default_scanners(), False)
    args = {(f.name, f.value) for f in reading.facts if f.kind.value == "arg"}
    assert ("override_attention_dtype", "bfloat16") in args


def test_model_joined_by_a_continuation_is_refused() -> None:
    scanners = default_scanners()
    before = read_file("run.sh", "vllm serve my-model \\\nbfloat16 --port 8000\n", scanners, False)
    after = read_file("run.sh", "vllm serve my-model\\\nbfloat16 --port 8000\n", scanners, False)
    models = {f.name for f in after.facts if f.kind.value == "model"}
    assert models == {"my-modelbfloat16"}
    why = check(before, after, [])
    assert why is not None and "my-modelbfloat16" in why


def test_dockerfile_shell_form(tmp_path: Path) -> None:
    (tmp_path / "Dockerfile").write_text(
        f"FROM vllm/vllm-openai:v0.23.0\nCMD vllm serve my-model {FLAG}=bfl\\\noat16 --port 8000\n"
    )
    _fix(tmp_path)
    after = (tmp_path / "Dockerfile").read_text()
    assert after.splitlines()[1] == "CMD vllm serve my-model --port 8000"
    assert _argv(after.splitlines()[1][4:]) == ["serve", "my-model", "--port", "8000"]


def test_sh_c_in_yaml(tmp_path: Path) -> None:
    manifest = (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: vllm\nspec:\n  template:\n    spec:\n"
        "      containers:\n        - name: vllm\n          image: vllm/vllm-openai:v0.23.0\n"
        '          command: ["sh", "-c"]\n          args:\n            - |\n'
        f"              vllm serve my-model {FLAG}=\\\n              bfloat16 --port 8000\n"
    )
    (tmp_path / "deploy.yaml").write_text(manifest)
    _fix(tmp_path)
    after = (tmp_path / "deploy.yaml").read_text()
    assert "              vllm serve my-model --port 8000\n" in after
    assert FLAG not in after and "bfloat16" not in after
    command = yaml.safe_load(after)["spec"]["template"]["spec"]["containers"][0]["args"][0]
    assert _argv(command) == ["serve", "my-model", "--port", "8000"]


def test_dockerfile_indented_continuation_keeps_every_other_word(tmp_path: Path) -> None:
    # Docker keeps the next line's indentation when it joins a continued line, so the value
    # is a word of its own there, before the fix and after it
    before = f"FROM vllm/vllm-openai:v0.23.0\nCMD vllm serve my-model {FLAG}=\\\n    bfloat16 --port 8000\n"
    (tmp_path / "Dockerfile").write_text(before)
    _fix(tmp_path)
    after = (tmp_path / "Dockerfile").read_text()
    assert after == "FROM vllm/vllm-openai:v0.23.0\nCMD vllm serve my-model\\\n    bfloat16 --port 8000\n"

    def cmd(text: str) -> list[str]:
        return _argv(text.split("\n", 1)[1].replace("\\\n", "")[4:])

    assert cmd(after) == [w for w in cmd(before) if not w.startswith(FLAG)]
    assert cmd(after) == ["serve", "my-model", "bfloat16", "--port", "8000"]
