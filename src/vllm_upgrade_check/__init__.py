"""vllm-upgrade-check: what breaks before a vLLM upgrade, and how to fix it."""

__version__ = "0.1.0"
