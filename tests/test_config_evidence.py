"""A YAML file is read as a vLLM ``--config`` file only on evidence: a launch passes it with
``--config`` (relative to the script or the root, or a Dockerfile ``COPY`` puts it where the
launch looks), its name says so, or its text mentions vLLM. Keys that merely look like engine
args give a note, never a finding."""

from __future__ import annotations

from pathlib import Path

from vllm_upgrade_check.engine import run_scan
from vllm_upgrade_check.model.options import ScanOptions
from vllm_upgrade_check.sources.scanners.vllm_config import LOOKALIKE_NOTE, name_says_config

REMOVED = "VUC0180-001"  # --swap-space, removed in vLLM 0.18.0
LOOKS = "model: resnet50\nport: 8080\nseed: 42\nmax-num-seqs: 16\nswap-space: 4\n"


def _write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def _scan(root: Path):
    return run_scan(ScanOptions.of(paths=[root], from_version="0.17.0", to_version="0.20.0"))


def _hits(report) -> list[tuple[str, int, str]]:
    return sorted((f.fact.location.path, f.fact.location.line, f.rule.id) for f in report.findings)


def test_lookalike_app_settings_and_values_get_a_note_not_a_blocker(tmp_path: Path) -> None:
    root = _write(
        tmp_path, {"app/settings.yaml": LOOKS, "charts/web/values.yaml": "model: m\nport: 1\nswap_space: 8\n"}
    )
    report = _scan(root)
    assert _hits(report) == []
    notes = {s.path: s for s in report.skipped if s.reason.startswith(LOOKALIKE_NOTE)}
    assert set(notes) == {"app/settings.yaml", "charts/web/values.yaml"}
    assert not any(s.configures_vllm for s in notes.values())
    assert (
        "(model, port, seed, max-num-seqs, ...)" in notes["app/settings.yaml"].reason
        and notes["app/settings.yaml"].line == 1
    )
    assert report.exit_code == 0


def test_a_launch_makes_an_oddly_named_file_a_config(tmp_path: Path) -> None:
    root = _write(
        tmp_path,
        {
            "ops/run.sh": "#!/bin/sh\ncd ops && vllm serve m --config 'knobs.yml'\n",
            "ops/knobs.yml": "port: 1\nswap_space: 4\n",
            "scripts/start.sh": '#!/bin/sh\nvllm serve --config="./configs/prod.yaml"\n',
            "configs/prod.yaml": LOOKS,
        },
    )
    report = _scan(root)
    assert _hits(report) == [("configs/prod.yaml", 5, REMOVED), ("ops/knobs.yml", 2, REMOVED)]
    assert not [s for s in report.skipped if s.reason.startswith(LOOKALIKE_NOTE)]  # the note is dropped


def test_name_or_mention_is_evidence(tmp_path: Path) -> None:
    root = _write(
        tmp_path,
        {
            "vllm-prod.yaml": "swap-space: 2\n",
            "app/serve-config.yaml": "host: x\nswap-space: 2\n",
            "app/engine.yaml": "# engine settings for vLLM\n" + LOOKS,
        },
    )
    assert _hits(_scan(root)) == [
        ("app/engine.yaml", 6, REMOVED),
        ("app/serve-config.yaml", 2, REMOVED),
        ("vllm-prod.yaml", 1, REMOVED),
    ]


def test_names() -> None:
    assert name_says_config("vllm.yaml") and name_says_config("serving_config.yml")
    assert not name_says_config("values-vllm.yaml") and not name_says_config("config.yaml")


def test_dockerfile_copy_is_followed_and_a_missing_file_is_noted(tmp_path: Path) -> None:
    root = _write(
        tmp_path,
        {
            "image/Dockerfile": (
                "FROM vllm/vllm-openai:v0.17.0\nWORKDIR /app\nCOPY ./cfg.yaml conf/\n"
                'CMD ["--config", "conf/cfg.yaml"]\n'
            ),
            "image/cfg.yaml": "seed: 1\nswap-space: 1\n",
            "other/Dockerfile": 'FROM vllm/vllm-openai:v0.17.0\nCMD ["--config", "/nowhere.yaml"]\n',
            "run.sh": "#!/bin/sh\nvllm serve m --config /etc/vllm/mounted.yaml\n",
        },
    )
    report = _scan(root)
    assert [h for h in _hits(report) if h[2] == REMOVED] == [("image/cfg.yaml", 2, REMOVED)]
    unresolved = sorted(
        (s.path, s.line) for s in report.skipped if s.reason.startswith("unresolved: --config")
    )
    assert unresolved == [("other/Dockerfile", 2), ("run.sh", 2)]
    assert not any(s.configures_vllm for s in report.skipped)


def test_a_json_of_engine_arg_keys_alone_gets_the_note(tmp_path: Path) -> None:
    text = '{"model": "meta-llama/Llama-3.1-8B",\n "tensor-parallel-size": 2,\n "swap-space": 4,\n "max-num-seqs": 64}\n'
    root = _write(tmp_path, {"engine.json": text})
    report = _scan(root)
    assert _hits(report) == []
    assert [s.path for s in report.skipped if s.reason.startswith(LOOKALIKE_NOTE)] == ["engine.json"]


def test_a_helm_values_file_that_mentions_vllm_is_no_config(tmp_path: Path) -> None:
    root = _write(
        tmp_path,
        {
            "chart/Chart.yaml": "apiVersion: v2\nname: web\nversion: 1.0.0\n",
            "chart/values.yaml": "image: vllm/vllm-openai:v0.17.0\nmodel: m\nport: 1\nseed: 2\nswap-space: 4\n",
        },
    )
    report = _scan(root)
    assert [h for h in _hits(report) if h[2] == REMOVED] == []
    notes = [s for s in report.skipped if s.reason.startswith(LOOKALIKE_NOTE)]
    assert [(s.path, "Helm values file" in s.reason) for s in notes] == [("chart/values.yaml", True)]
