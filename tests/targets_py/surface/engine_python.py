"""Keywords, imports and vllm.envs reads judged by vLLM 0.28.0's own surface."""

import vllm.envs as envs
from vllm import LLM, EngineArgs, SamplingParams
# ruleid: VUC000-006
from vllm.entrypoints.openai.protocol import ChatCompletionRequest
# ok: VUC000-006
from vllm.sampling_params import RequestOutputKind

# ruleid: VUC0260-009
engine = EngineArgs(model="acme/coder-7b", swap_space=2)
# ok: VUC000-004
engine_ok = EngineArgs(model="acme/coder-7b", max_model_len=4096, enable_prefix_caching=True)
# ruleid: VUC000-004
llm = LLM("acme/coder-7b", max_model_length=4096)
# ruleid: VUC000-005
params = SamplingParams(temperature=0.2, best_of=2)
# ok: VUC000-005
fine = SamplingParams(temperature=0.2, max_tokens=64, stop=["\n"])

# ruleid: VUC000-006
timeout = envs.VLLM_RPC_TIMEOUT
# ok: VUC000-006
port = envs.VLLM_PORT
# ok: VUC000-006
table = envs.environment_variables
print(ChatCompletionRequest, RequestOutputKind, engine, engine_ok, llm, params, fine, timeout, port, table)
