#!/bin/bash
# A --set argument list reaches the chart's container args.
# ruleid: TST-004
helm upgrade --install r . --set 'vllm.args={--model,acme/m,--swap-space,4}'
# ruleid: TST-004
helm upgrade r . --set-json 'server.args=["--swap-space","4"]'
# ok: TST-004
helm upgrade r other-chart --set 'args={--swap-space,4}'
