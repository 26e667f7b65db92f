"""The planning stage: the newest release a host can reach, and what installing it resolves to."""
