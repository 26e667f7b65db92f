"""``rules derive OLD NEW``: a draft pack from two tiny fake releases, and scripts/new_release.py."""

from __future__ import annotations

import copy
import importlib.util
import sys
import zipfile
from pathlib import Path

import pytest
from typer.testing import CliRunner

sys.path.insert(0, str(Path(__file__).parent / "derive"))
from derive_fakes import OLD_RELEASE, line_of, write_tree, write_wheel  # noqa: E402

from vllm_upgrade_check.cli import _register, app  # noqa: E402
from vllm_upgrade_check.errors import UsageError  # noqa: E402
from vllm_upgrade_check.knowledge.registry import load_pack_text, load_registry  # noqa: E402

_register()
runner = CliRunner()
ARGS = "vllm/engine/arg_utils.py"
ENVS = "vllm/envs.py"
MODELS = "vllm/model_executor/models/__init__.py"


def _drop(text: str, *needles: str) -> str:
    return "\n".join(line for line in text.splitlines() if not any(n in line for n in needles)) + "\n"


def new_release() -> dict:
    """OLD_RELEASE as 0.6.1: --engine-use-ray, VLLM_USE_V1 and MistralForCausalLM gone, torch 2.5.1."""
    new = copy.deepcopy(OLD_RELEASE)
    new["version"] = "0.6.1"
    src = new["sources"]
    src[ARGS] = src[ARGS].replace(
        """        parser.add_argument("--engine-use-ray", action="store_true",
                            help="(DEPRECATED. This argument is deprecated "
                            "and will be removed in a future update.)")
""",
        "",
    )
    src[ENVS] = _drop(src[ENVS], "VLLM_USE_V1")
    src[MODELS] = _drop(src[MODELS], '"MistralForCausalLM"')
    new["requires"] = ["torch==2.5.1" if r == "torch==2.4.0" else r for r in new["requires"]]
    return new


def derive(*args: str):
    return runner.invoke(app, ["rules", "derive", *args])


@pytest.fixture()
def draft(tmp_path: Path):
    old = write_wheel(OLD_RELEASE, tmp_path)
    new = write_wheel(new_release(), tmp_path)
    out = tmp_path / "draft.yaml"
    result = derive(str(old), str(new), "-o", str(out))
    assert result.exit_code == 0, result.output
    text = out.read_text()
    return text, load_pack_text(text, str(out))


def by_match(pack, kind: str, name: str):
    found = [r for r in pack.rules if r.match.kind.value == kind and r.match.name == name]
    assert len(found) == 1, [(r.match.kind.value, r.match.name) for r in pack.rules]
    return found[0]


def test_draft_validates_with_release_previous_and_wheel(draft) -> None:
    _text, pack = draft
    assert (pack.release, pack.previous) == ("0.6.1", "0.6.0")
    assert "UNREVIEWED DRAFT" in pack.summary
    assert pack.wheel.requires_python == ">=3.8"
    assert pack.wheel.cuda_major == 12
    assert pack.wheel.platform_tag == "manylinux1_x86_64"
    assert "torch==2.5.1" in pack.wheel.requires_dist
    assert [r.id for r in pack.rules] == [f"VUC061-{i:03d}" for i in range(1, len(pack.rules) + 1)]
    assert all(r.tags == ["draft", "unreviewed"] for r in pack.rules)


def test_removed_flag_rule_cites_old_file_and_line(draft) -> None:
    _text, pack = draft
    rule = by_match(pack, "cli_flag", "engine_use_ray")
    assert rule.fix.action.value == "remove_arg"
    line = line_of(OLD_RELEASE, ARGS, '"--engine-use-ray"')
    assert rule.evidence[0].kind == "wheel"
    ev = rule.evidence[0]
    assert (ev.release, ev.path, ev.line) == ("0.6.0", ARGS, line)
    assert ev.text.startswith(f"vllm-0.6.0 wheel: {ARGS}:{line} (")
    assert "absent in vllm-0.6.1" in ev.finding


def test_removed_env_var_rule(draft) -> None:
    _text, pack = draft
    rule = by_match(pack, "env_var", "VLLM_USE_V1")
    line = line_of(OLD_RELEASE, ENVS, '"VLLM_USE_V1":')
    assert rule.evidence[0].where == f"{ENVS}:{line}" and rule.evidence[0].release == "0.6.0"


def test_torch_pin_change_rule(draft) -> None:
    _text, pack = draft
    rule = by_match(pack, "dependency", "torch")
    assert rule.match.specifier == "==2.5.1"
    assert rule.match.origins == ["file"]
    new, old = rule.evidence[0], rule.evidence[1]
    assert (new.release, new.path) == ("0.6.1", "vllm-0.6.1.dist-info/METADATA") and new.line
    assert (old.release, old.path) == ("0.6.0", "vllm-0.6.0.dist-info/METADATA")
    assert "torch==2.4.0" in old.finding


def test_removed_architecture_rule_says_patterns_need_review(draft) -> None:
    _text, pack = draft
    rule = by_match(pack, "model", "mistral")
    assert rule.match.patterns == ["*mistral*"]
    assert "need review" in rule.docs.why
    line = line_of(OLD_RELEASE, MODELS, '"MistralForCausalLM"')
    assert rule.evidence[0].text.startswith(f"vllm-0.6.0 wheel: {MODELS}:{line} ")


