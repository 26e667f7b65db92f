"""A completions client of a vLLM server: the completion response's fields as 0.28.0 returns them."""

from openai import OpenAI

client = OpenAI(base_url="http://vllm.internal:8000/v1", api_key="none")
out = client.completions.create(model="acme/m", prompt="hi", logprobs=2)
# ok: VUC000-015
print(out.choices[0].text, out.choices[0].logprobs.top_logprobs)
# ruleid: VUC000-015
print(out.choices[0].prompt_routed_experts)
for chunk in client.completions.create(model="acme/m", prompt="hi", stream=True):
    # ok: VUC000-015
    print(chunk.choices[0].text)
