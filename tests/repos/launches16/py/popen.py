import os
import subprocess as sp

# os.popen runs a shell command line; the flag is reported in the string
os.popen("vllm serve acme/coder-7b --max-num-partial-prefills 2")  # ruleid: VUC0270-001
# the command given by keyword, through an aliased import
sp.run(args=["vllm", "serve", "acme/coder-7b", "--calculate-kv-scales"])  # ruleid: VUC0280-001
