docker run --gpus all -e VLLM_X=1 vllm/vllm-openai:v0.8.0 --model m --tensor-parallel-size 2
