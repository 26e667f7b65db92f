"""The dense profile of ``bench_scan.py``: a platform team's deployment monorepo.

Hundreds of services, each with a launch script, a health-check script, a compose file,
Kubernetes manifests (Deployment, Service, ConfigMap, HPA, PodDisruptionBudget), a
Dockerfile, a vLLM ``--config`` YAML, requirements, a Python package with tests and a README.
About 10,000 files (26 a service) and 45 MB at the default size, four in ten of them
mentioning vLLM: seven services in ten serve a model with vLLM; the others are ordinary web
services whose files never name it, except a comment here and there.

Deterministic for a seed. Imported by ``bench_scan.py`` (``--profile dense``).
"""

from __future__ import annotations

import random
from pathlib import Path

FILES_PER_SERVICE = 26

FLAGS = [
    "--max-num-seqs 64",
    "--gpu-memory-utilization 0.9",
    "--tensor-parallel-size 2",
    "--max-model-len 8192",
    "--enable-prefix-caching",
    "--kv-cache-dtype fp8",
    "--calculate-kv-scales",
    "--max-num-partial-prefills 2",
    "--max-long-partial-prefills 1",
    "--override-attention-dtype bfloat16",
    "--load-format bitsandbytes",
    "--quantization awq",
    "--swap-space 4",
    "--disable-log-requests",
    "--port 8000",
]
MODELS = ["meta-llama/Llama-3.1-8B-Instruct", "Qwen/Qwen2.5-7B-Instruct", "mistralai/Mistral-7B-v0.3"]
TAGS = ["v0.26.0", "v0.27.0", "v0.27.1"]
# A few non-ASCII characters, as real repositories have in comments and descriptions.
OWNERS = ["platform-team", "équipe-inférence", "ml-infra", "サービス基盤", "search-core"]


def _flags(rng: random.Random, low: int = 2, high: int = 5) -> list[str]:
    return rng.sample(FLAGS, rng.randint(low, high))


def _shell_body(rng: random.Random, name: str) -> str:
    """Helper functions every launch script carries (logging, retries, a trap)."""
    funcs = "".join(
        f'{name}_step_{k}() {{\n  local attempt=0\n  while [ "$attempt" -lt 3 ]; do\n'
        f'    if curl -fsS "http://127.0.0.1:${{PORT:-8080}}/ready/{k}" >/dev/null; then return 0; fi\n'
        '    attempt=$((attempt + 1)); sleep 2\n  done\n  echo "step '
        + str(k)
        + ' failed" >&2\n  return 1\n}\n\n'
        for k in range(rng.randint(4, 9))
    )
    return (
        "log() { printf '%s %s\\n' \"$(date -u +%FT%TZ)\" \"$*\" >&2; }\ntrap 'log exiting' EXIT\n\n" + funcs
    )


def launch(rng: random.Random, svc: str, llm: bool) -> str:
    head = f"#!/usr/bin/env bash\n# Launch {svc} (owner: {rng.choice(OWNERS)})\nset -euo pipefail\n\n"
    body = _shell_body(rng, svc.replace("-", "_"))
    if not llm:
        return head + body + 'exec gunicorn app.main:app --workers "${WORKERS:-4}" --bind 0.0.0.0:8080\n'
    flags = " \\\n  ".join(_flags(rng))
    return (
        head + body + "export VLLM_LOGGING_LEVEL=INFO\nexport VLLM_USE_V1=1\n"
        f'MODEL="${{MODEL:-{rng.choice(MODELS)}}}"\n'
        f'exec vllm serve "$MODEL" \\\n  {flags}\n'
    )


def healthcheck(rng: random.Random, svc: str, llm: bool) -> str:
    return (
        f"#!/bin/sh\n# health probe for {svc}{' (the vLLM server)' if llm else ''}\nset -e\n"
        + "".join(
            f'curl -fsS "http://localhost:${{PORT:-8080}}/health?probe={k}" >/dev/null\n'
            for k in range(rng.randint(3, 10))
        )
        + "echo ok\n"
    )


def compose(rng: random.Random, svc: str, llm: bool) -> str:
    sidecars = "".join(
        f"  sidecar{k}:\n    image: registry.example.com/{svc}/sidecar{k}:1.{k}\n"
        f"    environment:\n      LOG_LEVEL: info\n      UPSTREAM: http://{svc}:8080\n"
        "    restart: unless-stopped\n"
        for k in range(rng.randint(2, 6))
    )
    if not llm:
        return (
            f"services:\n  {svc}:\n    image: registry.example.com/{svc}:2.1\n    ports: ['8080:8080']\n"
            + sidecars
        )
    args = "\n".join(f"      - {part}" for flag in _flags(rng, 2, 4) for part in flag.split())
    return (
        f"# {svc}: owned by {rng.choice(OWNERS)}\nservices:\n  {svc}:\n"
        f"    image: vllm/vllm-openai:{rng.choice(TAGS)}\n"
        "    environment:\n      VLLM_LOGGING_LEVEL: INFO\n      HF_HOME: /cache\n"
        f"    command:\n      - --model\n      - {rng.choice(MODELS)}\n{args}\n"
        "    deploy:\n      resources:\n        reservations:\n          devices:\n"
        "            - driver: nvidia\n              count: 1\n              capabilities: [gpu]\n" + sidecars
    )


