"""A Dockerfile whose exec-form ``ENTRYPOINT`` runs a script it copies from the build
context: the container runs that script with the ``CMD`` words as its arguments, so the
script's ``vllm serve ... "$@"`` launches with them. The ``CMD`` flags are reported where
the Dockerfile writes them, ``fix`` removes them there, and the image moves with the launch."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from vllm_upgrade_check.engine import run_scan
from vllm_upgrade_check.model.options import ScanOptions

SCRIPT = '#!/bin/bash\nset -e\nexec vllm serve "${MODEL_ID}" --port 8000 "$@"\n'


def _repo(tmp_path: Path, dockerfile: str, script: str = SCRIPT, where: str = "start.sh") -> Path:
    (tmp_path / "docker").mkdir()
    (tmp_path / "docker" / "Dockerfile").write_text(dockerfile)
    (tmp_path / "docker" / where).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / "docker" / where).write_text(script)
    return tmp_path


def _swap(root: Path) -> list[tuple[str | None, int | None, int | None]]:
    report = run_scan(ScanOptions.of(paths=[root], to_version="0.33.0"))
    return [(f.location.path, f.location.line, f.location.column) for f in report.findings if f.rule.id == "VUC0180-001"]


CMD = 'CMD ["--max-model-len", "8192", "--swap-space", "4"]\n'


@pytest.mark.parametrize(
    ("copy", "entry", "where"),
    [
        ("COPY start.sh /usr/local/bin/start.sh\n", '["/usr/local/bin/start.sh"]', "start.sh"),
        ("COPY --chmod=755 start.sh /app/\n", '["/app/start.sh"]', "start.sh"),
        ("WORKDIR /srv\nCOPY scripts/start.sh ./\n", '["bash", "/srv/start.sh"]', "scripts/start.sh"),
        ('COPY ["start.sh", "/entrypoint.sh"]\n', '["/entrypoint.sh"]', "start.sh"),
    ],
)
def test_cmd_flags_of_an_entry_point_script_are_checked_in_the_dockerfile(
    tmp_path: Path, copy: str, entry: str, where: str
) -> None:
    dockerfile = f"FROM vllm/vllm-openai:v0.20.0\nENV MODEL_ID=acme/m\n{copy}ENTRYPOINT {entry}\n{CMD}"
    root = _repo(tmp_path, dockerfile, where=where)
    line = dockerfile.split("\n").index(CMD.strip()) + 1
    assert _swap(root) == [("docker/Dockerfile", line, CMD.index('"--swap-space"') + 2)]


@pytest.mark.parametrize(
    ("dockerfile", "script"),
    [
        # no COPY puts the script there: it is not the repository's
        (f"FROM vllm/vllm-openai:v0.20.0\nENTRYPOINT [\"/start.sh\"]\n{CMD}", SCRIPT),
        # the script runs no vLLM with its arguments
        (f"FROM vllm/vllm-openai:v0.20.0\nCOPY start.sh /start.sh\nENTRYPOINT [\"/start.sh\"]\n{CMD}",
         '#!/bin/sh\nexec python3 app.py "$@"\n'),
        # a copy from another stage is not the build context's file
        (f"FROM vllm/vllm-openai:v0.20.0\nCOPY --from=build /out/start.sh /start.sh\nENTRYPOINT [\"/start.sh\"]\n{CMD}", SCRIPT),
    ],
)
def test_no_launch_where_the_repository_does_not_say(tmp_path: Path, dockerfile: str, script: str) -> None:
    assert _swap(_repo(tmp_path, dockerfile, script)) == []


def test_fix_removes_the_flag_from_the_cmd_and_moves_the_image(tmp_path: Path) -> None:
    dockerfile = f"FROM vllm/vllm-openai:v0.20.0\nENV MODEL_ID=acme/m\nCOPY start.sh /start.sh\nENTRYPOINT [\"/start.sh\"]\n{CMD}"
    root = _repo(tmp_path, dockerfile)
    run = subprocess.run(
        [sys.executable, "-m", "vllm_upgrade_check", "fix", str(root), "--to", "0.33.0"],
        capture_output=True, text=True, timeout=300,
    )
    fixed = (root / "docker" / "Dockerfile").read_text()
    assert fixed == dockerfile.replace("v0.20.0", "v0.33.0").replace(', "--swap-space", "4"', ""), run.stdout + run.stderr
    assert (root / "docker" / "start.sh").read_text() == SCRIPT


@pytest.mark.parametrize(
    ("dockerfile_at", "script_at", "copy_from", "found"),
    [
        # built from the root (docker build -f docker/vllm/Dockerfile .): the script is found there
        ("docker/vllm/Dockerfile", "scripts/start.sh", "scripts/start.sh", True),
        # one folder up from the Dockerfile's
        ("deploy/image/Dockerfile", "deploy/bin/start.sh", "bin/start.sh", True),
        # the Dockerfile's own folder wins over a folder above that also holds such a file
        ("svc/Dockerfile", "svc/start.sh", "start.sh", True),
        # no folder holds it: nothing is guessed
        ("svc/Dockerfile", "other/start.sh", "start.sh", False),
    ],
)
def test_the_script_is_looked_for_in_the_folders_above_the_dockerfile(
    tmp_path: Path, dockerfile_at: str, script_at: str, copy_from: str, found: bool
) -> None:
    dockerfile = f"FROM vllm/vllm-openai:v0.20.0\nCOPY {copy_from} /opt/start.sh\nENTRYPOINT [\"/opt/start.sh\"]\n{CMD}"
    for rel, text in ((dockerfile_at, dockerfile), (script_at, SCRIPT)):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    if dockerfile_at == "svc/Dockerfile":  # a decoy above: a script that launches nothing
        (tmp_path / "start.sh").write_text("#!/bin/sh\nexec sleep infinity\n")
    expected = [(dockerfile_at, 4, CMD.index('"--swap-space"') + 2)] if found else []
    assert _swap(tmp_path) == expected
