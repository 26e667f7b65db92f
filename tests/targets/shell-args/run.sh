#!/bin/bash
# the engine's flags are kept in a file of their own, comments dropped
vllm serve acme/m $(grep -v '^#' conf/engine-args)
