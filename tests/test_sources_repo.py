"""A realistic repository mixing every configuration source, scanned as a new user would.

Each vLLM use must be reported once, at its own file and line; the traps (comments, alert
annotations, a recording rule's name, a non-vLLM program's flag, a template action) must
not be.
"""

from __future__ import annotations

from pathlib import Path

from test_targets import REPO_PACK as TEST_PACK
from vllm_upgrade_check.engine import run_scan
from vllm_upgrade_check.knowledge.registry import load_registry
from vllm_upgrade_check.model.options import ScanOptions
from vllm_upgrade_check.sources.scanners.monitoring import promql_metric_names
from vllm_upgrade_check.sources.scanners.templates import PLACEHOLDER, neutralise_templates

FILES = {
    "deploy/helm/values.yaml": """servingEngineSpec:
  modelSpec:
    - name: qwen
      repository: vllm/vllm-openai
      tag: v0.26.0
      modelURL: Qwen/Qwen3-8B
      vllmConfig:
        maxModelLen: 8192
        extraArgs: ["--swap-space", "4"]
""",
    "deploy/helm/templates/engine.yaml": """apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.26.0
          args:
            - {{ .Values.flag }}
            - --calculate-kv-scales
""",
    "deploy/k8s/cm.yaml": """apiVersion: v1
kind: ConfigMap
metadata: {name: engine-env}
data:
  VLLM_ATTENTION_BACKEND: FLASH_ATTN
""",
    "deploy/k8s/pod.yaml": """apiVersion: v1
kind: Pod
metadata: {name: vllm}
spec:
  containers:
    - name: vllm
      image: vllm/vllm-openai:v0.26.0
      envFrom:
        - configMapRef: {name: engine-env}
""",
    "ops/vllm.service": """[Service]
EnvironmentFile=/etc/vllm.env
ExecStart=/usr/bin/vllm serve Qwen/Qwen3-8B --override-attention-dtype bfloat16
""",
    "ops/etc/vllm.env": "VLLM_USE_V1=1\n",
    ".env": "# VLLM_USE_V1=0\nHF_HOME=/data\n",
    "Makefile": """MODEL = Qwen/Qwen3-8B
serve:
\tvllm serve $(MODEL) --max-model-len 4096
lint:
\truff check --swap-space 4
""",
    "monitoring/rules.yaml": """groups:
  - name: vllm
    rules:
      - record: vllm:cache:avg
        expr: avg(vllm:gpu_cache_usage_perc)
      - alert: Busy
        expr: vllm:cache:avg > 0.9 and vllm:num_requests_running > 5
        annotations: {summary: "vllm:gpu_cache_usage_perc high"}
""",
    "monitoring/dash.json": '{"panels": [{"targets": [{"expr": "vllm:e2e_request_latency_seconds_count"}]}]}\n',
    "ray/serve.yaml": """applications:
  - args:
      llm_configs:
        - model_loading_config: {model_id: q}
          engine_kwargs:
            max_model_len: 2048
""",
    "triton/m/1/model.json": '{\n  "model": "q",\n  "swap_space": 4\n}\n',
    "sky/task.yaml": """resources: {accelerators: L4}
run: |
  vllm serve q --max-model-len 1024
""",
    "README.md": "Run `vllm serve q --swap-space 4` and watch vllm:num_requests_running.\n",
}

EXPECTED = {
    # where the vLLM version is written: the tags to move (advisories)
    ("deploy/helm/values.yaml", 4, "VUC000-010"),
    ("deploy/helm/templates/engine.yaml", 10, "VUC000-010"),
    ("deploy/k8s/pod.yaml", 7, "VUC000-010"),
    ("deploy/helm/values.yaml", 8, "TST-007"),
    ("deploy/helm/values.yaml", 9, "TST-004"),
    ("deploy/helm/templates/engine.yaml", 13, "VUC0280-001"),
    ("deploy/k8s/cm.yaml", 5, "TST-003"),
    ("ops/vllm.service", 3, "VUC0280-002"),
    ("ops/etc/vllm.env", 1, "TST-008"),
    ("Makefile", 3, "TST-007"),
    ("monitoring/rules.yaml", 5, "TST-001"),
    ("monitoring/rules.yaml", 7, "TST-006"),
    ("monitoring/dash.json", 1, "TST-002"),
    ("ray/serve.yaml", 6, "TST-007"),
    ("triton/m/1/model.json", 3, "TST-004"),
    ("sky/task.yaml", 3, "TST-007"),
}


def test_multi_source_repository(tmp_path: Path) -> None:
    for rel, text in FILES.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    registry = load_registry([TEST_PACK])
    report = run_scan(ScanOptions.of(paths=[tmp_path], to_version="99.0.0", from_version="0.25.0"), registry)
    # Changed-default (absent_arg) rules fire on every launch; this test is about where uses are found.
    found = {
        (f.location.path, f.location.line, f.rule.id)
        for f in report.findings
        if f.rule.match.kind.value != "absent_arg"
    }
    assert found == EXPECTED
    assert not report.skipped


