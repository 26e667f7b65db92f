"""Offline inference.

Docstring trap: LLM(model="m", calculate_kv_scales=True) is prose, not code.
"""

import os

from vllm import LLM, SamplingParams
from vllm.engine.arg_utils import AsyncEngineArgs

# ruleid: TST0280-001
from vllm.model_executor.guided_decoding import get_guided_decoding_logits_processor  # noqa: F401

# ruleid: TST0280-004
os.environ["VLLM_ATTENTION_BACKEND"] = "FLASHINFER"
# ruleid: TST0280-004
os.environ.setdefault("VLLM_ATTENTION_BACKEND", "FLASH_ATTN")

COMMON = {
    # ruleid: VUC0280-001
    "calculate_kv_scales": True,
}


def build(model: str) -> LLM:
    extra = dict(max_model_len=4096)
    # ruleid: VUC0280-002
    extra["override_attention_dtype"] = "bfloat16"
    # ok: TST0280-006
    return LLM(
        model,
        # ruleid: VUC0270-001
        max_num_partial_prefills=2,
        **COMMON,
        **extra,
    )  # calculate_kv_scales=True in a comment is not a keyword


def sampling() -> SamplingParams:
    # ruleid: TST0280-003
    # ok: TST0280-007
    return SamplingParams(use_beam_search=True, seed=1)


def engine(unknown: dict) -> AsyncEngineArgs:
    # ok: TST0280-006
    return AsyncEngineArgs(model="m", **unknown)


def plain() -> AsyncEngineArgs:
    # ruleid: TST0280-006
    return AsyncEngineArgs(model="m", seed=3)  # ruleid: TST0280-007
