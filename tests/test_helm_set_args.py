"""``helm install|upgrade|template --set`` / ``--set-string`` / ``--set-json`` of a vLLM
chart's container argument list: the flags reach the container, so each is checked, at its
place in the ``--set`` word of the helm line; a list the script does not resolve gets an
unresolved note."""

from __future__ import annotations

from pathlib import Path

from vllm_upgrade_check.engine import run_scan
from vllm_upgrade_check.engine.fix import fix_paths
from vllm_upgrade_check.knowledge.registry import load_registry
from vllm_upgrade_check.model.options import ScanOptions
from vllm_upgrade_check.parsing.shell import parse_shell
from vllm_upgrade_check.sources.scanners.helm_cli import helm_set_args

REGISTRY = load_registry()

SCRIPT = (
    "#!/bin/bash\n"
    "helm upgrade --install r ./chart --set 'vllm.args={--model,acme/m,--swap-space,4}'\n"  # 2: col 67
    "helm upgrade r ./chart --set 'args[2]=--swap-space' --set args[3]=4\n"  # 3: col 39
    "helm upgrade r ./chart --set-json 'server.args=[\"--model\",\"m\",\"--swap-space\",\"4\"]'\n"  # 4: col 64
    'helm upgrade r ./chart --set-string "vllm.args=$ARGS"\n'  # 5: unresolved
    "helm template r ./chart --set \"image.tag=v0.17.0,server.extraArgs={--seed,1,--swap-space,2}\"\n"  # 6: col 77
    "helm upgrade r ./chart --set vllm.args={--swap-space,4}\n"  # unquoted: bash brace-expands it
    "helm upgrade r other-chart --set 'args={--swap-space,4}'\n"  # not a vLLM chart
)


def _repo(root: Path) -> None:
    (root / "chart").mkdir()
    (root / "chart" / "values.yaml").write_text("image:\n  repository: vllm/vllm-openai\n  tag: v0.17.0\nargs: []\n")
    (root / "deploy.sh").write_text(SCRIPT)


def test_set_lists_are_checked_at_the_helm_line(tmp_path: Path) -> None:
    _repo(tmp_path)
    report = run_scan(ScanOptions.of(paths=[tmp_path], to_version="0.18.0", from_version="0.17.0"), registry=REGISTRY)
    found = sorted((f.location.path, f.location.line, f.location.column) for f in report.findings if f.rule.id == "VUC0180-001")
    assert found == [("deploy.sh", 2, 67), ("deploy.sh", 3, 39), ("deploy.sh", 4, 64), ("deploy.sh", 6, 77)]
    assert [n for n in report.notes if n.startswith("unresolved:")] == [
        'unresolved: "vllm.args=$ARGS" at deploy.sh:5:38 (helm --set vllm.args); the flags it holds were not checked'
    ]
    # --model and --seed are flags vLLM 0.18.0 has: nothing else but the tag to move
    others = [(f.rule.id, f.location.line) for f in report.findings if f.location.path == "deploy.sh" and f.rule.id != "VUC0180-001"]
    assert others == [("VUC000-010", 6)]


def test_fix_leaves_the_list_to_a_person(tmp_path: Path) -> None:
    _repo(tmp_path)
    result = fix_paths(ScanOptions.of(paths=[tmp_path], to_version="0.18.0", from_version="0.17.0"), bump=True)
    assert (tmp_path / "deploy.sh").read_text() == SCRIPT
    assert "tag: v0.17.0" in (tmp_path / "chart" / "values.yaml").read_text()  # held back by the blockers
    assert result is not None


def test_a_ci_step_sets_args_too(tmp_path: Path) -> None:
    _repo(tmp_path)
    (tmp_path / "deploy.sh").unlink()
    flows = tmp_path / ".github" / "workflows"
    flows.mkdir(parents=True)
    (flows / "d.yml").write_text(
        'on: push\njobs:\n  d:\n    runs-on: x\n    steps:\n      - run: helm upgrade r ./chart --set "vllm.args={--model,m,--swap-space,4}"\n'
    )
    report = run_scan(ScanOptions.of(paths=[tmp_path], to_version="0.18.0", from_version="0.17.0"), registry=REGISTRY)
    assert [(f.location.path, f.location.line, f.location.column) for f in report.findings if f.rule.id == "VUC0180-001"] == [
        (".github/workflows/d.yml", 6, 65)
    ]


def test_set_values_that_are_no_argument_list_are_left_alone() -> None:
    script = parse_shell(
        "helm upgrade r ./c --set image.tag=v1 --set 'server.args=--seed' --set 'a.args={x\\,y}' --set-json 'args={\"a\":1}'\n"
        "helm upgrade r ./c --set 'args={--seed,1},image.tag=v1' --set args={--seed,2}\n"
    )
    found = [(key, [text for _t, _o, text in items or []]) for _c, key, _w, items in helm_set_args(script)]
    assert found == [("args", ["--seed", "1"])]
