"""``fix``: round trips (scan -> fix -> scan) on every file kind, idempotence, stale edits,
newline/encoding/mode preservation and the scanned-root boundary."""

from __future__ import annotations

import json
import os
import shlex
import shutil
from pathlib import Path

import pytest
from packaging.version import Version
from typer.testing import CliRunner

from vllm_upgrade_check.cli import _register, app
from vllm_upgrade_check.engine import run_scan
from vllm_upgrade_check.fixing import Edit, apply_edits, planned_edits
from vllm_upgrade_check.knowledge.registry import load_registry
from vllm_upgrade_check.model.options import ScanOptions
from vllm_upgrade_check.sources.discovery import OutsideRoots, resolve_in_roots
from vllm_upgrade_check.sources.scanners import default_scanners

_register()
runner = CliRunner()
FIXTURES = Path(__file__).parent / "fixtures" / "fix"
RULES = FIXTURES / "rules"
CASES = sorted(p.name for p in FIXTURES.iterdir() if (p / "args").is_file())


def _args(case: str) -> list[str]:
    return shlex.split((FIXTURES / case / "args").read_text().replace("RULES", str(RULES)))


def _copy_case(case: str, dest: Path) -> list[Path]:
    inputs = []
    for src in sorted((FIXTURES / case).iterdir()):
        if src.name in ("args", "exit") or src.suffix == ".fixed":
            continue
        shutil.copy(src, dest / src.name)
        inputs.append(src)
    return inputs


def _exit(case: str) -> int:
    """The exit code ``fix`` ends the case with: 1 where a blocker is left for a person."""
    path = FIXTURES / case / "exit"
    return int(path.read_text()) if path.exists() else 0


def _fix(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, ["fix", *args])
    return result.exit_code, result.output


def test_every_scanner_file_kind_has_a_case() -> None:
    assert set(CASES) >= {"shell", "dockerfile", "compose", "k8s", "requirements", "pyproject"}


@pytest.mark.parametrize("case", CASES)
def test_round_trip_scan_fix_scan(case: str, tmp_path: Path) -> None:
    inputs = _copy_case(case, tmp_path)
    code, out = _fix(str(tmp_path), *_args(case))
    assert code == _exit(case), out
    for src in inputs:
        expected = src.with_name(src.name + ".fixed")
        want = expected.read_text() if expected.exists() else src.read_text()
        assert (tmp_path / src.name).read_text() == want, f"{case}/{src.name}\n{out}"
    # Fixing twice is fixing once.
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    code, out = _fix(str(tmp_path), *_args(case))
    assert code == _exit(case) and "Fixed 0 issue(s)" in out, out
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before
    # A scan from the original version finds nothing fixable left.
    args = _args(case)
    if "--from" not in args:
        args += ["--from", "0.26.0"]
    again = runner.invoke(app, ["fix", str(tmp_path), "--diff", *args])
    assert again.exit_code == _exit(case) and again.stdout == "", again.output
    # Every fixed file still parses: the scan skips none of them.
    scan_args = [a for a in args if a not in ("--unsafe-fixes", "--no-bump")]
    scanned = runner.invoke(app, ["scan", str(tmp_path), "--format", "json", "--fail-on", "never", *scan_args])
    assert json.loads(scanned.stdout)["skipped"] == [], scanned.stdout


def test_diff_writes_nothing(tmp_path: Path) -> None:
    _copy_case("shell", tmp_path)
    before = (tmp_path / "serve.sh").read_bytes()
    code, out = _fix(str(tmp_path), "--to", "0.28.0", "--diff")
    assert code == 0
    assert "--- a/serve.sh" in out and "-  --max_long_partial_prefills=2 \\" in out
    assert (tmp_path / "serve.sh").read_bytes() == before


def test_unsafe_fix_needs_the_option(tmp_path: Path) -> None:
    (tmp_path / "run.sh").write_text("vllm serve m --test-mode legacy\n")
    code, out = _fix(str(tmp_path), "--to", "0.28.0", "--from", "0.27.1", "--rules", str(RULES))
    assert code == 0 and "use --unsafe-fixes" in out
    assert (tmp_path / "run.sh").read_text() == "vllm serve m --test-mode legacy\n"
    _fix(str(tmp_path), "--to", "0.28.0", "--from", "0.27.1", "--rules", str(RULES), "--unsafe-fixes")
    assert (tmp_path / "run.sh").read_text() == "vllm serve m --test-mode modern\n"


def test_display_only_is_never_applied(tmp_path: Path) -> None:
    text = "vllm serve m --quantization bitsandbytes\n"
    (tmp_path / "run.sh").write_text(text)
    code, out = _fix(str(tmp_path), "--to", "0.28.0", "--unsafe-fixes")
    assert code == 1 and "Needs a person (1)" in out and "VUC0280-003" in out
    assert (tmp_path / "run.sh").read_text() == text


def test_crlf_bom_and_mode_are_preserved(tmp_path: Path) -> None:
    script = tmp_path / "serve.sh"
    script.write_bytes(
        b"\xef\xbb\xbfvllm serve m \\\r\n  --max-num-partial-prefills 4 \\\r\n  --port 8000\r\n# caf\xc3\xa9\r\n"
    )
    script.chmod(0o754)
    code, out = _fix(str(tmp_path), "--to", "0.28.0")
    assert code == 0, out
    assert script.read_bytes() == b"\xef\xbb\xbfvllm serve m \\\r\n  --port 8000\r\n# caf\xc3\xa9\r\n"
    assert (script.stat().st_mode & 0o777) == 0o754


