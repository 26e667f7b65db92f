#!/bin/sh
# an interpreter running the console script
# ruleid: VUC0111-002
python3 /srv/py311/bin/vllm serve acme/coder-7b --rope-theta 1000000
# the engine flags of a wrapper's passthrough variable, set in .env
exec vllm serve acme/coder-7b --port 8001 $EXTRA_ARGS
