#!/bin/bash
# vllm subcommands with flags of their own beside the engine's
# ok: VUC000-001
vllm bench throughput --model acme/m --dataset-name random --num-prompts 100 --random-input-len 512 --output-json out.json
# ruleid: VUC0270-001
vllm bench throughput --model acme/m --num-prompts=10 --max-num-partial-prefills 2
# ok: VUC000-001
vllm bench latency --model acme/m --input-len 32 --output-len 128 --batch-size 8 --num-iters 3
# ok: VUC000-001
vllm run-batch -i in.jsonl -o out.jsonl --model acme/m --enable-metrics --url 0.0.0.0 --port 9000
# ruleid: VUC000-001
python3 -m vllm.entrypoints.openai.run_batch --input-file in.jsonl --output-file out.jsonl --model acme/m --no-such-flag
# HTTP clients: no engine args at all
# ok: VUC000-001, VUC0270-001
vllm bench serve --model acme/m --dataset-name sharegpt --num-prompts 10 --max-num-partial-prefills 2
# ok: VUC000-001
vllm chat --url http://localhost:8000/v1 --model-name acme/m
# ok: VUC000-001
vllm complete --url http://localhost:8000/v1 --quick "hello"
