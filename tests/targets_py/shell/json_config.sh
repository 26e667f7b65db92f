#!/bin/bash
# vllm serve m --calculate-kv-scales   (a comment: ok)
# ruleid: TST0280-005
vllm serve m --compilation-config '{"level": 3,
  "cudagraph_capture_sizes": [1, 2]}' \
  --max-model-len 4096
# ruleid: TST0280-005
vllm serve m --compilation-config.level 3 --max-model-len 4096
# ruleid: VUC000-001
vllm serve m --max-num-sequences 8 --max-model-len 4096
# ok: VUC000-001
mytool --max-num-seq 8
CMD="vllm serve m \
--calculate-kv-scales --max-model-len 4096"  # ruleid: VUC0280-001
$CMD
# ok: TST0280-006
vllm serve m $VLLM_ARGS