def test_promql_names_skip_strings_labels_functions_and_recorded_levels() -> None:
    expr = (
        'sum(rate(vllm:a_bucket{x="vllm:b", __name__="vllm:c"}[5m])) by (le) '
        "/ vllm:d:rate5m + on() vllm:e # vllm:f"
    )
    assert [u.name for u in promql_metric_names(expr)] == ["vllm:a_bucket", "vllm:c", "vllm:e"]


def test_template_actions_keep_positions() -> None:
    text = "a:\n  {{- if .x }}\n  b: {{ .y | quote }}\n  {{- end }}\n"
    out = neutralise_templates(text)
    assert out.split("\n")[1].strip() == "" and len(out) == len(text)
    assert out.split("\n")[2] == "  b: " + PLACEHOLDER * len("{{ .y | quote }}")


def test_unreadable_sources_are_skipped_with_their_line() -> None:
    from vllm_upgrade_check.model.facts import Skipped
    from vllm_upgrade_check.sources.scanners.base import SourceFile
    from vllm_upgrade_check.sources.scanners.envfiles import SystemdScanner
    from vllm_upgrade_check.sources.scanners.monitoring import MonitoringScanner

    (bad_json,) = MonitoringScanner().scan(SourceFile("d.json", '{"panels": [\n  {"expr": "vllm:x"\n'))
    assert isinstance(bad_json, Skipped) and bad_json.line == 3 and bad_json.configures_vllm
    items = list(SystemdScanner().scan(SourceFile(".env", "VLLM_USE_V1=1\nnot a binding\n")))
    assert [getattr(i, "name", None) for i in items[:1]] == ["VLLM_USE_V1"]
    assert isinstance(items[1], Skipped) and items[1].line == 2


def test_dashboards_held_as_json_text_in_kubernetes_objects() -> None:
    from vllm_upgrade_check.model.facts import Fact, Skipped
    from vllm_upgrade_check.sources.scanners.base import SourceFile
    from vllm_upgrade_check.sources.scanners.monitoring import MonitoringScanner

    text = """apiVersion: v1
kind: ConfigMap
metadata: {name: dashboards, labels: {grafana_dashboard: "1"}}
data:
  notes.txt: "vllm:gpu_cache_usage_perc is not a query here"
  vllm.json: |
    {"panels": [
      {"targets": [{"expr": "rate(vllm:e2e_request_latency_seconds_count[5m])"}]},
      {"title": "vllm:num_requests_running", "targets": [{"expr": "vllm:gpu_cache_usage_perc"}]}
    ]}
  inline.json: '{"panels": [{"targets": [{"expr": "vllm:num_requests_running"}]}]}'
  broken.json: '{"panels": [{"expr": "vllm:x"'
  escaped.json: "{\\"panels\\": [{\\"targets\\": [{\\"expr\\": \\"vllm:num_requests_waiting{a=\\\\\\"b\\\\\\"}\\"}]}]}"
---
apiVersion: grafana.integreatly.org/v1beta1
kind: GrafanaDashboard
metadata: {name: vllm}
spec:
  json: >
    {"panels": [{"targets": [{"expr": "vllm:num_preemptions_total"}]}]}
"""
    out = list(MonitoringScanner().scan(SourceFile("k8s/dash.yaml", text)))
    facts = [(f.name, f.location.line, f.location.column) for f in out if isinstance(f, Fact)]
    lines = text.split("\n")
    assert facts == [
        ("vllm:e2e_request_latency_seconds", 8, lines[7].index("vllm:") + 1),
        ("vllm:gpu_cache_usage_perc", 9, lines[8].index("vllm:gpu") + 1),
        ("vllm:num_requests_running", 11, lines[10].index("vllm:") + 1),
        ("vllm:num_requests_waiting", 13, lines[12].index('"') + 1),  # not written as in JSON: at the value
        ("vllm:num_preemptions", 20, lines[19].index("vllm:") + 1),
    ]
    (skipped,) = [s for s in out if isinstance(s, Skipped)]
    assert skipped.line == 12 and "broken.json" in skipped.reason


def test_a_dashboard_exported_by_grafana_is_read_at_its_columns() -> None:
    # Grafana (Go's encoding/json) writes <, > and & in strings as \u003c, \u003e, \u0026.
    from vllm_upgrade_check.model.facts import Fact
    from vllm_upgrade_check.sources.scanners.base import SourceFile
    from vllm_upgrade_check.sources.scanners.monitoring import MonitoringScanner

    text = '{"panels":[{"targets":[{"expr":"vllm:gpu_cache_usage_perc \\u003e 0.9 \\u0026\\u0026 vllm:num_requests_running \\u003c 3"}]}]}\n'
    facts = [f for f in MonitoringScanner().scan(SourceFile("dash.json", text)) if isinstance(f, Fact)]
    assert [(f.name, f.location.column) for f in facts] == [
        ("vllm:gpu_cache_usage_perc", text.index("vllm:gpu") + 1),
        ("vllm:num_requests_running", text.index("vllm:num") + 1),
    ]
