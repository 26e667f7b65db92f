"""A star import of a module that is not vLLM's: the file's names may come from it, so no name is
judged missing from vLLM, and a call resolves to vLLM's only when the vLLM star import comes last."""

# ok: VUC000-006
from vllm.utils import *
from acme_compat import *

# ok: VUC000-006
parser = get_open_port()
# ok: VUC000-004, VUC0260-009, TST0280-006
engine = EngineArgs(model="acme/m", swap_space=4)
