"""The host a deployment runs on, read without importing or running anything of the user's:
the Python environment (:mod:`.environment`) and the GPUs and drivers (:mod:`.gpus`)."""
