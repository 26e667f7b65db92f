#!/bin/bash
# A line continuation inside a word: bash drops the backslash-newline and reads one word,
# so the flag's value is what the next line starts with.
# ruleid: VUC0280-002
vllm serve acme/m --override-attention-dtype=\
bfloat16 --port 8000
# ruleid: VUC0280-002
vllm serve acme/m --port 8000 --override-attention-dtype=bfl\
oat16
# ok: VUC0280-002
vllm serve acme/m --override-attention\
-dtypes=bfloat16