def test_unchanged_names_give_no_rule(draft) -> None:
    _text, pack = draft
    names = {(r.match.kind.value, r.match.name) for r in pack.rules}
    assert ("engine_arg", "swap_space") not in names
    assert ("env_var", "VLLM_HOST_IP") not in names
    assert len(pack.rules) == 4, sorted(names)


def test_directories_and_stdout(tmp_path: Path) -> None:
    old = write_tree(OLD_RELEASE, tmp_path / "old")
    new = write_tree(new_release(), tmp_path / "new", site_packages=True)
    result = derive(str(old), str(new))
    assert result.exit_code == 0, result.output
    pack = load_pack_text(result.stdout, "stdout")
    assert {r.match.name for r in pack.rules} >= {"engine_use_ray", "VLLM_USE_V1", "torch"}


def test_bad_inputs_are_usage_errors(tmp_path: Path) -> None:
    good = write_wheel(OLD_RELEASE, tmp_path)
    text = tmp_path / "notes.txt"
    text.write_text("hello")
    empty = tmp_path / "empty"
    empty.mkdir()
    other = tmp_path / "other.whl"
    with zipfile.ZipFile(other, "w") as zf:
        zf.writestr("numpy/__init__.py", "")
    for bad, says in ((text, "not a wheel"), (empty, "not a vLLM release"), (other, "not a vLLM release")):
        result = derive(str(good), str(bad))
        assert isinstance(result.exception, UsageError), result.output
        assert says in str(result.exception) and str(bad) in str(result.exception)


def test_bad_input_exits_2_with_one_line(tmp_path: Path) -> None:
    import subprocess

    done = subprocess.run(
        [sys.executable, "-m", "vllm_upgrade_check", "rules", "derive", str(tmp_path), str(tmp_path)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1 and "not a vLLM release" in done.stderr


# --------------------------------------------------------------------------
# scripts/new_release.py
# --------------------------------------------------------------------------


def load_script():
    path = Path(__file__).resolve().parents[1] / "scripts" / "new_release.py"
    spec = importlib.util.spec_from_file_location("new_release", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def fake_downloader(calls: list):
    releases = {"0.6.0": OLD_RELEASE, "0.6.1": new_release()}

    def download(version: str, dest: Path) -> Path:
        calls.append(version)
        dest.mkdir(parents=True, exist_ok=True)
        return write_wheel(releases[version], dest)

    return download


def test_new_release_writes_a_draft_the_registry_ignores(tmp_path: Path, capsys) -> None:
    script = load_script()
    rules = tmp_path / "rules"
    rules.mkdir()
    (rules / "0.6.0.yaml").write_text("schema_version: 1\nrelease: 0.6.0\nrules: []\n")
    calls: list = []
    rc = script.main(["0.6.1", "--rules-dir", str(rules)], download=fake_downloader(calls))
    assert rc == 0, capsys.readouterr().err
    assert calls == ["0.6.0", "0.6.1"]  # previous defaults to the newest pack
    draft = rules / "0.6.1.draft.yaml"
    assert not (rules / "0.6.1.yaml").exists()
    assert load_pack_text(draft.read_text(), str(draft)).release == "0.6.1"
    assert "review" in capsys.readouterr().out
    # a directory load skips the draft; naming it loads it
    assert [str(v) for v in load_registry([rules], bundled=False).releases] == ["0.6.0"]
    assert [str(v) for v in load_registry([draft], bundled=False).releases] == ["0.6.1"]
    # a second run does not overwrite the draft without --force
    assert script.main(["0.6.1", "--rules-dir", str(rules)], download=fake_downloader([])) == 2
    assert script.main(["0.6.1", "--rules-dir", str(rules), "--force"], download=fake_downloader([])) == 0


def test_new_release_arguments(tmp_path: Path, capsys) -> None:
    script = load_script()
    args = script.parse_args(["0.34.0", "--previous", "0.33.0"])
    assert (args.version, args.previous, args.rules_dir.name) == ("0.34.0", "0.33.0", "rules")
    with pytest.raises(SystemExit) as exc:
        script.parse_args(["not-a-version"])
    assert exc.value.code == 2
    assert script.newest_pack_release(Path(__file__).resolve().parents[1] / "rules") == "0.33.0"
    calls: list = []
    rc = script.main(
        ["0.6.0", "--previous", "0.6.1", "--rules-dir", str(tmp_path)], download=fake_downloader(calls)
    )
    assert rc == 2 and calls == []
    assert "not older" in capsys.readouterr().err
    assert script.main(["0.6.1", "--rules-dir", str(tmp_path)], download=fake_downloader(calls)) == 2
    assert "no <release>.yaml pack" in capsys.readouterr().err


def test_bundled_packs_ignore_drafts() -> None:
    from vllm_upgrade_check.knowledge.registry import is_pack_name

    assert is_pack_name("0.34.0.yaml") and not is_pack_name("0.34.0.draft.yaml")
