"""Engine arguments read through dicts the file only partly says (issue 16)."""

import subprocess
import sys

from vllm import LLM

BASE_OPTS = {
    # ruleid: VUC0280-001
    "calculate_kv_scales": True,
    "max_model_len": 4096,
}


def build(extra=None):
    # the keys of BASE_OPTS are passed whatever extra holds
    return LLM("acme/coder-7b", **{**BASE_OPTS, **(extra or {})})


def tuned(overrides):
    kwargs = {
        # ruleid: VUC0270-001
        "max_num_partial_prefills": 2,
        "max_model_len": 4096,
    }
    kwargs.update(overrides)
    # ruleid: TST0280-007
    kwargs.update({"seed": 7})
    return LLM(**kwargs)


def dropped(overrides):
    kwargs = {
        # ok: VUC0270-001
        "max_num_partial_prefills": 2,
    }
    kwargs.pop("max_num_partial_prefills")
    return LLM(**kwargs)


def computed(name):
    # a key the file does not say is not a flag; the literal one still is
    # ruleid: VUC0280-001
    return LLM("m", **{name: 1, "calculate_kv_scales": True, "max_model_len": 4096})


SERVER = [sys.executable, "-m", "vllm.entrypoints.openai.api_server", "--model", "m", "--max-model-len", "4096"]
# ruleid: VUC0270-001
subprocess.Popen([*SERVER, "--max-num-partial-prefills", "8"])
# ruleid: VUC0280-001
subprocess.Popen(" ".join(["vllm", "serve", "m", "--max-model-len", "4096", "--calculate-kv-scales"]), shell=True)
# ok: VUC0280-001
subprocess.run(" ".join(["echo", "--calculate-kv-scales"]), shell=True)


def unpacked():
    model, opts = "acme/coder-7b", {
        # ruleid: VUC0270-001
        "max_num_partial_prefills": 2,
    }
    return LLM(model, **opts)


def unpacked_from_a_call(load):
    # the dict comes from a call: unresolved, nothing guessed
    model, opts = load()
    return LLM(model, **opts)


def starred():
    first, *rest = [
        {
            # ok: VUC0270-001
            "max_num_partial_prefills": 2,
        },
        3,
    ]
    return LLM("acme/m", **first)
