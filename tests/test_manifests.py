"""docker-compose and Kubernetes manifests."""

from __future__ import annotations

from conftest import args_of, kinds, scan_text
from vllm_upgrade_check.model.facts import FactKind, Skipped
from vllm_upgrade_check.sources.scanners.manifests import ManifestScanner

COMPOSE = """services:
  vllm:
    image: vllm/vllm-openai:v0.26.0
    command: >
      --model Qwen/Qwen3-8B
      --override-attention-dtype bfloat16
    environment:
      VLLM_USE_V1: "1"
  web:
    image: nginx
    command: ["--swap-space", "4"]   # not vllm
"""


def test_compose_folded_command_and_env_map() -> None:
    items = scan_text(ManifestScanner(), "docker-compose.yml", COMPOSE)
    assert args_of(items) == [
        ("model", "Qwen/Qwen3-8B", 5, 7),
        ("override_attention_dtype", "bfloat16", 6, 7),
    ]
    (env,) = kinds(items, FactKind.ENV_VAR)
    assert (env.name, env.value, env.location.line) == ("VLLM_USE_V1", "1", 8)
    assert all(f.version_hint == "0.26.0" for f in kinds(items, FactKind.ARG))


def test_compose_list_command_with_entrypoint() -> None:
    text = 'services:\n  a:\n    image: python:3.12\n    entrypoint: ["vllm", "serve"]\n    command: ["m", "--task", "generate"]\n'
    items = scan_text(ManifestScanner(), "compose.yaml", text)
    assert args_of(items) == [("task", "generate", 5, 21)]


K8S = """apiVersion: apps/v1
kind: Deployment
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: docker.io/vllm/vllm-openai:v0.26.0
          args:
            - --model
            - m
            - "--max-num-partial-prefills"
            - "2"
          env:
            - name: VLLM_ATTENTION_BACKEND
              value: FLASH_ATTN
        - name: sidecar
          image: busybox
          command: ["/bin/sh", "-c"]
          args:
            - |
              echo start
              vllm serve m2 --swap-space 4
---
apiVersion: v1
kind: ConfigMap
metadata: {name: x}
data:
  note: "vllm serve m --task generate"
"""


def test_kubernetes_args_flag_and_value_in_two_items() -> None:
    items = scan_text(ManifestScanner(), "k8s/deploy.yaml", K8S)
    assert args_of(items) == [
        ("model", "m", 10, 15),
        ("max_num_partial_prefills", "2", 12, 16),
        ("swap_space", "4", 23, 29),
    ]
    envs = kinds(items, FactKind.ENV_VAR)
    assert [(e.name, e.value, e.location.line) for e in envs] == [
        ("VLLM_ATTENTION_BACKEND", "FLASH_ATTN", 15)
    ]


def test_yaml_syntax_error_is_skipped_with_line() -> None:
    items = scan_text(ManifestScanner(), "bad.yaml", "image: vllm/vllm-openai\nargs: [\n")
    (skip,) = items
    assert isinstance(skip, Skipped) and skip.configures_vllm and skip.line is not None


def test_yaml_without_vllm_is_not_read() -> None:
    assert scan_text(ManifestScanner(), "x.yaml", "a: [\n") == []


K8S_VARS = """apiVersion: apps/v1
kind: Deployment
metadata: {name: v}
spec:
  template:
    spec:
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.28.0
        args: ["--model", "$(MODEL)", "--port", "$(PORT)", "--max-model-len", "$(LEN)", "--served-model-name", "$$(MODEL)"]
        env:
        - {name: ORG, value: mosaicml}
        - {name: MODEL, value: "$(ORG)/mpt-7b"}
        - {name: PORT, value: "8000"}
        - name: LEN
          valueFrom: {configMapKeyRef: {name: c, key: len}}
"""


def test_kubernetes_expands_dollar_paren_references_from_the_container_env() -> None:
    items = scan_text(ManifestScanner(), "dep.yaml", K8S_VARS)
    line = K8S_VARS.split("\n")[9]
    assert args_of(items) == [
        ("model", "mosaicml/mpt-7b", 10, line.index("--model") + 1),
        ("port", "8000", 10, line.index("--port") + 1),
        ("max_model_len", "$(LEN)", 10, line.index("--max-model-len") + 1),  # valueFrom: known at run time
        ("served_model_name", "$(MODEL)", 10, line.index("--served") + 1),  # $$ is the escape
    ]
    (model,) = kinds(items, FactKind.MODEL)
    assert (model.name, model.location.line, model.location.column) == ("mosaicml/mpt-7b", 10, line.index("$(") + 1)


def test_a_reference_kubernetes_cannot_expand_leaves_the_launch_unresolved() -> None:
    text = K8S_VARS.replace('"--model", "$(MODEL)"', '"$(EXTRA)"')
    (launch,) = kinds(scan_text(ManifestScanner(), "dep.yaml", text), FactKind.LAUNCH)
    assert not launch.resolved and launch.value == "$(EXTRA)"
    # A model named by a variable known only at run time is no model fact, and is noted.
    text = K8S_VARS.replace('{name: MODEL, value: "$(ORG)/mpt-7b"}', "{name: MODEL, valueFrom: {fieldRef: {fieldPath: x}}}")
    items = scan_text(ManifestScanner(), "dep.yaml", text)
    (launch,) = kinds(items, FactKind.LAUNCH)
    assert kinds(items, FactKind.MODEL) == [] and not launch.resolved and launch.value == "$(MODEL)"
