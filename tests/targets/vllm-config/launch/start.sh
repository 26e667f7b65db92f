#!/bin/bash
# the config is named relative to this script, under an unusual name
vllm serve acme/m --config ../settings/knobs.yml
