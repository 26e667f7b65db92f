"""A raw HTTP client of the team's own server: the URL says which API answers."""

import requests

reply = requests.post("http://vllm.internal:8000/v1/completions", json={"model": "m"}, timeout=10).json()
# ruleid: VUC000-015
print(reply["choices"][0]["prompt_routed_experts"])
vectors = requests.post("http://vllm.internal:8000/v1/embeddings", json={"input": "x"}, timeout=10).json()
# ok: VUC000-015
print(vectors["data"][0]["embedding"])
