"""Keywords and argv words whose values are read from the environment."""

import os
import subprocess

from vllm import LLM

llm = LLM(
    model=os.environ.get("MODEL", "acme/m"),
    # ruleid: VUC0270-001
    max_num_partial_prefills=int(os.getenv("PARTIAL", "2")),
    # ok: VUC000-009
    dtype=os.environ.get("DT"),
)

subprocess.run(
    [
        "vllm",
        "serve",
        os.environ.get("MODEL", "acme/m"),
        # ruleid: VUC0270-001
        "--max-num-partial-prefills",
        os.environ["PARTIAL"],
        # ok: VUC000-009
        "--dtype",
        os.environ.get("DT"),
        # ruleid: VUC000-009
        "--kv-cache-dtype",
        os.getenv("KV", "fp4_e9"),
    ]
)


def make_llm(**kw):
    # ok: VUC0270-001
    return LLM(model="acme/m", **kw)


# ruleid: VUC0270-001
engine = make_llm(max_num_partial_prefills=4)
