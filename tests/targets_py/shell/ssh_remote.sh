#!/bin/bash
# The command ssh runs on the remote host is a script of the deployment.
# ruleid: VUC0280-001
ssh gpu01 "vllm serve acme/m --calculate-kv-scales"
# ruleid: VUC0280-001
ssh -i key user@host 'cd /srv && nohup vllm serve acme/m --calculate-kv-scales &'
# ruleid: VUC0280-001
ssh -o StrictHostKeyChecking=no -p 2222 -- host vllm serve acme/m --calculate-kv-scales
ssh -tt host "
  # ruleid: VUC0280-001
  vllm serve acme/m --calculate-kv-scales
"
# -N: no remote command; the words are ssh's own
# ok: VUC0280-001
ssh -N -L 8000:localhost:8000 host vllm serve acme/m --calculate-kv-scales
# ok: VUC0280-001
scp host:"vllm serve acme/m --calculate-kv-scales" .
