#!/bin/bash
# Launches written through one level of indirection (issue 16).
serve_opts=(--max-model-len 4096)
case "$MODE" in
  # ruleid: VUC0270-002
  long) serve_opts+=(--max-long-partial-prefills=4) ;;
  # ruleid: VUC0280-001
  kv) serve_opts+=("--calculate-kv-scales") ;;
  # ok: VUC0270-002, VUC000-001
  eager) serve_opts+=(--enforce-eager) ;;
esac
# ok: TST0280-006
vllm serve acme/orca-lite-2b "${serve_opts[@]}"

# `${X:+...}` unquoted: the words bash gives, each checked on its own
# ok: VUC000-001
vllm serve acme/m --max-model-len 4096 ${ADAPTER:+--lora-modules "notes=$ADAPTER"} \
  ${LONG:+--max-num-partial-prefills 2}  # ruleid: VUC0270-001
# a default holding quoted words: `--seed` and `7`
# ruleid: TST0280-007
vllm serve acme/m --max-model-len 4096 ${SEED_OPTS:-"--seed" '7'}
# ok: VUC0270-002
echo ${LONG:+--max-long-partial-prefills 2}

# the interpreter running the console script by its path
# ruleid: VUC0280-002
python3 /srv/py311/bin/vllm serve acme/coder-7b --max-model-len 4096 --override-attention-dtype float16
# ok: VUC0280-002
python3 /srv/tools/vllm_report.py --override-attention-dtype float16
# ok: VUC0280-002
python3 /srv/py311/bin/vllm-helper serve --override-attention-dtype float16

# the last line ends in a continuation: bash reads it as the end of the command
# ruleid: VUC0280-001
vllm serve acme/tail --max-model-len 4096 --calculate-kv-scales \

# the image held in a variable its assigning default sets: the words after it are vLLM's
: "${VLLM_IMAGE:=vllm/vllm-openai:v0.26.0}"
# ruleid: VUC0280-002
docker run --gpus all "$VLLM_IMAGE" --model acme/m --override-attention-dtype float16
# an image the repository does not set: not known to run vLLM, its flags not judged
# ok: VUC0280-002
docker run --gpus all "$SOME_IMAGE" --model acme/m --override-attention-dtype float16
