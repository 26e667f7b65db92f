#!/bin/bash
# Architectures 0.28.0's registry dropped (AquilaForCausalLM, last served by 0.24.0): a blocker,
# a warning when the launch asks for the Transformers backend; other hf-overrides keys are not
# architectures.
# ruleid: VUC000-014
vllm serve acme/aquila --hf-overrides '{"architectures": ["AquilaForCausalLM"], "rope_scaling": {"rope_type": "dynamic", "factor": 2.0}}'
# ruleid: VUC000-014
vllm serve acme/aquila --model-impl transformers --hf-overrides '{"architectures": ["AquilaForCausalLM"]}'
# ruleid: VUC000-014
vllm serve acme/aquila --model-impl=transformers --hf-overrides='{"architectures": "AquilaForCausalLM"}'
# ok: VUC000-014
vllm serve acme/aquila --hf-overrides '{"model_type": "llama", "max_position_embeddings": 8192}'
# ok: VUC000-014
vllm serve acme/aquila --hf-overrides '{"text_config": {"architectures": ["AquilaForCausalLM"]}}'