def test_last_line_removal_drops_the_dangling_continuation(tmp_path: Path) -> None:
    (tmp_path / "serve.sh").write_text(
        "vllm serve m \\\n  --port 8000 \\\n  --max-num-partial-prefills 4\necho ok\n"
    )
    _fix(str(tmp_path), "--to", "0.28.0")
    assert (tmp_path / "serve.sh").read_text() == "vllm serve m \\\n  --port 8000\necho ok\n"


def _plan(root: Path) -> list[Edit]:
    options = ScanOptions.of(paths=[root], to_version="0.28.0")
    report = run_scan(options)
    edits = []
    for finding in report.findings:
        text = (root / (finding.location.path or "")).read_text()
        try:
            edits.extend(planned_edits(finding, text, Version("0.28.0")))
        except Exception:  # noqa: BLE001 - findings without a mechanical fix
            continue
    return edits


def test_stale_edit_fails_loudly_and_writes_nothing_to_that_file(tmp_path: Path) -> None:
    (tmp_path / "a.sh").write_text("vllm serve m --max-num-partial-prefills 4\n")
    (tmp_path / "b.sh").write_text("vllm serve m --override-attention-dtype bfloat16 --port 1\n")
    edits = _plan(tmp_path)
    assert {e.path for e in edits} == {"a.sh", "b.sh"}
    changed = "vllm serve m --max-num-partial-prefills 5\n"
    (tmp_path / "a.sh").write_text(changed)
    written, errors = apply_edits(edits, [tmp_path])
    assert written == ["b.sh"]
    assert len(errors) == 1 and "a.sh" in str(errors[0]) and "changed" in str(errors[0])
    assert (tmp_path / "a.sh").read_text() == changed
    assert (tmp_path / "b.sh").read_text() == "vllm serve m --port 1\n"


def test_symlink_out_of_root_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    target = outside / "serve.sh"
    target.write_text("vllm serve m --max-num-partial-prefills 4\n")
    root = tmp_path / "root"
    root.mkdir()
    os.symlink(target, root / "serve.sh")
    with pytest.raises(OutsideRoots, match="outside"):
        resolve_in_roots([root], "serve.sh")
    code, out = _fix(str(root), "--to", "0.28.0")
    assert target.read_text() == "vllm serve m --max-num-partial-prefills 4\n"
    assert (root / "serve.sh").is_symlink()
    assert "Fixed 0 issue(s)" in out


def test_paths_outside_the_roots_are_refused(tmp_path: Path) -> None:
    (tmp_path / "x.sh").write_text("x\n")
    with pytest.raises(OutsideRoots):
        resolve_in_roots([tmp_path], "../x.sh")


def _fixed(tmp_path: Path, name: str, text: str, *args: str) -> str:
    """``text`` as file ``name`` after ``fix`` with ``args``."""
    (tmp_path / name).write_text(text)
    code, out = _fix(str(tmp_path), *args)
    assert code == 0, out
    return (tmp_path / name).read_text()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("llm = LLM(model='m', max_num_partial_prefills=4, seed=0)\n", "llm = LLM(model='m', seed=0)\n"),
        ("llm = LLM(model='m', max_num_partial_prefills=f(1, 2))\n", "llm = LLM(model='m')\n"),
        ("llm = LLM(\n    model='m',\n    max_num_partial_prefills=4,\n)\n", "llm = LLM(\n    model='m',\n)\n"),
        (
            "llm = LLM(\n    model='m',\n    max_num_partial_prefills=4,   # GiB\n    seed=0,\n)\n",
            "llm = LLM(\n    model='m',\n    seed=0,\n)\n",
        ),
        ("llm = LLM('m', max_num_partial_prefills=4)\n", "llm = LLM('m')\n"),
        ("llm = LLM(max_num_partial_prefills=4, model='m')\n", "llm = LLM(model='m')\n"),
    ],
)
def test_python_kwarg_removal(tmp_path: Path, text: str, expected: str) -> None:
    head = "from vllm import LLM\n"
    got = _fixed(tmp_path, "app.py", head + text, "--to", "0.28.0", "--from", "0.26.0", "--no-bump")
    assert got == head + expected


def test_config_yaml_key_removal(tmp_path: Path) -> None:
    text = "model: m\nmax_num_partial_prefills: 4   # two at a time\nport: 8000\n"
    got = _fixed(tmp_path, "vllm-config.yaml", text, "--to", "0.28.0", "--from", "0.26.0", "--no-bump")
    assert got == "model: m\nport: 8000\n"


@pytest.mark.parametrize("word", ["8", "$N", "${N}", '"$N"'])
def test_a_removed_flag_takes_the_value_word_written_after_it(tmp_path: Path, word: str) -> None:
    text = f"vllm serve m --max-num-partial-prefills {word} --port 1\n"
    got = _fixed(tmp_path, "a.sh", text, "--to", "0.28.0", "--from", "0.26.0", "--no-bump")
    assert got == "vllm serve m --port 1\n"


def test_overlapping_fixes_apply_in_a_later_pass(tmp_path: Path) -> None:
    (tmp_path / "compose.yaml").write_text(
        "services:\n  a:\n    image: vllm/vllm-openai:v0.26.0\n"
        '    command: ["--no-calculate-kv-scales", "--max-num-partial-prefills", "2", "--model", "m"]\n'
    )
    code, out = _fix(str(tmp_path), "--to", "0.28.0")
    assert code == 0 and "Fixed 3 issue(s)" in out, out
    assert (tmp_path / "compose.yaml").read_text() == (
        'services:\n  a:\n    image: vllm/vllm-openai:v0.28.0\n    command: ["--model", "m"]\n'
    )


def test_quoted_equals_value_is_removed_whole(tmp_path: Path) -> None:
    (tmp_path / "run.sh").write_text('vllm serve m --override-attention-dtype="b float" --port 1\n')
    code, out = _fix(str(tmp_path), "--to", "0.28.0")
    assert code == 0, out
    assert (tmp_path / "run.sh").read_text() == "vllm serve m --port 1\n"


