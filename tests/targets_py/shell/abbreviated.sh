#!/bin/bash
# Flags written as unique prefixes: argparse (vLLM leaves allow_abbrev on) reads them as the
# full flag of the release in use, so a rule removing the full flag concerns them too.
# ruleid: VUC0270-001
vllm serve acme/m --max-num-partial 4 --port 8000
# ruleid: VUC0270-002
vllm serve acme/m --max-long-partial=2
# ruleid: VUC0270-001
vllm serve acme/m --max_num_partial 4
# ok: VUC0270-001, VUC0270-002
vllm serve acme/m --max-num-seq 4
