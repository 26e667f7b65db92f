#!/usr/bin/env bash
# Arrays appended in case branches: every branch's flags may reach the launch.
serve_opts=(--max-model-len 4096)
case "${PROFILE:-small}" in
  long)
    # ruleid: VUC0270-002
    serve_opts+=(--max-long-partial-prefills=4)
    ;;
  *)
    # ruleid: VUC0280-001
    serve_opts+=(--calculate-kv-scales)
    ;;
esac
# ${X:+...} splits into the words bash gives it; an unset NOTES gives none
vllm serve acme/orca-lite-2b "${serve_opts[@]}" ${NOTES:+--lora-modules "notes=$NOTES"} \
  --port 8000 \
  --seed 7 \
