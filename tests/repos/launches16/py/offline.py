import presets
from presets import FP8_PRESET
from vllm import LLM, SamplingParams
import vllm.envs as envs

llm = LLM(model="acme/coder-7b", **FP8_PRESET)
again = LLM(model="acme/coder-7b", **presets.FP8_PRESET)


def build(extra=None):
    kwargs = {"model": "acme/coder-7b", "calculate_kv_scales": True}  # ruleid: VUC0280-001
    kwargs.update(extra or {})
    return LLM(**kwargs)


# ruleid: VUC000-006
timeout = envs.VLLM_RPC_TIMEOUT
params = SamplingParams(temperature=0.2)