def test_task_removal_is_left_for_a_person(tmp_path: Path) -> None:
    # P1-2: dropping --task embed would silently turn an embedding server into a generate one.
    text = "vllm serve m --task embed --speculative-model d --port 1\n"
    (tmp_path / "run.sh").write_text(text)
    code, out = _fix(str(tmp_path), "--from", "0.8.0", "--to", "0.13.0")
    assert code == 1, out  # the blockers remain
    assert (tmp_path / "run.sh").read_text() == text
    assert "VUC0130-001" in out and "--runner" in out and "use --unsafe-fixes" in out


def test_removals_have_no_replacement_to_write() -> None:
    # A removal must do what its text says: a rule that says "replace with" or "move into"
    # moves the value (move_to_config) or is left to a person, never a plain removal.
    registry = load_registry([])
    bad = [
        r.id
        for _, r in registry.rules()
        if r.fix.action.value == "remove_arg" and r.fix.summary.startswith(("Replace", "Move"))
    ]
    assert bad == []


def test_new_specifier_is_quoted_in_shell_lines(tmp_path: Path) -> None:
    # P1-3: `pip install transformers<5.20.0,>=5.16.1` unquoted is a shell redirection.
    (tmp_path / "Dockerfile").write_text(
        'FROM python:3.11\nRUN pip install vllm==0.12.0 transformers==4.40.0 "torch==2.0.0"\n'
    )
    (tmp_path / "setup.sh").write_text("pip install vllm==0.12.0 transformers==4.40.0\n")
    code, out = _fix(str(tmp_path), "--to", "0.33.0")
    assert code == 0, out
    docker = (tmp_path / "Dockerfile").read_text().splitlines()[1]
    assert docker.startswith("RUN pip install vllm==0.33.0 'transformers<"), docker
    assert docker.endswith(' "torch==2.14.0"'), docker
    assert (tmp_path / "setup.sh").read_text().startswith("pip install vllm==0.33.0 'transformers<")
    again = runner.invoke(app, ["scan", str(tmp_path), "--to", "0.33.0", "--from", "0.12.0"])
    assert again.exit_code == 0, again.output


def test_pins_move_only_with_the_vllm_version_of_their_file(tmp_path: Path) -> None:
    # A torch or transformers pin set for the target beside a vLLM pin of an older release
    # cannot be installed; it moves with the vLLM pin of its own file, and a pin in a file
    # without one is left for a person, which keeps every version where it is.
    (tmp_path / "setup.sh").write_text("pip install vllm==0.12.0 transformers==4.40.0\n")
    (tmp_path / "requirements.txt").write_text("transformers==4.40.0\n")
    code, out = _fix(str(tmp_path), "--to", "0.33.0")
    assert code == 1, out
    assert (tmp_path / "setup.sh").read_text() == "pip install vllm==0.12.0 transformers==4.40.0\n"
    assert "requirements.txt:1:1: VUC000-002" in out and "this file names no vLLM pin or image" in out
    assert "remain for 0.33.0 (fix them, then run fix again):\n  requirements.txt:1:1: VUC000-002" in out, out
    assert "Not bumped (1):\n  setup.sh:1: vllm==0.12.0: held back while blockers remain for 0.33.0" in out, out


def test_diff_shows_every_pass_that_fix_writes(tmp_path: Path) -> None:
    # P1-4: edits that overlap in one pass (bump + removal) apply in a later pass; --diff must show them.
    (tmp_path / "compose.yaml").write_text(
        "services:\n  a:\n    image: vllm/vllm-openai:v0.26.0\n"
        '    command: ["--no-calculate-kv-scales", "--max-num-partial-prefills", "2", "--model", "m"]\n'
    )
    before = (tmp_path / "compose.yaml").read_text()
    code, out = _fix(str(tmp_path), "--to", "0.28.0", "--diff")
    assert code == 0, out
    assert (tmp_path / "compose.yaml").read_text() == before
    assert '+    command: ["--model", "m"]\n' in out and "+    image: vllm/vllm-openai:v0.28.0\n" in out


def test_a_second_scan_in_one_process_finds_the_same(tmp_path: Path) -> None:
    # P1-5: stateful scanners (dotenv files, ConfigMaps named by envFrom) must not remember a run.
    (tmp_path / ".env").write_text("VLLM_USE_V1=1\n")
    (tmp_path / "run.sh").write_text("vllm serve m --port 1\n")
    (tmp_path / "k8s.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg}\ndata: {VLLM_ATTENTION_BACKEND: X}\n---\n"
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  template:\n    spec:\n"
        "      containers:\n      - name: v\n        image: vllm/vllm-openai:v0.8.0\n"
        "        envFrom: [{configMapRef: {name: cfg}}]\n"
    )
    options = ScanOptions.of(paths=[tmp_path], to_version="0.33.0")
    first = [f.fingerprint for f in run_scan(options).findings]
    second = [f.fingerprint for f in run_scan(options).findings]
    assert second == first
    rules = {f.rule.id for f in run_scan(options).findings if f.location.path in (".env", "k8s.yaml")}
    assert len(rules) >= 2, rules
    shared = ScanOptions.of(paths=[tmp_path], to_version="0.33.0", scanners=default_scanners())
    assert [f.fingerprint for f in run_scan(shared).findings] == first
    assert [f.fingerprint for f in run_scan(shared).findings] == first


