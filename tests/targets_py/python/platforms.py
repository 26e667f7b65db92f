"""vLLM configured through serving platforms' Python APIs (issue 16)."""

import modal
from ray.serve.llm import LLMConfig as RayLLMConfig

image = (
    modal.Image.debian_slim(python_version="3.12")
    .uv_pip_install("vllm==0.26.0", "huggingface_hub[hf_transfer]")
    # ruleid: VUC0280-005
    .env({"VLLM_CPU_SGL_KERNEL": "1", "HF_HUB_ENABLE_HF_TRANSFER": "1"})
)

config = RayLLMConfig(
    model_loading_config={"model_id": "m", "model_source": "acme/m"},
    # ruleid: VUC0280-001
    engine_kwargs={"calculate_kv_scales": True, "max_model_len": 4096},
    # ruleid: VUC0280-005
    runtime_env={"env_vars": {"VLLM_CPU_SGL_KERNEL": "1"}},
)


class Other:
    def env(self, values):
        return values


# another object's env(): not a Modal image
# ok: VUC0280-005
Other().env({"VLLM_CPU_SGL_KERNEL": "1"})
# ok: VUC0280-001
dict(engine_kwargs={"calculate_kv_scales": True})
