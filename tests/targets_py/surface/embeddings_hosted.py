"""A raw HTTP client of a hosted API: its response fields are that API's, not vLLM's."""

import requests

reply = requests.post("https://api.openai.com/v1/completions", json={"model": "m"}, timeout=10).json()
# ok: VUC000-015
print(reply["choices"][0]["prompt_routed_experts"])