def dockerfile(rng: random.Random, llm: bool) -> str:
    if not llm:
        return (
            "FROM python:3.12-slim\nWORKDIR /app\nCOPY requirements.txt .\nRUN pip install --no-cache-dir -r requirements.txt\n"
            'COPY . .\nCMD ["gunicorn", "app.main:app"]\n'
        )
    return (
        f"FROM vllm/vllm-openai:{rng.choice(TAGS)}\nENV VLLM_USE_V1=1\n"
        "RUN pip install --no-cache-dir 'transformers>=4.45' 'prometheus-client>=0.20'\n"
        "COPY config/vllm.yaml /etc/vllm/config.yaml\n"
        f'CMD ["--model", "{rng.choice(MODELS)}", "--max-num-seqs", "32", "--config", "/etc/vllm/config.yaml"]\n'
    )


def _labels(svc: str, owner: str) -> str:
    return f'  labels:\n    app: {svc}\n    team: {owner}\n    tier: backend\n  annotations:\n    description: "{svc} — served by {owner}"\n'


def deployment(rng: random.Random, svc: str, llm: bool) -> str:
    owner = rng.choice(OWNERS)
    probes = (
        "          readinessProbe:\n            httpGet: {path: /health, port: 8000}\n            periodSeconds: 10\n"
        "          livenessProbe:\n            httpGet: {path: /health, port: 8000}\n            initialDelaySeconds: 120\n"
        "          resources:\n            limits: {cpu: '8', memory: 32Gi}\n            requests: {cpu: '4', memory: 16Gi}\n"
    )
    head = f"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {svc}\n{_labels(svc, owner)}spec:\n  replicas: 2\n"
    head += f"  selector:\n    matchLabels: {{app: {svc}}}\n  template:\n    metadata:\n      labels: {{app: {svc}}}\n    spec:\n"
    if not llm:
        return (
            head
            + (
                f"      containers:\n        - name: app\n          image: registry.example.com/{svc}:2.1\n"
                "          ports: [{containerPort: 8080}]\n          env:\n            - name: WORKERS\n              value: '4'\n"
            )
            + probes
        )
    args = "\n".join(f"            - {part}" for flag in _flags(rng, 2, 4) for part in flag.split())
    return (
        head
        + (
            f"      containers:\n        - name: vllm\n          image: vllm/vllm-openai:{rng.choice(TAGS)}\n"
            f"          args:\n            - --model\n            - {rng.choice(MODELS)}\n{args}\n"
            "          env:\n            - name: VLLM_USE_V1\n              value: '1'\n"
            "            - name: HF_TOKEN\n              valueFrom: {secretKeyRef: {name: hf, key: token}}\n"
        )
        + probes
    )


def service(svc: str) -> str:
    return (
        f"apiVersion: v1\nkind: Service\nmetadata:\n  name: {svc}\nspec:\n  selector: {{app: {svc}}}\n"
        "  ports:\n    - {name: http, port: 80, targetPort: 8080}\n"
    )


def configmap(rng: random.Random, svc: str, llm: bool) -> str:
    data = "".join(f'  key_{k}: "value {k} for {svc}"\n' for k in range(rng.randint(5, 20)))
    if llm:
        data += "  VLLM_LOGGING_LEVEL: DEBUG\n  VLLM_ALLOW_LONG_MAX_MODEL_LEN: '1'\n"
    return f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {svc}-config\ndata:\n" + data


def hpa(svc: str) -> str:
    return (
        f"apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata:\n  name: {svc}\nspec:\n"
        f"  scaleTargetRef: {{apiVersion: apps/v1, kind: Deployment, name: {svc}}}\n  minReplicas: 2\n  maxReplicas: 10\n"
        "  metrics:\n    - type: Resource\n      resource: {name: cpu, target: {type: Utilization, averageUtilization: 70}}\n"
    )


def pdb(svc: str) -> str:
    return f"apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata:\n  name: {svc}\nspec:\n  minAvailable: 1\n  selector:\n    matchLabels: {{app: {svc}}}\n"


def vllm_config(rng: random.Random, llm: bool) -> str:
    if not llm:
        return "".join(f"setting_{k}: {k}\n" for k in range(rng.randint(5, 15)))
    keys = [
        "max-num-seqs: 64",
        "gpu-memory-utilization: 0.9",
        "max-model-len: 8192",
        "enable-prefix-caching: true",
    ]
    if rng.random() < 0.3:
        keys.append("swap-space: 4")
    return f"# vLLM engine configuration\nmodel: {rng.choice(MODELS)}\n" + "\n".join(keys) + "\n"


def requirements(rng: random.Random, llm: bool) -> str:
    lines = ["requests>=2.31", "pydantic>=2", "numpy<2", "fastapi>=0.110", "uvicorn[standard]"]
    if llm:
        lines += [f"vllm=={rng.choice(TAGS)[1:]}", "torch==2.9.0"]
    return "\n".join(lines) + "\n"


