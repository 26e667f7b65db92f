#!/bin/bash
# a comment inside the continued launch ends it: what follows never reaches vLLM
vllm serve acme/batch-3b \
  --max-model-len 4096 \
  # --enforce-eager \  # ruleid: VUC000-017
  --max-num-partial-prefills 2  # ok: VUC0270-001
# a shell string run by Python below holds the same flag, where it reaches vLLM
