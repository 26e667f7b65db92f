"""BuildKit here-documents in a Dockerfile: ``RUN <<EOF`` bodies are shell read at their
lines, ``RUN <<-EOT bash`` feeds its body to bash, a ``COPY <<EOF /entry.sh`` body is the
script the image holds there (and what an ``ENTRYPOINT`` running it launches with the
``CMD``), and no body line is ever read as an instruction."""

from __future__ import annotations

from pathlib import Path

from vllm_upgrade_check.engine import run_scan
from vllm_upgrade_check.model.options import ScanOptions


def _findings(tmp_path: Path, text: str) -> list[tuple[str, int | None, int | None]]:
    (tmp_path / "Dockerfile").write_text(text)
    report = run_scan(ScanOptions.of(paths=[tmp_path], to_version="0.28.0", from_version="0.26.0"))
    return sorted((f.rule.id, f.location.line, f.location.column) for f in report.findings)


def test_run_bodies_are_shell_at_their_lines(tmp_path: Path) -> None:
    text = (
        "FROM python:3.12\n"
        "RUN <<EOF\n"
        "pip install flashinfer-python\n"
        "vllm serve m --max-num-partial-prefills 2\n"
        "EOF\n"
        "RUN <<-'EOT' bash\n"
        "\tset -e\n"
        "\tvllm serve m --max-num-partial-prefills 3\n"
        "\tEOT\n"
    )
    assert _findings(tmp_path, text) == [("VUC0270-001", 4, 14), ("VUC0270-001", 8, 15)]


def test_a_run_body_pin_is_the_from_version(tmp_path: Path) -> None:
    (tmp_path / "Dockerfile").write_text("FROM python:3.12\nRUN <<EOF\npip install vllm==0.26.0\nEOF\n")
    report = run_scan(ScanOptions.of(paths=[tmp_path], to_version="0.28.0"))
    assert str(report.from_version) == "0.26.0"
    (pin,) = [f for f in report.findings if f.rule.id == "VUC000-010"]
    assert (pin.location.line, pin.location.column) == (3, 13)


def test_bodies_no_shell_runs_are_not_read(tmp_path: Path) -> None:
    text = (
        "FROM python:3.12\n"
        "RUN <<EOF\n#!/usr/bin/env python3\nprint('vllm serve m --max-num-partial-prefills 2')\nEOF\n"
        "RUN python3 <<EOF\nvllm serve m --max-num-partial-prefills 3\nEOF\n"
        "RUN cat <<EOF > /notes\nvllm serve m --max-num-partial-prefills 4\nEOF\n"
        "COPY <<EOF /etc/app.conf\nCMD [\"vllm\", \"serve\", \"m\", \"--max-num-partial-prefills\", \"5\"]\nFROM vllm/vllm-openai:v0.20.0\nEOF\n"
        "RUN pip install vllm==0.26.0\n"
    )
    (tmp_path / "Dockerfile").write_text(text)
    report = run_scan(ScanOptions.of(paths=[tmp_path], to_version="0.28.0"))
    assert [f.rule.id for f in report.findings] == ["VUC000-010"]
    assert str(report.from_version) == "0.26.0"  # the body's FROM is no stage


def test_a_copied_entrypoint_script_launches_with_the_cmd(tmp_path: Path) -> None:
    text = (
        "FROM vllm/vllm-openai:v0.26.0\n"
        "WORKDIR /app\n"
        "COPY <<'EOF' start.sh\n"
        "#!/bin/bash\n"
        'exec vllm serve "$MODEL" --max-num-partial-prefills 2 "$@"\n'
        "EOF\n"
        "ENV MODEL=acme/m\n"
        'ENTRYPOINT ["/app/start.sh"]\n'
        'CMD ["--calculate-kv-scales"]\n'
    )
    found = _findings(tmp_path, text)
    assert ("VUC0270-001", 5, 26) in found and ("VUC0280-001", 9, 7) in found


def test_fix_edits_the_bodies(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from vllm_upgrade_check.cli import _register, app

    _register()
    text = (
        "FROM python:3.12\nRUN <<EOF\npip install vllm==0.26.0\nEOF\n"
        "COPY <<EOF /entry.sh\n#!/bin/sh\nexec vllm serve m --max-num-partial-prefills 2 \"$@\"\nEOF\n"
        'ENTRYPOINT ["/entry.sh"]\n'
    )
    (tmp_path / "Dockerfile").write_text(text)
    result = CliRunner().invoke(app, ["fix", str(tmp_path), "--to", "0.28.0"])
    assert result.exit_code in (0, 1), result.output
    fixed = text.replace("vllm==0.26.0", "vllm==0.28.0").replace(" --max-num-partial-prefills 2", "")
    assert (tmp_path / "Dockerfile").read_text() == fixed
