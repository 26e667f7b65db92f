"""Ray Serve LLM configs by how LLMConfig is imported; the file names no other vLLM."""

import ray
from ray import serve
from ray.serve.llm import LLMConfig
from ray.llm import LLMConfig as RayLLMConfig
from mylib.config import LLMConfig as OtherConfig

# ruleid: VUC0280-001
a = LLMConfig(engine_kwargs={"calculate_kv_scales": True})
# ruleid: VUC0280-001
b = RayLLMConfig(engine_kwargs={"calculate_kv_scales": True})
# ruleid: VUC0280-001
c = ray.serve.llm.LLMConfig(engine_kwargs={"calculate_kv_scales": True})
# ruleid: VUC0280-001
d = serve.llm.LLMConfig(engine_kwargs={"calculate_kv_scales": True})
# another library's LLMConfig, and another Ray module's
# ok: VUC0280-001
e = OtherConfig(engine_kwargs={"calculate_kv_scales": True})
# ok: VUC0280-001
f = ray.tune.LLMConfig(engine_kwargs={"calculate_kv_scales": True})