def test_symlink_inside_the_root_is_scanned_once_and_fixed(tmp_path: Path) -> None:
    # P1-8: a link to a file in the repo gave a duplicate finding and a "file changed" error.
    (tmp_path / "real.sh").write_text("#!/bin/sh\nvllm serve m --max-num-partial-prefills 4\n")
    os.symlink("real.sh", tmp_path / "inside-link.sh")
    os.mkdir(tmp_path / "d")
    os.symlink(tmp_path / "d", tmp_path / "dlink")
    (tmp_path / "d" / "run.sh").write_text("vllm serve m --max-num-partial-prefills 4\n")
    report = run_scan(ScanOptions.of(paths=[tmp_path], to_version="0.28.0"))
    assert sorted(f.location.path for f in report.findings) == ["d/run.sh", "real.sh"]
    code, out = _fix(str(tmp_path), "--to", "0.28.0")
    assert code == 0, out
    assert (tmp_path / "real.sh").read_text() == "#!/bin/sh\nvllm serve m\n"
    assert (tmp_path / "inside-link.sh").is_symlink()
    with pytest.raises(OutsideRoots, match="symlink"):
        resolve_in_roots([tmp_path], "dlink/run.sh")


def test_several_roots_keep_their_paths_apart(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # P1-7: a/r.sh and b/r.sh were both reported as r.sh, and fix edited only one of them.
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "r.sh").write_text("vllm serve m --swap-space 4\n")
    monkeypatch.chdir(tmp_path)
    report = run_scan(ScanOptions.of(paths=[Path("a"), Path("b")], from_version="0.12.0", to_version="0.18.0"))
    assert sorted({f.location.path for f in report.findings}) == ["a/r.sh", "b/r.sh"]
    code, out = _fix("a", "b", "--from", "0.12.0", "--to", "0.18.0")
    assert code == 0 and "Fixed 2 issue(s) in 2 file(s)" in out, out
    assert (tmp_path / "a" / "r.sh").read_text() == (tmp_path / "b" / "r.sh").read_text() == "vllm serve m\n"
    for name in ("a", "b"):
        (tmp_path / name / "r.sh").write_text("vllm serve m --swap-space 4\n")
    code, out = _fix("a/r.sh", str(tmp_path / "b" / "r.sh"), "--from", "0.12.0", "--to", "0.18.0")
    assert code == 0 and "Fixed 2 issue(s) in 2 file(s)" in out, out
    (tmp_path / "a" / "r.sh").write_text("vllm serve m --swap-space 4\n")
    single = run_scan(ScanOptions.of(paths=[Path("a")], from_version="0.12.0", to_version="0.18.0"))
    assert [f.location.path for f in single.findings] == ["r.sh"]


@pytest.mark.parametrize(
    ("written", "bumped"),
    [
        ('ARG VLLM_VERSION=0.26.0\nFROM vllm/vllm-openai:v${VLLM_VERSION}\n', "ARG VLLM_VERSION=0.28.0\n"),
        ('ARG VLLM_VERSION="v0.26.0"\nFROM vllm/vllm-openai:$VLLM_VERSION\n', 'ARG VLLM_VERSION="v0.28.0"\n'),
        ("ARG TAG=0.26.0\nFROM vllm/vllm-openai:v${TAG}-cu128\n", "ARG TAG=0.28.0\n"),
    ],
)
def test_bump_sets_the_default_of_the_arg_the_image_tag_is_made_of(
    tmp_path: Path, written: str, bumped: str
) -> None:
    (tmp_path / "Dockerfile").write_text(written + 'CMD ["--model", "m"]\n')
    code, out = _fix(str(tmp_path), "--to", "0.28.0")
    assert code == 0, out
    text = (tmp_path / "Dockerfile").read_text()
    assert text == bumped + written.split("\n", 1)[1] + 'CMD ["--model", "m"]\n'


def test_bump_leaves_an_arg_that_does_not_make_the_tag(tmp_path: Path) -> None:
    # The ARG default is not what the scanner resolved the tag to (the FROM names another ARG).
    written = "ARG VLLM_VERSION=0.26.0\nARG OTHER=0.25.0\nFROM vllm/vllm-openai:v${OTHER}\n"
    (tmp_path / "Dockerfile").write_text(written)
    _fix(str(tmp_path), "--to", "0.28.0")
    assert (tmp_path / "Dockerfile").read_text() == written.replace("OTHER=0.25.0", "OTHER=0.28.0")


@pytest.mark.parametrize("quote", ["", '"', "'"])
def test_bump_sets_the_helm_tag_beside_the_repository(tmp_path: Path, quote: str) -> None:
    values = (
        "servingEngineSpec:\n  modelSpec:\n  - name: llama\n"
        f"    repository: {quote}vllm/vllm-openai{quote}\n    tag: {quote}v0.26.0{quote}  # pinned\n"
        "    modelURL: meta-llama/Llama-3.1-8B-Instruct\n"
        "  other:\n    image:\n      repository: vllm/vllm-openai\n      tag: v0.26.0-cu128\n"
        "redis:\n  image: {repository: redis, tag: '7.2'}\n"
    )
    (tmp_path / "values.yaml").write_text(values)
    code, out = _fix(str(tmp_path), "--to", "0.28.0")
    assert code == 0, out
    assert (tmp_path / "values.yaml").read_text() == values.replace(
        f"tag: {quote}v0.26.0{quote}", f"tag: {quote}v0.28.0{quote}"
    ).replace("tag: v0.26.0-cu128", "tag: v0.28.0-cu128")


