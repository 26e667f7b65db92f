#!/bin/bash
# An env var 0.28.0 no longer reads, a user's own VLLM_ variable, and values the parser refuses.
# ruleid: VUC000-008
export VLLM_CPU_MOE_PREPACK=1
# ok: VUC000-008
export VLLM_MODEL_DIR=/models
# ruleid: VUC000-001
vllm serve acme/notes-bot-3b --max-model-length 4096
# ruleid: VUC000-009
vllm serve acme/notes-bot-3b --quantization deepspeedfp
# ruleid: VUC000-009
vllm serve acme/notes-bot-3b --kv-cache-dtype fp9
# ok: VUC000-009
vllm serve acme/notes-bot-3b --dtype bfloat16 --quantization fp8 --load-format safetensors
# ruleid: VUC0190-001
vllm serve acme/notes-bot-3b --disable-frontend-multiprocessing
# A flag 0.28.0 does not have yet (added in 0.30.0).
# ruleid: VUC000-003
vllm serve acme/notes-bot-3b --dp-sync-interval 4
