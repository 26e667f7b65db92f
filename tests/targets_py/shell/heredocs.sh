#!/bin/bash
# here-documents that a shell runs, and one that only writes a file
bash <<'EOF'
# ruleid: VUC0270-001
vllm serve acme/m --max-model-len 4096 --max-num-partial-prefills 2
EOF
ssh gpu1 bash -s <<EOF
# ruleid: VUC0270-001
vllm serve acme/m --max-num-partial-prefills 2
EOF
kubectl exec -i vllm-0 -- bash <<EOF
# ruleid: VUC0270-001
vllm serve acme/m --max-num-partial-prefills 2
EOF
cat <<EOF > /srv/notes.txt
# ok: VUC0270-001
vllm serve acme/m --max-num-partial-prefills 2
EOF
