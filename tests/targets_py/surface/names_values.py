"""Imported names, literal keyword values and architectures judged by vLLM 0.28.0's own
surface, from 0.26.0: each removal lies before the from-version."""

import os

from openai import OpenAI
# ok: VUC000-006
from vllm import LLM, EngineArgs, SamplingParams
# ruleid: VUC000-006
from vllm.utils import FlexibleArgumentParser
# ruleid: VUC000-006
from vllm.sampling_params import GuidedDecodingParams
# ok: VUC000-006
from vllm.utils.argparse_utils import FlexibleArgumentParser as Parser
# ruleid: VUC000-006
from vllm import SamplingParamz

DTYPE = os.environ.get("KV_DTYPE", "auto")
# ruleid: VUC000-009
a = LLM("acme/m", kv_cache_dtype="fp9")
# ok: VUC000-009
b = LLM("acme/m", kv_cache_dtype=DTYPE)
# ok: VUC000-009
c = EngineArgs(model="acme/m", kv_cache_dtype="fp8", load_format="safetensors")
# ruleid: VUC000-014
d = LLM("acme/m", hf_overrides={"architectures": ["MllamaForConditionalGeneration"]})
# ok: VUC000-014
e = LLM("acme/m", hf_overrides={"architectures": ["LlamaForCausalLM"]})

client = OpenAI(base_url="http://vllm.internal:8000/v1", api_key="none")
reply = client.chat.completions.create(model="acme/m", messages=[])
# ruleid: VUC000-015
print(reply.prompt_routed_experts)
print(FlexibleArgumentParser, GuidedDecodingParams, Parser, SamplingParamz, SamplingParams, a, b, c, d, e)
