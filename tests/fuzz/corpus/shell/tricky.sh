VLLM_USE_V1=1 exec vllm serve "$MODEL" --max-num-seqs=${N:-8} $(echo --x) <<EOF
hi
EOF
if [ x ]; then python -m vllm.entrypoints.openai.api_server --port 8000 & fi
