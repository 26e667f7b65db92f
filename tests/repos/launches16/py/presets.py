BASE_OPTS = {"seed": 0}
FP8_PRESET = {
    **BASE_OPTS,
    "quantization": "fp8",
    # ruleid: VUC0260-009
    "swap_space": 8,
}
