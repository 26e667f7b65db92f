import modal
from ray.serve.llm import LLMConfig

image = modal.Image.debian_slim().pip_install("vllm==0.25.0").env({"VLLM_USE_FBGEMM": "1"})  # ruleid: VUC0240-005

config = LLMConfig(
    model_loading_config={"model_id": "acme/m"},
    # ruleid: VUC0280-002
    engine_kwargs={"override_attention_dtype": "float16"},
    runtime_env={"env_vars": {"VLLM_ATTENTION_BACKEND": "FLASHINFER"}},  # ruleid: VUC0150-001
)
