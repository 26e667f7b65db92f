"""Bundled vLLM rule packs: one YAML file per release (data only, loaded by the registry)."""
