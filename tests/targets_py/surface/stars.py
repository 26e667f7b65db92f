"""Star imports from vLLM judged by vLLM 0.28.0, from 0.26.0: a removed module, and the names a
star import of a kept module no longer brings (a NameError where they are used)."""

# ruleid: VUC000-006
from vllm.entrypoints.openai.protocol import *
# ok: VUC000-006
from vllm.utils import *
# ok: VUC000-006
from vllm import *


def build(FlexibleArgumentParser=None):
    # ok: VUC000-006
    return FlexibleArgumentParser


# ruleid: VUC000-006
parser = get_open_port()
# ok: VUC000-006
params = SamplingParams(temperature=0.2)
# ruleid: TST0280-003
beam = SamplingParams(temperature=0.0, use_beam_search=True)
# ruleid: VUC0260-009
engine = EngineArgs(model="acme/m", swap_space=4)
local_name = 3
# ok: VUC000-006
print(local_name, ChatCompletionRequest, build)
