#!/usr/bin/env bash
# Launch the chat model on one node.
# Note: we used to pass --max-num-partial-prefills 8 here (kept for history, not a launch).
set -euo pipefail

MODEL="${MODEL:-meta-llama/Llama-3.1-8B-Instruct}"
export VLLM_LOGGING_LEVEL=INFO

# Scheduler tuning, expanded into the launch below.
SCHED_ARGS=(
  --max-num-seqs 256
  --max-num-partial-prefills 4
)

vllm serve "$MODEL" \
  --tensor-parallel-size 2 \
  --max_long_partial_prefills=2 \
  "${SCHED_ARGS[@]}" \
  --kv-cache-dtype fp8 \
  --no-calculate-kv-scales \
  --port 8000
