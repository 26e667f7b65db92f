"""A LangChain app that mentions vllm only in prose: LLM(calculate_kv_scales=True)."""

from langchain.llms.base import LLM


class MyLLM(LLM):
    pass


# ok: VUC0280-001
model = MyLLM(calculate_kv_scales=True)
# ok: TST0280-006
other = LLM(temperature=0.1)
