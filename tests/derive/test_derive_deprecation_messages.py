"""Reading old and new spellings out of real-world deprecation messages."""

import pytest

from vllm_upgrade_check.knowledge.derive.surface.deprecations import _parse_deprecation


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        (
            "`max_context_len_to_capture` is deprecated. Use `max_seq_len_to_capture` instead.",
            ("max_context_len_to_capture", "max_seq_len_to_capture"),
        ),
        (
            "argument '--disable-log-requests' is deprecated and replaced with '--enable-log-requests'.",
            ("--disable-log-requests", "--enable-log-requests"),
        ),
        (
            "`--disable-mm-preprocessor-cache` is deprecated and will be removed in v0.13. "
            "Please use `--mm-processor-cache-gb 0` instead.",
            ("--disable-mm-preprocessor-cache", "--mm-processor-cache-gb"),
        ),
        (
            "VLLM_TRITON_ATTN_USE_TD is deprecated and will be removed in v0.25. Use VLLM_TRITON_USE_TD instead.",
            ("VLLM_TRITON_ATTN_USE_TD", "VLLM_TRITON_USE_TD"),
        ),
        (
            "`guided_decoding_backend` is deprecated and has been renamed to `backend`.",
            ("guided_decoding_backend", "backend"),
        ),
        (
            "GPU KV-cache usage. DEPRECATED: Use vllm:kv_cache_usage_perc instead.",
            None,  # names no old spelling (the metric's own name is added by the caller)
        ),
        (
            "The 'task' option has been deprecated and will be removed in v0.13.0 or v1.0.",
            ("task", None),
        ),
        # a deprecated value of a flag is not a deprecated flag
        ("`--convert mm_encoder_only` is deprecated. Please use --mm-encoder-only` instead.", None),
        ("Use Ray to start the engine. (DEPRECATED. This argument is deprecated.)", None),
        ("The {...} option is deprecated", None),
        ("See the deprecation policy for details.", None),
        ("Use `--foo` instead of `--bar`.", None),
    ],
)
def test_parse_deprecation(message, expected):
    assert _parse_deprecation(message) == expected
