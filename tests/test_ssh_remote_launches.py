"""``ssh [options] DESTINATION COMMAND``: the remote command is a shell script of the
deployment; its launches are checked at the line and column they are written, and fixed
there when the quoting lets the fix place them."""

from __future__ import annotations

import ast
from pathlib import Path

from vllm_upgrade_check.engine import run_scan
from vllm_upgrade_check.engine.fix import fix_paths
from vllm_upgrade_check.knowledge.registry import load_registry
from vllm_upgrade_check.model.options import ScanOptions
from vllm_upgrade_check.parsing.shell import parse_shell
from vllm_upgrade_check.sources.scanners.ssh import ssh_remote_command

REGISTRY = load_registry()

SCRIPT = (
    'ssh gpu01 "vllm serve acme/m --swap-space 4"\n'  # 1: col 30
    "ssh -i key user@host 'cd /srv && nohup vllm serve acme/m --swap-space 4 &'\n"  # 2: col 58
    "ssh -o StrictHostKeyChecking=no -p 2222 -- host vllm serve acme/m --swap-space 4\n"  # 3: col 67
    'ssh -tt -oBatchMode=yes -p2222 host "\n'  # 4
    "  vllm serve acme/m --swap-space 4\n"  # 5: col 21
    '"\n'
    'sudo ssh -T gpu01 "vllm serve acme/m --seed 1 \\\n'  # 7
    '  --swap-space 4"\n'  # 8: col 3, behind an escaped line break
    "ssh -N -L 8000:localhost:8000 gpu01\n"
    'ssh -fN gpu01 "vllm serve acme/m --swap-space 4"\n'  # -N: ssh runs no remote command
)


def _found(root: Path) -> list[tuple[str, int, int]]:
    report = run_scan(ScanOptions.of(paths=[root], to_version="0.18.0", from_version="0.17.0"), registry=REGISTRY)
    return sorted(
        (f.location.path or "", f.location.line or 0, f.location.column or 0)
        for f in report.findings
        if f.rule.id == "VUC0180-001"
    )


def test_remote_commands_are_scanned_at_their_place(tmp_path: Path) -> None:
    (tmp_path / "deploy.sh").write_text(SCRIPT)
    assert _found(tmp_path) == [
        ("deploy.sh", 1, 30),
        ("deploy.sh", 2, 58),
        ("deploy.sh", 3, 67),
        ("deploy.sh", 5, 21),
        ("deploy.sh", 8, 3),
    ]


def test_fix_removes_the_flag_inside_the_remote_command(tmp_path: Path) -> None:
    (tmp_path / "deploy.sh").write_text(SCRIPT)
    fix_paths(ScanOptions.of(paths=[tmp_path], to_version="0.18.0", from_version="0.17.0"), bump=False)
    fixed = (tmp_path / "deploy.sh").read_text().splitlines()
    assert fixed[0] == 'ssh gpu01 "vllm serve acme/m"'
    assert fixed[1] == "ssh -i key user@host 'cd /srv && nohup vllm serve acme/m &'"
    assert fixed[2] == "ssh -o StrictHostKeyChecking=no -p 2222 -- host vllm serve acme/m"
    assert fixed[4] == "  vllm serve acme/m"
    assert fixed[7] == '  --swap-space 4"'  # behind an escape: left to a person
    assert not parse_shell("\n".join(fixed)).has_error


def test_python_argv_lists_and_ci_steps_run_ssh_too(tmp_path: Path) -> None:
    (tmp_path / "launch.py").write_text(
        "import subprocess\n"
        'subprocess.run(["ssh", "gpu01", "vllm serve acme/m --swap-space 4"])\n'
        'subprocess.run(["ssh", "-p", "22", "gpu01", "vllm", "serve", "acme/m", "--swap-space", "4"])\n'
    )
    flows = tmp_path / ".github" / "workflows"
    flows.mkdir(parents=True)
    (flows / "d.yml").write_text(
        "on: push\njobs:\n  d:\n    runs-on: ubuntu-latest\n    steps:\n"
        '      - run: ssh gpu01 "vllm serve acme/m --swap-space 4"\n'
    )
    assert _found(tmp_path) == [(".github/workflows/d.yml", 6, 43), ("launch.py", 2, 52), ("launch.py", 3, 73)]
    fix_paths(ScanOptions.of(paths=[tmp_path], to_version="0.18.0", from_version="0.17.0"), bump=False)
    text = (tmp_path / "launch.py").read_text()
    ast.parse(text)
    assert '"vllm serve acme/m"])' in text and '"acme/m"])' in text


def test_ssh_options_and_destination_are_not_the_command() -> None:
    def remote(line: str) -> list[str] | None:
        found = ssh_remote_command(parse_shell(line).commands[0].argv)
        return None if found is None else [t.text for t in found]

    assert remote("ssh -p 22 -l me -J bastion host uptime") == ["uptime"]
    assert remote("ssh -p22 -vvv -- host a b") == ["a", "b"]
    assert remote("ssh -oBatchMode=yes -o ConnectTimeout=5 ssh://host:22 run") == ["run"]
    assert remote("ssh host") is None
    assert remote("ssh -W host:22 jump") is None
    assert remote("autossh -M 0 host vllm") == ["vllm"]
    assert remote("scp a host:b") is None


HEREDOCS = (
    "ssh gpu01 <<'REMOTE'\n"
    "cd /srv\n"
    "vllm serve acme/m --swap-space 4\n"  # 3: col 19
    "REMOTE\n"
    "ssh gpu01 bash -s <<EOF\n"
    "vllm serve $M --swap-space 4\n"  # 6: col 15, $M expanded by the local shell: unresolved
    "EOF\n"
    "bash <<'EOF'\n"
    "vllm serve acme/m --swap-space 4\n"  # 9: col 19
    "EOF\n"
    "cat <<'EOF' > start.sh\n"
    "vllm serve acme/m --swap-space 4\n"  # written to a file, not run
    "EOF\n"
    "ssh -N gpu01 <<'EOF'\n"
    "vllm serve acme/m --swap-space 4\n"  # -N: no remote shell reads it
    "EOF\n"
)


def test_a_here_document_a_remote_or_local_shell_reads_is_a_script(tmp_path: Path) -> None:
    (tmp_path / "deploy.sh").write_text(HEREDOCS)
    assert _found(tmp_path) == [("deploy.sh", 3, 19), ("deploy.sh", 6, 15), ("deploy.sh", 9, 19)]
    fix_paths(ScanOptions.of(paths=[tmp_path], to_version="0.18.0", from_version="0.17.0"), bump=False)
    fixed = (tmp_path / "deploy.sh").read_text().splitlines()
    assert (fixed[2], fixed[5], fixed[8]) == ("vllm serve acme/m", "vllm serve $M", "vllm serve acme/m")
    assert fixed[11] == fixed[14] == "vllm serve acme/m --swap-space 4"
    assert not parse_shell("\n".join(fixed) + "\n").has_error