@pytest.mark.parametrize(
    ("written", "fixed"),
    [
        # The version is literal; another ARG only makes the suffix: the ARG is left alone.
        ("ARG CUDA=cu128\nFROM vllm/vllm-openai:v0.26.0-${CUDA}\n", "ARG CUDA=cu128\nFROM vllm/vllm-openai:v0.28.0-${CUDA}\n"),
        ("ARG SUFFIX=-cu128\nFROM vllm/vllm-openai:v0.26.0${SUFFIX}\n", "ARG SUFFIX=-cu128\nFROM vllm/vllm-openai:v0.28.0${SUFFIX}\n"),
        # The version in one ARG, the suffix in another.
        (
            "ARG VLLM_VERSION=0.26.0\nARG CUDA=cu128\nFROM vllm/vllm-openai:v${VLLM_VERSION}-${CUDA}\n",
            "ARG VLLM_VERSION=0.28.0\nARG CUDA=cu128\nFROM vllm/vllm-openai:v${VLLM_VERSION}-${CUDA}\n",
        ),
        # FROM flags and a registry with a port.
        (
            "FROM --platform=linux/amd64 vllm/vllm-openai:v0.26.0 AS engine\n",
            "FROM --platform=linux/amd64 vllm/vllm-openai:v0.28.0 AS engine\n",
        ),
        (
            "ARG V=0.26.0\nFROM --platform=$BUILDPLATFORM registry.local:5000/vllm/vllm-openai:v${V}\n",
            "ARG V=0.28.0\nFROM --platform=$BUILDPLATFORM registry.local:5000/vllm/vllm-openai:v${V}\n",
        ),
        # ARG names are case-sensitive; several settings on one ARG line; CRLF.
        (
            "ARG VLLM_VERSION=0.26.0\nARG vllm_version=0.26.0\nFROM vllm/vllm-openai:v${VLLM_VERSION}\n",
            "ARG VLLM_VERSION=0.28.0\nARG vllm_version=0.26.0\nFROM vllm/vllm-openai:v${VLLM_VERSION}\n",
        ),
        ("ARG A=0.26.0 B=x\nFROM vllm/vllm-openai:v${A}\n", "ARG A=0.28.0 B=x\nFROM vllm/vllm-openai:v${A}\n"),
        (
            "ARG VLLM_VERSION=0.26.0\r\nFROM vllm/vllm-openai:v${VLLM_VERSION}\r\n",
            "ARG VLLM_VERSION=0.28.0\r\nFROM vllm/vllm-openai:v${VLLM_VERSION}\r\n",
        ),
        # A FROM sees only the ARGs before the first FROM (a stage's own ARG is not its default).
        (
            "ARG V=0.26.0\nFROM python:3.12 AS one\nARG V=0.25.0\nFROM vllm/vllm-openai:v${V}\n",
            "ARG V=0.28.0\nFROM python:3.12 AS one\nARG V=0.25.0\nFROM vllm/vllm-openai:v${V}\n",
        ),
        # ${NAME:-word}: the word when the ARG has no value, else the ARG's default.
        (
            "ARG VLLM_VERSION\nFROM vllm/vllm-openai:v${VLLM_VERSION:-0.26.0}\n",
            "ARG VLLM_VERSION\nFROM vllm/vllm-openai:v${VLLM_VERSION:-0.28.0}\n",
        ),
        (
            "ARG VLLM_VERSION=0.26.0\nFROM vllm/vllm-openai:v${VLLM_VERSION:-0.25.0}\n",
            "ARG VLLM_VERSION=0.28.0\nFROM vllm/vllm-openai:v${VLLM_VERSION:-0.25.0}\n",
        ),
        # The whole image in an ARG; an ARG continued over lines; a comment is not a use.
        ("ARG IMG=vllm/vllm-openai:v0.26.0\nFROM ${IMG}\n", "ARG IMG=vllm/vllm-openai:v0.28.0\nFROM ${IMG}\n"),
        (
            "ARG A=1 \\\n    VLLM_VERSION=0.26.0\nFROM vllm/vllm-openai:v${VLLM_VERSION}\n",
            "ARG A=1 \\\n    VLLM_VERSION=0.28.0\nFROM vllm/vllm-openai:v${VLLM_VERSION}\n",
        ),
        (
            "# build with ${V}\nARG V=0.26.0\nFROM vllm/vllm-openai:v${V}\n",
            "# build with ${V}\nARG V=0.28.0\nFROM vllm/vllm-openai:v${V}\n",
        ),
        # Docker reads the last definition before the FROM.
        (
            "ARG VLLM_VERSION=0.25.0\nARG VLLM_VERSION=0.26.0\nFROM vllm/vllm-openai:v${VLLM_VERSION}\n",
            "ARG VLLM_VERSION=0.25.0\nARG VLLM_VERSION=0.28.0\nFROM vllm/vllm-openai:v${VLLM_VERSION}\n",
        ),
    ],
)
def test_bump_edits_the_version_where_it_is_written(tmp_path: Path, written: str, fixed: str) -> None:
    (tmp_path / "Dockerfile").write_bytes(written.encode())
    code, out = _fix(str(tmp_path), "--to", "0.28.0")
    assert code == 0 and "Not bumped" not in out, out
    assert (tmp_path / "Dockerfile").read_bytes().decode() == fixed
    assert _fix(str(tmp_path), "--to", "0.28.0")[1].startswith("Fixed 0 issue(s)")


