"""An engine whose arguments live in a YAML file beside it."""

from pathlib import Path

import yaml
from vllm import LLM

CONFIG = Path(__file__).parent / "engine.yaml"

with open(CONFIG) as fh:
    cfg = yaml.safe_load(fh)
llm = LLM(**cfg)
