"""The knowledge stage: what the tool knows of vLLM's releases: rule packs, each release's
surface read from its wheel (flags and their arity, requirements), release windows, and the
derivation of packs from wheels."""
