#!/usr/bin/env bash
vllm serve org/model \
  --max-num-partial-prefills 4 \
  --quantization bitsandbytes \
  --port 8000
