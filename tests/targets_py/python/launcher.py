"""Launch the server from Python."""

import shlex
import subprocess

CFG = {
    # ruleid: VUC0280-001
    "calculate_kv_scales": True,
    # ruleid: VUC0270-001
    "max_num_partial_prefills": 2,
    # ruleid: VUC000-001
    "max_num_sequences": 8,
}


def serve(model: str) -> subprocess.Popen:
    cmd = ["vllm", "serve", model]
    for key, value in CFG.items():
        cmd += [f"--{key.replace('_', '-')}", str(value)]
    return subprocess.Popen(cmd)


def serve_list(model: str) -> None:
    subprocess.run(
        [
            "vllm",
            "serve",
            model,
            # ruleid: VUC0280-002
            "--override-attention-dtype",
            "bfloat16",
        ],
        check=True,
    )


def serve_string() -> None:
    # ruleid: VUC0280-001
    subprocess.run("vllm serve m --calculate-kv-scales", shell=True, check=True)
    # ruleid: VUC0270-001
    subprocess.run(shlex.split("vllm serve m --max-num-partial-prefills 2"), check=True)


def not_vllm() -> None:
    # ok: VUC0280-001
    subprocess.run(["mytool", "--calculate-kv-scales"], check=True)
    # ok: VUC000-001
    subprocess.run(["grep", "--max-num-seq", "vllm.log"], check=True)


def opaque(args: list[str]) -> None:
    # ok: TST0280-006
    subprocess.run(["vllm", "serve", "m", *args], check=True)