def requirements_dev() -> str:
    return "pytest>=8\nruff\nmypy\ncoverage[toml]\n"


def _functions(rng: random.Random, prefix: str, count: int) -> str:
    return "".join(
        f"def {prefix}_{k}(event: dict, retries: int = 3) -> dict:\n"
        f'    """Handle event kind {k}: validate, enrich and forward it."""\n'
        "    payload = dict(event)\n"
        f"    payload['kind'] = {k}\n"
        "    for attempt in range(retries):\n"
        "        if payload.get('ok'):\n"
        "            break\n"
        "        payload['attempt'] = attempt\n"
        f"    return {{'id': {k}, 'ok': True, 'payload': payload}}\n\n\n"
        for k in range(count)
    )


def python_module(rng: random.Random, i: int, llm: bool) -> str:
    """A service module; in a vLLM service some mention vLLM only in a docstring or comment
    (no call, no import), some build an ``LLM`` or call the server with a client."""
    head = '"""Service module."""\n\nfrom __future__ import annotations\n\nimport json\nimport logging\n\n'
    body = _functions(rng, f"handler_{i}", rng.randint(20, 48))
    roll = rng.random()
    if llm and roll < 0.10:
        head = (
            '"""Client of the vLLM server (OpenAI-compatible API)."""\n\nimport os\n\nfrom openai import OpenAI\n\n'
            "client = OpenAI(base_url=os.environ.get('VLLM_URL', 'http://vllm:8000/v1'), api_key='x')\n\n"
            "def ask(prompt: str) -> str:\n"
            "    out = client.completions.create(model='m', prompt=prompt, max_tokens=64)\n"
            "    return out.choices[0].text\n\n\n"
        )
    elif llm and roll < 0.15:
        head = (
            '"""Offline batch inference."""\n\nfrom vllm import LLM, SamplingParams\n\n'
            f"llm = LLM(model='{rng.choice(MODELS)}', max_num_seqs=8, gpu_memory_utilization=0.8)\n"
            "params = SamplingParams(temperature=0.2, max_tokens=128)\n\n"
        )
    elif llm and roll < 0.25:
        head = '"""Request shaping for the vLLM backend (no vLLM import here)."""\n\n# Keep in step with vllm serve --max-model-len\nimport json\n\n'
    return head + body


def test_module(rng: random.Random, i: int) -> str:
    return "import pytest\n\n" + "".join(
        f"def test_case_{i}_{k}():\n    assert {k} + 1 == {k + 1}\n\n\n" for k in range(rng.randint(20, 60))
    )


def readme(rng: random.Random, svc: str, llm: bool) -> str:
    text = f"# {svc}\n\nOwned by {rng.choice(OWNERS)}.\n\n"
    if llm:
        text += "Serves a model with vLLM: `vllm serve MODEL --max-num-seqs 64`.\n\n"
    return text + "Lorem ipsum dolor sit amet, consectetur adipiscing elit.\n" * rng.randint(10, 120)


def build_dense(root: Path, n_files: int, seed: int = 11) -> dict[str, int]:
    """Write about ``n_files`` files under ``root``: ``n_files // 26`` services of 26 files.
    Returns ``{"services", "files", "bytes", "mention vLLM"}``."""
    rng = random.Random(seed)
    services = max(1, n_files // FILES_PER_SERVICE)
    totals = {"services": services, "files": 0, "bytes": 0, "mention vLLM": 0}
    for s in range(services):
        llm = rng.random() < 0.7
        svc = f"svc-{s:04d}-vllm" if llm else f"svc-{s:04d}"  # a team names its model services so
        base = f"services/{svc}"
        files = {
            f"{base}/scripts/serve.sh": launch(rng, svc, llm),
            f"{base}/scripts/healthcheck.sh": healthcheck(rng, svc, llm),
            f"{base}/docker-compose.yaml": compose(rng, svc, llm),
            f"{base}/Dockerfile": dockerfile(rng, llm),
            f"{base}/k8s/deployment.yaml": deployment(rng, svc, llm),
            f"{base}/k8s/service.yaml": service(svc),
            f"{base}/k8s/configmap.yaml": configmap(rng, svc, llm),
            f"{base}/k8s/hpa.yaml": hpa(svc),
            f"{base}/k8s/pdb.yaml": pdb(svc),
            f"{base}/config/{'vllm' if llm else 'app'}.yaml": vllm_config(rng, llm),
            f"{base}/requirements.txt": requirements(rng, llm),
            f"{base}/requirements-dev.txt": requirements_dev(),
            f"{base}/README.md": readme(rng, svc, llm),
            f"{base}/src/app/__init__.py": '"""Service package."""\n',
        }
        for k in range(9):
            files[f"{base}/src/app/mod_{k}.py"] = python_module(rng, k, llm)
        for k in range(3):
            files[f"{base}/tests/test_{k}.py"] = test_module(rng, k)
        for rel, text in files.items():
            target = root / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            data = text.encode("utf-8")
            target.write_bytes(data)
            totals["files"] += 1
            totals["bytes"] += len(data)
            totals["mention vLLM"] += b"vllm" in data.lower()
    return totals
