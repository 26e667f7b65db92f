"""Python source scanner: keywords, splats, imports, env, subprocess argv, client fields."""

from __future__ import annotations

from pathlib import Path

from conftest import args_of, kinds, scan_text
from vllm_upgrade_check.model.facts import FactKind, Skipped
from vllm_upgrade_check.sources.scanners.python.scanner import PythonSourceScanner


def scan(text: str, name: str = "app.py"):
    return scan_text(PythonSourceScanner(), name, text)


def test_keywords_and_splat_of_dict_built_before() -> None:
    items = scan(
        "from vllm import LLM\n"
        "def f():\n"
        "    kw = {'swap_space': 4}\n"
        "    kw['max_num_seqs'] = 8\n"
        "    return LLM('m', enforce_eager=True, **kw)\n"
    )
    assert sorted(args_of(items)) == [
        ("enforce_eager", "True", 5, 21),
        ("max_num_seqs", "8", 4, 9),
        ("swap_space", "4", 3, 12),
    ]
    (launch,) = kinds(items, FactKind.LAUNCH)
    assert launch.args == {"model", "enforce_eager", "swap_space", "max_num_seqs"} and launch.resolved


def test_unresolved_splat_marks_the_launch() -> None:
    items = scan("from vllm import EngineArgs\ndef f(cfg):\n    return EngineArgs(model='m', **cfg)\n")
    (launch,) = kinds(items, FactKind.LAUNCH)
    assert not launch.resolved and launch.value == "**cfg"


def test_sampling_params_have_their_own_origin() -> None:
    items = scan("import vllm\nsp = vllm.SamplingParams(seed=1)\n")
    (arg,) = kinds(items, FactKind.ARG)
    assert (arg.name, arg.origin) == ("seed", "sampling")
    assert kinds(items, FactKind.LAUNCH) == []


def test_same_named_class_from_another_library_is_not_vllm() -> None:
    items = scan("# vllm\nfrom langchain.llms import LLM\nLLM(calculate_kv_scales=True)\n")
    assert args_of(items) == []


def test_imports_and_env() -> None:
    items = scan(
        "import os\nimport vllm.worker as w\nfrom vllm.lora.request import LoRARequest\n"
        "os.environ['VLLM_USE_V1'] = '0'\nos.putenv('VLLM_X', '1')\n"
    )
    assert [(f.name, f.value) for f in kinds(items, FactKind.IMPORT)] == [
        ("vllm.worker", None),
        ("vllm.lora.request", "LoRARequest"),
    ]
    assert [(f.name, f.value, f.location.line) for f in kinds(items, FactKind.ENV_VAR)] == [
        ("VLLM_USE_V1", "0", 4),
        ("VLLM_X", "1", 5),
    ]


def test_subprocess_argv_from_dict_comprehension() -> None:
    items = scan(
        "import subprocess\n"
        "cfg = {'max_num_seqs': 4,\n       'dtype': 'half'}\n"
        "subprocess.run(['vllm', 'serve', 'm'] + [x for k, v in cfg.items() for x in (f'--{k}', str(v))])\n"
    )
    assert args_of(items) == [("max_num_seqs", "4", 2, 9), ("dtype", "half", 3, 9)]


def test_subprocess_argv_from_unknown_dict_invents_nothing() -> None:
    items = scan(
        "import subprocess\n"
        "def f(cfg):\n"
        "    subprocess.run(['vllm', 'serve', 'm'] + [f'--{k}' for k, v in cfg.items()])\n"
    )
    assert args_of(items) == []
    (launch,) = kinds(items, FactKind.LAUNCH)
    assert not launch.resolved


def test_reasoning_content_in_client_code_without_vllm() -> None:
    items = scan("r = c.chat.completions.create()\nprint(r.choices[0].message.reasoning_content)\n")
    (field,) = kinds(items, FactKind.RESPONSE_FIELD)
    assert (field.name, field.location.line) == ("reasoning_content", 2)


def test_files_without_vllm_are_not_read() -> None:
    assert scan("import subprocess\nsubprocess.run(['vllm2', 'serve'])\n".replace("vllm", "x")) == []


def test_syntax_error_is_skipped_with_line() -> None:
    (item,) = scan("import vllm\ndef f(:\n")
    assert isinstance(item, Skipped) and item.line == 2 and item.configures_vllm


def test_the_response_fields_read_are_those_the_bundled_rules_name_and_rename_to() -> None:
    from vllm_upgrade_check.knowledge.registry import load_registry
    from vllm_upgrade_check.model.pack import FixAction, MatchKind
    from vllm_upgrade_check.sources.scanners.python.names import RESPONSE_FIELDS

    named = set()
    for _pack, rule in load_registry().rules():
        if rule.match.kind == MatchKind.RESPONSE_FIELD:
            named.add(rule.match.name)
            if rule.fix.action == FixAction.RENAME and rule.fix.replacement:
                named.add(rule.fix.replacement)
    assert named and named <= RESPONSE_FIELDS


def test_a_pack_rule_on_another_response_field_fires_and_its_fix_reads_back(tmp_path: Path) -> None:
    """The response fields the Python scanner reports are those the loaded packs name (and
    rename to), not a fixed list."""
    from vllm_upgrade_check.engine import run_scan
    from vllm_upgrade_check.engine.fix import fix_paths
    from vllm_upgrade_check.model.options import ScanOptions

    rules = tmp_path / "rules"
    rules.mkdir()
    (rules / "org.yaml").write_text(
        "release: 0.28.0\nrules:\n- id: ORG0280-001\n  name: removed-usage-stats\n  severity: blocker\n"
        "  match: {kind: response_field, name: usage_stats}\n  message: usage_stats is gone.\n"
        "  fix: {summary: Read usage., action: rename, replacement: usage, applicability: unsafe}\n"
        "  docs: {why: a test}\n  evidence: [{kind: unverified, reason: a test pack}]\n"
    )
    app = tmp_path / "app"
    app.mkdir()
    (app / "client.py").write_text(
        'from openai import OpenAI\nclient = OpenAI(base_url="http://localhost:8000/v1")\n'
        'r = client.chat.completions.create(model="m", messages=[])\nprint(r.usage_stats)\n'
    )
    options = ScanOptions.of(paths=[app], to_version="0.28.0", rule_paths=[rules])
    report = run_scan(options)
    assert [(f.rule.id, f.location.line) for f in report.findings] == [("ORG0280-001", 4)]
    without = run_scan(ScanOptions.of(paths=[app], to_version="0.28.0"))
    assert without.findings == ()  # no pack names it: no fact, no finding
    result = fix_paths(options, unsafe=True)
    assert not result.not_written and (app / "client.py").read_text().endswith("print(r.usage)\n")