@pytest.mark.parametrize(
    ("written", "reason"),
    [
        (
            "ARG V=0.26.0\nFROM vllm/vllm-openai:v${V} AS engine\nFROM myorg/tools:${V}\nRUN pip install mylib==${V}\n",
            "ARG V is also expanded on lines 3, 4 for something else",
        ),
        ("ARG PATCH=0\nFROM vllm/vllm-openai:v0.26.${PATCH}\n", "split across ARGs"),
        (
            "ARG V=0.26.0\nFROM vllm/vllm-openai:v${V}\nARG V\nRUN echo ${V:-none} > /v\nLABEL v=\"${V%.*}\"\n",
            "ARG V is also expanded on lines 4, 5 for something else",
        ),
        ("ARG VLLM_VERSION\nFROM vllm/vllm-openai:v${VLLM_VERSION:?set it}\n", None),
        (
            "ARG VLLM_VERSION=0.26.0\nFROM vllm/vllm-openai:v${VLLM_VERSION}@sha256:" + "b" * 64 + "\n",
            "pinned by digest",
        ),
        ("ARG V=0.26.0\nFROM vllm/vllm-openai:v${V:+0.27.0}\n", None),
        ("FROM vllm/vllm-openai:v0.26.0@sha256:" + "a" * 64 + "\n", "pinned by digest"),
    ],
)
def test_a_version_the_bump_cannot_set_is_named_and_nothing_changes(
    tmp_path: Path, written: str, reason: str | None
) -> None:
    (tmp_path / "Dockerfile").write_text(written)
    code, out = _fix(str(tmp_path), "--to", "0.28.0")
    assert (tmp_path / "Dockerfile").read_text() == written
    if reason is not None:
        assert code == 0 and "Not bumped (1):\n  Dockerfile:" in out and reason in out, out
    diff = runner.invoke(app, ["fix", str(tmp_path), "--to", "0.28.0", "--diff"])
    assert diff.stdout == "" and (reason is None or reason in diff.stderr)


def test_fix_lists_files_it_could_not_parse(tmp_path: Path) -> None:
    (tmp_path / "serve.sh").write_text("vllm serve m --max-num-partial-prefills 2\n")
    (tmp_path / "broken.yaml").write_text("services:\n  a:\n    image: vllm/vllm-openai:v0.26.0\n    command: [\n")
    code, out = _fix(str(tmp_path), "--to", "0.28.0", "--no-bump")
    assert code == 1 and "Skipped, not fixed (1):\n  broken.yaml" in out, out  # it configures vLLM


def test_bump_sets_an_anchored_or_block_helm_tag_and_names_a_shared_anchor(tmp_path: Path) -> None:
    values = (
        "servingEngineSpec:\n  modelSpec:\n"
        "  - name: a\n    repository: vllm/vllm-openai\n    tag: &t v0.26.0\n    modelURL: m\n"
        "  - name: b\n    repository: vllm/vllm-openai\n    tag: >-\n      v0.26.0\n    modelURL: m2\n"
        "  - name: c\n    repository: vllm/vllm-openai\n    tag: |\n      v0.26.0\n    modelURL: m3\n"
    )
    (tmp_path / "values.yaml").write_text(values)
    code, out = _fix(str(tmp_path), "--to", "0.28.0")
    assert code == 0 and "Not bumped" not in out, out
    assert (tmp_path / "values.yaml").read_text() == values.replace("v0.26.0", "v0.28.0")
    shared = values + "sidecar:\n  image: {repository: myorg/proxy, tag: *t}\n"
    (tmp_path / "values.yaml").write_text(shared)
    code, out = _fix(str(tmp_path), "--to", "0.28.0")
    assert "Not bumped (1):\n  values.yaml:4: vllm/vllm-openai:v0.26.0: the tag is anchor &t" in out, out
    assert (tmp_path / "values.yaml").read_text() == shared.replace("  v0.26.0\n", "  v0.28.0\n")


def test_diff_names_what_needs_a_person_on_stderr(tmp_path: Path) -> None:
    (tmp_path / "run.sh").write_text("vllm serve m --task generate\n")
    result = runner.invoke(app, ["fix", str(tmp_path), "--to", "0.28.0", "--diff"])
    assert result.exit_code == 1 and result.stdout == ""
    assert result.stderr.startswith("Needs a person (1):\n  run.sh:1:14: VUC0130-001 --task")


def test_diff_is_the_files_bytes_so_that_patch_applies_it(tmp_path: Path) -> None:
    (tmp_path / "latin.sh").write_bytes(b"vllm serve m --max-num-partial-prefills 2\r\n# caf\xe9\r\n")
    (tmp_path / "bom.sh").write_bytes(b"\xef\xbb\xbfvllm serve m --max-num-partial-prefills 2\n")
    (tmp_path / "last.sh").write_bytes(b"vllm serve m --max-num-partial-prefills 2")
    result = runner.invoke(app, ["fix", str(tmp_path), "--from", "0.26.0", "--to", "0.27.0", "--no-bump", "--diff"])
    patch = result.stdout_bytes
    assert b"-\xef\xbb\xbfvllm serve m --max-num-partial-prefills 2\n+\xef\xbb\xbfvllm serve m\n" in patch
    assert b"+vllm serve m\r\n # caf\xe9\r\n" in patch
    assert b"+vllm serve m\n\\ No newline at end of file\n" in patch
    assert b"-vllm serve m --max-num-partial-prefills 2\n\\ No newline at end of file\n" in patch


