#!/bin/sh
exec vllm serve "$MODEL" "$@"