def test_diff_of_a_subdirectory_applies_where_the_tool_ran(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    launch = "vllm serve m --max-num-partial-prefills 2\n"
    (tmp_path / "deploy" / "scripts").mkdir(parents=True)
    (tmp_path / "deploy" / "scripts" / "serve.sh").write_text(launch)
    monkeypatch.chdir(tmp_path)
    args = ["fix", "deploy", "--from", "0.26.0", "--to", "0.27.0", "--no-bump", "--diff"]
    patch = runner.invoke(app, args).stdout_bytes
    assert b"--- a/deploy/scripts/serve.sh\n+++ b/deploy/scripts/serve.sh\n" in patch, patch
    monkeypatch.chdir(tmp_path / "deploy")
    patch = runner.invoke(app, [args[0], ".", *args[2:]]).stdout_bytes
    assert b"--- a/scripts/serve.sh\n" in patch, patch
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    monkeypatch.chdir(outside)  # a file not under the working directory keeps its report path
    patch = runner.invoke(app, [args[0], str(tmp_path / "deploy"), *args[2:]]).stdout_bytes
    assert b"--- a/scripts/serve.sh\n" in patch, patch


def test_a_hash_pinned_file_is_compiled_again_and_holds_no_bump(tmp_path: Path) -> None:
    (tmp_path / "requirements.in").write_text("vllm==0.26.0\ntorch\n")
    compiled = (
        "# autogenerated by pip-compile\n"
        "vllm==0.26.0 \\\n    --hash=sha256:aaaa\n"
        "torch==2.11.0 \\\n    --hash=sha256:bbbb\n    # via vllm\n"
    )
    (tmp_path / "requirements.txt").write_text(compiled)
    code, out = _fix(str(tmp_path), "--to", "0.28.0")
    assert (tmp_path / "requirements.in").read_text() == "vllm==0.28.0\ntorch\n", out
    assert (tmp_path / "requirements.txt").read_text() == compiled  # hashes are the compiler's to write
    assert "Lock files to make again for vLLM 0.28.0 (1):\n  requirements.txt" in out, out
    assert "held back" not in out
    assert code == 1  # torch==2.11.0 still blocks until the file is compiled again


def test_a_partly_read_file_gets_no_edit(tmp_path: Path) -> None:
    broken = "vllm serve m --max-num-partial-prefills 2\nif then fi (\n"
    (tmp_path / "bad.sh").write_text(broken)
    (tmp_path / "ok.sh").write_text("vllm serve m --max-num-partial-prefills 2\n")
    code, out = _fix(str(tmp_path), "--from", "0.26.0", "--to", "0.28.0")
    assert (tmp_path / "bad.sh").read_text() == broken
    assert (tmp_path / "ok.sh").read_text() == "vllm serve m\n"
    assert "only partly read; fix it by hand" in out and code == 1, out


@pytest.mark.parametrize(
    ("name", "text", "line"),
    [
        ("pyproject.toml", '[project\ndependencies = ["vllm==0.26.0"]\n', 1),
        ("Dockerfile", "FROM vllm/vllm-openai:v0.26.0\nRUN pip install x && \\\n    vllm serve m && if then (\n", 3),
    ],
)
def test_unreadable_files_are_skipped_with_their_line(name: str, text: str, line: int, tmp_path: Path) -> None:
    (tmp_path / name).write_text(text)
    result = runner.invoke(app, ["scan", str(tmp_path), "--to", "0.28.0", "--format", "json"])
    skipped = json.loads(result.stdout)["skipped"]
    assert [(s["path"], s["line"], s["configures_vllm"]) for s in skipped] == [(name, line, True)], skipped
    assert result.exit_code == 2  # the gate fails closed on a file that configures vLLM


def test_diff_headers_quote_names_a_tab_or_newline_would_break(tmp_path: Path) -> None:
    (tmp_path / "a\tb.sh").write_text("vllm serve m --max-num-partial-prefills 2\n")
    (tmp_path / "plain é.sh").write_text("vllm serve m --max-num-partial-prefills 2\n")
    result = runner.invoke(app, ["fix", str(tmp_path), "--from", "0.26.0", "--to", "0.28.0", "--diff"])
    headers = [line for line in result.stdout_bytes.split(b"\n") if line.startswith((b"--- ", b"+++ "))]
    assert headers == [b'--- "a/a\\tb.sh"', b'+++ "b/a\\tb.sh"', "--- \"a/plain é.sh\"".encode(), "+++ \"b/plain é.sh\"".encode()]


def test_positions_left_for_a_person_are_those_scanned(tmp_path: Path) -> None:
    line = 'vllm serve m --max-num-partial-prefills 2 --disable-log-requests --guided-decoding-backend "$B" --port 1\n'
    (tmp_path / "s.sh").write_text(line)
    args = [str(tmp_path), "--from", "0.10.0", "--to", "0.28.0", "--no-bump"]
    diffed = runner.invoke(app, ["fix", *args, "--diff"])
    assert "s.sh:1:66: VUC0120-001" in diffed.stderr, diffed.stderr  # nothing written: where it was scanned
    _code, out = _fix(*args)
    assert (tmp_path / "s.sh").read_text() == 'vllm serve m --guided-decoding-backend "$B" --port 1\n'
    assert "s.sh:1:66: VUC0120-001" in out, out  # written: the same position, as the fixes' lines are


def test_a_block_list_left_empty_is_written_as_an_empty_list_with_the_files_newlines(tmp_path: Path) -> None:
    text = (
        "apiVersion: v1\r\nkind: Pod\r\nmetadata: {name: p}\r\nspec:\r\n  containers:\r\n  - name: v\r\n"
        "    image: vllm/vllm-openai:v0.26.0\r\n    args:\r\n    - --max-num-partial-prefills=2\r\n"
    )
    (tmp_path / "pod.yaml").write_bytes(text.encode())
    code, out = _fix(str(tmp_path), "--from", "0.26.0", "--to", "0.28.0")
    fixed = (tmp_path / "pod.yaml").read_bytes().decode()
    assert code == 0, out
    assert fixed.endswith("    args: []\r\n") and "\n" not in fixed.replace("\r\n", ""), fixed


@pytest.mark.parametrize(("bom", "encoding"), [(b"\xff\xfe", "utf-16-le"), (b"\xfe\xff", "utf-16-be")])
def test_utf16_files_are_read_and_fixed_in_their_encoding(bom: bytes, encoding: str, tmp_path: Path) -> None:
    (tmp_path / "serve.sh").write_bytes(bom + "vllm serve m --max-num-partial-prefills 2\r\n".encode(encoding))
    scanned = runner.invoke(app, ["scan", str(tmp_path), "--from", "0.26.0", "--to", "0.28.0", "-f", "json"])
    assert [f["rule_id"] for f in json.loads(scanned.stdout)["findings"]] == ["VUC0270-001"]
    code, out = _fix(str(tmp_path), "--from", "0.26.0", "--to", "0.28.0")
    assert code == 0, out
    assert (tmp_path / "serve.sh").read_bytes() == bom + "vllm serve m\r\n".encode(encoding)


def test_words_inside_a_substitution_of_the_launch_are_not_read_by_another_program(tmp_path: Path) -> None:
    (tmp_path / "s.sh").write_text("vllm serve m --max-num-partial-prefills $(cat n.txt) --port 1\n")
    code, out = _fix(str(tmp_path), "--from", "0.26.0", "--to", "0.28.0")
    assert (tmp_path / "s.sh").read_text() == "vllm serve m --port 1\n", out


def test_a_make_variable_is_fixed_where_it_is_assigned_unless_another_recipe_reads_it(tmp_path: Path) -> None:
    (tmp_path / "Makefile").write_text("FLAGS = --port 1 --max-num-partial-prefills 2\nserve:\n\tvllm serve m $(FLAGS)\n")
    _fix(str(tmp_path), "--from", "0.26.0", "--to", "0.28.0")
    assert (tmp_path / "Makefile").read_text() == "FLAGS = --port 1\nserve:\n\tvllm serve m $(FLAGS)\n"
    shared = "FLAGS = --max-num-partial-prefills 2\nserve:\n\tvllm serve m $(FLAGS)\nbench:\n\tpython b.py $(FLAGS)\n"
    (tmp_path / "Makefile").write_text(shared)
    code, out = _fix(str(tmp_path), "--from", "0.26.0", "--to", "0.28.0")
    assert (tmp_path / "Makefile").read_text() == shared
    assert "written where python (line 5) reads it too" in out and code == 1, out


def test_a_file_changed_by_someone_else_during_the_run_is_not_written_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from vllm_upgrade_check.engine import fix as fix_engine
    from vllm_upgrade_check.errors import VucError

    compose = tmp_path / "compose.yaml"
    compose.write_text(
        "services:\n  a:\n    image: vllm/vllm-openai:v0.26.0\n"
        '    command: ["--no-calculate-kv-scales", "--max-num-partial-prefills", "2", "--model", "m"]\n'
    )
    scans = {"n": 0}
    scan = fix_engine._Run.scan

    def scan_then_edit(self: object) -> object:
        scans["n"] += 1
        if scans["n"] == 2:  # after the first pass wrote it: a person saves the file
            compose.write_text(compose.read_text() + "# saved by a person\n")
        return scan(self)  # type: ignore[arg-type]

    monkeypatch.setattr(fix_engine._Run, "scan", scan_then_edit)
    with pytest.raises(VucError, match="changed by something else while fix ran"):
        runner.invoke(app, ["fix", str(tmp_path), "--to", "0.28.0"], catch_exceptions=False)
    assert compose.read_text().endswith("# saved by a person\n")


@pytest.mark.parametrize(
    "vllm_line",
    [
        "vllm @ https://github.com/vllm-project/vllm/releases/download/v0.26.0/vllm-0.26.0-cp38-abi3-manylinux1_x86_64.whl",
        "vllm",
        "vllm==0.26.0 \\\n    --hash=sha256:aaaa",
    ],
)
def test_companion_pins_stay_while_the_vllm_pin_of_their_file_does_not_move(vllm_line: str, tmp_path: Path) -> None:
    text = f"{vllm_line}\ntorch==2.11.0\n"
    (tmp_path / "requirements.txt").write_text(text)
    code, out = _fix(str(tmp_path), "--to", "0.28.0")
    assert (tmp_path / "requirements.txt").read_text() == text, out
    assert code == 1 and "torch==2.11.0" in out


def test_a_build_label_stays_with_the_bumped_pin(tmp_path: Path) -> None:
    (tmp_path / "requirements.txt").write_text("vllm==0.26.0+cu126\ntorch==2.11.0\n")
    code, out = _fix(str(tmp_path), "--to", "0.28.0")
    assert (tmp_path / "requirements.txt").read_text() == "vllm==0.28.0+cu126\ntorch==2.13.0\n", out


def test_an_unbraced_systemd_variable_is_split_into_words(tmp_path: Path) -> None:
    (tmp_path / "vllm.service").write_text(
        '[Service]\nEnvironment="EXTRA=--max-num-partial-prefills 2"\nExecStart=/opt/venv/bin/vllm serve m $EXTRA --port 8000\n'
    )
    result = runner.invoke(app, ["scan", str(tmp_path), "--from", "0.26.0", "--to", "0.28.0", "-f", "json"])
    found = [(f["rule_id"], f["subject"], f["value"]) for f in json.loads(result.stdout)["findings"] if f["severity"] == "blocker"]
    assert found == [("VUC0270-001", "--max-num-partial-prefills", "2")], found


def test_fail_on_warning_holds_the_bump_while_warnings_remain(tmp_path: Path) -> None:
    dockerfile = 'FROM vllm/vllm-openai:v0.26.0\nENV VLLM_CPU_SGL_KERNEL=1\nCMD ["--model", "org/m"]\n'
    (tmp_path / "Dockerfile").write_text(dockerfile)
    (tmp_path / ".vllm-upgrade-check.toml").write_text('to = "0.28.0"\nfail-on = "warning"\n')
    code, out = _fix(str(tmp_path))
    assert (tmp_path / "Dockerfile").read_text() == dockerfile, out  # the gate would open after a bump
    assert code == 1 and "finding(s) at fail-on warning or above remain" in out, out
    (tmp_path / ".vllm-upgrade-check.toml").write_text('to = "0.28.0"\n')
    code, out = _fix(str(tmp_path))
    assert "v0.28.0" in (tmp_path / "Dockerfile").read_text() and code == 0, out
